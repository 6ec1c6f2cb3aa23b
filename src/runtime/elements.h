// SPDX-License-Identifier: Apache-2.0
// Reading and writing single elements of any dtype as double (floats) or int64 (integers,
// bool): the reference executor's and the printer's view of memory.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "support/check.h"
#include "tensor/graph.h"

namespace tl::runtime {

// Whether a buffer's elements read as floats (load_float): float and quantized dtypes.
inline bool reads_float(tensor::DType t) { return tensor::is_float(t) || tensor::is_quantized(t); }

// Element i of blocks of a quantized dtype (tensor/dtype.h gives the layouts).
inline double load_quantized(const std::uint8_t* p, tensor::DType t, std::int64_t i) {
  const std::uint8_t* block = p + (i / 32) * static_cast<std::int64_t>(tensor::dtype_size(t));
  const auto j = static_cast<int>(i % 32);
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  const double d = tensor::half_to_float(h);
  if (t == tensor::DType::Q8_0) return d * static_cast<std::int8_t>(block[2 + j]);
  const int byte = block[2 + j % 16];
  return d * ((j < 16 ? byte & 15 : byte >> 4) - 8);
}

inline double load_float(const tensor::Buffer& b, std::int64_t i) {
  using tensor::DType;
  const auto* p = static_cast<const std::uint8_t*>(b.data());
  switch (b.dtype) {
    case DType::Q8_0:
    case DType::Q4_0: return load_quantized(p, b.dtype, i);
    case DType::F32: {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      return f;
    }
    case DType::F64: {
      double d;
      std::memcpy(&d, p + i * 8, 8);
      return d;
    }
    case DType::F16:
    case DType::BF16: {
      std::uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      return b.dtype == DType::F16 ? tensor::half_to_float(h) : tensor::bf16_to_float(h);
    }
    default: return 0;
  }
}

inline std::int64_t load_int(const tensor::Buffer& b, std::int64_t i) {
  using tensor::DType;
  const auto* p = static_cast<const std::uint8_t*>(b.data());
  switch (b.dtype) {
    case DType::Bool:
    case DType::U8: return p[i];
    case DType::I8: return static_cast<std::int8_t>(p[i]);
    case DType::I16: {
      std::int16_t v;
      std::memcpy(&v, p + i * 2, 2);
      return v;
    }
    case DType::U32: {
      std::uint32_t v;
      std::memcpy(&v, p + i * 4, 4);
      return v;
    }
    case DType::I32: {
      std::int32_t v;
      std::memcpy(&v, p + i * 4, 4);
      return v;
    }
    case DType::I64: {
      std::int64_t v;
      std::memcpy(&v, p + i * 8, 8);
      return v;
    }
    default: return 0;
  }
}

inline void store_float(tensor::Buffer& b, std::int64_t i, double v) {
  using tensor::DType;
  auto* p = static_cast<std::uint8_t*>(b.data());
  switch (b.dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p + i * 4, &f, 4);
      break;
    }
    case DType::F64: std::memcpy(p + i * 8, &v, 8); break;
    case DType::F16: {
      std::uint16_t h = tensor::float_to_half(static_cast<float>(v));
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    case DType::BF16: {
      std::uint16_t h = tensor::float_to_bf16(static_cast<float>(v));
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    default: break;
  }
}

inline void store_int(tensor::Buffer& b, std::int64_t i, std::int64_t v) {
  using tensor::DType;
  auto* p = static_cast<std::uint8_t*>(b.data());
  switch (b.dtype) {
    case DType::Bool: p[i] = v != 0; break;
    case DType::U8:
    case DType::I8: p[i] = static_cast<std::uint8_t>(v); break;
    case DType::I16: {
      auto x = static_cast<std::int16_t>(v);
      std::memcpy(p + i * 2, &x, 2);
      break;
    }
    case DType::U32:
    case DType::I32: {
      auto x = static_cast<std::uint32_t>(v);
      std::memcpy(p + i * 4, &x, 4);
      break;
    }
    case DType::I64: std::memcpy(p + i * 8, &v, 8); break;
    default: break;
  }
}

// Raw bits of an element (for bitcast), zero-extended. Not for quantized dtypes, whose
// elements are no whole bytes (load_float reads them).
inline std::uint64_t load_bits(const tensor::Buffer& b, std::int64_t i) {
  std::uint64_t v = 0;
  std::size_t n = tensor::dtype_size(b.dtype);
  TL_CHECK(n <= sizeof v, "load_bits: a quantized buffer has no element bits");
  std::memcpy(&v, static_cast<const std::uint8_t*>(b.data()) + i * n, n);
  return v;
}
inline void store_bits(tensor::Buffer& b, std::int64_t i, std::uint64_t v) {
  std::size_t n = tensor::dtype_size(b.dtype);
  TL_CHECK(n <= sizeof v, "store_bits: a quantized buffer has no element bits");
  std::memcpy(static_cast<std::uint8_t*>(b.data()) + i * n, &v, n);
}

}  // namespace tl::runtime
