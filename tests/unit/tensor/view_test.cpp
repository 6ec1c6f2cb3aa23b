// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/view.h: a seeded fuzzer that checks composed view stacks against a
// tensor materialized after every movement op, and specific cases (view counts, symbols).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/view.h"

namespace Catch {
template <>
struct StringMaker<tl::tensor::Dim> {
  static std::string convert(const tl::tensor::Dim& d) { return d.str(); }
};
}  // namespace Catch

using tl::tensor::Bindings;
using tl::tensor::ConcreteViewStack;
using tl::tensor::Dim;
using tl::tensor::Range;
using tl::tensor::Shape;
using tl::tensor::ViewStack;

namespace {

using Ints = std::vector<std::int64_t>;

std::string ints_str(const Ints& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s + ")";
}

std::int64_t numel(const Ints& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Advances a row-major multi-index; false after the last one.
bool next_index(Ints& idx, const Ints& shape) {
  for (std::size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// The oracle: a tensor materialized after every op. Elements are ids of base elements (the
// base holds 0..n-1 in row-major order); kPad marks padding.
constexpr std::int64_t kPad = -1;
struct Dense {
  Ints shape;
  Ints data;
  std::int64_t at(const Ints& idx) const {
    std::int64_t k = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) k = k * shape[i] + idx[i];
    return data[k];
  }
};

Dense base_dense(const Ints& shape) {
  Dense d{shape, Ints(numel(shape))};
  for (std::int64_t k = 0; k < numel(shape); ++k) d.data[k] = k;
  return d;
}

// One movement op, with arguments that may be symbolic.
enum class Kind { Reshape, Permute, Expand, Pad, Shrink, Flip };
struct MoveOp {
  Kind kind;
  Shape shape;                // reshape, expand
  std::vector<int> order;     // permute
  std::vector<Range> ranges;  // pad (before, after), shrink [begin, end)
  std::vector<bool> axes;     // flip

  std::string str() const {
    std::string s;
    switch (kind) {
      case Kind::Reshape: return "reshape " + tl::tensor::shape_str(shape);
      case Kind::Expand: return "expand " + tl::tensor::shape_str(shape);
      case Kind::Permute:
        s = "permute (";
        for (std::size_t i = 0; i < order.size(); ++i)
          s += (i ? " " : "") + std::to_string(order[i]);
        return s + ")";
      case Kind::Pad:
      case Kind::Shrink:
        s = kind == Kind::Pad ? "pad (" : "shrink (";
        for (std::size_t i = 0; i < ranges.size(); ++i) {
          s += (i ? " (" : "(") + ranges[i].first.str() + " " + ranges[i].second.str() + ")";
        }
        return s + ")";
      case Kind::Flip:
        s = "flip (";
        for (std::size_t i = 0; i < axes.size(); ++i)
          s += (i ? " " : "") + std::to_string(axes[i] ? 1 : 0);
        return s + ")";
    }
    return s;
  }
};

MoveOp reshape(Shape s) { return MoveOp{Kind::Reshape, std::move(s), {}, {}, {}}; }
MoveOp permute(std::vector<int> o) { return MoveOp{Kind::Permute, {}, std::move(o), {}, {}}; }
MoveOp expand(Shape s) { return MoveOp{Kind::Expand, std::move(s), {}, {}, {}}; }
MoveOp pad(std::vector<Range> r) { return MoveOp{Kind::Pad, {}, {}, std::move(r), {}}; }
MoveOp shrink(std::vector<Range> r) { return MoveOp{Kind::Shrink, {}, {}, std::move(r), {}}; }
MoveOp flip(std::vector<bool> a) { return MoveOp{Kind::Flip, {}, {}, {}, std::move(a)}; }

std::string ops_str(const std::vector<MoveOp>& ops) {
  std::string s;
  for (const auto& op : ops) s += (s.empty() ? "" : ", ") + op.str();
  return s;
}

ViewStack apply(const ViewStack& vs, const MoveOp& op) {
  switch (op.kind) {
    case Kind::Reshape: return vs.reshape(op.shape);
    case Kind::Permute: return vs.permute(op.order);
    case Kind::Expand: return vs.expand(op.shape);
    case Kind::Pad: return vs.pad(op.ranges);
    case Kind::Shrink: return vs.shrink(op.ranges);
    case Kind::Flip: return vs.flip(op.axes);
  }
  return vs;
}

// Whether op is a legal movement of a tensor of this shape (the graph's shape rules).
bool legal(const MoveOp& op, const Ints& shape, const Bindings& b) {
  const std::size_t rank = shape.size();
  switch (op.kind) {
    case Kind::Reshape: return numel(tl::tensor::eval_shape(op.shape, b)) == numel(shape);
    case Kind::Permute: {
      if (op.order.size() != rank) return false;
      std::vector<int> sorted = op.order;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < rank; ++i) {
        if (sorted[i] != static_cast<int>(i)) return false;
      }
      return true;
    }
    case Kind::Expand: {
      if (op.shape.size() != rank) return false;
      auto to = tl::tensor::eval_shape(op.shape, b);
      for (std::size_t i = 0; i < rank; ++i) {
        if (to[i] != shape[i] && shape[i] != 1) return false;
      }
      return true;
    }
    case Kind::Pad:
    case Kind::Shrink: {
      if (op.ranges.size() != rank) return false;
      for (std::size_t i = 0; i < rank; ++i) {
        std::int64_t lo = op.ranges[i].first.eval(b);
        std::int64_t hi = op.ranges[i].second.eval(b);
        if (op.kind == Kind::Pad && (lo < 0 || hi < 0)) return false;
        if (op.kind == Kind::Shrink && (lo < 0 || hi < lo || hi > shape[i])) return false;
      }
      return true;
    }
    case Kind::Flip: return op.axes.size() == rank;
  }
  return false;
}

// The oracle's op: loops over every output index and reads the input element it comes
// from, or writes padding.
Dense apply(const Dense& in, const MoveOp& op, const Bindings& b) {
  const std::size_t rank = in.shape.size();
  Dense out;
  switch (op.kind) {
    case Kind::Reshape: return Dense{tl::tensor::eval_shape(op.shape, b), in.data};
    case Kind::Expand: out.shape = tl::tensor::eval_shape(op.shape, b); break;
    case Kind::Permute:
      for (std::size_t i = 0; i < rank; ++i) out.shape.push_back(in.shape[op.order[i]]);
      break;
    case Kind::Pad:
      for (std::size_t i = 0; i < rank; ++i) {
        out.shape.push_back(in.shape[i] + op.ranges[i].first.eval(b) + op.ranges[i].second.eval(b));
      }
      break;
    case Kind::Shrink:
      for (std::size_t i = 0; i < rank; ++i) {
        out.shape.push_back(op.ranges[i].second.eval(b) - op.ranges[i].first.eval(b));
      }
      break;
    case Kind::Flip: out.shape = in.shape; break;
  }
  if (numel(out.shape) == 0) return out;
  Ints idx(out.shape.size(), 0);
  Ints src(rank, 0);
  do {
    bool padding = false;
    for (std::size_t i = 0; i < rank; ++i) {
      switch (op.kind) {
        case Kind::Expand: src[i] = in.shape[i] == 1 ? 0 : idx[i]; break;
        case Kind::Permute: src[op.order[i]] = idx[i]; break;
        case Kind::Pad:
          src[i] = idx[i] - op.ranges[i].first.eval(b);
          if (src[i] < 0 || src[i] >= in.shape[i]) padding = true;
          break;
        case Kind::Shrink: src[i] = idx[i] + op.ranges[i].first.eval(b); break;
        case Kind::Flip: src[i] = op.axes[i] ? in.shape[i] - 1 - idx[i] : idx[i]; break;
        case Kind::Reshape: break;
      }
    }
    out.data.push_back(padding ? kPad : in.at(src));
  } while (next_index(idx, out.shape));
  return out;
}

// Indexes every element of the stack's shape and compares with the oracle; "" when equal.
std::string compare(const ViewStack& vs, const Dense& want, const Bindings& b) {
  auto shape = tl::tensor::eval_shape(vs.shape(), b);
  if (shape != want.shape) return "shape " + ints_str(shape) + ", expected " + ints_str(want.shape);
  if (numel(shape) == 0) return "";
  ConcreteViewStack cvs(vs, b);
  Ints idx(shape.size(), 0);
  std::int64_t k = 0;
  do {
    std::int64_t got = -12345;
    bool valid = cvs.index(idx.data(), got);
    std::int64_t expected = want.data[k++];
    std::string where = "at index " + ints_str(idx) + ": ";
    if (expected == kPad && valid)
      return where + "expected padding, got element " + std::to_string(got);
    if (expected != kPad && !valid)
      return where + "expected element " + std::to_string(expected) + ", got padding";
    if (expected != kPad && got != expected) {
      return where + "expected element " + std::to_string(expected) + ", got " +
             std::to_string(got);
    }
  } while (next_index(idx, shape));
  return "";
}

// Runs a chain on both sides, comparing after every op. The result is "" when every step
// agrees, "illegal" when an op does not fit its input, or a description of the first
// disagreement.
std::string run_chain(const Shape& base, const std::vector<MoveOp>& ops, const Bindings& b) {
  ViewStack vs(base);
  Dense want = base_dense(tl::tensor::eval_shape(base, b));
  if (std::string f = compare(vs, want, b); !f.empty()) return "base: " + f;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!legal(ops[i], want.shape, b)) return "illegal";
    vs = apply(vs, ops[i]);
    want = apply(want, ops[i], b);
    if (std::string f = compare(vs, want, b); !f.empty()) {
      return "after op " + std::to_string(i + 1) + " (" + ops[i].str() + "): " + f +
             "\n  views: " + vs.str();
    }
  }
  return "";
}

