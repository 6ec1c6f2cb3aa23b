// SPDX-License-Identifier: Apache-2.0
// Unit tests for tl::Tensor: host data into Lisp, results back out, and the errors on misuse.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tensorlisp/tensorlisp.hpp"

namespace {

tl::Error error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const tl::Error& e) {
    return e;
  }
  FAIL("expected a tl::Error");
  return tl::Error(tl::ErrorKind::User, "", "", "");
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("tensor api: host data goes in and comes back unchanged", "[api][tensor]") {
  tl::Interpreter lisp;
  std::vector<float> x{1.5f, -2, 3, 4, 5, 6};
  tl::Tensor t(lisp, x, {2, 3});
  CHECK(t.dtype() == tl::DType::F32);
  CHECK(t.ndim() == 2);
  CHECK(t.shape() == std::vector<std::int64_t>{2, 3});
  CHECK(t.numel() == 6);
  CHECK(t.shape_string() == "(2 3)");
  CHECK(t.to_vector<float>() == x);
  // The host array was copied: changing it does not change the tensor.
  x[0] = 100;
  CHECK(t.to_vector<float>()[0] == 1.5f);
  // Lisp sees the same tensor.
  CHECK(lisp.call("to-list", {t}).repr() == "((1.5 -2.0 3.0) (4.0 5.0 6.0))");
}

TEST_CASE("tensor api: every dtype round-trips through its bytes", "[api][tensor]") {
  tl::Interpreter lisp;
  CHECK(tl::Tensor(lisp, std::vector<double>{0.25, -1e300}, {2}).to_vector<double>() ==
        std::vector<double>{0.25, -1e300});
  CHECK(tl::Tensor(lisp, std::vector<std::int8_t>{-128, 127}, {2}).to_vector<std::int8_t>() ==
        std::vector<std::int8_t>{-128, 127});
  CHECK(tl::Tensor(lisp, std::vector<std::int16_t>{-300}, {1}).to_vector<std::int16_t>() ==
        std::vector<std::int16_t>{-300});
  CHECK(tl::Tensor(lisp, std::vector<std::int32_t>{1, 2, 3}, {3, 1}).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, 2, 3});
  CHECK(tl::Tensor(lisp, std::vector<std::int64_t>{INT64_MIN}, {}).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{INT64_MIN});
  CHECK(tl::Tensor(lisp, std::vector<std::uint8_t>{255}, {1}).to_vector<std::uint8_t>() ==
        std::vector<std::uint8_t>{255});
  CHECK(tl::Tensor(lisp, std::vector<std::uint32_t>{4000000000u}, {1}).to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{4000000000u});
  bool flags[3] = {true, false, true};
  tl::Tensor b(lisp, std::span<const bool>(flags), {3});
  CHECK(b.dtype() == tl::DType::Bool);
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
  // Half precision goes in as bit patterns: 0x3c00 is 1.0, 0xc000 is -2.0.
  std::uint16_t half[2] = {0x3c00, 0xc000};
  tl::Tensor h(lisp, half, sizeof half, {2}, tl::DType::F16);
  CHECK(lisp.call("to-list", {h}).repr() == "(1.0 -2.0)");
  std::uint16_t back[2] = {};
  h.copy_to(back, sizeof back);
  CHECK(std::memcmp(back, half, sizeof half) == 0);
  // Empty tensors are fine.
  tl::Tensor e(lisp, nullptr, 0, {0, 3}, tl::DType::F32);
  CHECK(e.numel() == 0);
  CHECK(e.to_vector<float>().empty());
  CHECK(tl::dtype_size(tl::DType::BF16) == 2);
  CHECK(std::string(tl::dtype_name(tl::DType::U32)) == "u32");
}

