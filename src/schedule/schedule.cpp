// SPDX-License-Identifier: Apache-2.0
// Fusion decisions. Reduces, copies and assigns always end a kernel; an elementwise node is
// recomputed in each consumer unless it is read by several and inlining would repeat
// much work.
// (Over 800 lines: the fusion rules (rows, softmax parts, short products, blocked attention)
// all read and extend one Schedule while make_schedule walks the graph; describe() turns its
// decisions into ScheduledKernels from the same helpers.)
#include "schedule/schedule.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tl::schedule {

using tensor::DType;
using tensor::Op;
using tensor::OpGroup;
using tensor::ReduceKind;

namespace {

bool is_movement(const Node* n) { return tensor::op_info(n->op).group == OpGroup::Movement; }

const Node* data_source(const Node* n) {
  while (is_movement(n) && !holds_data(n)) n = n->src[0].get();
  return n;
}

// The work an inlined copy repeats (ops.def's cost of the op).
// The work of computing N once per element. A bound on bytes (the max of 8-bit integers and a
// constant: the clamp a quantized activation is read through) costs nothing here: kernels
// that multiply bytes apply it to whole words (codegen's qdot opt), so it never makes a
// matmul keep its operand in memory as floats.
int work(const Node* n) {
  if (n->op == Op::Max && (n->dtype == DType::I8 || n->dtype == DType::U8) &&
      (n->src[0]->op == Op::Const || n->src[1]->op == Op::Const)) {
    return 0;
  }
  return tensor::op_info(n->op).work;
}

// Ops that compute (movement and constants are free).
bool costs_work(const Node* n) { return tensor::op_info(n->op).work > 0; }

constexpr int kInlineLimit = 6;
constexpr int kCostCap = 1 << 20;  // costs saturate here (a DAG's paths multiply)  // ops of a shared node recomputed by each consumer, at most
// Nodes fused into one kernel along any path: deeper chains are cut into several kernels,
// which bounds the recursion of lowering and code generation.
constexpr int kMaxFusedDepth = 160;
// The most row reduces of a kernel that recompute_in_rows makes.
constexpr std::size_t kMaxRecomputeRows = 2;
// The most rows of softmax weights that read each row of values for Options::Online::Auto to
// take an online softmax (a query's heads sharing one key/value head, grouped-query attention).
constexpr std::int64_t kOnlineMaxSharing = 8;
// Or where storing the weights would take at least this many bytes (and the scores as many
// again), whatever the device and shape: the online kernel never holds more than its output,
// even where it runs row by row, slower than the stored form's matmuls.
constexpr std::int64_t kOnlineMinBytes = std::int64_t{256} << 20;
// The most terms of a sum of products that recompute_softmax computes again wherever it is read.
constexpr std::int64_t kRecomputeTerms = 256;
// On the CPU, the least bytes of softmax weights for which Options::Online::Auto recomputes them
// in backward (recompute_softmax) where the blocked kernels apply.
constexpr std::int64_t kRecomputeHostBytes = std::int64_t{32} << 20;

// The nodes a kernel computes inline: from its output down to materialized nodes.
std::vector<const Node*> region(const Schedule& s, const Node* out) {
  std::vector<const Node*> nodes, stack{out};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    nodes.push_back(n);
    if (n != out && s.materialized.count(n)) continue;
    for (const auto& src : n->src) stack.push_back(src.get());
  }
  return nodes;
}

// The reduce whose kernel `head` is (a reduce, or elementwise work on one of the same shape).
const Node* reduce_of(const Schedule& s, const Node* head) {
  for (const Node* n : region(s, head)) {
    if (n->op == Op::Reduce && (n == head || !s.materialized.count(n))) return n;
  }
  return nullptr;
}

// Row fusion. A kernel that reads a row-wise reduce's result broadcast back over the rows it
// reduced (x - max(x), x / sum(x), layer-norm's (x - mean) / std) computes the reduce itself:
// per row, a pass over the row accumulates, then the row's output is written, so the reduce's
// result never goes to memory and the row stays in cache between passes. The lowering (see
// codegen/lower.cpp) runs one such pass per fused reduce, in dependency order.
void fuse_rows(Schedule& s, std::unordered_set<const Node*>& heads, std::unordered_map<const Node*, int>& uses,
               const std::unordered_set<const Node*>& roots) {
  for (bool changed = true; changed;) {
    changed = false;
    // How many kernels compute each node (a node inlined into two kernels runs in both).
    std::unordered_map<const Node*, int> computed_by;
    for (const Node* k : s.kernels) {
      for (const Node* n : region(s, k)) ++computed_by[n];
    }
    for (const Node* k : s.kernels) {
      if (heads.count(k) || !costs_work(k)) continue;
      // A gather reads its source at computed positions, not row by row: no reduce under a
      // gather's source is computed per row.
      std::unordered_set<const Node*> gathered;
      for (const Node* n : region(s, k)) {
        if (n->op != Op::Gather || (n != k && s.materialized.count(n))) continue;
        const Node* x = n->src[0].get();
        if (!s.materialized.count(x)) {
          for (const Node* m : region(s, x)) gathered.insert(m);
        }
      }
      const tensor::Shape& shape = k->shape;
      // The reduce axes of the reduces fused into k so far (all must agree).
      std::vector<std::int64_t> axes;
      for (const Node* n : region(s, k)) {
        if (n->op == Op::Reduce && n != k && !s.materialized.count(n)) axes = n->axes;
      }
      const std::vector<const Node*> here = region(s, k);
      // Whether every read of h is by nodes of this kernel that no other kernel computes, each
      // reading it as the row's value: directly at its own shape, or through an expand back to
      // the kernel's shape (a reduce's result read broadcast and also at the row's shape:
      // log-softmax's max, read by x - max and by max + log(sum)). A view of another kind
      // would read another row's value, which the row's pass does not have.
      auto read_only_here = [&](const Node* h) {
        int reads = 0;
        for (const Node* m : here) {
          if (holds_data(m) || is_movement(m) || (m != k && s.materialized.count(m))) continue;
          for (const auto& src : m->src) {
            const Node* c = src.get();
            if (data_source(c) != h) continue;
            const bool as_row =
                (c == h && m->shape == h->shape) || (c->op == Op::Expand && c->src[0].get() == h && c->shape == shape);
            if (!as_row || computed_by[m] != 1 || gathered.count(m)) return false;
            ++reads;
          }
        }
        return reads == uses[h];
      };
      const Node* absorb = nullptr;
      for (const Node* n : here) {
        if (n->op != Op::Expand || n->shape != shape || gathered.count(n)) continue;
        const Node* h = n->src[0].get();
        if (!heads.count(h) || roots.count(h) || (uses[h] != 1 && !read_only_here(h))) continue;
        const Node* r = reduce_of(s, h);
        if (r == nullptr || r->shape != h->shape || r->src[0]->shape != shape) continue;
        if (!axes.empty() && axes != r->axes) continue;
        // At least one axis is not reduced (the rows), and the expand restores exactly the
        // reduced ones.
        bool rows = false;
        bool exact = true;
        for (std::size_t i = 0; i < shape.size(); ++i) {
          bool reduced = std::find(r->axes.begin(), r->axes.end(), static_cast<std::int64_t>(i)) != r->axes.end();
          if (!reduced && shape[i] != tensor::Dim(1)) rows = true;
          if (!reduced && h->shape[i] != shape[i]) exact = false;
        }
        // The expand must be computed by this kernel alone: absorbing the reduce would leave
        // another kernel that inlines the expand with a reduce it cannot run.
        if (rows && exact && computed_by[n] == 1) {
          absorb = h;
          break;
        }
      }
      if (absorb != nullptr) {
        s.materialized.erase(absorb);
        s.kernels.erase(std::find(s.kernels.begin(), s.kernels.end(), absorb));
        heads.erase(absorb);
        changed = true;
        break;  // the kernel list changed
      }
    }
  }
}

