// SPDX-License-Identifier: Apache-2.0
// Loop IR: hash-consed expressions with folding and index simplification, and printing.
// (Over 800 lines: the folding and the index simplification (ranges, linear forms, div/mod of
// symbolic and constant indices) run inside intern(), on the hash-consed table they share.)
#include "codegen/loop_ir.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>

#include "support/check.h"
#include "tensor/semantics.h"

namespace tl::codegen {

namespace {

constexpr std::int64_t kUnknownLo = std::numeric_limits<std::int64_t>::min();

bool is_index(DType t) { return t == DType::I64; }

bool known(const Range& r) { return r.lo != kUnknownLo && r.hi.has_value(); }

Range unknown() { return Range{kUnknownLo, std::nullopt}; }

std::optional<std::int64_t> add_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<std::int64_t> mul_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The folding of an integer op on constants, wrapped to dtype t, with the primitives' rules.
std::int64_t fold_int(EOp op, std::int64_t a, std::int64_t b, DType t) {
  if (op == EOp::Min) {
    const bool is_unsigned = tensor::dtype_category(t) == tensor::DCat::Unsigned || t == DType::Bool;
    auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    return is_unsigned ? static_cast<std::int64_t>(std::min(u(a), u(b))) : std::min(a, b);
  }
  auto prim = primitive_of(op);
  if (!prim) TL_UNREACHABLE(std::string("fold_int: ") + eop_name(op) + " is not an operation");
  const tensor::Scalar x[2] = {{tensor::wrap_int(a, t), 0}, {tensor::wrap_int(b, t), 0}};
  const DType result = op == EOp::Cmplt || op == EOp::Cmpeq ? DType::Bool : t;
  return tensor::evaluate(*prim, t, result, x).i;
}

}  // namespace

const char* eop_name(EOp op) {
  if (auto p = primitive_of(op)) return tensor::op_name(*p);
  switch (op) {
    case EOp::Const: return "const";
    case EOp::LoopVar: return "loop";
    case EOp::SymVar: return "var";
    case EOp::Load: return "load";
    case EOp::AccRead: return "acc";
    case EOp::Min: return "min";
    case EOp::Dot4: return "dot4";
#define OP(e, name, arity, group, work, dtypes, doc) TL_IF_ELEMENTWISE_##group(case EOp::e:)
#include "tensor/ops.def"
#undef OP
      break;
  }
  return "?";
}

std::optional<tensor::Op> primitive_of(EOp op) {
  switch (op) {
#define OP(e, name, arity, group, work, dtypes, doc) TL_IF_ELEMENTWISE_##group(case EOp::e: return tensor::Op::e;)
#include "tensor/ops.def"
#undef OP
    case EOp::Const:
    case EOp::LoopVar:
    case EOp::SymVar:
    case EOp::Load:
    case EOp::AccRead:
    case EOp::Min:
    case EOp::Dot4: break;
  }
  return std::nullopt;
}

std::optional<EOp> eop_of(tensor::Op op) {
  switch (op) {
#define OP(e, name, arity, group, work, dtypes, doc)                     \
  TL_IF_ELEMENTWISE_##group(case tensor::Op::e : return EOp::e;) \
      TL_IF_NOT_ELEMENTWISE_##group(case tensor::Op::e : break;)
#include "tensor/ops.def"
#undef OP
  }
  return std::nullopt;
}

// --- interning and ranges --------------------------------------------------------------------

std::size_t Kernel::ExprHash::operator()(const Expr& e) const {
  std::uint64_t bits;
  std::memcpy(&bits, &e.fval, sizeof bits);
  std::uint64_t h = static_cast<std::uint64_t>(e.op) | static_cast<std::uint64_t>(e.dtype) << 8 |
                    static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.arg)) << 16;
  for (std::uint64_t v : {static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.src[0])),
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.src[1])),
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.src[2])),
                          static_cast<std::uint64_t>(e.ival), bits}) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return static_cast<std::size_t>(h);
}

bool Kernel::ExprEq::operator()(const Expr& a, const Expr& b) const {
  // Floats compare by bits, so -0.0 and 0.0 (and NaNs) stay distinct constants.
  return a.op == b.op && a.dtype == b.dtype && a.arg == b.arg && a.src[0] == b.src[0] && a.src[1] == b.src[1] &&
         a.src[2] == b.src[2] && a.ival == b.ival && std::memcmp(&a.fval, &b.fval, sizeof a.fval) == 0;
}

ExprId Kernel::intern(const Expr& e) {
  auto [it, fresh] = intern_.try_emplace(e, static_cast<ExprId>(exprs_.size()));
  if (fresh) {
    exprs_.push_back(e);
    ranges_.push_back(compute_range(e));
  }
  return it->second;
}

Range Kernel::range(ExprId id) const { return ranges_[static_cast<std::size_t>(id)]; }

std::optional<std::int64_t> Kernel::as_const(ExprId id) const {
  const Expr& e = expr(id);
  if (e.op == EOp::Const && !tensor::is_float(e.dtype)) return e.ival;
  return std::nullopt;
}

std::optional<std::int64_t> Kernel::coefficient(ExprId index, ExprId var) const {
  auto contains = [&](ExprId root) {
    bool found = false;
    visit({root}, [&](ExprId e, const Expr&) {
      found = found || e == var;
      return !found;
    });
    return found;
  };
  std::int64_t c = 0;
  for (auto [t, k] : linear(index).terms) {
    if (t == var) c += k;
    else if (contains(t)) return std::nullopt;
  }
  return c;
}

