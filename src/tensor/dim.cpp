// SPDX-License-Identifier: Apache-2.0
// Symbolic dimension arithmetic: a canonical sparse polynomial per Dim.
#include "tensor/dim.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "support/condition_error.h"

namespace tl::tensor {

namespace {
// Shape arithmetic that leaves int64 is a user's shape error, not a wrapped size (issue 19).
[[noreturn]] void overflow(const std::string& what) {
  throw ConditionError("shape-error", "shape arithmetic: " + what + " overflows 64 bits");
}
}  // namespace

Dim Dim::make(std::int64_t c, Terms terms) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.vars < b.vars; });
  Terms merged;
  for (auto& t : terms) {
    if (!merged.empty() && merged.back().vars == t.vars) {
      merged.back().coeff += t.coeff;
    } else {
      merged.push_back(std::move(t));
    }
  }
  std::erase_if(merged, [](const Term& t) { return t.coeff == 0; });
  Dim d(c);
  if (!merged.empty()) d.terms_ = std::make_shared<const Terms>(std::move(merged));
  return d;
}

Dim Dim::var(const std::string& name) { return make(0, {Term{1, {name}}}); }

std::optional<std::string> Dim::as_var() const {
  if (is_const() || c_ != 0 || terms_->size() != 1) return std::nullopt;
  const Term& t = terms_->front();
  if (t.coeff != 1 || t.vars.size() != 1) return std::nullopt;
  return t.vars.front();
}

void Dim::collect_vars(std::vector<std::string>& out) const {
  if (is_const()) return;
  for (const auto& t : *terms_) {
    for (const auto& v : t.vars) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
}

std::vector<std::pair<std::int64_t, std::vector<std::string>>> Dim::terms() const {
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> out;
  if (terms_) {
    for (const Term& t : *terms_) out.emplace_back(t.coeff, t.vars);
  }
  return out;
}

bool Dim::provably_nonnegative() const {
  if (c_ < 0) return false;
  if (terms_) {
    for (const Term& t : *terms_) {
      if (t.coeff < 0) return false;
    }
  }
  return true;
}

std::int64_t Dim::eval(const Bindings& b) const {
  std::int64_t r = c_;
  if (is_const()) return r;
  for (const auto& t : *terms_) {
    std::int64_t p = t.coeff;
    for (const auto& v : t.vars) {
      auto it = b.find(v);
      if (it == b.end()) throw UnboundDim(v);
      if (__builtin_mul_overflow(p, it->second, &p)) overflow("the value of " + str());
    }
    if (__builtin_add_overflow(r, p, &r)) overflow("the value of " + str());
  }
  return r;
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return Dim(a.c_ + b.c_);
  Dim::Terms t;
  if (a.terms_) t.insert(t.end(), a.terms_->begin(), a.terms_->end());
  if (b.terms_) t.insert(t.end(), b.terms_->begin(), b.terms_->end());
  return Dim::make(a.c_ + b.c_, std::move(t));
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return Dim(a.c_ - b.c_);
  Dim::Terms t;
  if (a.terms_) t.insert(t.end(), a.terms_->begin(), a.terms_->end());
  if (b.terms_) {
    for (auto term : *b.terms_) {
      term.coeff = -term.coeff;
      t.push_back(std::move(term));
    }
  }
  return Dim::make(a.c_ - b.c_, std::move(t));
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) {
    std::int64_t p = 0;
    if (__builtin_mul_overflow(a.c_, b.c_, &p)) overflow(a.str() + " * " + b.str());
    return Dim(p);
  }
  // (ca + sum ta) * (cb + sum tb)
  Dim::Terms t;
  auto scaled = [&](const Dim& d, std::int64_t k) {
    if (k == 0 || !d.terms_) return;
    for (auto term : *d.terms_) {
      term.coeff *= k;
      t.push_back(std::move(term));
    }
  };
  scaled(a, b.c_);
  scaled(b, a.c_);
  if (a.terms_ && b.terms_) {
    for (const auto& x : *a.terms_) {
      for (const auto& y : *b.terms_) {
        Dim::Term p{x.coeff * y.coeff, x.vars};
        p.vars.insert(p.vars.end(), y.vars.begin(), y.vars.end());
        std::sort(p.vars.begin(), p.vars.end());
        t.push_back(std::move(p));
      }
    }
  }
  return Dim::make(a.c_ * b.c_, std::move(t));
}

