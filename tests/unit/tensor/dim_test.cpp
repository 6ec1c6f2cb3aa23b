// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/dim.h: constant and symbolic dimension arithmetic, canonical equality,
// exact division, evaluation with bindings, printing, and contiguous strides.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/condition_error.h"
#include "tensor/dim.h"

namespace Catch {
template <>
struct StringMaker<tl::tensor::Dim> {
  static std::string convert(const tl::tensor::Dim& d) { return d.str(); }
};
template <>
struct StringMaker<std::optional<tl::tensor::Dim>> {
  static std::string convert(const std::optional<tl::tensor::Dim>& d) {
    return d ? d->str() : "none";
  }
};
}  // namespace Catch

using tl::tensor::Bindings;
using tl::tensor::Dim;
using tl::tensor::Shape;

namespace {

const Dim a = Dim::var("a");
const Dim b = Dim::var("b");
const Dim c = Dim::var("c");

// The quotient as printed, or "none" when divide_exact refuses.
std::string quotient(const Dim& x, const Dim& d) {
  auto q = x.divide_exact(d);
  return q ? q->str() : "none";
}

}  // namespace

TEST_CASE("dim: constants add, subtract, multiply and stay constant", "[tensor][dim]") {
  Dim x(6);
  Dim y(-4);
  CHECK(x.is_const());
  CHECK(x.value() == 6);
  CHECK(x.as_const() == std::optional<std::int64_t>(6));
  CHECK((x + y) == Dim(2));
  CHECK((x - y) == Dim(10));
  CHECK((x * y) == Dim(-24));
  CHECK((-x) == Dim(-6));
  CHECK((x + y).is_const());
  CHECK((x * y).is_const());
  CHECK(Dim() == Dim(0));
  CHECK(Dim(3) != Dim(4));
  CHECK_FALSE(Dim(3).as_var().has_value());
  // Integers convert implicitly.
  Dim z = 7;
  CHECK(z + 1 == Dim(8));
  CHECK(z.eval({}) == 7);
}

TEST_CASE("dim: variables and polynomials have canonical forms", "[tensor][dim]") {
  CHECK_FALSE(a.is_const());
  CHECK_FALSE(a.as_const().has_value());
  CHECK(a.as_var() == std::optional<std::string>("a"));
  CHECK(a == Dim::var("a"));
  CHECK(a != b);
  CHECK(a != Dim(0));
  CHECK(Dim(0) != a);

  // Commutativity, associativity and distributivity all give the same canonical form.
  CHECK(a * b == b * a);
  CHECK(a + b == b + a);
  CHECK((a + 1) * 2 == 2 * a + 2);
  CHECK((a + 1) * 2 == a + a + 2);
  CHECK((a + b) * (a + b) == a * a + 2 * a * b + b * b);
  CHECK((a + b) * (a - b) == a * a - b * b);
  CHECK((a * b) * c == a * (b * c));
  CHECK(a * b * c == c * b * a);
  CHECK((a + b) + c == a + (b + c));
  CHECK(a * 3 - a * 3 == Dim(0));
  CHECK(2 * a != a * a);
  CHECK(a + 1 != a + 2);
  CHECK(a * b != a * c);

  // Cancelled terms leave a constant, which is then a plain constant.
  Dim zero = a - a;
  CHECK(zero.is_const());
  CHECK(zero.value() == 0);
  Dim five = (a + 5) - a;
  CHECK(five.is_const());
  CHECK(five.value() == 5);
  CHECK((a * b - b * a).is_const());
  CHECK((a * 0).is_const());
  CHECK((a * 0).value() == 0);
  CHECK((a * 1) == a);
  CHECK((-a) == Dim(0) - a);
  CHECK(-(-a) == a);

  // Only a bare variable is as_var.
  CHECK_FALSE((a + 1).as_var().has_value());
  CHECK_FALSE((2 * a).as_var().has_value());
  CHECK_FALSE((a * b).as_var().has_value());
  CHECK_FALSE((a + b).as_var().has_value());
  CHECK((a + 1 - 1).as_var() == std::optional<std::string>("a"));

  // Equal dims hash equally, however they were built.
  CHECK(((a + 1) * 2).hash() == (2 * a + 2).hash());
  CHECK((a * b).hash() == (b * a).hash());
  CHECK((a - a).hash() == Dim(0).hash());
}