// An elementwise kernel whose every reader sees it through one chain of permutes and
// reshapes stores the chain's end instead: the kernel then writes in the order it is read. (A convolution's output
// gradient is read as the channels-last matrix of its weight gradient; computed in NCHW
// order it would be written and read across channels.)
void store_in_read_order(Schedule& s, const std::vector<const Node*>& order, const std::unordered_set<const Node*>& heads,
                         const std::unordered_set<const Node*>& roots) {
  std::unordered_map<const Node*, std::vector<const Node*>> readers;
  for (const Node* n : order) {
    if (holds_data(n)) continue;
    for (const auto& src : n->src) readers[src.get()].push_back(n);
  }
  for (auto& k : s.kernels) {
    if (roots.count(k) || heads.count(k) || !costs_work(k)) continue;
    // Not a kernel that runs a reduce inline (row reduces recomputed in it, recompute_in_rows):
    // its loops are the reduce's, which a view of the output does not have.
    if (reduce_of(s, k) != nullptr) continue;
    // Follow the chain of reshapes and permutes that is k's only reader.
    const Node* p = k;
    bool permuted = false;
    for (;;) {
      const auto& r = readers[p];
      if (r.empty() || (r[0]->op != Op::Permute && r[0]->op != Op::Reshape)) break;
      if (s.materialized.count(r[0]) || roots.count(r[0])) break;
      if (!std::all_of(r.begin(), r.end(), [&](const Node* q) { return q == r[0]; })) break;
      p = r[0];
      permuted = permuted || p->op == Op::Permute;
    }
    if (!permuted) continue;
    s.materialized.erase(k);
    s.materialized.insert(p);
    k = p;
  }
}

// The reduce whose loops a kernel for `out` runs: the output itself, or a reduce fused under
// its elementwise epilogue (found through unmaterialized nodes).
const Node* kernel_reduce(const Schedule& s, const Node* out) {
  if (out->op == Op::Reduce) return out;
  std::vector<const Node*> stack{value_source(out)};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* m = stack.back();
    stack.pop_back();
    if (!seen.insert(m).second || (m != out && s.materialized.count(m))) continue;
    if (m->op == Op::Reduce) return m;
    for (const auto& src : m->src) stack.push_back(src.get());
  }
  return nullptr;
}

// The reduces row-fused into an elementwise output of their input's shape (fuse_rows), in
// dependency order (inner first); empty when the kernel is not a row kernel.
std::vector<const Node*> kernel_rows(const Schedule& s, const Node* out) {
  if (out->op == Op::Reduce) return {};
  std::vector<const Node*> order;
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<const Node*, bool>> stack{{value_source(out), false}};
  while (!stack.empty()) {
    auto [m, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      if (m->op == Op::Reduce) order.push_back(m);
      continue;
    }
    if (!seen.insert(m).second || (m != out && s.materialized.count(m))) continue;
    stack.emplace_back(m, true);
    for (const auto& src : m->src) stack.emplace_back(src.get(), false);
  }
  for (const Node* r : order) {
    if (r->src[0]->shape != out->shape) return {};  // an epilogue kernel, not rows
  }
  return order;
}

// A node that a row-wise reduce reads and that the kernel using the reduce's result reads as
// well (softmax's exp(x - max): summed, then divided by the sum) is materialized as shared work,
// which splits the row computation into two kernels that each pass the rows through memory.
// Computed again in each pass of one row kernel instead, it costs a second evaluation per
// element on the row in cache and saves a write and a read of it. Taken only where it leaves
// exactly one kernel computing the node, and that one a row kernel of at most two reduces
// (softmax's max and sum): where the reading kernel has row reduces of its own already (a chain
// of softmaxes, each reading the last), each merge would add passes that recompute everything
// before them, without bound.
void recompute_in_rows(Schedule& s, std::unordered_set<const Node*>& heads, std::unordered_map<const Node*, int>& uses,
                       const std::unordered_set<const Node*>& roots, const std::unordered_set<const Node*>& reduced) {
  for (std::size_t i = 0; i < s.kernels.size(); ++i) {
    const Node* e = s.kernels[i];
    const OpGroup g = tensor::op_info(e->op).group;
    if (roots.count(e) || heads.count(e) || uses[e] < 2) continue;
    if (g != OpGroup::Unary && g != OpGroup::Binary && g != OpGroup::Ternary) continue;
    if (!reduced.count(e)) continue;
    Schedule trial = s;
    std::unordered_set<const Node*> trial_heads = heads;
    trial.materialized.erase(e);
    trial.kernels.erase(trial.kernels.begin() + static_cast<std::ptrdiff_t>(i));
    fuse_rows(trial, trial_heads, uses, roots);
    int computing = 0;
    bool rows = true;
    for (const Node* k : trial.kernels) {
      const std::vector<const Node*> r = region(trial, k);
      if (std::find(r.begin(), r.end(), e) == r.end()) continue;
      ++computing;
      const std::size_t n = kernel_rows(trial, k).size();
      rows = rows && n >= 1 && n <= kMaxRecomputeRows;
    }
    if (computing != 1 || !rows) continue;
    s = std::move(trial);
    heads = std::move(trial_heads);
    i = static_cast<std::size_t>(-1);  // the kernel list changed: look again from the start
  }
}

