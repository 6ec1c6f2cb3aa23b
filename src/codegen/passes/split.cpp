// SPDX-License-Identifier: Apache-2.0
// (split L F): loop L of extent E becomes a loop of E/F around a loop of F, and L's variable
// becomes outer * F + inner. The outer loop keeps L's place (and its parallel mark). When F
// does not divide E, the outer loop runs ceil(E/F) times, L's variable is
// min(outer * F + inner, E - 1) and the stores inside L are masked with outer * F + inner < E:
// the last block computes iteration E-1 again (a ragged register tile's last row) but stores
// only once. That is allowed only where computing an iteration again changes nothing: L adds
// to no accumulator defined outside it, and every store inside it depends on L (so it is
// masked).
#include <set>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

// Why running an iteration of loop L again, its stores masked, could change what the kernel
// computes ("" when it cannot): an update of an accumulator defined outside L, or a store whose
// index does not depend on L (the mask would drop it from the iteration it belongs to).
std::string repeat_hazard(const Kernel& k, const Stmt& l) {
  std::set<std::int32_t> defined;
  std::string why;
  passes::each_stmt(l.body, [&](const Stmt& s) {
    if (!why.empty()) return;
    if (s.kind == Stmt::Kind::AccDef) defined.insert(s.acc);
    if ((s.kind == Stmt::Kind::AccUpdate || s.kind == Stmt::Kind::AccSet || s.kind == Stmt::Kind::GroupCombine) &&
        !defined.count(s.acc)) {
      why = "it adds to acc" + std::to_string(s.acc) + ", defined outside it";
    }
    if (s.kind == Stmt::Kind::Store && !passes::uses_loop(k, s.index, l.var)) {
      why = "its store to b" + std::to_string(s.buffer) + " does not depend on it";
    }
  });
  return why;
}

}  // namespace

void split_loop(Kernel& k, std::int32_t loop, std::int64_t factor) {
  const std::string opt = "(split " + std::to_string(loop) + " " + std::to_string(factor) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  if (p.stmt().group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  auto extent = k.as_const(p.stmt().extent);
  if (!extent) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(p.stmt().extent));
  if (factor < 1) passes::reject(opt, "the factor must be positive");
  passes::keep_shared_range(k, p.stmt(), opt);
  const bool ragged = *extent % factor != 0;
  if (ragged) {
    std::string why = repeat_hazard(k, p.stmt());
    if (!why.empty()) {
      passes::reject(opt, "loop " + name + " has extent " + std::to_string(*extent) + ", which " +
                              std::to_string(factor) +
                              " does not divide, and repeating its last iteration would change the result: " + why);
    }
  }
  auto [outer, outer_var] = k.make_loop(k.constant_int((*extent + factor - 1) / factor));
  auto [inner, inner_var] = k.make_loop(k.constant_int(factor));
  passes::Subst s;
  ExprId at = k.binary(EOp::Add, k.binary(EOp::Mul, outer_var, k.constant_int(factor)), inner_var);
  ExprId in_range = -1;
  if (ragged) {
    in_range = k.binary(EOp::Cmplt, at, k.constant_int(*extent));
    at = k.binary(EOp::Min, at, k.constant_int(*extent - 1));
  }
  s.loops[loop] = at;
  for (const Stmt& c : p.stmt().body) inner.body.push_back(passes::apply(k, c, s));
  if (ragged) {
    passes::each_stmt(inner.body, [&](Stmt& st) {
      if (st.kind != Stmt::Kind::Store) return;
      st.mask = st.mask < 0 ? in_range : k.binary(EOp::And, st.mask, in_range);
    });
  }
  outer.parallel = p.stmt().parallel;
  outer.body.push_back(std::move(inner));
  p.stmt() = std::move(outer);
}

}  // namespace tl::codegen
