// SPDX-License-Identifier: Apache-2.0
// WAV audio files: the RIFF chunks walked with every size checked against the file.
#include "tensor/io/wav.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace tl::tensor::io {

namespace {

constexpr std::uint16_t kPcm = 1, kFloat = 3, kExtensible = 0xFFFE;

struct Format {
  std::uint16_t tag = 0;  // kPcm or kFloat (an extensible file's subformat)
  std::uint16_t channels = 0, block_align = 0, bits = 0;
  std::uint32_t rate = 0;
};

Format parse_format(const FileCtx& ctx, const std::string& chunk) {
  if (chunk.size() < 16)
    ctx.fail("has a format chunk of " + std::to_string(chunk.size()) + " bytes (at least 16 expected)");
  const auto* p = reinterpret_cast<const std::uint8_t*>(chunk.data());
  Format f;
  f.tag = static_cast<std::uint16_t>(read_le(p, 2));
  f.channels = static_cast<std::uint16_t>(read_le(p + 2, 2));
  f.rate = static_cast<std::uint32_t>(read_le(p + 4, 4));
  f.block_align = static_cast<std::uint16_t>(read_le(p + 12, 2));
  f.bits = static_cast<std::uint16_t>(read_le(p + 14, 2));
  if (f.tag == kExtensible) {
    if (chunk.size() < 40)
      ctx.fail("has an extensible format chunk of " + std::to_string(chunk.size()) + " bytes (40 expected)");
    f.tag = static_cast<std::uint16_t>(read_le(p + 24, 2));  // the subformat GUID's first two bytes
  }
  if (f.tag != kPcm && f.tag != kFloat) {
    ctx.fail_dtype("has audio format " + std::to_string(f.tag) +
                   ", which TensorLisp does not read (supported: 1, PCM integers, and 3, IEEE floats)");
  }
  const bool ok_bits =
      f.tag == kPcm ? (f.bits == 8 || f.bits == 16 || f.bits == 24 || f.bits == 32) : (f.bits == 32 || f.bits == 64);
  if (!ok_bits) {
    ctx.fail_dtype("has " + std::to_string(f.bits) + "-bit " + (f.tag == kPcm ? "PCM" : "float") +
                   " samples (supported: PCM of 8, 16, 24 or 32 bits, floats of 32 or 64)");
  }
  if (f.channels == 0) ctx.fail("declares 0 channels");
  if (f.rate == 0) ctx.fail("declares a sample rate of 0");
  if (f.block_align != f.channels * (f.bits / 8)) {
    ctx.fail("declares blocks of " + std::to_string(f.block_align) + " bytes for " + std::to_string(f.channels) +
             " channels of " + std::to_string(f.bits) + " bits");
  }
  return f;
}

// Sample `s` (`bits` wide, little-endian) as a value in [-1, 1).
double sample_value(const std::uint8_t* s, const Format& f) {
  if (f.tag == kFloat) {
    if (f.bits == 32) {
      float v;
      std::memcpy(&v, s, 4);
      return v;
    }
    double v;
    std::memcpy(&v, s, 8);
    return v;
  }
  switch (f.bits) {
    case 8: return (static_cast<int>(s[0]) - 128) / 128.0;  // 8-bit PCM is unsigned
    case 16: return static_cast<std::int16_t>(read_le(s, 2)) / 32768.0;
    case 24: {
      auto v = static_cast<std::int32_t>(read_le(s, 3) << 8) >> 8;  // sign-extended
      return v / 8388608.0;
    }
    default: return static_cast<std::int32_t>(read_le(s, 4)) / 2147483648.0;
  }
}

}  // namespace

