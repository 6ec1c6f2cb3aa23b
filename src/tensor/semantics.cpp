// SPDX-License-Identifier: Apache-2.0
// The elementwise primitives (semantics.h) evaluated on numbers.
#include "tensor/semantics.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tl::tensor {

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

Scalar int_of(std::int64_t v, DType t) { return Scalar{wrap_int(v, t), 0}; }
Scalar float_of(double v) { return Scalar{0, v}; }
Scalar bool_of(bool v) { return Scalar{v ? 1 : 0, 0}; }

// The bits of `a` stored as dtype t, zero-extended.
std::uint64_t bits_of(Scalar a, DType t) {
  switch (t) {
    case DType::F64: {
      std::uint64_t b;
      std::memcpy(&b, &a.f, 8);
      return b;
    }
    case DType::F32: {
      float f = static_cast<float>(a.f);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DType::F16: return float_to_half(static_cast<float>(a.f));
    case DType::BF16: return float_to_bf16(static_cast<float>(a.f));
    case DType::Bool:
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::U32:
    case DType::I32:
    case DType::I64: {
      const int bits = static_cast<int>(dtype_size(t)) * 8;
      return bits == 64 ? u(a.i) : u(a.i) & ((std::uint64_t{1} << bits) - 1);
    }
    case DType::Q8_0:
    case DType::Q4_0: break;  // no scalar of a block format (bitcast refuses them)
    case DType::C64:
    case DType::C128: break;  // never a node's dtype
  }
  return 0;
}

Scalar from_bits(std::uint64_t b, DType t) {
  switch (t) {
    case DType::F64: {
      double d;
      std::memcpy(&d, &b, 8);
      return float_of(d);
    }
    case DType::F32: {
      auto w = static_cast<std::uint32_t>(b);
      float f;
      std::memcpy(&f, &w, 4);
      return float_of(f);
    }
    case DType::F16: return float_of(half_to_float(static_cast<std::uint16_t>(b)));
    case DType::BF16: return float_of(bf16_to_float(static_cast<std::uint16_t>(b)));
    case DType::Bool:
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::U32:
    case DType::I32:
    case DType::I64: return int_of(static_cast<std::int64_t>(b), t);
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::C64:
    case DType::C128: break;
  }
  return Scalar{};
}

// The machine of semantics.h on numbers.
struct Evaluate {
  using V = Scalar;
  static bool fl(DType t) { return is_float(t); }
  static bool uns(DType t) { return dtype_category(t) == DCat::Unsigned || t == DType::Bool; }

  V int_const(std::int64_t v, DType t) { return int_of(v, t); }
  V float_const(double v, DType) { return float_of(v); }
  V neg(V a, DType t) { return fl(t) ? float_of(-a.f) : int_of(static_cast<std::int64_t>(0 - u(a.i)), t); }
  V add(V a, V b, DType t) { return fl(t) ? float_of(a.f + b.f) : int_of(static_cast<std::int64_t>(u(a.i) + u(b.i)), t); }
  V mul(V a, V b, DType t) { return fl(t) ? float_of(a.f * b.f) : int_of(static_cast<std::int64_t>(u(a.i) * u(b.i)), t); }
  V div(V a, V b, DType t) {
    if (fl(t)) return float_of(a.f / b.f);
    return int_of(uns(t) ? static_cast<std::int64_t>(u(a.i) / u(b.i)) : a.i / b.i, t);
  }
  V rem(V a, V b, DType t) { return int_of(uns(t) ? static_cast<std::int64_t>(u(a.i) % u(b.i)) : a.i % b.i, t); }
  V bit_and(V a, V b, DType t) { return int_of(a.i & b.i, t); }
  V bit_or(V a, V b, DType t) { return int_of(a.i | b.i, t); }
  V bit_xor(V a, V b, DType t) { return int_of(a.i ^ b.i, t); }
  V lt(V a, V b, DType t) {
    if (fl(t)) return bool_of(a.f < b.f);
    return bool_of(uns(t) ? u(a.i) < u(b.i) : a.i < b.i);
  }
  V eq(V a, V b, DType t) { return bool_of(fl(t) ? a.f == b.f : a.i == b.i); }
  V unordered(V a, V b, DType) { return bool_of(std::isnan(a.f) || std::isnan(b.f)); }
  V select(V c, V a, V b) { return c.i != 0 ? a : b; }
  V sqrt(V a, DType) { return float_of(std::sqrt(a.f)); }
  V exp2(V a, DType) { return float_of(std::exp2(a.f)); }
  V log2(V a, DType) { return float_of(std::log2(a.f)); }
  V sin(V a, DType) { return float_of(std::sin(a.f)); }
  V cos(V a, DType) { return float_of(std::cos(a.f)); }
  // Computed in double, then rounded to the dtype: for add, mul, div and sqrt of f32 operands
  // that is the correctly rounded f32 result.
  V round(V a, DType t) { return float_of(round_to_dtype(a.f, t)); }
  V cast(V a, DType from, DType to) { return cast_scalar(a, from, to); }
  V bitcast(V a, DType from, DType to) { return from_bits(bits_of(a, from), to); }
};

}  // namespace

Scalar cast_scalar(Scalar a, DType from, DType to) {
  if (is_float(from)) {
    if (is_float(to)) return float_of(a.f);
    if (to == DType::Bool) return bool_of(a.f != 0);
    if (std::isnan(a.f)) return Scalar{};
    const double tv = std::trunc(a.f);
    if (tv >= 9.2233720368547758e18 || tv < -9.2233720368547758e18) return Scalar{};
    return int_of(static_cast<std::int64_t>(tv), to);
  }
  if (is_float(to)) {
    // Unsigned values are held zero-extended, so the signed conversion is exact for them too.
    return float_of(static_cast<double>(a.i));
  }
  return to == DType::Bool ? bool_of(a.i != 0) : int_of(a.i, to);
}

Scalar evaluate(Op op, DType operand, DType result, std::span<const Scalar> x) {
  Evaluate m;
  return elementwise(m, op, operand, result, x);
}

Scalar reduce_identity(ReduceKind kind, DType t) {
  switch (kind) {
    case ReduceKind::Sum: return {0, 0.0};
    case ReduceKind::Prod: return {1, 1.0};
    case ReduceKind::Max: {
      Scalar s{0, -std::numeric_limits<double>::infinity()};
      if (dtype_category(t) == DCat::Signed) {
        s.i =
            dtype_bits(t) == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (dtype_bits(t) - 1));
      }
      return s;
    }
  }
  TL_UNREACHABLE("reduce_identity: unknown reduce kind");
}

}  // namespace tl::tensor
