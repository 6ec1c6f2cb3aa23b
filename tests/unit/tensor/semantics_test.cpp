// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/semantics.h: the elementwise primitives on numbers, at the edges ops.def
// defines (division by 0 and -1, wrapping, NaN, signed zeros, casts out of range, bitcasts).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tensor/semantics.h"
#include "tensorlisp/error.hpp"

using tl::tensor::DType;
using tl::tensor::Op;
using tl::tensor::Scalar;

namespace {

std::int64_t ints(Op op, DType t, std::int64_t a, std::int64_t b) {
  const Scalar x[2] = {{a, 0}, {b, 0}};
  const DType result = op == Op::Cmplt || op == Op::Cmpeq ? DType::Bool : t;
  return tl::tensor::evaluate(op, t, result, x).i;
}

double floats(Op op, DType t, double a, double b = 0) {
  const Scalar x[2] = {{0, a}, {0, b}};
  return tl::tensor::evaluate(op, t, t, std::span<const Scalar>(x, tl::tensor::op_info(op).arity)).f;
}

bool compare(Op op, double a, double b) {
  const Scalar x[2] = {{0, a}, {0, b}};
  return tl::tensor::evaluate(op, DType::F32, DType::Bool, x).i != 0;
}

}  // namespace

TEST_CASE("integer division and remainder are defined for every divisor", "[semantics]") {
  CHECK(ints(Op::Idiv, DType::I32, -7, 2) == -3);
  CHECK(ints(Op::Mod, DType::I32, -7, 2) == -1);
  CHECK(ints(Op::Mod, DType::I32, 7, -2) == 1);
  CHECK(ints(Op::Idiv, DType::I32, 5, 0) == 0);
  CHECK(ints(Op::Mod, DType::I32, 5, 0) == 5);
  CHECK(ints(Op::Idiv, DType::I32, INT32_MIN, -1) == INT32_MIN);  // -a wraps
  CHECK(ints(Op::Mod, DType::I32, INT32_MIN, -1) == 0);
  CHECK(ints(Op::Idiv, DType::I64, INT64_MIN, -1) == INT64_MIN);
  // Unsigned operands divide as unsigned: 0xFFFFFFFF / 2.
  CHECK(ints(Op::Idiv, DType::U32, 0xFFFFFFFFll, 2) == 0x7FFFFFFFll);
  CHECK(ints(Op::Mod, DType::U8, 255, 7) == 3);
}

TEST_CASE("integer arithmetic wraps to the dtype", "[semantics]") {
  CHECK(ints(Op::Add, DType::I8, 127, 1) == -128);
  CHECK(ints(Op::Mul, DType::U8, 16, 17) == 16);
  CHECK(ints(Op::Add, DType::I64, INT64_MAX, 1) == INT64_MIN);
  const Scalar x[1] = {{INT32_MIN, 0}};
  CHECK(tl::tensor::evaluate(Op::Neg, DType::I32, DType::I32, x).i == INT32_MIN);
  // Bool add is or, mul is and.
  CHECK(ints(Op::Add, DType::Bool, 1, 1) == 1);
  CHECK(ints(Op::Mul, DType::Bool, 1, 0) == 0);
  // Unsigned comparison and max.
  CHECK(ints(Op::Cmplt, DType::U32, 1, 0xFFFFFFFFll) == 1);
  CHECK(ints(Op::Max, DType::U32, 1, 0xFFFFFFFFll) == 0xFFFFFFFFll);
  CHECK(ints(Op::Max, DType::I32, -1, -5) == -1);
}