TEST_CASE("dim: collect_vars lists each variable once, sorted", "[tensor][dim]") {
  std::vector<std::string> vars;
  (c * b + a * c + 3).collect_vars(vars);
  CHECK(vars == std::vector<std::string>{"a", "b", "c"});
  std::vector<std::string> none;
  Dim(4).collect_vars(none);
  CHECK(none.empty());
  std::vector<std::string> squared;
  (a * a).collect_vars(squared);
  CHECK(squared == std::vector<std::string>{"a"});
}

TEST_CASE("dim: divide_exact by constants", "[tensor][dim]") {
  CHECK(quotient(Dim(8), Dim(2)) == "4");
  CHECK(quotient(Dim(-9), Dim(3)) == "-3");
  CHECK(quotient(Dim(0), Dim(5)) == "0");
  CHECK(quotient(Dim(7), Dim(2)) == "none");
  CHECK(quotient(Dim(7), Dim(0)) == "none");
  CHECK(quotient(Dim(0), Dim(0)) == "none");
  CHECK((6 * a + 4).divide_exact(2) == 3 * a + 2);
  CHECK((6 * a + 4).divide_exact(-2) == -3 * a - 2);
  CHECK((6 * a * b).divide_exact(3) == 2 * a * b);
  CHECK(a.divide_exact(1) == a);
  CHECK(quotient(6 * a + 3, 2) == "none");  // the constant does not divide
  CHECK(quotient(6 * a + 4, 4) == "none");  // a coefficient does not divide
  CHECK(quotient(a, 2) == "none");
  CHECK(quotient(a, 0) == "none");
}

TEST_CASE("dim: divide_exact by monomials", "[tensor][dim]") {
  CHECK(a.divide_exact(a) == Dim(1));
  CHECK((a * b).divide_exact(b) == a);
  CHECK((a * b).divide_exact(a) == b);
  CHECK((a * a).divide_exact(a) == a);
  CHECK((2 * a * b).divide_exact(a * b) == Dim(2));
  CHECK((6 * a * b + 4 * a).divide_exact(2 * a) == 3 * b + 2);
  CHECK((6 * a * b * c).divide_exact(3 * a * c) == 2 * b);
  CHECK((784 * a).divide_exact(a) == Dim(784));
  CHECK((784 * a).divide_exact(16 * a) == Dim(49));
  // Failing cases: a term lacks the variable, a coefficient does not divide, a constant
  // term, or a constant divided by a variable.
  CHECK(quotient(a * b + c, a) == "none");
  CHECK(quotient(3 * a, 2 * a) == "none");
  CHECK(quotient(a + 1, a) == "none");
  CHECK(quotient(Dim(6), a) == "none");
  CHECK(quotient(a, a * a) == "none");
  CHECK(quotient(a, b) == "none");
  CHECK(quotient(a * b, a * c) == "none");
  // A divisor of several terms divides only its equal.
  CHECK((a + 1).divide_exact(a + 1) == Dim(1));
  CHECK(quotient(a + 1, a + 2) == "none");
  CHECK(quotient(2 * a + 2, a + 1) == "none");
}

TEST_CASE("dim: eval substitutes bindings and reports unbound variables", "[tensor][dim]") {
  Bindings bind{{"a", 2}, {"b", 5}, {"c", -3}};
  CHECK(a.eval(bind) == 2);
  CHECK((2 * a * b + 3).eval(bind) == 23);
  CHECK((a * a * a).eval(bind) == 8);
  CHECK((a - b).eval(bind) == -3);
  CHECK((a * c + b).eval(bind) == -1);
  CHECK(((a + 1) * (b - 1)).eval(bind) == 12);
  CHECK(Dim(42).eval({}) == 42);

  CHECK_THROWS_AS(a.eval({}), std::out_of_range);
  CHECK_THROWS_AS((a + b).eval({{"a", 1}}), std::out_of_range);
  // The exception names the unbound variable.
  try {
    (a * 3 + Dim::var("seq")).eval({{"a", 1}});
    FAIL("no exception");
  } catch (const std::out_of_range& e) {
    CHECK(std::string(e.what()).find("seq") != std::string::npos);
  }
}

