// SPDX-License-Identifier: Apache-2.0
// Dimensions that may be symbolic: integer polynomials over named variables (batch, seq),
// so sizes, strides and offsets of views stay exact when a variable is unbound.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tl::tensor {

// Thrown by Dim::eval for a variable without a value; what() is the variable's name.
struct UnboundDim : std::out_of_range {
  using std::out_of_range::out_of_range;
};

// Values for the variables of a graph, given when it is realized.
using Bindings = std::map<std::string, std::int64_t>;

// An integer or a polynomial with integer coefficients in named variables. Equal
// expressions have equal canonical forms, so == is exact structural equality.
class Dim {
 public:
  Dim(std::int64_t c = 0) : c_(c) {}  // NOLINT: integers convert implicitly
  static Dim var(const std::string& name);

  bool is_const() const { return terms_ == nullptr; }
  std::int64_t value() const { return c_; }  // only when is_const()
  std::optional<std::int64_t> as_const() const {
    if (is_const()) return c_;
    return std::nullopt;
  }
  // The single variable, when the dim is exactly one variable.
  std::optional<std::string> as_var() const;
  // True when the value is >= 0 for every binding (variables are sizes, never negative):
  // the constant and every coefficient are >= 0.
  bool provably_nonnegative() const;
  // The terms other than the constant: coefficient and variables (repeated for powers).
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> terms() const;
  // Every variable that occurs, sorted.
  void collect_vars(std::vector<std::string>& out) const;

  // Evaluates with bindings; throws std::out_of_range naming an unbound variable.
  std::int64_t eval(const Bindings& b) const;

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  Dim operator-() const { return Dim(0) - *this; }
  // Exact quotient, when every term divides (by a constant or a single monomial).
  std::optional<Dim> divide_exact(const Dim& d) const;
  bool operator==(const Dim& o) const;
  bool operator!=(const Dim& o) const { return !(*this == o); }
  std::size_t hash() const;
  // "32", "batch", "(* 784 batch)", "(+ 1 seq)".
  std::string str() const;

 private:
  // A term: coefficient times a product of variables (sorted, repeated for powers).
  struct Term {
    std::int64_t coeff;
    std::vector<std::string> vars;
  };
  using Terms = std::vector<Term>;  // sorted by vars, no zero coefficients, no empty vars
  static Dim make(std::int64_t c, Terms terms);
  std::int64_t c_;                         // constant term
  std::shared_ptr<const Terms> terms_;     // null when constant
};

using Shape = std::vector<Dim>;

std::string shape_str(const Shape& s);  // "(2 batch 3)"
Dim shape_numel(const Shape& s);
// Row-major strides of a contiguous tensor of this shape.
std::vector<Dim> contiguous_strides(const Shape& s);
std::vector<std::int64_t> eval_shape(const Shape& s, const Bindings& b);

}  // namespace tl::tensor