TEST_CASE("float ops follow IEEE and ops.def at NaN and signed zeros", "[semantics]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(floats(Op::Max, DType::F32, nan, 1)));
  CHECK(std::isnan(floats(Op::Max, DType::F32, 1, nan)));
  // IEEE maximum: +0 of -0 and +0 in either order, -0 only of two
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    CHECK(!std::signbit(floats(Op::Max, t, 0.0, -0.0)));
    CHECK(!std::signbit(floats(Op::Max, t, -0.0, 0.0)));
    CHECK(!std::signbit(floats(Op::Max, t, 0.0, 0.0)));
    CHECK(std::signbit(floats(Op::Max, t, -0.0, -0.0)));
    CHECK(floats(Op::Max, t, -0.0, -1.0) == 0.0);
    CHECK(std::signbit(floats(Op::Max, t, -0.0, -1.0)));
    CHECK(floats(Op::Max, t, 3.0, 3.0) == 3.0);
  }
  CHECK(floats(Op::Recip, DType::F32, -0.0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(floats(Op::Sqrt, DType::F64, -1)));
  CHECK(floats(Op::Log2, DType::F64, 0) == -std::numeric_limits<double>::infinity());
  // sin keeps a zero's sign; sin and cos of inf are NaN; cos of the float nearest pi/2 is
  // that float's distance from pi/2, rounded to f32 (not 0, nor cos of the f64 pi/2).
  CHECK(std::signbit(floats(Op::Sin, DType::F32, -0.0)));
  CHECK(floats(Op::Cos, DType::F32, -0.0) == 1.0);
  CHECK(std::isnan(floats(Op::Cos, DType::F32, std::numeric_limits<double>::infinity())));
  CHECK(std::isnan(floats(Op::Sin, DType::F64, -std::numeric_limits<double>::infinity())));
  CHECK(floats(Op::Cos, DType::F32, 1.57079637f) == static_cast<double>(-4.37113883e-8f));
  CHECK(!compare(Op::Cmplt, nan, 1));
  CHECK(!compare(Op::Cmpeq, nan, nan));
  // Results are rounded to the dtype: 1/3 in f32, in f16.
  CHECK(floats(Op::Recip, DType::F32, 3) == static_cast<double>(1.0f / 3.0f));
  CHECK(floats(Op::Add, DType::F16, 2048, 1) == 2048);  // 2049 is not an f16
}

TEST_CASE("casts and bitcasts", "[semantics]") {
  using tl::tensor::cast_scalar;
  CHECK(cast_scalar({0, 300.7}, DType::F32, DType::U8).i == 44);   // truncates, then wraps
  CHECK(cast_scalar({0, -1.5}, DType::F32, DType::I32).i == -1);
  CHECK(cast_scalar({0, std::nan("")}, DType::F32, DType::I32).i == 0);
  CHECK(cast_scalar({0, 1e300}, DType::F64, DType::I64).i == 0);
  CHECK(cast_scalar({0, 0.5}, DType::F32, DType::Bool).i == 1);
  CHECK(cast_scalar({-1, 0}, DType::I32, DType::U8).i == 255);
  CHECK(cast_scalar({0xFFFFFFFFll, 0}, DType::U32, DType::F64).f == 4294967295.0);
  const Scalar one[1] = {{0, 1.0}};
  CHECK(tl::tensor::evaluate(Op::Bitcast, DType::F32, DType::I32, one).i == 0x3f800000);
  const Scalar bits[1] = {{0x3f800000, 0}};
  CHECK(tl::tensor::evaluate(Op::Bitcast, DType::I32, DType::F32, bits).f == 1.0);
  const Scalar minus[1] = {{-1, 0}};
  CHECK(tl::tensor::evaluate(Op::Bitcast, DType::I16, DType::F16, minus).f != 0);  // a NaN pattern
}

TEST_CASE("every elementwise op of ops.def has a definition", "[semantics]") {
  for (int i = 0; i < tl::tensor::kOpCount; ++i) {
    const auto op = static_cast<Op>(i);
    const auto& info = tl::tensor::op_info(op);
    if (!tl::tensor::is_elementwise(info.group)) {
      const Scalar x[3] = {};
      CHECK_THROWS(tl::tensor::evaluate(op, DType::F32, DType::F32, x));
      continue;
    }
    std::vector<Scalar> x(static_cast<std::size_t>(info.arity), Scalar{1, 1.0});
    const DType t = info.dtypes == tl::tensor::DTypeRule::Ints || info.dtypes == tl::tensor::DTypeRule::Integral
                        ? DType::I32
                        : DType::F32;
    CHECK_NOTHROW(tl::tensor::evaluate(op, t, op == Op::Cmplt || op == Op::Cmpeq ? DType::Bool : t, x));
  }
}

TEST_CASE("a broken invariant is an internal error naming the C++ source", "[semantics]") {
  const Scalar x[1] = {};
  try {
    tl::tensor::evaluate(Op::Reshape, DType::F32, DType::F32, x);
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.kind() == tl::ErrorKind::Internal);
    CHECK(e.type() == "internal-error");
    CHECK(e.message().find("src/tensor/semantics.h:") != std::string::npos);
  }
}