bool failed(const std::string& outcome) { return !outcome.empty() && outcome != "illegal"; }

// Drops ops from a failing chain while it still fails, for the smallest failing chain.
std::vector<MoveOp> shrink_failure(const Shape& base, std::vector<MoveOp> ops, const Bindings& b) {
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::vector<MoveOp> fewer = ops;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
      if (failed(run_chain(base, fewer, b))) {
        ops = std::move(fewer);
        changed = true;
        break;
      }
    }
  }
  return ops;
}

// --- the random chain generator ----------------------------------------------------------

// Makes legal random ops for a shape that may be symbolic; its values under the bindings
// decide which ops are legal and keep the element count small.
class ChainGen {
 public:
  ChainGen(std::uint64_t seed, bool symbolic) : rng_(seed), symbolic_(symbolic) {}

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }
  const Bindings& bindings() const { return bindings_; }

  // Rank 1 to 4, sizes 1 to 4 (often 1); when symbolic, about half the axes are variables.
  Shape base_shape() {
    static const int kSizes[] = {1, 1, 2, 2, 3, 4};
    Shape s(pick(1, 4));
    for (std::size_t i = 0; i < s.size(); ++i) {
      int size = kSizes[pick(0, 5)];
      if (symbolic_ && coin()) {
        std::string name = "n" + std::to_string(i);
        bindings_[name] = size;
        s[i] = Dim::var(name);
      } else {
        s[i] = size;
      }
    }
    return s;
  }

  // A random legal op for `shape` whose result has at most 1024 elements.
  MoveOp op_for(const Shape& shape) {
    for (;;) {
      MoveOp op = candidate(shape);
      if (numel(tl::tensor::eval_shape(result_shape(op, shape), bindings_)) <= 1024) return op;
    }
  }

  // The symbolic shape after op.
  static Shape result_shape(const MoveOp& op, const Shape& shape) {
    Shape s = shape;
    switch (op.kind) {
      case Kind::Reshape:
      case Kind::Expand: return op.shape;
      case Kind::Permute:
        for (std::size_t i = 0; i < s.size(); ++i) s[i] = shape[op.order[i]];
        return s;
      case Kind::Pad:
        for (std::size_t i = 0; i < s.size(); ++i)
          s[i] = s[i] + op.ranges[i].first + op.ranges[i].second;
        return s;
      case Kind::Shrink:
        for (std::size_t i = 0; i < s.size(); ++i) s[i] = op.ranges[i].second - op.ranges[i].first;
        return s;
      case Kind::Flip: return s;
    }
    return s;
  }

 private:
  std::mt19937_64 rng_;
  bool symbolic_;
  Bindings bindings_;

  std::int64_t value(const Dim& d) const { return d.eval(bindings_); }

  // A pad amount: 0 to 2, or sometimes a bound variable.
  Dim pad_amount() {
    if (!bindings_.empty() && pick(0, 3) == 0) {
      auto it = bindings_.begin();
      std::advance(it, pick(0, static_cast<int>(bindings_.size()) - 1));
      return Dim::var(it->first);
    }
    return pick(0, 2);
  }

  MoveOp candidate(const Shape& shape) {
    const int rank = static_cast<int>(shape.size());
    switch (pick(0, 7)) {
      case 0:
      case 1:
      case 2: return reshape(reshape_target(shape));
      case 3: {
        if (rank < 2) break;
        std::vector<int> order(rank);
        for (int i = 0; i < rank; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng_);
        return permute(order);
      }
      case 4: {
        Shape to = shape;
        bool any = false;
        for (int i = 0; i < rank; ++i) {
          if (shape[i] == Dim(1) && coin()) {
            to[i] = pick(2, 4);
            any = true;
          }
        }
        if (!any) break;
        return expand(to);
      }
      case 5: {
        std::vector<Range> r;
        for (int i = 0; i < rank; ++i) r.emplace_back(pad_amount(), pad_amount());
        return pad(r);
      }
      case 6: {
        // [b, e) in values; a bound is written relative to the end of a symbolic axis half
        // the time, so it stays symbolic.
        std::vector<Range> r;
        for (int i = 0; i < rank; ++i) {
          const auto size = static_cast<int>(value(shape[i]));
          if (size == 0) {
            r.emplace_back(0, 0);
            continue;
          }
          int b = pick(0, size - 1);
          int e = pick(b + 1, size);
          bool sym = !shape[i].is_const();
          r.emplace_back(sym && coin() ? shape[i] - (size - b) : Dim(b),
                         sym && coin() ? shape[i] - (size - e) : Dim(e));
        }
        return shrink(r);
      }
      case 7: {
        std::vector<bool> axes(rank);
        for (int i = 0; i < rank; ++i) axes[i] = coin();
        return flip(axes);
      }
    }
    return candidate(shape);
  }

  // Merges, splits, size-1 axes added or removed, or a fresh factorization of the count
  // (for a symbolic shape, a flattening instead).
  Shape reshape_target(const Shape& shape) {
    Shape s = shape;
    const int rank = static_cast<int>(s.size());
    switch (pick(0, 4)) {
      case 0:  // merge two adjacent axes
        if (rank >= 2) {
          int i = pick(0, rank - 2);
          s[i] = s[i] * s[i + 1];
          s.erase(s.begin() + i + 1);
          return s;
        }
        break;
      case 1: {  // split a constant axis into two factors
        if (rank == 0) break;
        int i = pick(0, rank - 1);
        if (!s[i].is_const()) break;
        std::vector<std::int64_t> divisors;
        for (std::int64_t d = 1; d <= s[i].value(); ++d) {
          if (s[i].value() % d == 0) divisors.push_back(d);
        }
        if (divisors.empty()) break;  // size 0
        std::int64_t d = divisors[pick(0, static_cast<int>(divisors.size()) - 1)];
        s[i] = s[i].value() / d;
        s.insert(s.begin() + i, d);
        return s;
      }
      case 2:  // insert a size-1 axis
        s.insert(s.begin() + pick(0, rank), 1);
        return s;
      case 3: {  // remove some size-1 axes
        Shape t;
        for (const auto& d : s) {
          if (d != Dim(1) || coin()) t.push_back(d);
        }
        return t;
      }
      default: break;
    }
    Dim total = tl::tensor::shape_numel(shape);
    if (!total.is_const()) return Shape{total};
    // A fresh random factorization of the element count, with some size-1 axes.
    std::int64_t n = total.value();
    if (n == 0) return Shape{0};
    Ints primes;
    for (std::int64_t p = 2; n > 1; ++p) {
      while (n % p == 0) {
        primes.push_back(p);
        n /= p;
      }
    }
    Ints t(pick(primes.empty() ? 0 : 1, 4), 1);
    for (auto p : primes) t[pick(0, static_cast<int>(t.size()) - 1)] *= p;
    for (int k = pick(0, 2); k > 0 && t.size() < 6; --k)
      t.insert(t.begin() + pick(0, static_cast<int>(t.size())), 1);
    return Shape(t.begin(), t.end());
  }
};

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