// For each axis of TOP, a chain of reshapes, expands and permutes over BASE: the axis of BASE
// it indexes, or -1 when it indexes none (an axis that an expand broadcasts, or one of size 1).
// None when the chain holds another op, or a reshape that does more than add or drop axes of
// size 1. With WINDOWS, shrinks, pads and flips too (each axis of the source indexes its own).
std::optional<std::vector<int>> axis_origins(const Node* top, const Node* base, bool windows = false) {
  std::vector<int> at(top->shape.size());  // top axis -> axis of the current node
  for (std::size_t i = 0; i < at.size(); ++i) at[i] = top->shape[i] == tensor::Dim(1) ? -1 : static_cast<int>(i);
  for (const Node* n = top; n != base; n = n->src[0].get()) {
    if (holds_data(n) || n->src.empty()) return std::nullopt;
    const Node* src = n->src[0].get();
    std::vector<int> to(n->shape.size(), -1);  // axis of n -> axis of src
    if (n->op == Op::Expand) {
      for (std::size_t i = 0; i < to.size(); ++i) to[i] = src->shape[i] == n->shape[i] ? static_cast<int>(i) : -1;
    } else if (n->op == Op::Permute) {
      for (std::size_t i = 0; i < to.size(); ++i) to[i] = static_cast<int>(n->axes[i]);
    } else if (windows && (n->op == Op::Shrink || n->op == Op::Pad || n->op == Op::Flip)) {
      for (std::size_t i = 0; i < to.size(); ++i) to[i] = static_cast<int>(i);
    } else if (n->op == Op::Reshape) {
      std::size_t j = 0;
      for (std::size_t i = 0; i < to.size(); ++i) {
        if (n->shape[i] == tensor::Dim(1)) continue;
        while (j < src->shape.size() && src->shape[j] == tensor::Dim(1)) ++j;
        if (j == src->shape.size() || src->shape[j] != n->shape[i]) return std::nullopt;
        to[i] = static_cast<int>(j++);
      }
      while (j < src->shape.size() && src->shape[j] == tensor::Dim(1)) ++j;
      if (j != src->shape.size()) return std::nullopt;
    } else {
      return std::nullopt;
    }
    for (int& a : at) a = a < 0 ? -1 : to[static_cast<std::size_t>(a)];
  }
  return at;
}

// Origins through two chains, TOP over MID and MID over BASE (axis_origins): for each axis of
// TOP, the axis of BASE it indexes, or -1.
std::optional<std::vector<int>> compose(const std::optional<std::vector<int>>& top,
                                        const std::optional<std::vector<int>>& mid) {
  if (!top || !mid) return std::nullopt;
  std::vector<int> at = *top;
  for (int& a : at) a = a < 0 ? -1 : (*mid)[static_cast<std::size_t>(a)];
  return at;
}

// N when it is a cast of f16 or bf16 to f32: matmul's widened half-precision operand. Null
// otherwise.
const Node* widening_cast(const Node* n) {
  if (n->op != Op::Cast || n->dtype != DType::F32) return nullptr;
  const DType from = n->src[0]->dtype;
  return from == DType::F16 || from == DType::BF16 ? n : nullptr;
}

// Whether lowering can compute N inside another kernel (elementwise work, views, a reduce: not
// a copy, an assign, a scatter-add or an external kernel, which write buffers of their own).
bool inlinable(const Node* n) {
  const OpGroup g = tensor::op_info(n->op).group;
  return g == OpGroup::Unary || g == OpGroup::Binary || g == OpGroup::Ternary || g == OpGroup::Movement ||
         n->op == Op::Reduce || n->op == Op::Const || n->op == Op::Iota || n->op == Op::Gather;
}

// Below a chain of casts: the node they convert.
const Node* uncast(const Node* n) {
  while (n->op == Op::Cast && tensor::is_float(n->src[0]->dtype)) n = n->src[0].get();
  return n;
}

// For E = exp(x - m) as the exp composite builds it (exp2 of the difference times log2(e),
// computed in f64 for narrower floats and cast back): x and m (the max's expand), or nulls.
std::pair<const Node*, const Node*> exp_of_difference(const Node* e) {
  const Node* x = uncast(e);
  if (x->op != Op::Exp2) return {nullptr, nullptr};
  const Node* mul = x->src[0].get();
  if (mul->op != Op::Mul) return {nullptr, nullptr};
  for (int side = 0; side < 2; ++side) {
    const Node* c = mul->src[static_cast<std::size_t>(side)].get();
    const Node* d = uncast(mul->src[static_cast<std::size_t>(1 - side)].get());
    if (c->op != Op::Const || !(c->fvalue > 0) || d->op != Op::Add) continue;
    for (int s2 = 0; s2 < 2; ++s2) {
      const Node* neg = d->src[static_cast<std::size_t>(1 - s2)].get();
      if (neg->op == Op::Neg && neg->src[0]->op == Op::Expand)
        return {d->src[static_cast<std::size_t>(s2)].get(), neg->src[0].get()};
    }
  }
  return {nullptr, nullptr};
}

// The parts of softmax weights W = E * recip(expand(sum E)), E = exp(X - expand(max X)), along
// the same axes, as one Rows kernel (its two row reduces, max then sum): the structure the
// softmax composite builds (no name involved). KERNEL is the node of that kernel: W, or an
// epilogue over W (the cast widening half-precision weights for matmul).
struct SoftmaxParts {
  const Node* max = nullptr;
  const Node* sum = nullptr;
  const Node* exp = nullptr;
  const Node* scores = nullptr;
};
std::optional<SoftmaxParts> softmax_parts(const Schedule& s, const Node* kernel, const Node* w) {
  const std::vector<const Node*> rows = kernel_rows(s, kernel);
  if (rows.size() != 2 || rows[0]->reduce_kind != ReduceKind::Max || rows[1]->reduce_kind != ReduceKind::Sum) {
    return std::nullopt;
  }
  const Node* mx = rows[0];
  const Node* sm = rows[1];
  if (mx->axes != sm->axes || w->op != Op::Mul) return std::nullopt;
  const Node* e = nullptr;
  for (int ws = 0; ws < 2; ++ws) {
    const Node* rc = w->src[static_cast<std::size_t>(1 - ws)].get();
    if (rc->op == Op::Recip && rc->src[0]->op == Op::Expand && rc->src[0]->src[0].get() == sm &&
        w->src[static_cast<std::size_t>(ws)].get() == sm->src[0].get()) {
      e = sm->src[0].get();
    }
  }
  if (e == nullptr || e->dtype != w->dtype) return std::nullopt;
  auto [x, mexp] = exp_of_difference(e);
  if (x == nullptr || mexp->src[0].get() != mx || mx->src[0].get() != x || x->dtype != e->dtype) return std::nullopt;
  return SoftmaxParts{mx, sm, e, x};
}

