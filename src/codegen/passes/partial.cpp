// SPDX-License-Identifier: Apache-2.0
// (partial L): the float sums that loop L adds to, accumulators defined outside it, each get a
// partial sum defined at the start of L's body; the updates inside L go to the partial, and the
// partial is added to the sum at the end of the body. One running f32 total over all of a long
// reduce's elements stops growing at 2^24 times the increment; a partial per pass of the inner
// loops keeps each addition between numbers of like size (issue 19).
#include <map>
#include <set>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

void partial_sums(Kernel& k, std::int32_t loop) {
  const std::string opt = "(partial " + std::to_string(loop) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  // The accumulators L's body defines, and the outside ones it updates, in the order met.
  std::set<std::int32_t> inside;
  std::vector<std::pair<std::int32_t, DType>> outside;
  bool not_sum = false;
  passes::each_stmt(p.stmt().body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::AccDef) inside.insert(s.acc);
    if ((s.kind == Stmt::Kind::AccUpdate || s.kind == Stmt::Kind::AccSet || s.kind == Stmt::Kind::GroupCombine) &&
        !inside.count(s.acc)) {
      if (s.kind == Stmt::Kind::GroupCombine || s.kind == Stmt::Kind::AccSet || s.reduce != ReduceKind::Sum ||
          !tensor::is_float(s.dtype))
        not_sum = true;
      bool seen = false;
      for (const auto& [a, t] : outside) seen = seen || a == s.acc;
      if (!seen) outside.emplace_back(s.acc, s.dtype);
    }
  });
  if (outside.empty()) passes::reject(opt, "loop " + name + " adds to no accumulator defined outside it");
  if (not_sum) passes::reject(opt, "loop " + name + " updates an accumulator that is not a float sum");
  bool reads = false;
  passes::each_stmt(p.stmt().body, [&](const Stmt& s) {
    for (ExprId e : {s.value, s.index, s.extent}) {
      if (e < 0) continue;
      k.visit({e}, [&](ExprId, const Expr& x) {
        for (const auto& o : outside) reads = reads || (x.op == EOp::AccRead && x.arg == o.first);
        return true;
      });
    }
  });
  if (reads) passes::reject(opt, "loop " + name + " reads a sum it adds to");
  passes::Subst to_partial;
  std::vector<Stmt> defs, adds;
  for (const auto& [acc, t] : outside) {
    const std::int32_t partial = k.new_acc();
    to_partial.accs[acc] = partial;
    Stmt def{Stmt::Kind::AccDef};
    def.acc = partial;
    def.dtype = t;
    def.reduce = ReduceKind::Sum;
    def.value = k.constant_float(0, t);
    defs.push_back(def);
    Stmt add{Stmt::Kind::AccUpdate};
    add.acc = acc;
    add.dtype = t;
    add.reduce = ReduceKind::Sum;
    add.value = k.acc_read(partial, t);
    adds.push_back(add);
  }
  std::vector<Stmt> body = std::move(defs);
  for (const Stmt& s : p.stmt().body) body.push_back(passes::apply(k, s, to_partial));
  body.insert(body.end(), adds.begin(), adds.end());
  p.stmt().body = std::move(body);
}

}  // namespace tl::codegen
