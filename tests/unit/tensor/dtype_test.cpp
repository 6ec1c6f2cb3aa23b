// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/dtype.h: names and aliases, sizes and categories, the full promotion
// table (written out by hand from the rules in dtype.h), and f16/bf16 conversion.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "tensor/dtype.h"

using tl::tensor::DCat;
using tl::tensor::DType;

namespace Catch {
template <>
struct StringMaker<DType> {
  static std::string convert(DType t) { return std::string(tl::tensor::dtype_name(t)); }
};
}  // namespace Catch

namespace {

constexpr DType kAll[] = {DType::Bool, DType::U8,  DType::I8,   DType::I16, DType::U32, DType::I32,
                          DType::I64,  DType::F16, DType::BF16, DType::F32, DType::F64};
constexpr int kN = static_cast<int>(std::size(kAll));

float bits_to_float(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::uint32_t float_to_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(std::uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

}  // namespace

TEST_CASE("dtype: names round trip and facts per dtype", "[tensor][dtype]") {
  struct Fact {
    DType t;
    const char* name;
    std::size_t bytes;
    DCat cat;
    int bits;
  };
  const Fact facts[] = {
      {DType::Bool, "bool", 1, DCat::Bool, 1},    {DType::U8, "u8", 1, DCat::Unsigned, 8},
      {DType::I8, "i8", 1, DCat::Signed, 8},      {DType::I16, "i16", 2, DCat::Signed, 16},
      {DType::U32, "u32", 4, DCat::Unsigned, 32}, {DType::I32, "i32", 4, DCat::Signed, 32},
      {DType::I64, "i64", 8, DCat::Signed, 64},   {DType::F16, "f16", 2, DCat::Float, 16},
      {DType::BF16, "bf16", 2, DCat::Float, 16},  {DType::F32, "f32", 4, DCat::Float, 32},
      {DType::F64, "f64", 8, DCat::Float, 64},
  };
  REQUIRE(std::size(facts) == std::size(kAll));
  for (const auto& f : facts) {
    INFO(f.name);
    CHECK(tl::tensor::dtype_name(f.t) == f.name);
    CHECK(tl::tensor::dtype_from_name(f.name) == f.t);
    CHECK(tl::tensor::dtype_size(f.t) == f.bytes);
    CHECK(tl::tensor::dtype_category(f.t) == f.cat);
    CHECK(tl::tensor::dtype_bits(f.t) == f.bits);
    CHECK(tl::tensor::is_float(f.t) == (f.cat == DCat::Float));
    CHECK(tl::tensor::is_int(f.t) == (f.cat == DCat::Signed || f.cat == DCat::Unsigned));
  }
  CHECK(tl::tensor::kDefaultFloat == DType::F32);
  CHECK(tl::tensor::kDefaultInt == DType::I32);
}

TEST_CASE("dtype: dtype_from_name accepts the long aliases and rejects others", "[tensor][dtype]") {
  using tl::tensor::dtype_from_name;
  const std::pair<const char*, DType> aliases[] = {
      {"float32", DType::F32},   {"float", DType::F32},   {"float64", DType::F64},
      {"double", DType::F64},    {"float16", DType::F16}, {"half", DType::F16},
      {"bfloat16", DType::BF16}, {"int8", DType::I8},     {"int16", DType::I16},
      {"int32", DType::I32},     {"int", DType::I32},     {"int64", DType::I64},
      {"long", DType::I64},      {"uint8", DType::U8},    {"uint32", DType::U32},
  };
  for (const auto& [name, t] : aliases) {
    INFO(name);
    CHECK(dtype_from_name(name) == t);
  }
  for (const char* bad : {"", "F32", "f128", "u16", "u64", "uint64", "boolean", "f32 ", "i"}) {
    INFO(bad);
    CHECK_FALSE(dtype_from_name(bad).has_value());
  }
}

TEST_CASE("dtype: promote follows the table for every pair", "[tensor][dtype]") {
  // Written out by hand from the rules in dtype.h; row a, column b, same order as kAll.
  constexpr DType b = DType::Bool, u8 = DType::U8, i8 = DType::I8, i16 = DType::I16,
                  u32 = DType::U32, i32 = DType::I32, i64 = DType::I64, f16 = DType::F16,
                  bf = DType::BF16, f32 = DType::F32, f64 = DType::F64;
  // clang-format off
  const DType table[kN][kN] = {
      //       bool  u8   i8   i16  u32  i32  i64  f16  bf16 f32  f64
      /*bool*/ {b, u8, i8, i16, u32, i32, i64, f16, bf, f32, f64},
      /*u8  */ {u8, u8, i16, i16, u32, i32, i64, f16, bf, f32, f64},
      /*i8  */ {i8, i16, i8, i16, i64, i32, i64, f16, bf, f32, f64},
      /*i16 */ {i16, i16, i16, i16, i64, i32, i64, f16, bf, f32, f64},
      /*u32 */ {u32, u32, i64, i64, u32, i64, i64, f16, bf, f32, f64},
      /*i32 */ {i32, i32, i32, i32, i64, i32, i64, f16, bf, f32, f64},
      /*i64 */ {i64, i64, i64, i64, i64, i64, i64, f16, bf, f32, f64},
      /*f16 */ {f16, f16, f16, f16, f16, f16, f16, f16, f32, f32, f64},
      /*bf16*/ {bf, bf, bf, bf, bf, bf, bf, f32, bf, f32, f64},
      /*f32 */ {f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
      /*f64 */ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
  };
  // clang-format on
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      DType x = kAll[i];
      DType y = kAll[j];
      INFO("promote(" << tl::tensor::dtype_name(x) << ", " << tl::tensor::dtype_name(y) << ")");
      CHECK(tl::tensor::promote(x, y) == table[i][j]);
      // The table is symmetric, and so is promote.
      CHECK(table[i][j] == table[j][i]);
      CHECK(tl::tensor::promote(x, y) == tl::tensor::promote(y, x));
    }
  }
}

TEST_CASE("dtype: promote_with_scalar never widens the tensor", "[tensor][dtype]") {
  using tl::tensor::promote_with_scalar;
  for (DType t : kAll) {
    INFO(tl::tensor::dtype_name(t));
    // An integer scalar keeps the tensor's type; bool becomes the default int.
    CHECK(promote_with_scalar(t, false) == (t == DType::Bool ? DType::I32 : t));
    // A float scalar keeps a float type; anything else becomes the default float.
    CHECK(promote_with_scalar(t, true) == (tl::tensor::is_float(t) ? t : DType::F32));
  }
}

TEST_CASE("dtype: float_to_half converts exact values", "[tensor][dtype]") {
  using tl::tensor::float_to_half;
  CHECK(float_to_half(0.0f) == 0x0000);
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(0.5f) == 0x3800);
  CHECK(float_to_half(65504.0f) == 0x7bff);  // the largest half
  CHECK(float_to_half(-65504.0f) == 0xfbff);
  CHECK(float_to_half(0.1f) == 0x2e66);
  CHECK(float_to_half(std::ldexp(1.0f, -14)) == 0x0400);  // the smallest normal
  // Subnormals.
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // the smallest subnormal
  CHECK(float_to_half(-std::ldexp(1.0f, -24)) == 0x8001);
  CHECK(float_to_half(std::ldexp(3.0f, -24)) == 0x0003);
  CHECK(float_to_half(std::ldexp(1023.0f, -24)) == 0x03ff);  // the largest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -20)) == 0x0010);
  // Below half the smallest subnormal: zero (with its sign).
  CHECK(float_to_half(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(float_to_half(-std::ldexp(1.0f, -26)) == 0x8000);
  CHECK(float_to_half(std::ldexp(1.0f, -40)) == 0x0000);
  CHECK(float_to_half(std::numeric_limits<float>::denorm_min()) == 0x0000);
  // Overflow to infinity.
  CHECK(float_to_half(65536.0f) == 0x7c00);
  CHECK(float_to_half(1e6f) == 0x7c00);
  CHECK(float_to_half(-1e6f) == 0xfc00);
  CHECK(float_to_half(std::numeric_limits<float>::max()) == 0x7c00);
  CHECK(float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(float_to_half(65519.0f) == 0x7bff);  // below the midpoint to 65536: rounds down
  // NaN stays NaN, including a NaN whose payload is only in the low float bits.
  CHECK(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  CHECK(half_is_nan(float_to_half(bits_to_float(0x7f800001u))));
  CHECK(half_is_nan(float_to_half(bits_to_float(0xffc00000u))));
  CHECK((float_to_half(bits_to_float(0xffc00000u)) & 0x8000u) == 0x8000u);
}

TEST_CASE("dtype: float_to_half rounds to nearest, ties to even", "[tensor][dtype]") {
  using tl::tensor::float_to_half;
  const float ulp1 = std::ldexp(1.0f, -10);  // half's spacing at 1.0
  // Exactly between two halves: to the one with an even mantissa.
  CHECK(float_to_half(1.0f + ulp1 / 2) == 0x3c00);      // between 0x3c00 and 0x3c01
  CHECK(float_to_half(1.0f + 3 * ulp1 / 2) == 0x3c02);  // between 0x3c01 and 0x3c02
  CHECK(float_to_half(1.0f + 5 * ulp1 / 2) == 0x3c02);  // between 0x3c02 and 0x3c03
  // Off the midpoint: to the nearer.
  CHECK(float_to_half(1.0f + ulp1 / 2 + std::ldexp(1.0f, -20)) == 0x3c01);
  CHECK(float_to_half(1.0f + ulp1 / 2 - std::ldexp(1.0f, -20)) == 0x3c00);
  // The midpoint between 65504 and 65536 rounds to even, which carries into infinity.
  CHECK(float_to_half(65520.0f) == 0x7c00);
  CHECK(float_to_half(-65520.0f) == 0xfc00);
  // 2049 lies between 2048 and 2050.
  CHECK(float_to_half(2049.0f) == float_to_half(2048.0f));
  CHECK(float_to_half(2051.0f) == float_to_half(2052.0f));
  // Ties among subnormals (spacing 2^-24).
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // 0.5 ulp: to 0
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);  // 1.5 ulp: to 2
  CHECK(float_to_half(std::ldexp(5.0f, -25)) == 0x0002);  // 2.5 ulp: to 2
  CHECK(float_to_half(std::ldexp(3.0f, -26)) == 0x0001);  // 0.75 ulp: to 1
  CHECK(float_to_half(std::ldexp(5.0f, -26)) == 0x0001);  // 1.25 ulp: to 1
  // Just under the smallest normal, by half a subnormal ulp: rounds up into the normals.
  CHECK(float_to_half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)) == 0x0400);
}

TEST_CASE("dtype: half_to_float converts exact values", "[tensor][dtype]") {
  using tl::tensor::half_to_float;
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(half_to_float(0x0200) == std::ldexp(1.0f, -15));
  CHECK(half_to_float(0x3555) == 0.333251953125f);
  CHECK(half_to_float(0x0000) == 0.0f);
  CHECK_FALSE(std::signbit(half_to_float(0x0000)));
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(half_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(std::isnan(half_to_float(0x7c01)));
  CHECK(std::isnan(half_to_float(0xfe00)));
}

TEST_CASE("dtype: every half survives half -> float -> half", "[tensor][dtype]") {
  int mismatches = 0;
  std::uint32_t first = 0;
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    auto x = static_cast<std::uint16_t>(h);
    float f = tl::tensor::half_to_float(x);
    bool ok = half_is_nan(x) ? std::isnan(f) && half_is_nan(tl::tensor::float_to_half(f))
                             : tl::tensor::float_to_half(f) == x;
    if (!ok && mismatches++ == 0) first = h;
  }
  INFO("first mismatch: 0x" << std::hex << first);
  CHECK(mismatches == 0);
}

TEST_CASE("dtype: bfloat16 conversion", "[tensor][dtype]") {
  using tl::tensor::bf16_to_float;
  using tl::tensor::float_to_bf16;
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(-2.0f) == 0xc000);
  CHECK(float_to_bf16(0.0f) == 0x0000);
  CHECK(float_to_bf16(-0.0f) == 0x8000);
  CHECK(float_to_bf16(256.0f) == 0x4380);
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(bf16_to_float(0x4380) == 256.0f);
  CHECK(bf16_to_float(0x3f81) == 1.0f + std::ldexp(1.0f, -7));
  CHECK(bf16_to_float(0x7f7f) == bits_to_float(0x7f7f0000u));  // the largest bf16
  CHECK(bf16_to_float(0x0001) == bits_to_float(0x00010000u));  // a subnormal
  // Round to nearest, ties to even (spacing 2^-7 at 1.0).
  const float ulp1 = std::ldexp(1.0f, -7);
  CHECK(float_to_bf16(1.0f + ulp1 / 2) == 0x3f80);
  CHECK(float_to_bf16(1.0f + 3 * ulp1 / 2) == 0x3f82);
  CHECK(float_to_bf16(1.0f + ulp1 / 2 + std::ldexp(1.0f, -20)) == 0x3f81);
  CHECK(float_to_bf16(257.0f) == 0x4380);                      // between 256 and 258: to 256
  CHECK(float_to_bf16(259.0f) == 0x4382);                      // between 258 and 260: to 260
  CHECK(float_to_bf16(bits_to_float(0x3f808000u)) == 0x3f80);  // tie, even below
  CHECK(float_to_bf16(bits_to_float(0x3f818000u)) == 0x3f82);  // tie, even above
  CHECK(float_to_bf16(bits_to_float(0x3f807fffu)) == 0x3f80);
  CHECK(float_to_bf16(bits_to_float(0x3f808001u)) == 0x3f81);
  // Overflow: the largest float lies above the midpoint to 2^128, so it rounds to infinity.
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(float_to_bf16(-std::numeric_limits<float>::max()) == 0xff80);
  CHECK(float_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(float_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(bf16_to_float(0x7f80) == std::numeric_limits<float>::infinity());
  // NaN stays NaN, even when its payload is only in the bits that are cut off.
  CHECK(bf16_is_nan(float_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(bf16_is_nan(float_to_bf16(bits_to_float(0x7f800001u))));
  CHECK(bf16_is_nan(float_to_bf16(bits_to_float(0xff800001u))));
  CHECK(bf16_is_nan(float_to_bf16(bits_to_float(0x7fffffffu))));
  CHECK(std::isnan(bf16_to_float(0x7fc0)));
  // bf16 is the upper half of a float: every float whose low 16 bits are zero is exact.
  for (float f : {1.5f, -3.0f, 1e30f, 1e-30f, 0.15625f}) {
    std::uint32_t upper = float_to_bits(f) & 0xffff0000u;
    CHECK(float_to_bf16(bits_to_float(upper)) == upper >> 16);
  }
}

TEST_CASE("dtype: every bf16 survives bf16 -> float -> bf16", "[tensor][dtype]") {
  int mismatches = 0;
  std::uint32_t first = 0;
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    auto x = static_cast<std::uint16_t>(h);
    float f = tl::tensor::bf16_to_float(x);
    bool ok = bf16_is_nan(x) ? std::isnan(f) && bf16_is_nan(tl::tensor::float_to_bf16(f))
                             : tl::tensor::float_to_bf16(f) == x;
    if (!ok && mismatches++ == 0) first = h;
  }
  INFO("first mismatch: 0x" << std::hex << first);
  CHECK(mismatches == 0);
}

TEST_CASE("dtype: the complex types promote as PyTorch's", "[tensor][dtype]") {
  using tl::tensor::promote;
  constexpr DType c64 = DType::C64, c128 = DType::C128;
  CHECK(tl::tensor::dtype_name(c64) == "c64");
  CHECK(tl::tensor::dtype_size(c128) == 16);
  CHECK(tl::tensor::dtype_from_name("complex64") == c64);
  CHECK(tl::tensor::dtype_from_name("cdouble") == c128);
  CHECK(tl::tensor::is_complex(c64));
  CHECK_FALSE(tl::tensor::is_float(c64));
  CHECK_FALSE(tl::tensor::is_int(c128));
  CHECK(tl::tensor::complex_part(c64) == DType::F32);
  CHECK(tl::tensor::complex_part(c128) == DType::F64);
  CHECK(tl::tensor::complex_of(DType::F64) == c128);
  CHECK(tl::tensor::complex_of(DType::I64) == c64);
  CHECK(tl::tensor::complex_of(DType::F16) == c64);
  for (DType t : kAll) {
    INFO(tl::tensor::dtype_name(t));
    // c64 with f64 widens to c128; with anything narrower it stays c64; c128 stays.
    CHECK(promote(c64, t) == (t == DType::F64 ? c128 : c64));
    CHECK(promote(t, c64) == promote(c64, t));
    CHECK(promote(c128, t) == c128);
    CHECK(tl::tensor::promote_with_scalar(c64, true) == c64);
  }
  CHECK(promote(c64, c128) == c128);
  CHECK(promote(DType::Q8_0, c64) == c64);
}
