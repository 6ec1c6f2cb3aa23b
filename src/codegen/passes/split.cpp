// SPDX-License-Identifier: Apache-2.0
// (split L F): loop L of extent E becomes a loop of E/F around a loop of F, and L's variable
// becomes outer * F + inner. The outer loop keeps L's place (and its parallel mark).
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

void split_loop(Kernel& k, std::int32_t loop, std::int64_t factor) {
  const std::string opt = "(split " + std::to_string(loop) + " " + std::to_string(factor) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  if (p.stmt().group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  auto extent = k.as_const(p.stmt().extent);
  if (!extent) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(p.stmt().extent));
  if (factor < 1 || *extent % factor != 0) {
    passes::reject(opt, "loop " + name + " has extent " + std::to_string(*extent) + ", which " + std::to_string(factor) +
                            " does not divide");
  }
  auto [outer, outer_var] = k.make_loop(k.constant_int(*extent / factor));
  auto [inner, inner_var] = k.make_loop(k.constant_int(factor));
  passes::Subst s;
  s.loops[loop] = k.binary(EOp::Add, k.binary(EOp::Mul, outer_var, k.constant_int(factor)), inner_var);
  for (const Stmt& c : p.stmt().body) inner.body.push_back(passes::apply(k, c, s));
  outer.parallel = p.stmt().parallel;
  outer.body.push_back(std::move(inner));
  p.stmt() = std::move(outer);
}

}  // namespace tl::codegen
