// SPDX-License-Identifier: Apache-2.0
// Element types: names, sizes, categories, the promotion rules, and f16/bf16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tl::tensor {

// X(enumerator, lisp name, bytes, category) in promotion order within each category.
#define TL_DTYPES(X)           \
  X(Bool, "bool", 1, Bool)     \
  X(U8, "u8", 1, Unsigned)     \
  X(I8, "i8", 1, Signed)       \
  X(I16, "i16", 2, Signed)     \
  X(U32, "u32", 4, Unsigned)   \
  X(I32, "i32", 4, Signed)     \
  X(I64, "i64", 8, Signed)     \
  X(F16, "f16", 2, Float)      \
  X(BF16, "bf16", 2, Float)    \
  X(F32, "f32", 4, Float)      \
  X(F64, "f64", 8, Float)

enum class DType : std::uint8_t {
#define TL_X(e, name, bytes, cat) e,
  TL_DTYPES(TL_X)
#undef TL_X
};

enum class DCat : std::uint8_t { Bool, Unsigned, Signed, Float };

constexpr DType kDefaultFloat = DType::F32;
constexpr DType kDefaultInt = DType::I32;

std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
std::size_t dtype_size(DType t);
DCat dtype_category(DType t);
inline bool is_float(DType t) { return dtype_category(t) == DCat::Float; }
inline bool is_int(DType t) {
  return dtype_category(t) == DCat::Signed || dtype_category(t) == DCat::Unsigned;
}
// Bits of an integer type (bool: 1).
int dtype_bits(DType t);

// The type two tensor operands are converted to before a binary op.
//  - equal types: that type;
//  - bool with anything: the other type;
//  - two signed or two unsigned integers: the wider;
//  - unsigned with signed: the smallest signed type holding both (u8+i8 -> i16,
//    u32+i32 -> i64, u32+i64 -> i64);
//  - integer with float: the float type (as PyTorch and JAX do, not NumPy's widening);
//  - f16 with bf16: f32; otherwise the wider float.
DType promote(DType a, DType b);

// The type of a tensor combined with a Lisp number (a "weak" scalar that never widens the
// tensor): an integer keeps the tensor's type, except that bool becomes i32; a float keeps
// a float tensor's type and turns an integer or bool tensor into f32.
DType promote_with_scalar(DType t, bool scalar_is_float);

// An integer reduced to the range of integer type t (two's complement wrap); bool: v != 0.
std::int64_t wrap_int(std::int64_t v, DType t);

// The smallest and largest values of integer type t (bool: 0 and 1).
std::int64_t int_min(DType t);
std::int64_t int_max(DType t);

// Whether v is a value of integer type t (bool: 0 or 1).
inline bool fits_int(std::int64_t v, DType t) { return v >= int_min(t) && v <= int_max(t); }

// Double v truncated toward zero as a value of integer type t (bool: 0 or 1), as PyTorch
// converts; nullopt when v is NaN, infinite, or out of t's range once truncated.
std::optional<std::int64_t> truncate_to_int(double v, DType t);

// IEEE half and bfloat16, round to nearest even.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t h);
// V rounded to float dtype t's precision (f64: v itself).
double round_to_dtype(double v, DType t);

}  // namespace tl::tensor
