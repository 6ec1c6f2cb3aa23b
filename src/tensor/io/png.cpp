// SPDX-License-Identifier: Apache-2.0
// The PNG writer: signature, IHDR, one IDAT of the zlib-compressed rows (each with filter
// byte 0), IEND; every chunk with its CRC-32.
#include "tensor/io/png.h"

#include <zlib.h>

namespace tl::tensor::io {

namespace {

std::string be32(std::uint64_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xFF);
  return s;
}

std::string chunk(const std::string& type, const std::string& data) {
  std::string body = type + data;
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()));
  return be32(data.size()) + body + be32(crc);
}

}  // namespace

void write_png(const FileCtx& ctx, const Array& pixels) {
  const auto& s = pixels.shape;
  if (pixels.buffer->dtype != DType::U8) ctx.fail_dtype("cannot be written: a PNG's pixels are u8");
  const std::int64_t channels = s.size() == 2 ? 1 : (s.size() == 3 ? s[2] : 0);
  if (channels != 1 && channels != 3 && channels != 4) {
    ctx.fail("cannot be written: the image must be (height width) or (height width 1|3|4), got " +
             shape_text(s, "(", ")", " "));
  }
  const std::int64_t height = s[0], width = s[1];
  if (height <= 0 || width <= 0 || height > 0x7FFFFFFF || width > 0x7FFFFFFF) {
    ctx.fail("cannot be written: an image of " + std::to_string(height) + " x " + std::to_string(width) + " pixels");
  }
  const auto row = static_cast<std::size_t>(width * channels);
  std::string raw;
  raw.reserve((row + 1) * static_cast<std::size_t>(height));
  const auto* p = static_cast<const char*>(pixels.buffer->data());
  for (std::int64_t y = 0; y < height; ++y) {
    raw += '\0';  // filter: none
    raw.append(p + static_cast<std::size_t>(y) * row, row);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), 6) != Z_OK) {
    ctx.fail("cannot be written: zlib failed to compress the pixels");
  }
  packed.resize(packed_size);
  if (packed.size() > 0x7FFFFFFFu) ctx.fail("cannot be written: its compressed pixels exceed a PNG chunk's 2 GiB");
  const char color = channels == 1 ? 0 : channels == 3 ? 2 : 6;
  std::string header = be32(static_cast<std::uint64_t>(width)) + be32(static_cast<std::uint64_t>(height));
  header += std::string{8, color, 0, 0, 0};  // 8 bits, color type, deflate, no filter choice, no interlace
  OutFile file(ctx);
  file.write(std::string("\x89PNG\r\n\x1a\n", 8));
  file.write(chunk("IHDR", header));
  file.write(chunk("IDAT", packed));
  file.write(chunk("IEND", ""));
  file.close();
}

}  // namespace tl::tensor::io
