// SPDX-License-Identifier: Apache-2.0
// WAV audio files (RIFF WAVE): reads PCM of 8, 16, 24 and 32 bits and IEEE floats of 32 and
// 64 bits, plain or WAVE_FORMAT_EXTENSIBLE; writes 16-bit PCM or 32-bit float.
#pragma once

#include "tensor/io/file.h"

namespace tl::tensor::io {

struct WavAudio {
  Array samples;  // f32 (channels, frames), scaled to [-1, 1) as torchaudio.load does
  std::int64_t sample_rate = 0;
};

// The audio in ctx.path. A missing, unreadable, truncated or malformed file throws a
// file-error; an encoding other than those above a dtype-error.
WavAudio read_wav(const FileCtx& ctx);

enum class WavEncoding { Pcm16, Float32 };

// Writes `samples` (f32 or f64 (channels, frames)) to ctx.path at `sample_rate` Hz: 16-bit PCM
// (values clipped to [-1, 1]) or 32-bit float.
void write_wav(const FileCtx& ctx, const Array& samples, std::int64_t sample_rate, WavEncoding encoding);

}  // namespace tl::tensor::io
