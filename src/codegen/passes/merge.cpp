// SPDX-License-Identifier: Apache-2.0
// (merge L): loop L and the loop that is the one statement of its body, of constant extent E,
// become one loop over both (the next free id), L's variable its index / E and the inner's its
// index mod E; it keeps L's place and parallel mark. Where the two axes are contiguous the
// index arithmetic folds back to one linear index (x mod E + (x / E) E = x), so an elementwise
// kernel over a (2, 1000000) array runs one loop of 2000000 that the threads share evenly.
// The order of iterations is unchanged: accumulators add their terms in the same order.
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

void merge_loops(Kernel& k, std::int32_t loop) {
  const std::string opt = "(merge " + std::to_string(loop) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const Stmt& outer = p.stmt();
  const std::string name = "i" + std::to_string(loop);
  if (outer.body.size() != 1 || outer.body[0].kind != Stmt::Kind::Loop) {
    passes::reject(opt, "the body of loop " + name + " is not a single loop");
  }
  const Stmt& inner = outer.body[0];
  const std::string inner_name = "i" + std::to_string(inner.var);
  if (outer.group || inner.group) passes::reject(opt, "a GPU thread group's loop does not merge");
  if (outer.lanes || inner.lanes) passes::reject(opt, "a lanes block does not merge");
  passes::keep_shared_range(k, outer, opt);
  const auto e_outer = k.as_const(outer.extent), e_inner = k.as_const(inner.extent);
  if (!e_outer) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(outer.extent));
  if (!e_inner) passes::reject(opt, "loop " + inner_name + " has the symbolic extent " + k.expr_str(inner.extent));
  if (*e_inner < 1) passes::reject(opt, "loop " + inner_name + " runs no iteration");
  auto [merged, var] = k.make_loop(k.constant_int(*e_outer * *e_inner));
  passes::Subst s;
  s.loops[outer.var] = k.binary(EOp::Idiv, var, k.constant_int(*e_inner));
  s.loops[inner.var] = k.binary(EOp::Mod, var, k.constant_int(*e_inner));
  for (const Stmt& c : inner.body) merged.body.push_back(passes::apply(k, c, s));
  merged.parallel = outer.parallel;
  p.stmt() = std::move(merged);
}

}  // namespace tl::codegen
