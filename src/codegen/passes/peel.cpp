// SPDX-License-Identifier: Apache-2.0
// (peel L): the last iteration of loop L (constant extent E >= 2) runs as a copy of L's body of
// its own, in which L's variable is the constant E-1, while the other iterations' copy knows
// that it is at most E-2. Index arithmetic then simplifies in both: after a ragged split (which
// clamps the variable, min(outer * F + inner, E' - 1), and masks the stores with
// outer * F + inner < E'), the full blocks lose the clamp and the masks (their loads and stores
// run along memory again, in vectors) and the last block's indices and masks become constants
// (a store it must not make is dropped). The results are identical: every iteration does what
// it did, in the same order.
//
// A loop that is not parallel becomes a loop over the first E-1 iterations (a new loop, taking
// the next id) followed by the last iteration's statements:
//   for M in [0, E-1) { body[L := M] }   body[L := E-1]
// The kernel's parallel loop stays (threads share out its range); each iteration runs one of
// two copies, as loops of one iteration or none:
//   for L in [0, E) parallel { for M in [0, min(E-1-L, 1)) { body[L := min(L, E-2)] }
//                              for T in [0, L+2-E) { body[L := E-1] } }
// The last iteration's copy gives its loops new ids (in order, after M or T) and its
// accumulators new ids.
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

// BODY with the replacements of S, its loops and accumulators made anew (new ids, recorded in
// S as they are met, so the statements inside them use the new ones).
std::vector<Stmt> copy_body(Kernel& k, const std::vector<Stmt>& body, passes::Subst& s) {
  std::vector<Stmt> out;
  for (const Stmt& st : body) {
    if (st.kind == Stmt::Kind::Loop) {
      auto [loop, var] = k.make_loop(passes::apply(k, st.extent, s));
      loop.parallel = st.parallel;
      loop.lanes = st.lanes;
      loop.group = st.group;
      s.loops[st.var] = var;
      loop.body = copy_body(k, st.body, s);
      out.push_back(std::move(loop));
      continue;
    }
    if (st.kind == Stmt::Kind::AccDef) s.accs[st.acc] = k.new_acc();
    out.push_back(passes::apply(k, st, s));
  }
  return out;
}

// Leaves out, in place, the stores in BODY whose mask is constant false.
void drop_dead_stores(Kernel& k, std::vector<Stmt>& body) {
  std::erase_if(body, [&](const Stmt& st) {
    if (st.kind != Stmt::Kind::Store || st.mask < 0) return false;
    auto m = k.as_const(st.mask);
    return m && *m == 0;
  });
  for (Stmt& st : body) drop_dead_stores(k, st.body);
}

}  // namespace

void peel_loop(Kernel& k, std::int32_t loop) {
  const std::string opt = "(peel " + std::to_string(loop) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = std::string(1, 'i') + std::to_string(loop);  // ("i" + ... trips gcc 12's -Wrestrict)
  if (p.stmt().group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  auto extent = k.as_const(p.stmt().extent);
  if (!extent) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(p.stmt().extent));
  if (*extent < 2) passes::reject(opt, "loop " + name + " has " + std::to_string(*extent) + " iteration(s)");
  const Stmt l = std::move(p.stmt());
  const ExprId var = k.loop_var(loop);
  const ExprId last = k.constant_int(*extent - 1);
  // The other iterations: L's variable known to be below E-1.
  auto rest_loop = [&](ExprId rest_extent, ExprId at) {
    auto [rest, rest_var] = k.make_loop(rest_extent);
    rest.lanes = l.lanes;
    passes::Subst s;
    s.loops[loop] = at < 0 ? rest_var : at;
    for (const Stmt& c : l.body) rest.body.push_back(passes::apply(k, c, s));
    drop_dead_stores(k, rest.body);
    return rest;
  };
  if (!l.parallel) {
    std::vector<Stmt> out;
    out.push_back(rest_loop(k.constant_int(*extent - 1), -1));
    passes::Subst s;
    s.loops[loop] = last;
    std::vector<Stmt> tail = copy_body(k, l.body, s);
    drop_dead_stores(k, tail);
    out.insert(out.end(), std::make_move_iterator(tail.begin()), std::make_move_iterator(tail.end()));
    p.list->erase(p.list->begin() + static_cast<std::ptrdiff_t>(p.index));
    p.list->insert(p.list->begin() + static_cast<std::ptrdiff_t>(p.index), std::make_move_iterator(out.begin()),
                   std::make_move_iterator(out.end()));
    return;
  }
  Stmt outer{Stmt::Kind::Loop};
  outer.var = l.var;
  outer.extent = l.extent;
  outer.parallel = true;
  const ExprId before_last = k.binary(EOp::Min, var, k.constant_int(*extent - 2));
  const ExprId left = k.binary(EOp::Add, last, k.unary(EOp::Neg, var, DType::I64));  // E-1-L
  outer.body.push_back(rest_loop(k.binary(EOp::Min, left, k.constant_int(1)), before_last));
  Stmt tail = k.make_loop(k.binary(EOp::Add, var, k.constant_int(2 - *extent))).first;
  passes::Subst s;
  s.loops[loop] = last;
  tail.body = copy_body(k, l.body, s);
  drop_dead_stores(k, tail.body);
  outer.body.push_back(std::move(tail));
  p.stmt() = std::move(outer);
}

}  // namespace tl::codegen