// Online softmax. A kernel computing R = sum over axes A of (mul W' V'), where W' reads (through
// broadcasts, permutes and size-1 reshapes) the softmax W = E / sum_A(E), E = exp(X - max_A(X)),
// row-fused as one Rows kernel that nothing else reads, becomes one OnlineSoftmax kernel: per
// row, a single pass over A keeps the running max, the running sum of E and R's row, rescaling
// both by exp(old max - new max) when the max grows. W is not stored, and neither is X when all
// its readers are in the new kernel (attention's scores, whose matmul then runs inline per
// element of A). Auto takes it where the weights are read by few rows of values each (a decode
// step's single query against its keys), where storing them buys nothing; where they would be
// large (kOnlineMinBytes); and on the CPU where it runs in blocks (f32, keys and values in
// multiples of 16): there it is as fast as the stored form's tiled matmuls or faster (L = 1024,
// 12 heads of 64, one AVX-512 thread: 51 ms against 56), and skips what a mask hides (causal:
// 27 ms; GPT-2's 512-token prefill ran 1.27 s against 1.32 s stored). Elsewhere (a GPU, other
// shapes) the row-by-row kernel is slower than the stored form's matmuls.
void fuse_online_softmax(Schedule& s, std::unordered_set<const Node*>& heads,
                         const std::unordered_map<const Node*, int>& uses,
                         const std::unordered_map<const Node*, std::vector<const Node*>>& readers,
                         const std::unordered_set<const Node*>& roots, const Options& options) {
  if (options.online_softmax == Options::Online::Never) return;
  auto used = [&](const Node* n) {
    auto it = uses.find(n);
    return it == uses.end() ? 0 : it->second;
  };
  for (const Node* head : std::vector<const Node*>(s.kernels)) {
    // (Not a kernel any more: an earlier online kernel took it in.)
    if (!s.materialized.count(head) || s.online.count(head)) continue;
    // The contraction, or elementwise work on its result that took its kernel over (an
    // epilogue: a cast, a bias), which becomes a kernel of its own reading the contraction's.
    const Node* r = head->op == Op::Reduce ? head : kernel_rows(s, head).empty() ? kernel_reduce(s, head) : nullptr;
    if (r == nullptr || r->op != Op::Reduce || r->reduce_kind != ReduceKind::Sum) continue;
    // (f16 and bf16 run in f32, their output rows in f32 scratch: build_online in lower.cpp.)
    const bool half = r->dtype == DType::F16 || r->dtype == DType::BF16;
    if (r->dtype != DType::F32 && r->dtype != DType::F64 && !half) continue;
    const Node* prod = r->src[0].get();
    if (prod->op != Op::Mul || s.materialized.count(prod)) continue;
    std::vector<bool> summed(prod->shape.size(), false);  // the contraction's axes
    for (auto a : r->axes) summed[static_cast<std::size_t>(a)] = true;
    for (int side = 0; side < 2; ++side) {
      const Node* wv = prod->src[static_cast<std::size_t>(side)].get();
      const Node* w = data_source(wv);
      // Half-precision weights widened to f32 for the product, as matmul does (computed in f32
      // in the new kernel, never rounded): the cast in the product's kernel, or the softmax
      // kernel's output (its epilogue). KW: the softmax's kernel.
      const Node* widened = r->dtype == DType::F32 ? widening_cast(w) : nullptr;
      if (widened) w = data_source(widened->src[0].get());
      const Node* kw = widened && s.materialized.count(widened) ? widened : w;
      if (kw != w && (s.materialized.count(w) || used(w) != 1)) continue;
      if (!s.materialized.count(kw) || holds_data(kw) || roots.count(kw) || used(kw) != 1) continue;
      const std::optional<SoftmaxParts> parts = softmax_parts(s, kw, w);
      if (!parts || (w->dtype != r->dtype && !widened)) continue;
      const Node* mx = parts->max;
      const Node* sm = parts->sum;
      const Node* e = parts->exp;
      const Node* x = parts->scores;
      // The softmax's axes are exactly the contraction's; the weights broadcast along the rest.
      auto origins =
          widened ? compose(axis_origins(wv, widened), axis_origins(widened->src[0].get(), w)) : axis_origins(wv, w);
      if (!origins) continue;
      const tensor::Shape& full = prod->shape;
      std::vector<bool> value_axes(full.size(), false);
      std::size_t matched = 0;
      bool ok = true;
      for (std::size_t i = 0; i < full.size() && ok; ++i) {
        const int o = (*origins)[i];
        const bool softmax_axis = o >= 0 && std::find(mx->axes.begin(), mx->axes.end(), o) != mx->axes.end();
        if (full[i] == tensor::Dim(1)) continue;
        if (summed[i] != softmax_axis) ok = false;
        if (summed[i]) ++matched;
        value_axes[i] = !summed[i] && o < 0;
      }
      std::size_t softmax_len = 0;
      for (auto a : mx->axes) softmax_len += w->shape[static_cast<std::size_t>(a)] == tensor::Dim(1) ? 0 : 1;
      if (!ok || matched != softmax_len) continue;
      if (half) {
        // (the scratch row of a half-precision output: a constant size)
        tensor::Dim width = 1;
        for (std::size_t i = 0; i < full.size(); ++i) width = value_axes[i] ? width * full[i] : width;
        if (!width.as_const()) continue;
      }
      const Node* values = prod->src[static_cast<std::size_t>(1 - side)].get();
      // Auto: only where few rows of weights read each row of values (below).
      if (options.online_softmax == Options::Online::Auto) {
        auto vorigins = axis_origins(values, data_source(values), true);
        tensor::Dim sharing = 1;  // rows (not summed, not value axes) along which the values are broadcast
        for (std::size_t i = 0; i < full.size() && vorigins; ++i) {
          if (!summed[i] && !value_axes[i] && (*vorigins)[i] < 0) sharing = sharing * full[i];
        }
        // (Values read through views no chain of broadcasts tells: not known to be few.)
        auto n = vorigins ? sharing.as_const() : std::nullopt;
        auto bytes = tensor::shape_bytes(w->shape, w->dtype).as_const();
        const bool few = n && *n <= kOnlineMaxSharing;
        const bool large = bytes && *bytes >= kOnlineMinBytes;
        // (On the CPU: where it lowers it in blocks, f32 with one axis of keys and one of values,
        // each a multiple of 16 long; build_online_blocked in codegen/lower.cpp.)
        int key_axes = 0, value_count = 0;
        bool sixteens = r->dtype == DType::F32 || half;
        for (std::size_t i = 0; i < full.size(); ++i) {
          if (full[i] == tensor::Dim(1) || !(summed[i] || value_axes[i])) continue;
          auto n = full[i].as_const();
          sixteens = sixteens && n && *n % 16 == 0;
          (summed[i] ? key_axes : value_count) += 1;
        }
        const bool blocks = sixteens && key_axes == 1 && value_count == 1;
        if (!few && !large && !(options.host && blocks)) continue;
      }
      s.materialized.erase(kw);
      s.kernels.erase(std::find(s.kernels.begin(), s.kernels.end(), kw));
      heads.erase(kw);
      if (head != r) {
        s.materialized.insert(r);
        s.kernels.push_back(r);  // in graph order later
        heads.erase(head);
        heads.insert(r);
      }
      // The scores too, and the work under them down to their own reduce (the q . k products,
      // never below it: the projections that make q and k stay kernels), when the new kernel is
      // all that reads them: a soft cap's tanh, shared by the max and the exponential, say.
      std::vector<const Node*> down{x};
      std::unordered_set<const Node*> seen;
      while (!down.empty()) {
        const Node* n = down.back();
        down.pop_back();
        if (!seen.insert(n).second || holds_data(n)) continue;
        if (s.materialized.count(n)) {
          if (roots.count(n) || !inlinable(n) || !kernel_rows(s, n).empty()) continue;
          const std::vector<const Node*> fused = region(s, r);
          const std::unordered_set<const Node*> in(fused.begin(), fused.end());
          auto it = readers.find(n);
          // Every reader computed inside the new kernel (not another kernel, read there as a leaf).
          auto inside = [&](const Node* c) { return c == r || (in.count(c) > 0 && !s.materialized.count(c)); };
          if (it == readers.end() || !std::all_of(it->second.begin(), it->second.end(), inside)) continue;
          s.materialized.erase(n);
          s.kernels.erase(std::find(s.kernels.begin(), s.kernels.end(), n));
          heads.erase(n);
        }
        if (n->op == Op::Reduce) continue;
        for (const auto& src : n->src) down.push_back(src.get());
      }
      s.online[r] = OnlineSoftmax{r, w, mx, sm, e, x, values, wv, std::move(value_axes)};
      break;
    }
  }
}