TEST_CASE("dim: str prints constants, variables, products and sums", "[tensor][dim]") {
  CHECK(Dim(32).str() == "32");
  CHECK(Dim(-5).str() == "-5");
  CHECK(Dim(0).str() == "0");
  CHECK(Dim::var("batch").str() == "batch");
  CHECK((784 * Dim::var("batch")).str() == "(* 784 batch)");
  CHECK((Dim::var("batch") * 784).str() == "(* 784 batch)");
  CHECK((Dim::var("seq") + 1).str() == "(+ 1 seq)");
  CHECK((1 + Dim::var("seq")).str() == "(+ 1 seq)");
  CHECK((a * a).str() == "(* a a)");
  CHECK((b * a).str() == "(* a b)");
  CHECK((-a).str() == "(* -1 a)");
  CHECK((a + b).str() == "(+ a b)");
  CHECK((b + a).str() == "(+ a b)");
  CHECK((3 + 2 * a * b).str() == "(+ 3 (* 2 a b))");
  CHECK((a - 1).str() == "(+ -1 a)");
  CHECK((a - a).str() == "0");
  CHECK(tl::tensor::shape_str({2, Dim::var("batch"), 3}) == "(2 batch 3)");
  CHECK(tl::tensor::shape_str({}) == "()");
}

TEST_CASE("dim: shape_numel, eval_shape and contiguous strides", "[tensor][dim]") {
  using tl::tensor::contiguous_strides;
  using tl::tensor::shape_numel;
  const Dim n = Dim::var("n");
  const Dim m = Dim::var("m");

  CHECK(shape_numel({}) == Dim(1));
  CHECK(shape_numel({2, 3, 4}) == Dim(24));
  CHECK(shape_numel({2, n, 3}) == 6 * n);
  CHECK(shape_numel({n, m}) == m * n);
  CHECK(shape_numel({n, 0}) == Dim(0));

  CHECK(contiguous_strides({}).empty());
  CHECK(contiguous_strides({5}) == std::vector<Dim>{1});
  CHECK(contiguous_strides({2, 3, 4}) == std::vector<Dim>{12, 4, 1});
  CHECK(contiguous_strides({2, n, 3}) == std::vector<Dim>{3 * n, 3, 1});
  CHECK(contiguous_strides({n, m}) == std::vector<Dim>{m, 1});
  CHECK(contiguous_strides({n, m, 2}) == std::vector<Dim>{2 * m, 2, 1});
  CHECK(contiguous_strides({n, 1, n}) == std::vector<Dim>{n, n, 1});

  Shape s{2, n, n + 1};
  CHECK(tl::tensor::eval_shape(s, {{"n", 4}}) == std::vector<std::int64_t>{2, 4, 5});
  CHECK_THROWS_AS(tl::tensor::eval_shape(s, {{"m", 4}}), std::out_of_range);
  // Evaluated strides agree with the strides of the evaluated shape.
  auto st = contiguous_strides(s);
  std::vector<std::int64_t> got;
  for (const auto& d : st) got.push_back(d.eval({{"n", 4}}));
  CHECK(got == std::vector<std::int64_t>{20, 5, 1});
}

// Issue 19: products of dimensions that leave int64 wrapped (a reshape then read out of
// bounds, or a count of 0 looped forever); they are shape-errors now.
TEST_CASE("dim: overflowing products and bound values are shape-errors", "[tensor][dim]") {
  using tl::tensor::shape_numel;
  const Dim n = Dim::var("n");
  const std::int64_t big = std::int64_t{1} << 62;
  CHECK_THROWS_AS(Dim(big) * Dim(4), tl::ConditionError);
  CHECK_THROWS_WITH(shape_numel({Dim(4294967296), Dim(4294967296)}),
                    "shape arithmetic: 4294967296 * 4294967296 overflows 64 bits");
  CHECK(shape_numel({Dim(big), Dim(1)}) == Dim(big));
  CHECK((Dim(big) * Dim(-1)).value() == -big);
  const Dim d = 4 * n;
  CHECK(d.eval({{"n", big / 4}}) == big);
  CHECK_THROWS_AS(d.eval({{"n", big}}), tl::ConditionError);
  CHECK_THROWS_AS((n * n).eval({{"n", std::int64_t{1} << 32}}), tl::ConditionError);
  CHECK((n * n).eval({{"n", 3037000499}}) == std::int64_t{3037000499} * 3037000499);
  try {
    (void)(n + 1).eval({{"n", INT64_MAX}});
    FAIL("no error");
  } catch (const tl::ConditionError& e) {
    CHECK(e.type == "shape-error");
  }
}
