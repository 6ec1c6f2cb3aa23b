// SPDX-License-Identifier: Apache-2.0
// The quantized block formats (q8_0, q4_0: tensor/dtype.h gives their layouts): float rows to
// blocks and back, on the host, as GGUF's reference code defines them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"

namespace tl::tensor {

// Quantizes N floats (N a multiple of 32) into N / 32 blocks of quantized dtype T at OUT:
//   q8_0: d = max|x| / 127, q = round(x / d) (0 when d is 0);
//   q4_0: m = the value of largest magnitude, d = m / -8, u = min(15, trunc(x / d + 8.5)).
// The scale is stored rounded to f16, the values computed with the unrounded one. Returns the
// index of the first value that cannot be held (non-finite, or of a magnitude whose scale
// exceeds f16's range: above 127 * 65504 for q8_0, 8 * 65504 for q4_0), or -1 when there is
// none (then OUT is complete).
std::int64_t quantize_blocks(DType t, const float* x, std::size_t n, std::uint8_t* out);

// The N values (a multiple of 32) of the blocks at BLOCKS, as floats.
void dequantize_blocks(DType t, const std::uint8_t* blocks, std::size_t n, float* out);

}  // namespace tl::tensor