// Whether kernel K is a sum of products whose summed axes hold at most kRecomputeTerms terms
// (attention's q . k over the head dimension): computed again inline, each element costs that
// many multiply-adds.
bool short_product(const Schedule& s, const Node* k) {
  const Node* r = kernel_reduce(s, k);
  if (r == nullptr || r->reduce_kind != ReduceKind::Sum || r->src[0]->op != Op::Mul) return false;
  tensor::Dim terms = 1;
  for (auto a : r->axes) terms = terms * r->src[0]->shape[static_cast<std::size_t>(a)];
  auto n = terms.as_const();
  return n && *n <= kRecomputeTerms;
}

// Attention's training graph without its L x L matrices. Backward reads the softmax weights W
// again (dV = W^T dO, and W (dP - sum(W dP)) for the scores' gradient), so fuse_online_softmax
// leaves them stored, and with them the scores X, the gradient dP = dO V^T and the scores'
// gradient: four buffers of B x H x L x L. On the CPU (f32, f64) where W would take
// kOnlineMinBytes or more, or from kRecomputeHostBytes where the kernels run in blocks (below),
// or with Online::Always, none of them is stored: W's row reduces (max and sum of the exponentials)
// become kernels of their own, O(L) each, and every kernel that read one of the four computes it
// again where it reads it, down to the short products under it (q . k and dO . v, inline
// reduces): the FlashAttention-2 recomputation. The set grows from W: a kernel of W's size that
// reads one of the set (the scores' gradient), or a short product of W's size that only kernels
// computing the set read (dP), joins it; row reduces of a joining row kernel (sum(W dP)) become
// kernels. Nothing changes unless every kernel that would compute one of them inline can: a
// reduce (plain or interchanged: the lowering then computes the inline values once per term of
// the sum, outside the loop over the output row) or an elementwise kernel.
void recompute_softmax(Schedule& s, std::unordered_set<const Node*>& heads,
                       const std::unordered_map<const Node*, std::vector<const Node*>>& readers,
                       const std::unordered_set<const Node*>& roots, const Options& options) {
  if (options.online_softmax == Options::Online::Never) return;
  auto readers_of = [&](const Node* n) -> const std::vector<const Node*>& {
    static const std::vector<const Node*> none;
    auto it = readers.find(n);
    return it == readers.end() ? none : it->second;
  };
  for (const Node* w : std::vector<const Node*>(s.kernels)) {
    if (!s.materialized.count(w) || roots.count(w)) continue;
    const std::optional<SoftmaxParts> parts = softmax_parts(s, w, w);
    if (!parts) continue;
    if (options.online_softmax == Options::Online::Auto) {
      auto bytes = tensor::shape_bytes(w->shape, w->dtype).as_const();
      // On the CPU, where its kernels run in blocks (f32; keys and queries in multiples of 16:
      // build_recompute_blocked in codegen/lower.cpp), from kRecomputeHostBytes: a training step
      // of 12 heads at L = 1024 ran as fast as with the matrices stored (231 ms against 241 on
      // one AVX-512 thread), at L = 4096 faster (3.5 s against 5.8), at L = 256 slower (18 ms
      // against 13).
      // Elsewhere (a GPU, f16/bf16) its kernels run without the interchange, computing the
      // products under W once per element of the output rather than once per term (64x the
      // work for heads of 64): only :always takes it there.
      if (!options.host || (w->dtype != DType::F32 && w->dtype != DType::F64)) continue;
      bool blocks = w->dtype == DType::F32;
      std::size_t innermost_row = w->shape.size();
      tensor::Dim keys = 1;
      for (std::size_t i = 0; i < w->shape.size(); ++i) {
        const bool softmax_axis = std::find(parts->max->axes.begin(), parts->max->axes.end(),
                                            static_cast<std::int64_t>(i)) != parts->max->axes.end();
        if (softmax_axis) keys = keys * w->shape[i];
        else if (w->shape[i] != tensor::Dim(1)) innermost_row = i;
      }
      auto multiple = [](const tensor::Dim& d) { return d.as_const() && *d.as_const() % 16 == 0; };
      blocks = blocks && multiple(keys) && (innermost_row == w->shape.size() || multiple(w->shape[innermost_row]));
      if (!bytes || (*bytes < kOnlineMinBytes && !(blocks && *bytes >= kRecomputeHostBytes))) continue;
    }
    const tensor::Dim wide = tensor::shape_numel(w->shape);
    Schedule trial = s;
    std::unordered_set<const Node*> trial_heads = heads;
    std::unordered_set<const Node*> set;  // the nodes no longer stored
    auto drop = [&](const Node* n) {
      trial.materialized.erase(n);
      trial.kernels.erase(std::find(trial.kernels.begin(), trial.kernels.end(), n));
      trial_heads.erase(n);
      set.insert(n);
    };
    // A row kernel's reduces become kernels of their own (sources first).
    auto drop_rows = [&](const Node* n) {
      const std::vector<const Node*> rows = kernel_rows(s, n);  // (in trial, reduces inline may hide them)
      drop(n);
      for (const Node* r : rows) {
        trial.materialized.insert(r);
        trial.kernels.push_back(r);
        trial_heads.insert(r);
      }
    };
    drop_rows(w);
    // The scores, and the work under them down to their own short product.
    std::vector<const Node*> down{parts->scores};
    std::unordered_set<const Node*> seen;
    while (!down.empty()) {
      const Node* n = down.back();
      down.pop_back();
      if (!seen.insert(n).second || holds_data(n)) continue;
      if (trial.materialized.count(n)) {
        if (roots.count(n) || !inlinable(n) || !kernel_rows(trial, n).empty()) continue;
        if (kernel_reduce(trial, n) != nullptr && !short_product(trial, n)) continue;
        drop(n);
      }
      if (n->op == Op::Reduce) continue;
      for (const auto& src : n->src) down.push_back(src.get());
    }
    // The kernels computing something of the set inline.
    auto computing = [&]() {
      std::unordered_set<const Node*> out;
      for (const Node* k : trial.kernels) {
        for (const Node* n : region(trial, k)) {
          if (n != k && set.count(n)) {
            out.insert(k);
            break;
          }
        }
      }
      return out;
    };
    for (bool changed = true; changed;) {
      changed = false;
      const std::unordered_set<const Node*> users = computing();
      // Nodes those kernels compute inline.
      std::unordered_set<const Node*> inside;
      for (const Node* k : users) {
        for (const Node* n : region(trial, k)) {
          if (n != k && !trial.materialized.count(n)) inside.insert(n);
        }
      }
      for (const Node* k : std::vector<const Node*>(trial.kernels)) {
        if (roots.count(k) || holds_data(k) || !inlinable(k) || tensor::shape_numel(k->shape) != wide) continue;
        const bool rows = !kernel_rows(s, k).empty();
        const Node* red = rows ? nullptr : kernel_reduce(s, k);
        // (A short product whose terms do not read the set: read elementwise, after it.)
        auto product_apart = [&] {
          if (!short_product(trial, k)) return false;
          const std::vector<const Node*> terms = region(trial, kernel_reduce(trial, k));
          return std::none_of(terms.begin(), terms.end(), [&](const Node* n) { return set.count(n) > 0; });
        };
        if (users.count(k) && (rows || red == nullptr || product_apart())) {
          // Reads the set, elementwise, per row or beside a short product of its own (the
          // scores' gradient W (dP - D): D a row reduce of its kernel, or a kernel of its own
          // when softmax's backward takes it from the product's rows, with dP inline).
          drop_rows(k);
        } else if (red != nullptr && short_product(trial, k) && !readers_of(k).empty() &&
                   std::all_of(readers_of(k).begin(), readers_of(k).end(),
                               [&](const Node* c) { return set.count(c) || inside.count(c); })) {
          drop(k);  // a short product only those kernels read (dP = dO V^T)
        } else {
          continue;
        }
        changed = true;
        break;  // the kernel list changed
      }
    }
    // Every kernel that now computes the set inline must be one the lowering can do that in.
    bool ok = true;
    for (const Node* n : set) {
      for (const Node* c : readers_of(n)) ok = ok && inlinable(c);
    }
    // (The reduce a kernel runs is the one it ran: kernel_reduce finds the first in its region.
    // A row kernel that stays (a root: the scores' gradient as an additive bias's gradient)
    // cannot compute the set inline.)
    for (const Node* k : computing()) {
      ok = ok && !trial.online.count(k) && kernel_rows(trial, k).empty() &&
           (k->op == Op::Reduce ||
            (s.materialized.count(k) && kernel_rows(s, k).empty() && kernel_reduce(trial, k) == kernel_reduce(s, k)));
    }
    if (!ok) continue;
    // A kernel of those whose only reader is a chain of permutes and reshapes, stored by a kernel
    // of its own (a key gradient, summed in the transposed order of its matmul), is computed
    // by that kernel, which stores the reduce's elements where the chain puts them: each
    // interchanged term then accumulates along the output's rows, not across them.
    for (const Node* k : computing()) {
      if (k->op != Op::Reduce || roots.count(k)) continue;
      const Node* p = k;
      while (readers_of(p).size() == 1 && is_movement(readers_of(p)[0]) &&
             (readers_of(p)[0]->op == Op::Permute || readers_of(p)[0]->op == Op::Reshape)) {
        p = readers_of(p)[0];
        if (trial.materialized.count(p)) break;
      }
      // (Permutes and reshapes that add or drop axes of size 1 only: what the lowering stores
      // through, stored_through; an expand would write one element where it reads many.)
      bool plain = true;
      for (const Node* n = p; n != k; n = n->src[0].get()) plain = plain && n->op != Op::Expand;
      if (p == k || !trial.materialized.count(p) || !plain || !axis_origins(p, k)) continue;
      trial.materialized.erase(k);
      trial.kernels.erase(std::find(trial.kernels.begin(), trial.kernels.end(), k));
      trial_heads.erase(k);
    }
    s = std::move(trial);
    heads = std::move(trial_heads);
  }
}
}  // namespace

