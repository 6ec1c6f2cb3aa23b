// SPDX-License-Identifier: Apache-2.0
// The GPU thread-group split of reduces (split_reduce.h), a pass over a lowered kernel.
#include "codegen/split_reduce.h"

#include <map>
#include <set>
#include <vector>

namespace tl::codegen {

namespace {

// Calls fn(stmt) for every statement in `body`, nested ones included.
template <class F>
void each_stmt(const std::vector<Stmt>& body, F&& fn) {
  for (const Stmt& s : body) {
    fn(s);
    each_stmt(s.body, fn);
  }
}

// The accumulators a statement list updates, and those it reads.
void acc_uses(const Kernel& k, const std::vector<Stmt>& body, std::set<std::int32_t>& updated, std::set<std::int32_t>& read) {
  std::vector<ExprId> roots;
  each_stmt(body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::AccUpdate) updated.insert(s.acc);
    // A value set outright (an online softmax's running sums) depends on the order of the
    // updates: counted as updated and read, which no split takes.
    if (s.kind == Stmt::Kind::AccSet) updated.insert(s.acc), read.insert(s.acc);
    roots.push_back(s.value);
    roots.push_back(s.index);
    roots.push_back(s.extent);
  });
  k.visit(roots, [&](ExprId, const Expr& x) {
    if (x.op == EOp::AccRead) read.insert(x.arg);
    return true;
  });
}

// How many of the loads under `roots` walk memory one element at a time along loop `var`.
int unit_stride_loads(const Kernel& k, const std::vector<ExprId>& roots, std::int32_t var) {
  if (var < 0) return 0;
  const ExprId v = k.loop_var(var);
  int n = 0;
  k.visit(roots, [&](ExprId, const Expr& x) {
    if (x.op == EOp::Load) {
      auto c = k.coefficient(x.src[0], v);
      if (c && (*c == 1 || *c == -1)) ++n;
    }
    return true;
  });
  return n;
}

}  // namespace

// On a GPU, splits the reduces of a kernel across a group of threads per output when that
// pays (see Lowering): the loops in the thread loops' body become group loops, and each
// accumulator they update is combined across the group after its loop.
void split_reduces(Kernel& k, const Lowering& how) {
  if (how.group <= 0) return;
  std::vector<const Stmt*> threads = gpu_thread_loops(k);
  std::vector<Stmt>* body = &k.body;
  for (std::size_t i = 0; i < threads.size(); ++i) body = &(*body)[0].body;
  // Only the shapes the lowering makes: accumulators defined here, each updated in one loop
  // and not read there; stores here or in the loops.
  const Stmt* reduce = nullptr;
  std::set<std::int32_t> defined, updated_before;
  for (const Stmt& s : *body) {
    if (s.kind == Stmt::Kind::AccDef) {
      // Each thread's part starts from the initial value: a sum's must be 0 and a product's
      // 1 (a max's may be anything no larger than the values).
      if (s.reduce != ReduceKind::Max) {
        const Expr& init = k.expr(s.value);
        const double want = s.reduce == ReduceKind::Sum ? 0 : 1;
        if (init.op != EOp::Const || (tensor::is_float(init.dtype) ? init.fval != want : init.ival != static_cast<std::int64_t>(want))) {
          return;
        }
      }
      defined.insert(s.acc);
    } else if (s.kind == Stmt::Kind::Loop) {
      std::set<std::int32_t> updated, read;
      acc_uses(k, {s}, updated, read);
      for (std::int32_t a : updated) {
        if (!defined.count(a) || read.count(a) || updated_before.count(a)) return;
        updated_before.insert(a);
      }
      if (!updated.empty() && reduce == nullptr) reduce = &s;
    } else if (s.kind != Stmt::Kind::Store) {
      return;
    }
  }
  if (reduce == nullptr) return;
  std::vector<const Stmt*> nest = loop_nest(k, *reduce);
  const tensor::Dim extent = loop_extent(k, nest);
  if (auto r = extent.as_const(); r && *r < how.min_group_reduce) return;
  auto outputs = gpu_thread_count(k).as_const();
  if (!outputs || *outputs > how.few_threads) {
    std::vector<ExprId> values;
    each_stmt(nest.back()->body, [&](const Stmt& s) {
      if (s.kind == Stmt::Kind::AccUpdate) values.push_back(s.value);
    });
    const std::int32_t thread_var = threads.empty() ? -1 : threads.back()->var;
    if (unit_stride_loads(k, values, nest.back()->var) <= unit_stride_loads(k, values, thread_var)) return;
  }
  std::map<std::int32_t, const Stmt*> defs;
  for (const Stmt& s : *body) {
    if (s.kind == Stmt::Kind::AccDef) defs[s.acc] = &s;
  }
  std::vector<Stmt> split;
  for (Stmt& s : *body) {
    const bool loop = s.kind == Stmt::Kind::Loop;
    std::set<std::int32_t> updated, read;
    if (loop) {
      s.group = true;
      acc_uses(k, {s}, updated, read);
    }
    split.push_back(s);
    for (std::int32_t a : updated) {
      Stmt c{Stmt::Kind::GroupCombine};
      c.acc = a;
      c.dtype = defs.at(a)->dtype;
      c.reduce = defs.at(a)->reduce;
      split.push_back(c);
    }
  }
  *body = std::move(split);
  k.group = how.group;
}


}  // namespace tl::codegen