std::optional<Dim> Dim::divide_exact(const Dim& d) const {
  if (d.is_const()) {
    if (d.c_ == 0) return std::nullopt;
    if (c_ % d.c_ != 0) return std::nullopt;
    if (is_const()) return Dim(c_ / d.c_);
    Terms t = *terms_;
    for (auto& term : t) {
      if (term.coeff % d.c_ != 0) return std::nullopt;
      term.coeff /= d.c_;
    }
    return make(c_ / d.c_, std::move(t));
  }
  // A single monomial k*v1*v2...: every term of *this must contain it.
  if (d.c_ != 0 || d.terms_->size() != 1) {
    if (*this == d) return Dim(1);
    return std::nullopt;
  }
  const Term& m = d.terms_->front();
  if (c_ != 0 || is_const()) return std::nullopt;
  std::int64_t constant = 0;
  Terms out;
  for (const auto& term : *terms_) {
    if (term.coeff % m.coeff != 0) return std::nullopt;
    std::vector<std::string> rest = term.vars;
    for (const auto& v : m.vars) {
      auto it = std::find(rest.begin(), rest.end(), v);
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    if (rest.empty()) {
      constant += term.coeff / m.coeff;
    } else {
      out.push_back(Term{term.coeff / m.coeff, std::move(rest)});
    }
  }
  return make(constant, std::move(out));
}

bool Dim::operator==(const Dim& o) const {
  if (c_ != o.c_) return false;
  if (is_const() || o.is_const()) return is_const() == o.is_const();
  if (terms_ == o.terms_) return true;
  if (terms_->size() != o.terms_->size()) return false;
  for (std::size_t i = 0; i < terms_->size(); ++i) {
    if ((*terms_)[i].coeff != (*o.terms_)[i].coeff || (*terms_)[i].vars != (*o.terms_)[i].vars) {
      return false;
    }
  }
  return true;
}

std::size_t Dim::hash() const {
  std::size_t h = std::hash<std::int64_t>{}(c_);
  if (terms_) {
    for (const auto& t : *terms_) {
      h = h * 1000003u ^ std::hash<std::int64_t>{}(t.coeff);
      for (const auto& v : t.vars) h = h * 31u ^ std::hash<std::string>{}(v);
    }
  }
  return h;
}

std::string Dim::str() const {
  if (is_const()) return std::to_string(c_);
  std::vector<std::string> parts;
  if (c_ != 0) parts.push_back(std::to_string(c_));
  for (const auto& t : *terms_) {
    std::vector<std::string> f;
    if (t.coeff != 1) f.push_back(std::to_string(t.coeff));
    f.insert(f.end(), t.vars.begin(), t.vars.end());
    if (f.size() == 1) {
      parts.push_back(f[0]);
    } else {
      std::string s = "(*";
      for (const auto& x : f) s += " " + x;
      parts.push_back(s + ")");
    }
  }
  if (parts.size() == 1) return parts[0];
  std::string s = "(+";
  for (const auto& p : parts) s += " " + p;
  return s + ")";
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ' ';
    out += s[i].str();
  }
  return out + ")";
}

Dim shape_numel(const Shape& s) {
  Dim n(1);
  for (const auto& d : s) n = n * d;
  return n;
}

std::vector<Dim> contiguous_strides(const Shape& s) {
  std::vector<Dim> st(s.size());
  Dim acc(1);
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc = acc * s[i];
  }
  return st;
}

std::vector<std::int64_t> eval_shape(const Shape& s, const Bindings& b) {
  std::vector<std::int64_t> out;
  out.reserve(s.size());
  for (const auto& d : s) out.push_back(d.eval(b));
  return out;
}

}  // namespace tl::tensor