ScheduledKernel describe(const Schedule& s, const Node* out) {
  ScheduledKernel k;
  k.out = out;
  if (out->op == Op::Extern) {
    k.kind = KernelKind::Extern;
  } else if (out->op == Op::ScatterAdd) {
    k.kind = KernelKind::ScatterAdd;
  } else if (out->op == Op::Assign && out->src.size() == 3) {
    k.kind = KernelKind::ViewAssign;
  } else if (auto it = s.online.find(out); it != s.online.end()) {
    k.kind = KernelKind::OnlineSoftmax;
    k.reduce = out;
    k.rows = {it->second.max, it->second.sum};
    k.online = it->second;
  } else if (auto rows = kernel_rows(s, out); !rows.empty()) {
    k.kind = KernelKind::Rows;
    k.rows = std::move(rows);
  } else if (const Node* r = kernel_reduce(s, out)) {
    k.kind = KernelKind::Reduce;
    k.reduce = r;
  }
  switch (k.kind) {
    case KernelKind::Reduce:
    case KernelKind::OnlineSoftmax: k.iteration = k.reduce->src[0]->shape; break;
    case KernelKind::ScatterAdd: k.iteration = out->src[1]->shape; break;
    case KernelKind::ViewAssign: k.iteration = out->src[1]->shape; break;
    case KernelKind::Elementwise:
    case KernelKind::Rows:
    case KernelKind::Extern: k.iteration = out->shape; break;
  }
  std::unordered_set<const Node*> read;
  k.bytes = tensor::shape_bytes(out->shape, out->dtype);
  for (const Node* n : region(s, out)) {
    if (n != out && s.materialized.count(n)) {
      if (read.insert(n).second) {
        k.reads.push_back(n);
        k.bytes = k.bytes + tensor::shape_bytes(n->shape, n->dtype);
      }
      continue;
    }
    if (costs_work(n) || n->op == Op::Reduce) {
      const int w = std::max(1, work(n));
      k.ops += w;
      // Each op counts once per element it computes (a reduce once per element it reads): a
      // matmul's multiply and add once per (row, column, term), its bias add once per output.
      k.flops = k.flops + tensor::shape_numel(n->op == Op::Reduce ? n->src[0]->shape : n->shape) * tensor::Dim(w);
    }
  }
  return k;
}