std::string bindings_str(const Bindings& b) {
  std::string s;
  for (const auto& [name, value] : b)
    s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s.empty() ? "none" : s;
}

// Runs random chains (symbolic: over shapes with variables) and reports up to three
// failures, each shrunk to its smallest failing chain. TL_FUZZ_SEED and TL_FUZZ_CHAINS
// override the first seed and the number of chains; a failure prints the seed of its
// chain, so TL_FUZZ_SEED=<seed> TL_FUZZ_CHAINS=1 replays it.
void fuzz_views(bool symbolic) {
  const std::uint64_t first_seed = env_or("TL_FUZZ_SEED", 20261121);
  const std::uint64_t chains = env_or("TL_FUZZ_CHAINS", 3000);
  int failures = 0;
  int reported = 0;
  for (std::uint64_t c = 0; c < chains; ++c) {
    const std::uint64_t seed = first_seed + c;
    ChainGen gen(seed, symbolic);
    const Shape base = gen.base_shape();
    std::vector<MoveOp> ops;
    Shape shape = base;
    const Bindings& b = gen.bindings();
    for (int n = gen.pick(1, 8); n > 0; --n) {
      ops.push_back(gen.op_for(shape));
      shape = ChainGen::result_shape(ops.back(), shape);
    }
    std::string outcome = run_chain(base, ops, b);
    INFO("seed " << seed << ": base " << tl::tensor::shape_str(base) << ", bindings "
                 << bindings_str(b) << "\n  chain: " << ops_str(ops));
    REQUIRE(outcome != "illegal");  // the generator only makes legal ops
    if (outcome.empty()) continue;
    ++failures;
    if (reported++ < 3) {
      std::vector<MoveOp> small = shrink_failure(base, ops, b);
      INFO("smallest failing chain: " << ops_str(small) << "\n  " << run_chain(base, small, b));
      FAIL_CHECK("a view chain disagrees with the oracle");
    }
  }
  INFO(failures << " of " << chains << " chains failed (first seed " << first_seed << ")");
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("view: random movement chains index like the materialized oracle",
          "[tensor][view][fuzz]") {
  fuzz_views(false);
}

TEST_CASE("view: random chains over symbolic shapes index like the oracle",
          "[tensor][view][fuzz]") {
  fuzz_views(true);
}

TEST_CASE("view: the oracle itself agrees with hand-computed transposes and padding",
          "[tensor][view]") {
  Dense t = base_dense({2, 3});
  CHECK(apply(t, permute({1, 0}), {}).data == Ints{0, 3, 1, 4, 2, 5});
  CHECK(apply(t, flip({false, true}), {}).data == Ints{2, 1, 0, 5, 4, 3});
  CHECK(apply(t, pad({{0, 0}, {1, 0}}), {}).data == Ints{-1, 0, 1, 2, -1, 3, 4, 5});
  CHECK(apply(t, shrink({{1, 2}, {1, 3}}), {}).data == Ints{4, 5});
  CHECK(apply(apply(t, reshape({2, 1, 3}), {}), expand({2, 2, 3}), {}).data ==
        Ints{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
}

TEST_CASE("view: reshaping a transposed tensor needs a second view", "[tensor][view]") {
  ViewStack vs = ViewStack({2, 3}).permute({1, 0}).reshape({6});
  CHECK(vs.views().size() == 2);
  CHECK(compare(vs, Dense{{6}, {0, 3, 1, 4, 2, 5}}, {}) == "");
  // Reshaping it further still gives the transposed order.
  ViewStack back = vs.reshape({2, 3});
  CHECK(compare(back, Dense{{2, 3}, {0, 3, 1, 4, 2, 5}}, {}) == "");
}

TEST_CASE("view: reshaping a contiguous tensor stays one view", "[tensor][view]") {
  ViewStack vs({2, 3, 4});
  for (const Shape& s : {Shape{6, 4}, Shape{4, 3, 2}, Shape{24}, Shape{1, 24, 1}, Shape{2, 2, 2, 3},
                         Shape{2, 3, 4}}) {
    vs = vs.reshape(s);
    INFO(tl::tensor::shape_str(s) << ": " << vs.str());
    CHECK(vs.views().size() == 1);
    CHECK(vs.views()[0].is_contiguous());
    CHECK(vs.shape() == s);
  }
  // Splitting or merging axes of a strided view also stays one view when they stay adjacent.
  ViewStack t = ViewStack({4, 6}).permute({1, 0}).reshape({2, 3, 4});
  CHECK(t.views().size() == 1);
  CHECK(run_chain({4, 6}, {permute({1, 0}), reshape({2, 3, 4})}, {}) == "");
}

TEST_CASE("view: adding or removing size-1 axes of a padded view stays one view",
          "[tensor][view]") {
  ViewStack vs = ViewStack({2, 3}).pad({{1, 1}, {0, 2}});
  REQUIRE(vs.views().size() == 1);
  for (const Shape& s :
       {Shape{1, 4, 1, 5}, Shape{4, 5}, Shape{4, 1, 5, 1}, Shape{1, 1, 4, 5}, Shape{4, 5}}) {
    vs = vs.reshape(s);
    INFO(tl::tensor::shape_str(s) << ": " << vs.str());
    CHECK(vs.views().size() == 1);
  }
  std::vector<MoveOp> ops{pad({{1, 1}, {0, 2}}), reshape({1, 4, 1, 5}), reshape({4, 1, 5, 1}),
                          reshape({4, 5})};
  CHECK(run_chain({2, 3}, ops, {}) == "");
  // A padded axis of size 1 is removed too when it is fully valid.
  ViewStack w = ViewStack({1, 3}).pad({{0, 0}, {1, 0}}).reshape({4});
  CHECK(w.views().size() == 1);
  CHECK(compare(w, Dense{{4}, {-1, 0, 1, 2}}, {}) == "");
}

TEST_CASE("view: symbolic shapes compose and evaluate with bindings", "[tensor][view]") {
  const Dim n = Dim::var("n");
  const Dim m = Dim::var("m");

  // Transposed, then flattened: two views, correct for every n.
  ViewStack t = ViewStack({n, 3}).permute({1, 0}).reshape({3 * n});
  CHECK(t.views().size() == 2);
  CHECK(t.shape() == Shape{3 * n});
  // Contiguous: flattening and splitting stay one view with symbolic strides.
  ViewStack c = ViewStack({n, 3}).reshape({3 * n});
  CHECK(c.views().size() == 1);
  CHECK(c.views()[0].strides == std::vector<Dim>{1});
  ViewStack c2 = c.reshape({n, 3});
  CHECK(c2.views().size() == 1);
  CHECK(c2.views()[0].is_contiguous());
  // A split of a strided axis next to a symbolic one.
  ViewStack s = ViewStack({n, 6}).permute({1, 0}).reshape({2, 3, n});
  CHECK(s.views().size() == 1);
  CHECK(s.views()[0].strides == std::vector<Dim>{3, 1, 6});

  struct Case {
    Shape base;
    std::vector<MoveOp> ops;
  };
  const Case cases[] = {
      {{n, 3}, {permute({1, 0}), reshape({3 * n})}},
      {{n, 3}, {reshape({3 * n}), reshape({n, 3}), flip({true, false})}},
      {{n, 6}, {permute({1, 0}), reshape({2, 3, n}), reshape({6 * n})}},
      {{n, m},
       {pad({{1, 2}, {0, 1}}), shrink({{1, n + 1}, {0, m}}), flip({true, false}),
        reshape({1, n, m}), expand({4, n, m}), permute({1, 2, 0})}},
      {{n}, {shrink({{1, n}}), pad({{2, 0}}), flip({true}), reshape({1, n + 1})}},
      {{n, m},
       {pad({{n, 0}, {0, m}}), shrink({{0, 2 * n}, {m - 1, 2 * m}}), permute({1, 0}),
        reshape({(m + 1) * 2 * n})}},
      {{2, n},
       {permute({1, 0}), pad({{0, 1}, {1, 0}}), shrink({{1, n + 1}, {0, 3}}), flip({true, true})}},
  };
  const Bindings bindings[] = {
      {{"n", 1}, {"m", 1}}, {{"n", 2}, {"m", 3}}, {{"n", 5}, {"m", 2}}, {{"n", 4}, {"m", 4}}};
  for (const auto& [base, ops] : cases) {
    for (const auto& b : bindings) {
      INFO("base " << tl::tensor::shape_str(base) << ", chain: " << ops_str(ops)
                   << ", n=" << b.at("n") << " m=" << b.at("m"));
      CHECK(run_chain(base, ops, b) == "");
    }
  }

  // Every variable must be bound to index.
  CHECK_THROWS_AS(ConcreteViewStack(t, {}), std::out_of_range);
  CHECK_THROWS_AS(ConcreteViewStack(ViewStack({n, m}), {{"n", 2}}), std::out_of_range);
}

// Regression (found by the view fuzzer, fixed by clamping in ViewStack::shrink): the mask
// was left as [-1, 3) on an axis of size 1, and pad then shifted it to [0, 4), so the new
// padding at index 0 read element 0.
TEST_CASE("view: pad after a shrink into padding keeps the new padding", "[tensor][view]") {
  std::vector<MoveOp> ops{pad({{1, 2}}), shrink({{2, 3}}), pad({{1, 2}})};
  // [0 1 2 3] -> [- 0 1 2 3 - -] -> [1] -> [- 1 - -]
  CHECK(run_chain({4}, ops, {}) == "");
  // Shrinking to padding only, then padding after: still all padding.
  CHECK(run_chain({3}, {pad({{2, 0}}), shrink({{0, 1}}), pad({{0, 2}})}, {}) == "");
}

// Regression (found by the view fuzzer, fixed with the case above): expand kept an axis valid
// when its mask was non-empty, even when the mask lay outside the axis.
TEST_CASE("view: expand of a size-1 axis that is padding stays padding", "[tensor][view]") {
  // [0 1 2] -> [- - 0 1 2] -> [-] -> [- - - -]
  CHECK(run_chain({3}, {pad({{2, 0}}), shrink({{0, 1}}), expand({4})}, {}) == "");
}

// Regression (found by the symbolic fuzzer): the two cases above with a symbolic axis. The
// shrunk mask keeps a symbolic bound (n - 1, or n + 2) that cannot be clamped, so pad and
// expand put a new view over it instead of shifting or trusting it.
TEST_CASE("view: pad and expand after a shrink of a symbolic axis", "[tensor][view]") {
  const Dim n = Dim::var("n");
  // [0 1 2 3] -> [- 0 1 2 3 - -] -> [1] -> [- 1 - -]; the mask after shrink is [-1, n - 1).
  CHECK(run_chain({n}, {pad({{1, 2}}), shrink({{2, 3}}), pad({{1, 2}})}, {{"n", 4}}) == "");
  // [0 1 2] -> [- - 0 1 2] -> [-] -> [- - - -]; the mask after shrink is [2, n + 2).
  CHECK(run_chain({n}, {pad({{2, 0}}), shrink({{0, 1}}), expand({4})}, {{"n", 3}}) == "");
}
