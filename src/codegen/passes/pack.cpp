// SPDX-License-Identifier: Apache-2.0
// (pack L R V...): the operand of a reduce that does not change along loop R, copied once per
// iteration of loop L into contiguous scratch memory and read from there. This is the packed
// panel of a matmul: the right operand's columns for one column block, read in order by the
// reduce loop instead of a row (a page) apart per step, and reused by every row block (R).
//
// Packed are the largest subexpressions of the accumulator updates inside L that read memory
// (not memory the kernel writes inside L), read no accumulator, and use loops inside L but not
// R (and, with V... given, none inside L that V... does not list). Each gets a scratch buffer laid out over the loops
// inside L it uses, in the order V... (outermost first; by default their nesting order), filled by a loop nest at the
// start of L's body (L = -1: of the kernel's body).
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

void pack_reads(Kernel& k, std::int32_t loop, std::int32_t invariant, const std::vector<std::int32_t>& order) {
  const std::string opt = opt_str(Opt::pack(loop, invariant, order));
  std::vector<Stmt>* region = &k.body;
  if (loop != -1) {
    passes::LoopPlace p = passes::find_loop(k, loop, opt);
    if (p.stmt().group) passes::reject(opt, "loop i" + std::to_string(loop) + " is a GPU thread group's loop");
    region = &p.stmt().body;
  }
  const std::string where = loop == -1 ? "the kernel" : "loop i" + std::to_string(loop);
  // The loops inside the region, in nesting order, with their extents; the buffers it writes.
  std::vector<std::int32_t> inside;
  std::unordered_map<std::int32_t, ExprId> extent;
  std::set<std::int32_t> written;
  passes::each_stmt(*region, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::Loop) {
      inside.push_back(s.var);
      extent[s.var] = s.extent;
    }
    if (s.kind == Stmt::Kind::Store) written.insert(s.buffer);
  });
  if (!extent.count(invariant)) passes::reject(opt, "loop i" + std::to_string(invariant) + " is not inside " + where);
  for (std::int32_t v : order) {
    if (!extent.count(v)) passes::reject(opt, "loop i" + std::to_string(v) + " is not inside " + where);
  }
  // The values to pack, in the order first met; the first value left unpacked for a loop the
  // layout does not list, and that loop.
  std::vector<ExprId> found;
  ExprId unlisted = -1;
  std::int32_t unlisted_loop = -1;
  std::unordered_map<ExprId, bool> visited;
  auto reads_written = [&](ExprId e) {
    bool hit = false;
    k.visit({e}, [&](ExprId, const Expr& x) {
      if (x.op == EOp::Load && written.count(x.arg)) hit = true;
      return !hit;
    });
    return hit;
  };
  std::function<void(ExprId)> search = [&](ExprId e) {
    if (e < 0 || visited[e]) return;
    visited[e] = true;
    const Expr x = k.expr(e);
    if (x.op == EOp::Const || x.op == EOp::LoopVar || x.op == EOp::SymVar || x.op == EOp::AccRead) return;
    passes::Uses u = passes::uses_of(k, e);
    bool inner = false;
    for (std::int32_t v : u.loops) inner = inner || extent.count(v) > 0;
    if (u.load && !u.acc && inner && !u.loops.count(invariant) && !reads_written(e)) {
      // With a layout given, a value it cannot hold is not packed whole (its parts may be).
      const bool fits = order.empty() || std::all_of(u.loops.begin(), u.loops.end(), [&](std::int32_t v) {
                          return !extent.count(v) || std::find(order.begin(), order.end(), v) != order.end();
                        });
      if (fits) {
        found.push_back(e);
        return;
      }
      if (unlisted < 0) {
        unlisted = e;
        for (std::int32_t v : u.loops) {
          if (extent.count(v) && std::find(order.begin(), order.end(), v) == order.end()) unlisted_loop = v;
        }
      }
    }
    for (ExprId s : x.src) search(s);
  };
  passes::each_stmt(*region, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::AccUpdate) search(s.value);
  });
  if (found.empty() && unlisted >= 0) {
    passes::reject(opt, "the packed value " + k.expr_str(unlisted) + " uses loop i" + std::to_string(unlisted_loop) +
                            ", which the layout does not list");
  }
  if (found.empty()) {
    passes::reject(opt, "no value that an accumulator update inside " + where + " reads stays the same along loop i" +
                            std::to_string(invariant));
  }
  // Each value's layout, checked before the kernel changes.
  struct Layout {
    std::vector<std::int32_t> axes;
    std::vector<std::int64_t> sizes;
    std::int64_t elems = 1;
  };
  std::vector<Layout> layouts;
  for (ExprId e : found) {
    const passes::Uses u = passes::uses_of(k, e);
    Layout lay;
    for (std::int32_t v : order.empty() ? inside : order) {
      if (u.loops.count(v)) lay.axes.push_back(v);
    }
    for (std::int32_t v : u.loops) {
      if (extent.count(v) && std::find(lay.axes.begin(), lay.axes.end(), v) == lay.axes.end()) {
        passes::reject(opt, "the packed value " + k.expr_str(e) + " uses loop i" + std::to_string(v) +
                                ", which the layout does not list");
      }
    }
    for (std::int32_t v : lay.axes) {
      auto n = k.as_const(extent[v]);
      if (!n) passes::reject(opt, "loop i" + std::to_string(v) + " has a symbolic extent");
      lay.sizes.push_back(*n);
      lay.elems *= std::max<std::int64_t>(*n, 1);
      if (lay.elems > kMaxPackBytes) break;
    }
    const std::int64_t bytes = lay.elems * std::max(1, tensor::dtype_bits(k.expr(e).dtype) / 8);
    if (bytes > kMaxPackBytes) {
      passes::reject(
          opt, "packing " + k.expr_str(e) + " takes more than " + std::to_string(kMaxPackBytes) + " bytes of scratch");
    }
    layouts.push_back(std::move(lay));
  }
  passes::Subst replace;
  std::vector<Stmt> fills;
  std::vector<std::int32_t> unroll;  // the fills' innermost loops, unrolled when short
  for (std::size_t f = 0; f < found.size(); ++f) {
    const ExprId e = found[f];
    const std::vector<std::int32_t>& axes = layouts[f].axes;
    const std::vector<std::int64_t>& sizes = layouts[f].sizes;
    const std::int64_t elems = layouts[f].elems;
    const DType t = k.expr(e).dtype;
    const auto slot = static_cast<std::int32_t>(k.buffers.size());
    k.buffers.push_back(BufferParam{t, false, elems});
    // The fill: a loop per axis, outermost first, storing the value row-major.
    passes::Subst fill;
    std::vector<Stmt> nest;
    std::vector<ExprId> fill_vars, vars;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      auto [l, var] = k.make_loop(k.constant_int(sizes[i]));
      if (i + 1 == axes.size() && axes.size() > 1 && sizes[i] <= 32) unroll.push_back(l.var);
      fill.loops[axes[i]] = var;
      fill_vars.push_back(var);
      vars.push_back(k.loop_var(axes[i]));
      nest.push_back(std::move(l));
    }
    auto flat = [&](const std::vector<ExprId>& at) {
      ExprId index = k.constant_int(0);
      std::int64_t stride = 1;
      for (std::size_t i = at.size(); i-- > 0;) {
        index = k.binary(EOp::Add, index, k.binary(EOp::Mul, at[i], k.constant_int(stride)));
        stride *= sizes[i];
      }
      return index;
    };
    Stmt store{Stmt::Kind::Store};
    store.buffer = slot;
    store.index = flat(fill_vars);
    store.value = passes::apply(k, e, fill);
    for (std::size_t i = nest.size(); i-- > 0;) {
      nest[i].body.push_back(std::move(store));
      store = std::move(nest[i]);
    }
    fills.push_back(std::move(store));
    replace.exprs[e] = k.load(slot, flat(vars));
  }
  for (Stmt& s : *region) s = passes::apply(k, s, replace);
  region->insert(region->begin(), std::make_move_iterator(fills.begin()), std::make_move_iterator(fills.end()));
  // A short row of the copy is straight-line code (a few vector loads and stores).
  for (std::int32_t l : unroll) upcast_loop(k, l);
}

}  // namespace tl::codegen
