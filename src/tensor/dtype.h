// SPDX-License-Identifier: Apache-2.0
// Element types: names, sizes, categories, the promotion rules, and f16/bf16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tl::tensor {

// X(enumerator, lisp name, bytes, category) in promotion order within each category. The
// quantized block formats come next: their bytes are a block's (dtype_block elements: an f16
// scale and the packed values, GGUF's layout), and they hold weights to be read, never
// computed into (see is_quantized). The complex types come last: a complex tensor is a Lisp
// value over a real node whose last axis holds (real, imaginary) (see is_complex); no graph
// node has a complex dtype.
#define TL_DTYPES(X)         \
  X(Bool, "bool", 1, Bool)   \
  X(U8, "u8", 1, Unsigned)   \
  X(I8, "i8", 1, Signed)     \
  X(I16, "i16", 2, Signed)   \
  X(U32, "u32", 4, Unsigned) \
  X(I32, "i32", 4, Signed)   \
  X(I64, "i64", 8, Signed)   \
  X(F16, "f16", 2, Float)    \
  X(BF16, "bf16", 2, Float)  \
  X(F32, "f32", 4, Float)    \
  X(F64, "f64", 8, Float)    \
  X(Q8_0, "q8_0", 34, Quant) \
  X(Q4_0, "q4_0", 18, Quant) \
  X(C64, "c64", 8, Complex)  \
  X(C128, "c128", 16, Complex)

enum class DType : std::uint8_t {
#define TL_X(e, name, bytes, cat) e,
  TL_DTYPES(TL_X)
#undef TL_X
};

enum class DCat : std::uint8_t { Bool, Unsigned, Signed, Float, Quant, Complex };

constexpr DType kDefaultFloat = DType::F32;
constexpr DType kDefaultInt = DType::I32;

std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
// Bytes of one element (of a quantized dtype: of one block of dtype_block(t) elements).
std::size_t dtype_size(DType t);
DCat dtype_category(DType t);
// Quantized block formats (GGUF's, in its layout), per block of 32 elements along the last axis:
//   q8_0: f16 scale d, then 32 int8 q; element j = d * q[j]
//   q4_0: f16 scale d, then 16 bytes; byte j holds element j in its low 4 bits and element
//         j + 16 in its high 4 bits, each as u + 8 for u in [-8, 7]; element = d * u
// A quantized tensor is data to read: views, gather and cast to a float type (dequantizing
// where the value is read, inside the kernel that uses it) take one; nothing computes into
// one except `quantize` (on the host).
inline bool is_quantized(DType t) { return dtype_category(t) == DCat::Quant; }
// Elements per block: 32 for the quantized formats, 1 for every other dtype.
inline std::size_t dtype_block(DType t) { return is_quantized(t) ? 32 : 1; }
// Bytes of COUNT elements of dtype t (for a quantized dtype COUNT is a multiple of its block:
// whole blocks; a partial last block counts whole). Throws std::length_error past size_t.
std::size_t storage_bytes(DType t, std::size_t count);
// Elements in BYTES of storage of dtype t.
inline std::size_t storage_count(DType t, std::size_t bytes) { return bytes / dtype_size(t) * dtype_block(t); }
inline bool is_float(DType t) { return dtype_category(t) == DCat::Float; }
// c64 and c128: pairs (real, imaginary) of f32 and f64. The graph computes with the real
// parts: a complex tensor of shape S is a real node of shape S + (2), its storage exactly
// NumPy's complex64/complex128 (interleaved); tensor_value.h keeps the distinction.
inline bool is_complex(DType t) { return dtype_category(t) == DCat::Complex; }
// The real type of a complex type's parts (c64: f32, c128: f64).
inline DType complex_part(DType t) { return t == DType::C128 ? DType::F64 : DType::F32; }
// The complex type whose parts are t: f64 gives c128, any other real type c64; a complex
// type is itself.
inline DType complex_of(DType t) {
  if (is_complex(t)) return t;
  return t == DType::F64 ? DType::C128 : DType::C64;
}
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
//  - f16 with bf16: f32; otherwise the wider float;
//  - a quantized type counts as f32 (what it dequantizes to);
//  - complex with anything: complex, with parts of the promoted part types (c64 with f64 or
//    c128: c128; c64 with an integer, bool or f16: c64), as PyTorch does.
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
