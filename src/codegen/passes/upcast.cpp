// SPDX-License-Identifier: Apache-2.0
// (upcast L): loop L of constant extent E is unrolled. Each statement of its body is repeated E
// times, with L's variable replaced by 0 .. E-1 (a run of statements between loops repeats as a
// whole, copy by copy); a loop inside it is kept once, shared by the copies, with their
// statements inside it. An accumulator defined inside L becomes one per
// copy. So a loop over output columns around a reduce becomes E accumulators updated in one
// reduce loop: a register tile. The copies must touch different elements (the loops lowering
// builds over output axes do), or only add to the same accumulator (a reduce loop: with a loop
// inside it, the copies' terms interleave with that loop's).
#include <set>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

std::vector<Stmt> expand(Kernel& k, const std::vector<Stmt>& body, std::vector<passes::Subst>& copies) {
  std::vector<Stmt> out;
  for (std::size_t i = 0; i < body.size();) {
    const Stmt& s = body[i];
    if (s.kind == Stmt::Kind::Loop) {
      Stmt loop{Stmt::Kind::Loop};
      loop.var = s.var;
      loop.extent = s.extent;
      loop.body = expand(k, s.body, copies);
      out.push_back(std::move(loop));
      ++i;
      continue;
    }
    // A run of statements between loops repeats copy by copy, in their order.
    std::size_t end = i;
    while (end < body.size() && body[end].kind != Stmt::Kind::Loop) ++end;
    for (std::size_t u = 0; u < copies.size(); ++u) {
      for (std::size_t j = i; j < end; ++j) {
        if (body[j].kind == Stmt::Kind::AccDef && u > 0) copies[u].accs[body[j].acc] = k.new_acc();
        out.push_back(passes::apply(k, body[j], copies[u]));
      }
    }
    i = end;
  }
  return out;
}

}  // namespace

void upcast_loop(Kernel& k, std::int32_t loop) {
  const std::string opt = "(upcast " + std::to_string(loop) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  const Stmt& l = p.stmt();
  if (l.parallel) passes::reject(opt, "loop " + name + " is the kernel's parallel loop");
  if (l.group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  auto extent = k.as_const(l.extent);
  if (!extent) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(l.extent));
  if (*extent > kMaxUpcast) {
    passes::reject(opt, "loop " + name + " has extent " + std::to_string(*extent) + ", more than the " +
                            std::to_string(kMaxUpcast) + " copies an upcast makes (split it first)");
  }
  passes::each_stmt(l.body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::Loop && passes::uses_loop(k, s.extent, loop)) {
      passes::reject(opt, "the extent of loop i" + std::to_string(s.var) + " depends on " + name);
    }
    // Scratch filled anew on each iteration (a pack inside L: where it writes does not depend
    // on L) would be overwritten by the next copy before the copies read it.
    if (s.kind == Stmt::Kind::Store && k.buffers[static_cast<std::size_t>(s.buffer)].local_elems > 0 &&
        !passes::uses_loop(k, s.index, loop)) {
      passes::reject(opt, "loop " + name + " fills scratch memory b" + std::to_string(s.buffer) +
                              " on each iteration (a pack inside it); upcast loops inside the pack's loop instead");
    }
  });
  // A buffer the copies both read and may store at one element (an interchanged reduce summing
  // in its output: b0[i] = b0[i] + ..., its reduce loop upcast, or merged with the output loop,
  // b0[m mod E]): one copy must read what the one before stored, but the copies' equal loads
  // are one expression, read once. Each copy's store must then go elsewhere: L linear in its
  // index, with a coefficient other than 0, unless the store is masked.
  std::set<std::int32_t> loaded;
  passes::each_stmt(l.body, [&](const Stmt& s) {
    for (ExprId e : {s.index, s.value, s.mask, s.extent}) {
      k.visit({e}, [&](ExprId, const Expr& x) {
        if (x.op == EOp::Load) loaded.insert(x.arg);
        return true;
      });
    }
  });
  passes::each_stmt(l.body, [&](const Stmt& s) {
    // (A masked store is a ragged tile's: its copies past the end clamp their index onto the
    // last element, and the mask keeps them from storing.)
    if (s.kind != Stmt::Kind::Store || !loaded.count(s.buffer) || s.mask >= 0) return;
    const auto c = k.coefficient(s.index, k.loop_var(loop));
    if (!c || *c == 0) {
      passes::reject(opt, "loop " + name + "'s copies could read and store the same elements of b" +
                              std::to_string(s.buffer) + " (its store's index is not " + name +
                              " times a constant plus the rest)");
    }
  });
  std::vector<passes::Subst> copies(static_cast<std::size_t>(*extent));
  for (std::size_t u = 0; u < copies.size(); ++u) copies[u].loops[loop] = k.constant_int(static_cast<std::int64_t>(u));
  std::vector<Stmt> body = expand(k, l.body, copies);
  p.list->erase(p.list->begin() + static_cast<std::ptrdiff_t>(p.index));
  p.list->insert(p.list->begin() + static_cast<std::ptrdiff_t>(p.index), std::make_move_iterator(body.begin()),
                 std::make_move_iterator(body.end()));
}

}  // namespace tl::codegen