TEST_CASE("tensor api: tensors pass to Lisp functions and come back computed", "[api][tensor]") {
  tl::Interpreter lisp;
  lisp.eval("(defun affine (x w b) (+ (matmul x w) b))");
  tl::Tensor x(lisp, std::vector<float>{1, 2, 3, 4}, {2, 2});
  tl::Tensor w(lisp, std::vector<float>{1, 0, 0, 1}, {2, 2});
  tl::Tensor b(lisp, std::vector<float>{10, 20}, {2});
  tl::Tensor y(lisp.call("affine", {x, w, b}));
  CHECK(y.shape() == std::vector<std::int64_t>{2, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{11, 22, 13, 24});
  // A composite with keyword arguments.
  tl::Tensor s(lisp.call("softmax", {x, tl::Value::keyword("axis"), tl::Value(1)}));
  std::vector<float> p = s.to_vector<float>();
  CHECK(p[0] + p[1] == Approx(1.0f));
  CHECK(p[1] / p[0] == Approx(std::exp(1.0f)));
  // Through a global, and inside a list.
  lisp.set_global("*w*", w);
  CHECK(tl::Tensor(lisp.eval("(* *w* 2)")).to_vector<float>() == std::vector<float>{2, 0, 0, 2});
  CHECK(lisp.call("length", {tl::Value::list({x, w})}).as_int() == 2);
  // Tensors survive garbage collection while the host holds them.
  lisp.eval("(dotimes (i 2000) (list i i i)) (gc)");
  CHECK(y.to_vector<float>() == std::vector<float>{11, 22, 13, 24});
}

TEST_CASE("tensor api: symbolic shapes are read after realizing with bindings", "[api][tensor]") {
  tl::Interpreter lisp;
  tl::Tensor x(lisp, std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  lisp.set_global("*x*", x);
  tl::Tensor y(lisp.eval("(* (symbolic-shape *x* '(n 2)) 2)"));
  CHECK(y.shape_string() == "(n 2)");
  tl::Error e = error_of([&] { (void)y.shape(); });
  CHECK(e.type() == "shape-error");
  CHECK_THAT(e.message(), Contains("(n 2)") && Contains("symbolic"));
  y.realize({{"n", 3}});
  CHECK(y.shape() == std::vector<std::int64_t>{3, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{2, 4, 6, 8, 10, 12});
}

TEST_CASE("tensor api: misuse is a clear error", "[api][tensor]") {
  tl::Interpreter lisp;
  std::vector<float> x{1, 2, 3};
  tl::Error e = error_of([&] { tl::Tensor(lisp, x, {2, 2}); });
  CHECK(e.type() == "value-error");
  CHECK_THAT(e.message(), Contains("(2 2)") && Contains("16 bytes") && Contains("12"));
  e = error_of([&] { tl::Tensor(lisp, x, {-1, 3}); });
  CHECK_THAT(e.message(), Contains("negative"));
  e = error_of([&] { tl::Tensor(lisp.eval("'(1 2)")); });
  CHECK(e.type() == "type-error");
  CHECK_THAT(e.message(), Contains("expected a tensor") && Contains("(1 2)"));
  e = error_of([&] { tl::Tensor(tl::Value(3)); });
  CHECK(e.type() == "type-error");
  tl::Tensor t(lisp, x, {3});
  e = error_of([&] { (void)t.to_vector<double>(); });
  CHECK(e.type() == "dtype-error");
  CHECK_THAT(e.message(), Contains("f32") && Contains("f64"));
  float small[2];
  e = error_of([&] { t.copy_to(small, sizeof small); });
  CHECK_THAT(e.message(), Contains("12 bytes") && Contains("8"));
  // A failing computation reports its error and leaves the inputs usable.
  e = error_of([&] { tl::Tensor(lisp.eval("(aref (tensor '(1 2 3)) 1)")); });  // a number
  CHECK_THAT(e.message(), Contains("integer 2"));
  e = error_of([&] { lisp.call("matmul", {t, tl::Tensor(lisp, x, {1, 3})}); });
  CHECK(e.type() == "shape-error");
  CHECK(t.to_vector<float>() == x);
}
