// SPDX-License-Identifier: Apache-2.0
// Quantizing to and from the block formats (quant.h).
#include "tensor/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tl::tensor {

namespace {
void put_scale(std::uint8_t* block, float d) {
  const std::uint16_t h = float_to_half(d);
  std::memcpy(block, &h, 2);
}

float scale_of(const std::uint8_t* block) {
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  return half_to_float(h);
}

void quantize_q8_0(const float* x, std::uint8_t* block) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0 ? 1 / d : 0;
  put_scale(block, d);
  for (int j = 0; j < 32; ++j)
    block[2 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::round(x[j] * id)));
}

void quantize_q4_0(const float* x, std::uint8_t* block) {
  float amax = 0, m = 0;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      m = x[j];
    }
  }
  const float d = m / -8;
  const float id = d != 0 ? 1 / d : 0;
  put_scale(block, d);
  auto level = [&](float v) { return std::min(15, static_cast<int>(static_cast<std::int8_t>(v * id + 8.5f))); };
  for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<std::uint8_t>(level(x[j]) | (level(x[j + 16]) << 4));
}
}  // namespace

std::int64_t quantize_blocks(DType t, const float* x, std::size_t n, std::uint8_t* out) {
  // A scale must fit f16 (at most 65504): |x| up to 127 or 8 times that.
  const float limit = (t == DType::Q8_0 ? 127.0f : 8.0f) * 65504.0f;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || std::fabs(x[i]) > limit) return static_cast<std::int64_t>(i);
  }
  const std::size_t bytes = dtype_size(t);
  for (std::size_t b = 0; b < n / 32; ++b) {
    if (t == DType::Q8_0) quantize_q8_0(x + b * 32, out + b * bytes);
    else quantize_q4_0(x + b * 32, out + b * bytes);
  }
  return -1;
}

void dequantize_blocks(DType t, const std::uint8_t* blocks, std::size_t n, float* out) {
  const std::size_t bytes = dtype_size(t);
  for (std::size_t b = 0; b < n / 32; ++b, blocks += bytes, out += 32) {
    const float d = scale_of(blocks);
    if (t == DType::Q8_0) {
      for (int j = 0; j < 32; ++j) out[j] = d * static_cast<float>(static_cast<std::int8_t>(blocks[2 + j]));
    } else {
      for (int j = 0; j < 16; ++j) {
        out[j] = d * static_cast<float>((blocks[2 + j] & 15) - 8);
        out[j + 16] = d * static_cast<float>((blocks[2 + j] >> 4) - 8);
      }
    }
  }
}

}  // namespace tl::tensor