WavAudio read_wav(const FileCtx& ctx) {
  InFile file(ctx);
  if (file.size() < 12) ctx.fail("is not a WAV file (it has " + std::to_string(file.size()) + " bytes)");
  const std::string head = file.read_string(0, 12);
  if (head.compare(0, 4, "RIFF") != 0 || head.compare(8, 4, "WAVE") != 0) {
    ctx.fail("is not a WAV file (it does not start with RIFF ... WAVE)");
  }
  std::optional<Format> format;
  for (std::uint64_t at = 12; at + 8 <= file.size();) {
    const std::string chunk = file.read_string(at, 8);
    const std::string id = chunk.substr(0, 4);
    const std::uint64_t size = read_le(reinterpret_cast<const std::uint8_t*>(chunk.data()) + 4, 4);
    const std::uint64_t body = at + 8;
    if (id == "fmt ") {
      if (body + size > file.size()) ctx.fail("is truncated: its format chunk ends past the end of the file");
      format = parse_format(ctx, file.read_string(body, static_cast<std::size_t>(size)));
    } else if (id == "data") {
      if (!format) ctx.fail("has its data chunk before its format chunk");
      // A writer that did not know the length (a stream) leaves the size 0xFFFFFFFF: the rest
      // of the file is the data then, as other readers assume. A size of 0 is no samples.
      std::uint64_t bytes = size;
      if (size == 0xFFFFFFFFu) {
        bytes = file.size() - body;
      } else if (body + size > file.size()) {
        ctx.fail("is truncated: its data chunk declares " + std::to_string(size) + " bytes, the file holds " +
                 std::to_string(file.size() - body));
      }
      const std::uint64_t frames = bytes / format->block_align;
      std::string raw = file.read_string(body, static_cast<std::size_t>(frames * format->block_align));
      const std::size_t channels = format->channels, width = format->bits / 8;
      auto buf = std::make_shared<Buffer>(DType::F32, static_cast<std::size_t>(frames) * channels);
      auto* out = static_cast<float*>(buf->data());
      const auto* in = reinterpret_cast<const std::uint8_t*>(raw.data());
      for (std::size_t i = 0; i < frames; ++i) {
        if (i % 65536 == 0) ctx.poll();
        for (std::size_t c = 0; c < channels; ++c) {
          // Frames interleave the channels; the tensor holds one row per channel.
          out[c * frames + i] = static_cast<float>(sample_value(in + (i * channels + c) * width, *format));
        }
      }
      WavAudio audio;
      audio.samples = Array{std::move(buf), {static_cast<std::int64_t>(channels), static_cast<std::int64_t>(frames)}};
      audio.sample_rate = format->rate;
      return audio;
    }
    at = body + size + (size & 1);  // chunks are padded to an even size
  }
  ctx.fail(format ? "has no data chunk" : "has no format chunk");
}

void write_wav(const FileCtx& ctx, const Array& samples, std::int64_t sample_rate, WavEncoding encoding) {
  if (samples.shape.size() != 2) ctx.fail("cannot be written: the samples must be (channels frames)");
  const auto channels = static_cast<std::uint64_t>(samples.shape[0]);
  const auto frames = static_cast<std::uint64_t>(samples.shape[1]);
  if (channels == 0 || channels > 65535)
    ctx.fail("cannot be written: a WAV file holds 1 to 65535 channels, not " + std::to_string(channels));
  if (sample_rate <= 0 || sample_rate > 0xFFFFFFFFll)
    ctx.fail("cannot be written: sample rate " + std::to_string(sample_rate));
  const std::uint64_t width = encoding == WavEncoding::Pcm16 ? 2 : 4;
  const std::uint64_t data = channels * frames * width;
  if (data > 0xFFFFFFFFull - 36)
    ctx.fail("cannot be written: " + std::to_string(data) + " bytes of samples exceed WAV's 4 GiB");
  std::string out;
  out.reserve(44 + data);
  out += "RIFF" + le_bytes(36 + data, 4) + "WAVE";
  out += "fmt " + le_bytes(16, 4) + le_bytes(encoding == WavEncoding::Pcm16 ? kPcm : kFloat, 2) +
         le_bytes(channels, 2) + le_bytes(static_cast<std::uint64_t>(sample_rate), 4) +
         le_bytes(static_cast<std::uint64_t>(sample_rate) * channels * width, 4) + le_bytes(channels * width, 2) +
         le_bytes(width * 8, 2);
  out += "data" + le_bytes(data, 4);
  const Buffer& b = *samples.buffer;
  if (b.dtype != DType::F32 && b.dtype != DType::F64)
    ctx.fail_dtype("cannot be written: the samples must be f32 or f64");
  const auto* f32 = static_cast<const float*>(b.data());
  const auto* f64 = static_cast<const double*>(b.data());
  for (std::uint64_t i = 0; i < frames; ++i) {
    for (std::uint64_t c = 0; c < channels; ++c) {
      const std::uint64_t k = c * frames + i;
      const double v = b.dtype == DType::F32 ? f32[k] : f64[k];
      if (encoding == WavEncoding::Pcm16) {
        const double clipped = std::isnan(v) ? 0.0 : std::clamp(v, -1.0, 1.0);
        out += le_bytes(static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(clipped * 32767.0))), 2);
      } else {
        const auto f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        out += le_bytes(bits, 4);
      }
    }
  }
  OutFile file(ctx);
  file.write(out);
  file.close();
}

}  // namespace tl::tensor::io
