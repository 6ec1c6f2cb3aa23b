// SPDX-License-Identifier: Apache-2.0
// Dtype facts and promotion (the rules are written down in dtype.h).
#include "tensor/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace tl::tensor {

namespace {
struct DTypeInfo {
  std::string_view name;
  std::size_t bytes;
  DCat cat;
};
constexpr DTypeInfo kInfo[] = {
#define TL_X(e, name, bytes, cat) {name, bytes, DCat::cat},
    TL_DTYPES(TL_X)
#undef TL_X
};
const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
std::size_t dtype_size(DType t) { return info(t).bytes; }
DCat dtype_category(DType t) { return info(t).cat; }
int dtype_bits(DType t) { return t == DType::Bool ? 1 : static_cast<int>(dtype_size(t) * 8); }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kInfo)); ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  if (name == "float32" || name == "float") return DType::F32;
  if (name == "float64" || name == "double") return DType::F64;
  if (name == "float16" || name == "half") return DType::F16;
  if (name == "bfloat16") return DType::BF16;
  if (name == "int8") return DType::I8;
  if (name == "int16") return DType::I16;
  if (name == "int32" || name == "int") return DType::I32;
  if (name == "int64" || name == "long") return DType::I64;
  if (name == "uint8") return DType::U8;
  if (name == "uint32") return DType::U32;
  if (name == "complex64" || name == "cfloat") return DType::C64;
  if (name == "complex128" || name == "cdouble") return DType::C128;
  return std::nullopt;
}

std::size_t storage_bytes(DType t, std::size_t count) {
  const std::size_t block = dtype_block(t);
  const std::size_t blocks = count / block + (count % block != 0 ? 1 : 0);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(blocks, dtype_size(t), &bytes)) throw std::length_error("buffer of more than 2^64 bytes");
  return bytes;
}

DType promote(DType a, DType b) {
  if (is_quantized(a)) a = DType::F32;
  if (is_quantized(b)) b = DType::F32;
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) {
    const DType pa = is_complex(a) ? complex_part(a) : a, pb = is_complex(b) ? complex_part(b) : b;
    return complex_of(promote(pa, pb));
  }
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  DCat ca = dtype_category(a);
  DCat cb = dtype_category(b);
  if (ca == DCat::Float && cb == DCat::Float) {
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) {
      return DType::F32;
    }
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (ca == DCat::Float) return a;
  if (cb == DCat::Float) return b;
  if (ca == cb) return dtype_size(a) >= dtype_size(b) ? a : b;
  // One unsigned, one signed: a signed type wider than the unsigned one.
  DType u = ca == DCat::Unsigned ? a : b;
  DType s = ca == DCat::Unsigned ? b : a;
  if (dtype_size(s) > dtype_size(u)) return s;
  return dtype_size(u) == 1 ? DType::I16 : DType::I64;
}

DType promote_with_scalar(DType t, bool scalar_is_float) {
  if (is_quantized(t)) return DType::F32;
  if (is_complex(t)) return t;
  if (scalar_is_float) return is_float(t) ? t : kDefaultFloat;
  return t == DType::Bool ? kDefaultInt : t;
}

std::int64_t wrap_int(std::int64_t v, DType t) {
  switch (t) {
    case DType::Bool: return v != 0;
    case DType::U8: return static_cast<std::uint8_t>(v);
    case DType::I8: return static_cast<std::int8_t>(v);
    case DType::I16: return static_cast<std::int16_t>(v);
    case DType::U32: return static_cast<std::uint32_t>(v);
    case DType::I32: return static_cast<std::int32_t>(v);
    default: return v;
  }
}

std::int64_t int_min(DType t) {
  switch (t) {
    case DType::I8: return INT8_MIN;
    case DType::I16: return INT16_MIN;
    case DType::I32: return INT32_MIN;
    case DType::I64: return INT64_MIN;
    default: return 0;  // bool and unsigned
  }
}

std::int64_t int_max(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::U8: return UINT8_MAX;
    case DType::I8: return INT8_MAX;
    case DType::I16: return INT16_MAX;
    case DType::U32: return UINT32_MAX;
    case DType::I32: return INT32_MAX;
    default: return INT64_MAX;
  }
}

std::optional<std::int64_t> truncate_to_int(double v, DType t) {
  if (!std::isfinite(v)) return std::nullopt;
  const double whole = std::trunc(v);
  // 2^63 is exact as a double; anything at or above it (or below -2^63) fits no int64.
  if (whole >= 9223372036854775808.0 || whole < -9223372036854775808.0) return std::nullopt;
  const auto i = static_cast<std::int64_t>(whole);
  if (!fits_int(i, t)) return std::nullopt;
  return i;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into inf: right
  return static_cast<std::uint16_t>(sign | half);
}

float half_to_float(std::uint16_t h) {
  std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      x = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_to_float(std::uint16_t h) {
  std::uint32_t x = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::F32: return static_cast<double>(static_cast<float>(v));
    case DType::F16: return half_to_float(float_to_half(static_cast<float>(v)));
    case DType::BF16: return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    default: return v;
  }
}

}  // namespace tl::tensor
