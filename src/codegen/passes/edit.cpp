// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the loop-IR passes (edit.h).
#include "codegen/passes/edit.h"

#include "support/condition_error.h"

namespace tl::codegen::passes {

namespace {

bool find_in(std::vector<Stmt>& body, std::int32_t var, LoopPlace& place) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i].kind != Stmt::Kind::Loop) continue;
    if (body[i].var == var) {
      place = LoopPlace{&body, i};
      return true;
    }
    if (find_in(body[i].body, var, place)) return true;
  }
  return false;
}

}  // namespace

void reject(const std::string& opt, const std::string& why) {
  throw ConditionError("optimizer-error", "opt " + opt + ": " + why);
}

void keep_shared_range(const Kernel& k, const Stmt& l, const std::string& opt) {
  if (!l.parallel) return;
  int parallel = 0;
  each_stmt(k.body, [&](const Stmt& s) { parallel += s.kind == Stmt::Kind::Loop && s.parallel; });
  if (parallel > 1) {
    reject(opt, "loop i" + std::to_string(l.var) + " is one of the kernel's " + std::to_string(parallel) +
                    " parallel loops, which share one range");
  }
}

LoopPlace find_loop(Kernel& k, std::int32_t var, const std::string& opt) {
  LoopPlace place;
  if (!find_in(k.body, var, place)) reject(opt, "the kernel has no loop i" + std::to_string(var));
  return place;
}

ExprId apply(Kernel& k, ExprId e, Subst& s) {
  if (e < 0) return e;
  if (auto it = s.exprs.find(e); it != s.exprs.end()) return it->second;
  if (auto it = s.memo.find(e); it != s.memo.end()) return it->second;
  const Expr x = k.expr(e);  // a copy: building expressions may move the arena
  ExprId out = e;
  if (x.op == EOp::LoopVar) {
    if (auto it = s.loops.find(x.arg); it != s.loops.end()) out = it->second;
  } else if (x.op == EOp::AccRead) {
    if (auto it = s.accs.find(x.arg); it != s.accs.end()) out = k.acc_read(it->second, x.dtype);
  } else if (x.op == EOp::Load) {
    const ExprId i = apply(k, x.src[0], s);
    if (i != x.src[0]) out = x.ival == 1 ? k.load_bytes(x.arg, i, x.dtype) : k.load_as(x.arg, i, x.dtype);
  } else if (x.op != EOp::Const && x.op != EOp::SymVar) {
    // Arithmetic: rebuilt through the builders when a source changed.
    ExprId a[3] = {-1, -1, -1};
    bool changed = false;
    for (int i = 0; i < 3; ++i) {
      a[i] = apply(k, x.src[i], s);
      changed = changed || a[i] != x.src[i];
    }
    if (changed) {
      if (x.op == EOp::Where) out = k.where(a[0], a[1], a[2]);
      else if (x.op == EOp::Dot4) out = k.dot4(a[0], a[1], a[2], x.ival, x.arg);
      else if (a[1] < 0) out = k.unary(x.op, a[0], x.dtype);
      else out = k.binary(x.op, a[0], a[1]);
    }
  }
  s.memo.emplace(e, out);
  return out;
}

Stmt apply(Kernel& k, const Stmt& st, Subst& s) {
  Stmt out = st;
  out.body.clear();
  if (st.kind != Stmt::Kind::Loop) {
    if (auto it = s.accs.find(st.acc); it != s.accs.end()) out.acc = it->second;
  }
  out.extent = apply(k, st.extent, s);
  out.index = apply(k, st.index, s);
  out.value = apply(k, st.value, s);
  out.mask = apply(k, st.mask, s);
  if (auto always = out.mask >= 0 ? k.as_const(out.mask) : std::nullopt; always && *always != 0) out.mask = -1;
  for (const Stmt& c : st.body) out.body.push_back(apply(k, c, s));
  return out;
}

Uses uses_of(const Kernel& k, ExprId e) {
  Uses u;
  k.visit({e}, [&](ExprId, const Expr& x) {
    if (x.op == EOp::LoopVar) u.loops.insert(x.arg);
    if (x.op == EOp::AccRead) u.acc = true;
    if (x.op == EOp::Load) u.load = true;
    return true;
  });
  return u;
}

bool uses_loop(const Kernel& k, ExprId e, std::int32_t var) {
  bool found = false;
  k.visit({e}, [&](ExprId, const Expr& x) {
    if (x.op == EOp::LoopVar && x.arg == var) found = true;
    return !found;
  });
  return found;
}

}  // namespace tl::codegen::passes