const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::Elementwise: return "elementwise";
    case KernelKind::Reduce: return "reduce";
    case KernelKind::Rows: return "rows";
    case KernelKind::ViewAssign: return "view-assign";
    case KernelKind::ScatterAdd: return "scatter-add";
    case KernelKind::Extern: return "extern";
    case KernelKind::OnlineSoftmax: return "online-softmax";
  }
  return "?";
}

namespace {

// Whether the movement ops from `top` down to `base` compose into more than one strided view.
bool tangled(const Node* top, const Node* base) {
  const Node* found = nullptr;
  tensor::ViewStack vs = tensor::view_of(top, &found);
  return found == base && vs.views().size() > 1;
}

}  // namespace

Schedule make_schedule(const Node* root, const Options& options) {
  return make_schedule(std::vector<const Node*>{root}, options);
}

Schedule make_schedule(const std::vector<const Node*>& outputs, const Options& options) {
  Schedule s;
  std::unordered_set<const Node*> roots;
  for (const Node* root : outputs) {
    // A root that only reshapes a computed node contiguously is that node's buffer.
    if (is_movement(root) && !holds_data(root)) {
      const Node* base = nullptr;
      tensor::ViewStack vs = tensor::view_of(root, &base);
      if (!holds_data(base) && vs.views().size() == 1 && vs.views()[0].is_contiguous() &&
          tensor::shape_numel(root->shape) == tensor::shape_numel(base->shape)) {
        root = base;
      }
    }
    s.results.push_back(root);
    roots.insert(root);
  }
  s.result = s.results.back();
  // Nodes reachable through unrealized nodes, in post-order (sources first), with how many
  // consumer edges reach each data source (a movement chain counts for its consumer).
  std::vector<const Node*> order;
  std::unordered_map<const Node*, int> uses;
  std::unordered_map<const Node*, std::vector<const Node*>> readers;  // the consumers counted in uses
  std::unordered_set<const Node*> viewed;  // read by some consumer through a movement op
  std::unordered_set<const Node*> reduced;  // read by a reduce (whose kernel is another)
  std::unordered_map<const Node*, bool> visited;
  std::vector<std::pair<const Node*, std::size_t>> stack;
  for (const Node* root : s.results) {
    // One root after another, so a root that another one reads comes before it.
    if (visited[root]) continue;
    visited[root] = true;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (!holds_data(n) && next < n->src.size()) {
        const Node* c = n->src[next++].get();
        if (!is_movement(n) || roots.count(n)) {
          const Node* d = data_source(c);
          ++uses[d];
          readers[d].push_back(n);
          if (d != c) viewed.insert(d);
          if (n->op == Op::Reduce) reduced.insert(d);
          if (n->op == Op::Gather && next == 1) viewed.insert(d);  // read where the indices point
        }
        if (!visited[c]) {
          visited[c] = true;
          stack.emplace_back(c, 0);
        }
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }
  // Inline cost of each node: the work ops it repeats up to the next materialized node.
  std::unordered_map<const Node*, int> cost;
  std::unordered_map<const Node*, int> depth;
  auto materialize = [&](const Node* n) {
    if (s.materialized.insert(n).second) {
      if (holds_data(n)) s.inputs.push_back(n);
      else s.kernels.push_back(n);
    }
  };
  // Kernels that end in a reduce, or in elementwise work on a reduce's result with one
  // element per reduce output: a consumer of the same kind can take the kernel over, so the
  // reduce's result never goes to memory (an epilogue: bias adds, scaling, activations).
  std::unordered_set<const Node*> heads;
  auto epilogue_source = [&](const Node* n) -> const Node* {
    if (!costs_work(n)) return nullptr;
    for (const auto& src : n->src) {
      const Node* d = src.get();
      while (d->op == Op::Reshape && !holds_data(d)) d = d->src[0].get();
      if (heads.count(d) && uses[d] == 1 && !roots.count(d) && tensor::shape_numel(d->shape) == tensor::shape_numel(n->shape)) {
        return d;
      }
    }
    return nullptr;
  };
  // A widening cast (f16/bf16 to f32: matmul's operand) of computed work, to be stored for
  // its readers, stores that work instead: half the bytes, widened again where read (an
  // instruction a load). The weights of half-precision attention then stay the softmax's row
  // kernel, read through the cast by the forward product and the values' gradient both, which
  // fuse_online_softmax and recompute_softmax recognize. Whether N was one.
  auto store_narrow = [&](const Node* n) {
    const Node* src = n->src.empty() ? nullptr : n->src[0].get();
    if (src == nullptr || !widening_cast(n) || holds_data(src) || s.materialized.count(src) || !costs_work(src) ||
        !inlinable(src) || is_movement(src)) {
      return false;
    }
    materialize(src);
    cost[src] = 0;
    depth[src] = 0;
    return true;
  };
  for (const Node* n : order) {
    if (holds_data(n)) {
      materialize(n);
      cost[n] = 0;
      depth[n] = 0;
      continue;
    }
    int c = work(n);
    int dep = 1;
    for (const auto& src : n->src) {
      const Node* d = src.get();
      if (!s.materialized.count(d)) {
        c = std::min(c + cost[d], kCostCap);  // shared subgraphs count once per path
        dep = std::max(dep, depth[d] + 1);
      }
    }
    // (Not a widening cast: its source is stored in half the bytes, and widened where read.)
    if (const Node* head = widening_cast(n) && !roots.count(n) ? nullptr : epilogue_source(n)) {
      // Take over the head's kernel.
      s.materialized.erase(head);
      s.kernels.erase(std::find(s.kernels.begin(), s.kernels.end(), head));
      heads.erase(head);
      materialize(n);
      heads.insert(n);
      cost[n] = 0;
      depth[n] = 0;
      continue;
    }
    if (n->op == Op::Extern) {
      // An external kernel reads its sources as contiguous buffers: each source's data (below
      // any reshapes, which keep row-major order) must be in memory.
      for (const auto& src : n->src) {
        const Node* d = src.get();
        while (d->op == Op::Reshape && !holds_data(d)) d = d->src[0].get();
        materialize(d);
      }
    }
    if (n->op == Op::Reduce && n->src[0]->op == Op::Mul && !s.materialized.count(n->src[0].get())) {
      // A matmul-like sum reads each operand element once per element of the axis it is
      // broadcast along: elementwise work behind a broadcast operand (an activation's
      // gradient) is computed once into memory instead of at every read.
      for (const auto& operand : n->src[0]->src) {
        const Node* d = operand.get();
        bool broadcast = false;
        const Node* below = nullptr;  // the first movement op below every broadcast
        while (is_movement(d) && !holds_data(d) && !s.materialized.count(d)) {
          if (d->op == Op::Expand && tensor::shape_numel(d->shape) != tensor::shape_numel(d->src[0]->shape)) {
            broadcast = true;
            below = nullptr;
          } else if (below == nullptr) {
            below = d;
          }
          d = d->src[0].get();
        }
        if (broadcast && !s.materialized.count(d) && cost[d] > 1) {
          if (store_narrow(d)) {
            cost[d] = work(d);
          } else {
            materialize(d);
            cost[d] = 0;
          }
          c = std::min(c, kCostCap);
        }
        // An operand whose movement ops no one strided view expresses (attention's heads
        // (b h s d) read back as rows (b s h*d) for the output projection) would divide and
        // take a remainder at every load, once per element of the axis it is broadcast
        // along: it is copied contiguous once instead.
        if (broadcast && below != nullptr && tangled(below, d)) {
          materialize(below);
          cost[below] = 0;
        }
      }
    }
    bool must = roots.count(n) || n->op == Op::Reduce || n->op == Op::ScatterAdd || n->op == Op::Copy ||
                n->op == Op::Assign || n->op == Op::Extern;
    if (n->op == Op::Reduce) heads.insert(n);
    // A node read several times at the same index is computed once per kernel (the lowering
    // shares equal expressions); read through different views, or by a reduce and another
    // consumer (two kernels), it would be recomputed.
    bool shared = uses[n] > 1 && c > kInlineLimit && (viewed.count(n) || reduced.count(n));
    if (shared && !must && store_narrow(n)) {
      c = work(n);
      dep = 1;
      shared = false;
    }
    if (must || shared || dep >= kMaxFusedDepth) {
      materialize(n);
      c = 0;
      dep = 0;
    }
    cost[n] = c;
    depth[n] = dep;
  }
  fuse_rows(s, heads, uses, roots);
  recompute_in_rows(s, heads, uses, roots, reduced);
  fuse_online_softmax(s, heads, uses, readers, roots, options);
  recompute_softmax(s, heads, readers, roots, options);
  store_in_read_order(s, order, heads, roots);
  // Kernels run in graph order (sources first): an operand materialized after the fact
  // (above) must run before every kernel that now reads it.
  std::unordered_map<const Node*, std::size_t> position;
  for (std::size_t i = 0; i < order.size(); ++i) position.emplace(order[i], i);
  std::stable_sort(s.kernels.begin(), s.kernels.end(),
                   [&](const Node* a, const Node* b) { return position.at(a) < position.at(b); });
  for (const Node* k : s.kernels) s.items.push_back(describe(s, k));
  return s;
}

std::string schedule_str(const Schedule& s) {
  std::unordered_map<const Node*, std::string> names;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) names[s.inputs[i]] = "input " + std::to_string(i);
  for (std::size_t i = 0; i < s.kernels.size(); ++i) names[s.kernels[i]] = "kernel " + std::to_string(i);
  auto axes_str = [](const std::vector<std::int64_t>& axes) {
    std::string a;
    for (auto x : axes) a += (a.empty() ? "" : " ") + std::to_string(x);
    return "(" + a + ")";
  };
  auto describe_node = [&](const Node* n) {
    std::string d = tensor::op_name(n->op);
    if (n->op == Op::Reduce) d += std::string(" :") + tensor::reduce_kind_name(n->reduce_kind) + " " + axes_str(n->axes);
    return d + " " + std::string(tensor::dtype_name(n->dtype)) + " " + tensor::shape_str(n->shape);
  };
  std::string out;
  for (std::size_t i = 0; i < s.items.size(); ++i) {
    const ScheduledKernel& k = s.items[i];
    out += "kernel " + std::to_string(i) + " (" + kernel_kind_name(k.kind) + "): " + describe_node(k.out);
    int ops = 0;
    std::vector<std::string> fused, reads;
    for (const Node* n : region(s, k.out)) {
      if (n != k.out && s.materialized.count(n)) continue;
      if (costs_work(n) || n->op == Op::Reduce) ++ops;
      if (n != k.out && n->op == Op::Reduce && k.kind != KernelKind::Rows &&
          std::find(k.rows.begin(), k.rows.end(), n) == k.rows.end()) {
        fused.push_back(describe_node(n));
      }
    }
    for (const Node* r : k.rows) fused.push_back(describe_node(r));  // in the order of their passes
    for (const Node* n : k.reads) reads.push_back(names.count(n) ? names.at(n) : "data");
    std::sort(reads.begin(), reads.end());
    out += ", " + std::to_string(ops) + (ops == 1 ? " op" : " ops");
    for (const auto& f : fused) out += ", fuses " + f;
    if (!reads.empty()) {
      out += ", reads";
      for (std::size_t j = 0; j < reads.size(); ++j) out += (j ? ", " : " ") + reads[j];
    }
    out += "; about " + k.flops.str() + " flops, " + k.bytes.str() + " bytes\n";
  }
  return out;
}

}  // namespace tl::schedule