std::optional<std::int64_t> Kernel::constant_difference(ExprId a, ExprId b) const {
  Linear la = linear(a), lb = linear(b);
  if (la.terms != lb.terms) return std::nullopt;
  return lb.c - la.c;
}

Range Kernel::compute_range(const Expr& e) const {
  if (e.dtype == DType::Bool) return Range{0, 1};
  if (!is_index(e.dtype)) return unknown();
  auto r = [this](ExprId id) { return range(id); };
  if (e.op == EOp::Const) return Range{e.ival, e.ival};
  if (e.op == EOp::LoopVar) {
    auto ext = as_const(loop_extents_[static_cast<std::size_t>(e.arg)]);
    if (ext) return Range{0, std::max<std::int64_t>(0, *ext - 1)};
    return Range{0, std::nullopt};
  }
  if (e.op == EOp::SymVar) return Range{0, std::nullopt};
  if (e.op == EOp::Add) {
    Range a = r(e.src[0]), b = r(e.src[1]);
    if (a.lo == kUnknownLo || b.lo == kUnknownLo) return unknown();
    auto lo = add_checked(a.lo, b.lo);
    if (!lo) return unknown();
    Range out{*lo, std::nullopt};
    if (a.hi && b.hi) out.hi = add_checked(*a.hi, *b.hi);
    return out;
  }
  if (e.op == EOp::Mul) {
    Range a = r(e.src[0]), b = r(e.src[1]);
    if (!known(a) || !known(b)) {
      // Two non-negative factors stay non-negative.
      if (a.lo >= 0 && b.lo >= 0) return Range{0, std::nullopt};
      return unknown();
    }
    std::int64_t c[4];
    const std::int64_t xs[2] = {a.lo, *a.hi}, ys[2] = {b.lo, *b.hi};
    for (int i = 0; i < 4; ++i) {
      auto v = mul_checked(xs[i / 2], ys[i % 2]);
      if (!v) return unknown();
      c[i] = *v;
    }
    return Range{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  if (e.op == EOp::Idiv) {
    Range a = r(e.src[0]);
    auto d = as_const(e.src[1]);
    if (!d || *d <= 0 || a.lo < 0) return unknown();
    Range out{a.lo / *d, std::nullopt};
    if (a.hi) out.hi = *a.hi / *d;
    return out;
  }
  if (e.op == EOp::Mod) {
    Range a = r(e.src[0]);
    auto d = as_const(e.src[1]);
    if (!d || *d <= 0 || a.lo < 0) return unknown();
    if (a.hi && *a.hi < *d) return a;
    return Range{0, *d - 1};
  }
  if (e.op == EOp::Max) {
    Range a = r(e.src[0]), b = r(e.src[1]);
    if (a.lo == kUnknownLo || b.lo == kUnknownLo) return unknown();
    Range out{std::max(a.lo, b.lo), std::nullopt};
    if (a.hi && b.hi) out.hi = std::max(*a.hi, *b.hi);
    return out;
  }
  if (e.op == EOp::Min) {
    Range a = r(e.src[0]), b = r(e.src[1]);
    if (a.lo == kUnknownLo || b.lo == kUnknownLo) return unknown();
    Range out{std::min(a.lo, b.lo), std::nullopt};
    if (a.hi && b.hi) out.hi = std::min(*a.hi, *b.hi);
    else if (a.hi) out.hi = a.hi;
    else if (b.hi) out.hi = b.hi;
    return out;
  }
  if (e.op == EOp::Where) {
    Range a = r(e.src[1]), b = r(e.src[2]);
    if (a.lo == kUnknownLo || b.lo == kUnknownLo) return unknown();
    Range out{std::min(a.lo, b.lo), std::nullopt};
    if (a.hi && b.hi) out.hi = std::max(*a.hi, *b.hi);
    return out;
  }
  return unknown();
}

// --- linear forms ----------------------------------------------------------------------------

Kernel::Linear Kernel::linear(ExprId id) const {
  const Expr& e = expr(id);
  Linear l;
  if (e.op == EOp::Const) {
    l.c = e.ival;
    return l;
  }
  if (e.op == EOp::Add) {
    Linear a = linear(e.src[0]), b = linear(e.src[1]);
    l.c = a.c + b.c;
    std::map<ExprId, std::int64_t> m;
    for (auto [t, k] : a.terms) m[t] += k;
    for (auto [t, k] : b.terms) m[t] += k;
    for (auto [t, k] : m) {
      if (k != 0) l.terms.emplace_back(t, k);
    }
    return l;
  }
  if (e.op == EOp::Mul) {
    for (int side = 0; side < 2; ++side) {
      if (auto c = as_const(e.src[side])) {
        l = linear(e.src[1 - side]);
        l.c *= *c;
        for (auto& [t, k] : l.terms) k *= *c;
        return l;
      }
    }
  }
  l.terms.emplace_back(id, 1);
  return l;
}

Range Kernel::linear_range(const Linear& l) const {
  Range out{l.c, l.c};
  for (auto [t, k] : l.terms) {
    Range tr = range(t);
    if (tr.lo == kUnknownLo) return unknown();
    std::int64_t lo = 0;
    std::optional<std::int64_t> hi;
    if (k >= 0) {
      auto v = mul_checked(tr.lo, k);
      if (!v) return unknown();
      lo = *v;
      if (tr.hi) hi = mul_checked(*tr.hi, k);
    } else {
      if (!tr.hi) return unknown();
      auto v = mul_checked(*tr.hi, k);
      auto w = mul_checked(tr.lo, k);
      if (!v || !w) return unknown();
      lo = *v;
      hi = *w;
    }
    auto nlo = add_checked(out.lo, lo);
    if (!nlo) return unknown();
    out.lo = *nlo;
    if (out.hi && hi) out.hi = add_checked(*out.hi, *hi);
    else out.hi.reset();
  }
  return out;
}

ExprId Kernel::from_linear(const Linear& l) {
  ExprId sum = -1;
  for (auto [t, k] : l.terms) {
    ExprId term = k == 1 ? t : raw_binary(EOp::Mul, t, constant_int(k), DType::I64);
    sum = sum < 0 ? term : raw_binary(EOp::Add, sum, term, DType::I64);
  }
  if (sum < 0) return constant_int(l.c);
  if (l.c != 0) sum = raw_binary(EOp::Add, sum, constant_int(l.c), DType::I64);
  return sum;
}

ExprId Kernel::raw_binary(EOp op, ExprId a, ExprId b, DType t) {
  Expr e{op, t};
  e.src[0] = a;
  e.src[1] = b;
  return intern(e);
}

// a / d and a mod d for a divisor d that is not a constant but a positive linear form over
// symbolic dimensions (a KV cache's length L + 1, or 64 (L + 1)): when a = Q d + R with Q's
// parts products of non-negative loop variables and multiples of d, and R's largest value
// provably below d (R's terms are loop variables, or multiples of ones with constant ranges,
// whose largest values sum to at most d - 1 for every value of the dimensions), a / d is Q
// and a mod d is R. A flattened (head, position, column) index read back through a view of
// symbolic size then needs no division (an attention's K^T at a decode step).
std::optional<ExprId> Kernel::simplify_symbolic_div_mod(EOp op, ExprId a, ExprId d) {
  const Linear ld = linear(d);
  if (ld.terms.empty() || ld.c < 1) return std::nullopt;
  for (auto [t, k] : ld.terms) {
    if (k <= 0 || expr(t).op != EOp::SymVar) return std::nullopt;
  }
  // c when l is c times d's form (c >= 0), over d's own terms and the constant.
  auto multiple = [&](const Linear& l) -> std::optional<std::int64_t> {
    if (l.terms.size() != ld.terms.size()) return std::nullopt;
    if (l.terms.empty() || l.terms[0].first != ld.terms[0].first || l.terms[0].second % ld.terms[0].second != 0) {
      return std::nullopt;
    }
    const std::int64_t c = l.terms[0].second / ld.terms[0].second;
    for (std::size_t i = 0; i < l.terms.size(); ++i) {
      if (l.terms[i].first != ld.terms[i].first || l.terms[i].second != c * ld.terms[i].second) return std::nullopt;
    }
    auto cc = mul_checked(c, ld.c);
    if (!cc || l.c != *cc || c < 0) return std::nullopt;
    return c;
  };
  auto is_d_term = [&](ExprId t) {
    return std::any_of(ld.terms.begin(), ld.terms.end(), [&](const auto& x) { return x.first == t; });
  };
  const Linear la = linear(a);
  Linear q, r, sym;
  sym.c = la.c;
  Linear rmax;  // R's largest value, a form over the dimensions
  for (auto [t, k] : la.terms) {
    if (k <= 0) return std::nullopt;
    const Expr e = expr(t);
    bool taken = false;
    if (e.op == EOp::Mul) {
      for (int side = 0; side < 2 && !taken; ++side) {
        auto c = multiple(linear(e.src[side]));
        auto kc = c ? mul_checked(k, *c) : std::nullopt;
        if (kc && range(e.src[1 - side]).lo >= 0) {
          q.terms.emplace_back(e.src[1 - side], *kc);
          taken = true;
        }
      }
    }
    if (taken) continue;
    if (is_d_term(t)) {
      sym.terms.emplace_back(t, k);
      continue;
    }
    // A term of R: its largest value k * max(t).
    const Range tr = range(t);
    if (tr.lo < 0) return std::nullopt;
    r.terms.emplace_back(t, k);
    // (Coefficients here are a kernel's sizes; any product that overflows gives up.)
    bool ok = true;
    auto add_max = [&](std::int64_t factor, const Linear& form) {
      auto fc = mul_checked(factor, form.c);
      auto sum = fc ? add_checked(rmax.c, *fc) : std::nullopt;
      ok = ok && sum.has_value();
      if (ok) rmax.c = *sum;
      for (auto [x, kx] : form.terms) {
        auto fx = mul_checked(factor, kx);
        ok = ok && fx.has_value();
        if (ok) rmax.terms.emplace_back(x, *fx);
      }
    };
    if (tr.hi) {
      Linear hi;
      hi.c = *tr.hi;
      add_max(k, hi);
    } else if (e.op == EOp::LoopVar) {
      Linear ext = linear(loop_extents_[static_cast<std::size_t>(e.arg)]);
      ext.c -= 1;
      add_max(k, ext);
    } else if (e.op == EOp::Mul) {
      // X * v with v of constant range and X a non-negative form over the dimensions.
      bool bounded = false;
      for (int side = 0; side < 2 && !bounded; ++side) {
        const Range vr = range(e.src[1 - side]);
        const Linear x = linear(e.src[side]);
        bool dims = x.c >= 0;
        for (auto [xt, xk] : x.terms) dims = dims && xk >= 0 && expr(xt).op == EOp::SymVar;
        if (vr.lo < 0 || !vr.hi || !dims) continue;
        auto f = mul_checked(k, *vr.hi);
        if (!f) return std::nullopt;
        add_max(*f, x);
        bounded = true;
      }
      if (!bounded) return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (!ok) return std::nullopt;
  }
  // The dimensions' own part: c d plus a constant left to R.
  std::int64_t c = 0;
  if (!sym.terms.empty()) {
    Linear whole = sym;
    whole.c = 0;
    Linear scaled = ld;
    scaled.c = 0;
    if (whole.terms.size() != ld.terms.size() || whole.terms[0].second % ld.terms[0].second != 0) return std::nullopt;
    c = whole.terms[0].second / ld.terms[0].second;
    for (std::size_t i = 0; i < whole.terms.size(); ++i) {
      if (whole.terms[i].first != ld.terms[i].first || whole.terms[i].second != c * ld.terms[i].second) {
        return std::nullopt;
      }
    }
  }
  auto cd = mul_checked(c, ld.c);
  if (!cd) return std::nullopt;
  const std::int64_t rc = sym.c - *cd;
  if (rc < 0) return std::nullopt;
  q.c = c;
  r.c = rc;
  auto total = add_checked(rmax.c, rc);
  if (!total) return std::nullopt;
  rmax.c = *total;
  // d - 1 - max(R) >= 0 for every value of the dimensions (each >= 0): every coefficient of
  // the difference non-negative. (Every sum checked: a bound that wrapped would prove nothing.)
  std::map<ExprId, std::int64_t> diff;
  for (auto [x, k] : ld.terms) diff[x] += k;
  for (auto [x, k] : rmax.terms) {
    auto v = add_checked(diff[x], -k);
    if (!v || k < 0) return std::nullopt;
    diff[x] = *v;
  }
  if (ld.c - 1 < rmax.c) return std::nullopt;
  for (auto [x, k] : diff) {
    if (k < 0) return std::nullopt;
  }
  auto sorted = [](Linear l) {
    std::map<ExprId, std::int64_t> m;
    for (auto [x, k] : l.terms) m[x] += k;
    l.terms.clear();
    for (auto [x, k] : m) {
      if (k != 0) l.terms.emplace_back(x, k);
    }
    return l;
  };
  return op == EOp::Idiv ? from_linear(sorted(q)) : from_linear(sorted(r));
}

ExprId Kernel::simplify_index_div_mod(EOp op, ExprId a, std::int64_t d) {
  Range ra = range(a);
  if (ra.lo >= 0 && ra.hi && *ra.hi < d) return op == EOp::Idiv ? constant_int(0) : a;
  Linear l = linear(a);
  bool nonneg = l.c >= 0;
  for (auto [t, k] : l.terms) nonneg = nonneg && k > 0 && range(t).lo >= 0;
  if (!nonneg) return raw_binary(op, a, constant_int(d), DType::I64);
  // a = d * Q + R with Q, R >= 0, so a / d = Q + R / d and a mod d = R mod d.
  Linear q, r;
  q.c = l.c / d;
  r.c = l.c % d;
  for (auto [t, k] : l.terms) {
    // k X Y with k X's form a multiple of d (X a form over symbolic dimensions, 64 (L + 1) by
    // 64): d times (k X / d) Y.
    const Expr te = expr(t);
    if (k % d != 0 && te.op == EOp::Mul) {
      bool moved = false;
      for (int side = 0; side < 2 && !moved; ++side) {
        Linear x = linear(te.src[side]);
        if (x.terms.empty()) continue;
        auto kc = mul_checked(k, x.c);
        bool divisible = kc && *kc % d == 0;
        for (auto& [xt, xk] : x.terms) {
          auto kx = mul_checked(k, xk);
          divisible = divisible && kx && *kx % d == 0;
          if (divisible) xk = *kx / d;
        }
        if (!divisible) continue;
        x.c = *kc / d;
        q.terms.emplace_back(binary(EOp::Mul, from_linear(x), te.src[1 - side]), 1);
        moved = true;
      }
      if (moved) continue;
    }
    if (k / d != 0) q.terms.emplace_back(t, k / d);
    if (k % d != 0) r.terms.emplace_back(t, k % d);
  }
  {
    std::map<ExprId, std::int64_t> m;  // (a moved term can meet one already there)
    for (auto [t, k] : q.terms) m[t] += k;
    q.terms.clear();
    for (auto [t, k] : m) {
      if (k != 0) q.terms.emplace_back(t, k);
    }
  }
  Range rr = linear_range(r);
  bool r_small = rr.lo >= 0 && rr.hi && *rr.hi < d;
  if (!r_small && !r.terms.empty()) {
    // R = G * B + S with G dividing D and 0 <= S < G: then R / D = B / (D / G) and
    // R mod D = (B mod (D / G)) * G + S. This splits a flattened (row, column) index such as
    // 1152 i + k (k < 288) by 3168 = 11 * 288 into 4 i / 11, so the row part no longer
    // depends on the column and can be hoisted out of the column loop.
    std::vector<std::pair<ExprId, std::int64_t>> by_size = r.terms;
    std::sort(by_size.begin(), by_size.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (std::size_t cut = 1; cut < by_size.size(); ++cut) {
      std::int64_t g = d;
      for (std::size_t j = cut; j < by_size.size(); ++j) g = std::gcd(g, by_size[j].second);
      if (g <= 1) continue;
      Linear small, big;
      small.c = r.c;
      small.terms.assign(by_size.begin(), by_size.begin() + static_cast<std::ptrdiff_t>(cut));
      Range sr = linear_range(small);
      if (sr.lo < 0 || !sr.hi || *sr.hi >= g) continue;
      for (std::size_t j = cut; j < by_size.size(); ++j) big.terms.emplace_back(by_size[j].first, by_size[j].second / g);
      std::sort(big.terms.begin(), big.terms.end());
      std::sort(small.terms.begin(), small.terms.end());
      ExprId b = from_linear(big);
      if (op == EOp::Mod) {
        ExprId bm = simplify_index_div_mod(EOp::Mod, b, d / g);
        Linear out = linear(bm);
        for (auto& [t, k] : out.terms) k *= g;
        out.c *= g;
        Linear sum = small;
        sum.c += out.c;
        for (auto& term : out.terms) sum.terms.push_back(term);
        std::sort(sum.terms.begin(), sum.terms.end());
        return from_linear(sum);
      }
      q.terms.emplace_back(simplify_index_div_mod(EOp::Idiv, b, d / g), 1);
      std::sort(q.terms.begin(), q.terms.end());
      return from_linear(q);
    }
  }
  ExprId rexpr = from_linear(r);
  if (op == EOp::Mod) return r_small ? rexpr : raw_binary(EOp::Mod, rexpr, constant_int(d), DType::I64);
  if (!r_small) {
    // (x / a) / b = x / (a * b) for x >= 0 and positive constants.
    const Expr re = expr(rexpr);  // a copy: interning below may move the arena
    ExprId rest = raw_binary(EOp::Idiv, rexpr, constant_int(d), DType::I64);
    if (r.terms.size() == 1 && r.c == 0 && r.terms[0].second == 1 && re.op == EOp::Idiv) {
      if (auto inner = as_const(re.src[1])) {
        if (auto prod = mul_checked(*inner, d)) rest = simplify_index_div_mod(EOp::Idiv, re.src[0], *prod);
      }
    }
    q.terms.emplace_back(rest, 1);
    std::sort(q.terms.begin(), q.terms.end());
  }
  return from_linear(q);
}

// --- builders --------------------------------------------------------------------------------

ExprId Kernel::constant_int(std::int64_t v, DType t) {
  Expr e{EOp::Const, t};
  e.ival = tensor::is_float(t) ? 0 : tensor::wrap_int(v, t);
  if (tensor::is_float(t)) e.fval = static_cast<double>(v);
  return intern(e);
}

ExprId Kernel::constant_float(double v, DType t) {
  if (!tensor::is_float(t)) return constant_int(static_cast<std::int64_t>(v), t);
  Expr e{EOp::Const, t};
  // Round to the dtype now, so the constant means what the reference executor computes.
  e.fval = tensor::round_to_dtype(v, t);
  return intern(e);
}

ExprId Kernel::sym_var(const std::string& name) {
  auto it = std::find(vars.begin(), vars.end(), name);
  std::int32_t slot = static_cast<std::int32_t>(it - vars.begin());
  if (it == vars.end()) vars.push_back(name);
  Expr e{EOp::SymVar, DType::I64};
  e.arg = slot;
  return intern(e);
}

ExprId Kernel::dim(const tensor::Dim& d) {
  if (d.is_const()) return constant_int(d.value());
  ExprId sum = constant_int(d.value());
  for (const auto& [coeff, names] : d.terms()) {
    ExprId term = constant_int(coeff);
    for (const auto& n : names) term = binary(EOp::Mul, term, sym_var(n));
    sum = binary(EOp::Add, sum, term);
  }
  return sum;
}

ExprId Kernel::load(std::int32_t buffer, ExprId index) {
  return load_as(buffer, index, buffers[static_cast<std::size_t>(buffer)].dtype);
}

ExprId Kernel::load_as(std::int32_t buffer, ExprId index, DType t) {
  Expr e{EOp::Load, t};
  e.arg = buffer;
  e.src[0] = index;
  return intern(e);
}

ExprId Kernel::load_bytes(std::int32_t buffer, ExprId byte, DType t) {
  Expr e{EOp::Load, t};
  e.arg = buffer;
  e.src[0] = byte;
  e.ival = 1;
  return intern(e);
}

ExprId Kernel::dot4(ExprId a, ExprId b, ExprId c, std::int64_t a_max, std::int32_t flags) {
  TL_CHECK(a_max >= 0 && a_max <= 255, "dot4: a bound of " + std::to_string(a_max) + " on a byte");
  TL_CHECK((flags & ~(kDot4ClampB | kDot4SignedA)) == 0 && (!(flags & kDot4SignedA) || (flags & kDot4ClampB)),
           "dot4: flags " + std::to_string(flags) + " (signed bytes on both sides need the second clamped)");
  Expr e{EOp::Dot4, DType::I32};
  e.arg = flags;
  e.ival = (flags & kDot4SignedA) ? 128 : a_max;
  e.src[0] = a;
  e.src[1] = b;
  e.src[2] = c;
  return intern(e);
}

ExprId Kernel::acc_read(std::int32_t acc, DType t) {
  Expr e{EOp::AccRead, t};
  e.arg = acc;
  return intern(e);
}

ExprId Kernel::unary(EOp op, ExprId a, DType result) {
  const Expr x = expr(a);  // a copy: interning may move the arena
  if (op == EOp::Cast && x.dtype == result) return a;
  if (op == EOp::Cast && x.op == EOp::Const && (tensor::is_float(result) || !tensor::is_float(x.dtype))) {
    const tensor::Scalar v = tensor::cast_scalar({x.ival, x.fval}, x.dtype, result);
    return tensor::is_float(result) ? constant_float(v.f, result) : constant_int(v.i, result);
  }
  if (op == EOp::Neg && x.op == EOp::Const && !tensor::is_float(x.dtype)) {
    const tensor::Scalar a[1] = {{x.ival, 0}};
    return constant_int(tensor::evaluate(tensor::Op::Neg, x.dtype, x.dtype, a).i, x.dtype);
  }
  if (op == EOp::Neg && is_index(x.dtype)) return binary(EOp::Mul, a, constant_int(-1));
  Expr e{op, op == EOp::Cast || op == EOp::Bitcast ? result : x.dtype};
  e.src[0] = a;
  return intern(e);
}

ExprId Kernel::binary(EOp op, ExprId a, ExprId b) {
  const DType t = expr(a).dtype;
  const DType result = op == EOp::Cmplt || op == EOp::Cmpeq ? DType::Bool : t;
  auto ca = as_const(a), cb = as_const(b);
  const bool integral = !tensor::is_float(t);
  if (integral && ca && cb) return constant_int(fold_int(op, *ca, *cb, t), result);
  if (integral && t != DType::Bool && !is_index(t)) {
    // Identities of wrapping integer arithmetic.
    for (int side = 0; side < 2; ++side) {
      auto c = side == 0 ? ca : cb;
      ExprId other = side == 0 ? b : a;
      if (!c) continue;
      if (*c == 0 && (op == EOp::Add || op == EOp::Or || op == EOp::Xor)) return other;
      if (*c == 0 && (op == EOp::Mul || op == EOp::And)) return constant_int(0, t);
      if (*c == 1 && op == EOp::Mul) return other;
    }
  }
  if (t == DType::Bool) {
    if (op == EOp::And) {
      if (ca) return *ca ? b : a;
      if (cb) return *cb ? a : b;
      if (a == b) return a;
    }
    if (op == EOp::Or) {
      if (ca) return *ca ? a : b;
      if (cb) return *cb ? b : a;
      if (a == b) return a;
    }
  }
  if (is_index(t)) {
    // Index arithmetic: a rule returns a simpler form, or the op goes on to the rules below.
    if (op == EOp::Add) {
      Linear la = linear(a), lb = linear(b);
      Linear s;
      s.c = la.c + lb.c;
      std::map<ExprId, std::int64_t> m;
      for (auto [x, k] : la.terms) m[x] += k;
      for (auto [x, k] : lb.terms) m[x] += k;
      // (x mod d) k + (x / d) (d k) = x k: an index split by a reshape and put back
      // together (rows merged, then unraveled for a view) becomes linear again.
      for (bool again = true; again;) {
        again = false;
        for (auto& [t, k] : m) {
          const Expr& e = expr(t);
          if (k == 0 || e.op != EOp::Mod) continue;
          auto d = as_const(e.src[1]);
          if (!d || *d <= 0) continue;
          ExprId q = -1;
          for (auto& [u, ku] : m) {
            const Expr& f = expr(u);
            if (ku != 0 && f.op == EOp::Idiv && f.src[0] == e.src[0] && as_const(f.src[1]) == d && ku == k * *d) q = u;
          }
          if (q < 0) continue;
          const ExprId x = e.src[0];
          const std::int64_t kx = k;
          m[q] = 0;
          m[t] = 0;
          m[x] += kx;
          again = true;
          break;
        }
      }
      for (auto [x, k] : m) {
        if (k != 0) s.terms.emplace_back(x, k);
      }
      return from_linear(s);
    }
    if (op == EOp::Mul) {
      if (ca || cb) {
        Linear l = linear(ca ? b : a);
        std::int64_t c = ca ? *ca : *cb;
        if (c == 0) return constant_int(0);
        l.c *= c;
        for (auto& [x, k] : l.terms) k *= c;
        return from_linear(l);
      }
      if (b < a) std::swap(a, b);
    }
    if (op == EOp::Idiv || op == EOp::Mod) {
      if (cb && *cb > 0) {
        if (*cb == 1) return op == EOp::Idiv ? a : constant_int(0);
        return simplify_index_div_mod(op, a, *cb);
      }
      if (!cb) {
        if (auto s = simplify_symbolic_div_mod(op, a, b)) return *s;
      }
    }
    if (op == EOp::Cmplt) {
      Range ra = range(a), rb = range(b);
      if (known(ra) && known(rb)) {
        if (*ra.hi < rb.lo) return constant_bool(true);
        if (ra.lo >= *rb.hi) return constant_bool(false);
      } else if (ra.lo != kUnknownLo && rb.hi && ra.lo >= *rb.hi) {
        return constant_bool(false);
      } else if (ra.hi && rb.lo != kUnknownLo && *ra.hi < rb.lo) {
        return constant_bool(true);
      }
      // a < b  <=>  a - b < 0: decide from the range of the difference.
      Linear d = linear(a);
      for (auto [x, k] : linear(b).terms) d.terms.emplace_back(x, -k);
      d.c -= linear(b).c;
      std::map<ExprId, std::int64_t> m;
      for (auto [x, k] : d.terms) m[x] += k;
      d.terms.clear();
      for (auto [x, k] : m) {
        if (k != 0) d.terms.emplace_back(x, k);
      }
      Range rd = linear_range(d);
      if (rd.hi && *rd.hi < 0 && rd.lo != kUnknownLo) return constant_bool(true);
      if (rd.lo != kUnknownLo && rd.lo >= 0) return constant_bool(false);
    }
    if (op == EOp::Max) {
      Range ra = range(a), rb = range(b);
      if (ra.hi && rb.lo != kUnknownLo && *ra.hi <= rb.lo) return b;
      if (rb.hi && ra.lo != kUnknownLo && *rb.hi <= ra.lo) return a;
    }
    if (op == EOp::Min) {
      Range ra = range(a), rb = range(b);
      if (ra.hi && rb.lo != kUnknownLo && *ra.hi <= rb.lo) return a;
      if (rb.hi && ra.lo != kUnknownLo && *rb.hi <= ra.lo) return b;
    }
  }
  // Commutative operands in id order, so equal expressions are one (a float max is commutative
  // too: of -0 and +0 it gives +0 in either order, ops.def).
  if ((op == EOp::Add || op == EOp::Mul || op == EOp::Max || op == EOp::Min || op == EOp::Cmpeq || op == EOp::And ||
       op == EOp::Or || op == EOp::Xor) &&
      b < a) {
    std::swap(a, b);
  }
  return raw_binary(op, a, b, result);
}

ExprId Kernel::where(ExprId c, ExprId a, ExprId b) {
  if (auto cc = as_const(c)) return *cc ? a : b;
  if (a == b) return a;
  Expr e{EOp::Where, expr(a).dtype};
  e.src[0] = c;
  e.src[1] = a;
  e.src[2] = b;
  return intern(e);
}

std::pair<Stmt, ExprId> Kernel::make_loop(ExprId extent) {
  Stmt s{Stmt::Kind::Loop};
  s.var = loops_++;
  s.extent = extent;
  loop_extents_.push_back(extent);
  Expr e{EOp::LoopVar, DType::I64};
  e.arg = s.var;
  return {std::move(s), intern(e)};
}

ExprId Kernel::loop_var(std::int32_t loop) const {
  Expr e{EOp::LoopVar, DType::I64};
  e.arg = loop;
  auto it = intern_.find(e);
  if (it == intern_.end()) TL_UNREACHABLE("loop_var: no loop " + std::to_string(loop));
  return it->second;
}

// --- printing --------------------------------------------------------------------------------

std::string Kernel::load_suffix(const Expr& e) const {
  const DType stored = buffers[static_cast<std::size_t>(e.arg)].dtype;
  if (e.ival == 1) return ":" + std::string(tensor::dtype_name(e.dtype)) + "@byte";
  return e.dtype == stored ? "" : ":" + std::string(tensor::dtype_name(e.dtype));
}

std::string Kernel::expr_str(ExprId id) const {
  const Expr& e = expr(id);
  if (e.op == EOp::Const) {
    if (tensor::is_float(e.dtype)) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", e.fval);
      return std::string(buf) + (e.dtype == DType::F32 ? "f" : ":" + std::string(tensor::dtype_name(e.dtype)));
    }
    if (e.dtype == DType::Bool) return e.ival ? "true" : "false";
    return std::to_string(e.ival) + (is_index(e.dtype) ? "" : ":" + std::string(tensor::dtype_name(e.dtype)));
  }
  if (e.op == EOp::LoopVar) return "i" + std::to_string(e.arg);
  if (e.op == EOp::SymVar) return vars[static_cast<std::size_t>(e.arg)];
  if (e.op == EOp::AccRead) return "acc" + std::to_string(e.arg);
  if (e.op == EOp::Load) return "b" + std::to_string(e.arg) + load_suffix(e) + "[" + expr_str(e.src[0]) + "]";
  std::string s = std::string(eop_name(e.op));
  if (e.op == EOp::Cast || e.op == EOp::Bitcast) s += ":" + std::string(tensor::dtype_name(e.dtype));
  s += "(";
  for (int i = 0; i < 3 && e.src[i] >= 0; ++i) s += (i ? ", " : "") + expr_str(e.src[i]);
  return s + dot4_bound(e) + ")";
}

std::string Kernel::dot4_bound(const Expr& e) {
  if (e.op != EOp::Dot4) return "";
  std::string s;
  if (e.arg & kDot4SignedA) s += "; signed";
  else if (e.ival < 255) s += "; bytes <= " + std::to_string(e.ival);
  if (e.arg & kDot4ClampB) s += "; b >= -127";
  return s;
}

std::string Kernel::str() const {
  // Values used more than once, or not trivially small, are printed once as %n = ...; the
  // statements refer to them. Numbering follows first use, so equal kernels print equally.
  std::vector<std::int32_t> number(exprs_.size(), -1);
  std::string defs;
  std::int32_t next = 0;
  std::function<std::string(ExprId)> ref = [&](ExprId id) -> std::string {
    const Expr& e = expr(id);
    if (e.op == EOp::Const || e.op == EOp::LoopVar || e.op == EOp::SymVar || e.op == EOp::AccRead) {
      return expr_str(id);
    }
    auto& n = number[static_cast<std::size_t>(id)];
    if (n >= 0) return "%" + std::to_string(n);
    std::string args;
    for (int i = 0; i < 3 && e.src[i] >= 0; ++i) args += (i ? ", " : "") + ref(e.src[i]);
    n = next++;
    std::string rhs;
    if (e.op == EOp::Load) {
      rhs = "load" + load_suffix(e) + " b" + std::to_string(e.arg) + "[" + args + "]";
    } else {
      rhs = std::string(eop_name(e.op)) + ":" + std::string(tensor::dtype_name(e.dtype)) + "(" + args + dot4_bound(e) +
            ")";
    }
    defs += "%" + std::to_string(n) + " = " + rhs + "\n";
    return "%" + std::to_string(n);
  };
  std::string out;
  auto flush = [&](const std::string& pad) {
    std::size_t start = 0;
    while (start < defs.size()) {
      std::size_t end = defs.find('\n', start);
      out += pad + defs.substr(start, end + 1 - start);
      start = end + 1;
    }
    defs.clear();
  };
  std::function<void(const std::vector<Stmt>&, int)> print = [&](const std::vector<Stmt>& stmts, int depth) {
    std::string pad(static_cast<std::size_t>(2 * depth), ' ');
    for (const Stmt& s : stmts) {
      switch (s.kind) {
        case Stmt::Kind::Loop: {
          std::string ext = ref(s.extent);
          flush(pad);
          out += pad + "for i" + std::to_string(s.var) + " in [0, " + ext + ")" + (s.parallel ? " parallel" : "") +
                 (s.group ? " group" : "") + (s.lanes ? " lanes" : "") + "\n";
          print(s.body, depth + 1);
          break;
        }
        case Stmt::Kind::Store: {
          std::string idx = ref(s.index), val = ref(s.value);
          std::string mask = s.mask >= 0 ? " if " + ref(s.mask) : "";
          flush(pad);
          out += pad + "b" + std::to_string(s.buffer) + "[" + idx + "] = " + val + mask + "\n";
          break;
        }
        case Stmt::Kind::AccDef: {
          std::string val = ref(s.value);
          flush(pad);
          out += pad + "acc" + std::to_string(s.acc) + ":" + std::string(tensor::dtype_name(s.dtype)) + " = " + val + "\n";
          break;
        }
        case Stmt::Kind::AccUpdate: {
          std::string val = ref(s.value);
          flush(pad);
          out += pad + "acc" + std::to_string(s.acc) + " " + tensor::reduce_kind_name(s.reduce) + "= " + val + "\n";
          break;
        }
        case Stmt::Kind::AccSet: {
          std::string val = ref(s.value);
          flush(pad);
          out += pad + "acc" + std::to_string(s.acc) + " := " + val + "\n";
          break;
        }
        case Stmt::Kind::GroupCombine:
          flush(pad);
          out += pad + "acc" + std::to_string(s.acc) + " " + tensor::reduce_kind_name(s.reduce) + "= across group\n";
          break;
      }
    }
  };
  out = "kernel " + name + "(";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    out += (i ? ", " : "") + std::string(buffers[i].output ? "out " : "") +
           std::string(buffers[i].local_elems > 0 ? "local " : "") + "b" + std::to_string(i) + ":" +
           std::string(tensor::dtype_name(buffers[i].dtype));
    if (buffers[i].local_elems > 0) out += "[" + std::to_string(buffers[i].local_elems) + "]";
  }
  out += ")";
  if (!vars.empty()) {
    out += " vars(";
    for (std::size_t i = 0; i < vars.size(); ++i) out += (i ? " " : "") + vars[i];
    out += ")";
  }
  if (group > 0) out += " group(" + std::to_string(group) + ")";
  out += "\n";
  std::string header = out;
  out.clear();
  print(body, 1);
  return header + out;
}

// --- GPU thread mapping -----------------------------------------------------------------------

namespace {

bool depends_on_loops(const Kernel& k, ExprId e) {
  bool found = false;
  k.visit({e}, [&](ExprId, const Expr& x) {
    if (x.op == EOp::LoopVar) found = true;
    return !found;
  });
  return found;
}

// An extent expression as a shape dimension: constants and symbolic sizes combined by + and *.
tensor::Dim as_dim(const Kernel& k, ExprId e) {
  const Expr& x = k.expr(e);
  if (x.op == EOp::Const) return tensor::Dim(x.ival);
  if (x.op == EOp::SymVar) return tensor::Dim::var(k.vars[static_cast<std::size_t>(x.arg)]);
  if (x.op == EOp::Add) return as_dim(k, x.src[0]) + as_dim(k, x.src[1]);
  if (x.op == EOp::Mul) return as_dim(k, x.src[0]) * as_dim(k, x.src[1]);
  TL_UNREACHABLE("gpu: loop extent " + k.expr_str(e) + " is not a shape dimension");
}

}  // namespace

std::vector<const Stmt*> gpu_thread_loops(const Kernel& k) {
  const Stmt* parallel = nullptr;
  for (const Stmt& s : k.body) {
    if (s.kind == Stmt::Kind::Loop && s.parallel) parallel = &s;
  }
  if (parallel == nullptr) return {};
  if (k.body.size() != 1) {
    TL_UNREACHABLE("gpu: kernel " + k.name + " has statements beside its parallel loop (a CPU-only shape)");
  }
  return loop_nest(k, *parallel);
}

std::vector<const Stmt*> loop_nest(const Kernel& k, const Stmt& top) {
  std::vector<const Stmt*> chain{&top};
  while (chain.back()->body.size() == 1) {
    const Stmt& inner = chain.back()->body[0];
    if (inner.kind != Stmt::Kind::Loop || inner.group || depends_on_loops(k, inner.extent)) break;
    chain.push_back(&inner);
  }
  return chain;
}

tensor::Dim loop_extent(const Kernel& k, const std::vector<const Stmt*>& loops) {
  tensor::Dim n = 1;
  for (const Stmt* s : loops) n = n * as_dim(k, s->extent);
  return n;
}

tensor::Dim gpu_thread_count(const Kernel& k) { return loop_extent(k, gpu_thread_loops(k)); }

}  // namespace tl::codegen
