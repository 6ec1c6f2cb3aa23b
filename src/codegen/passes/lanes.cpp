// SPDX-License-Identifier: Apache-2.0
// (lanes L F): the innermost reduce loop L, of constant extent E, spreads its terms over F
// accumulators per reduce. For each accumulator A defined outside L that L updates, F lane
// accumulators start at A's initial value (the reduce's identity) before L; L becomes a loop
// over E/F blocks (marked lanes) whose body is L's body F times, copy j with L's variable at
// block * F + j adding into lane j, then a loop over the E mod F remaining iterations adding
// into lane 0; after them A takes the lanes, combined as a tree by halves. One accumulator is
// one chain of dependent adds (or maxes), a few cycles each; F independent ones run side by
// side and vectorize (each block's copies read consecutive elements). A float sum is
// regrouped, as by partial: each lane adds about E/F terms (more accurate than one running
// total). A max is exact in any order, NaN included.
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

EOp combine_op(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return EOp::Add;
    case ReduceKind::Prod: return EOp::Mul;
    case ReduceKind::Max: return EOp::Max;
  }
  return EOp::Add;
}

// The value of accumulators `ids`, combined as a tree by halves: lane j with lane j + n/2 (an
// odd last lane kept), until one is left; each level is one vector operation.
ExprId combine_halves(Kernel& k, ReduceKind kind, DType t, const std::vector<std::int32_t>& ids) {
  std::vector<ExprId> level;
  for (std::int32_t a : ids) level.push_back(k.acc_read(a, t));
  while (level.size() > 1) {
    const std::size_t half = level.size() / 2;
    std::vector<ExprId> next;
    for (std::size_t i = 0; i < half; ++i) next.push_back(k.binary(combine_op(kind), level[i], level[i + half]));
    if (level.size() % 2 == 1) next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

}  // namespace

void reduce_lanes(Kernel& k, std::int32_t loop, std::int64_t lanes) {
  const std::string opt = "(lanes " + std::to_string(loop) + " " + std::to_string(lanes) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  const Stmt& l = p.stmt();
  if (lanes < 2 || lanes > kMaxUpcast) {
    passes::reject(opt, "the number of lanes must be from 2 to " + std::to_string(kMaxUpcast));
  }
  if (l.parallel) passes::reject(opt, "loop " + name + " is the kernel's parallel loop");
  const auto extent = k.as_const(l.extent);
  if (!extent) passes::reject(opt, "loop " + name + " has the symbolic extent " + k.expr_str(l.extent));
  if (l.group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  // L's body: only updates of accumulators defined outside it, which it does not read.
  struct Reduced {
    std::int32_t acc;
    DType dtype;
    ReduceKind kind;
  };
  std::vector<Reduced> reduced;
  for (const Stmt& s : l.body) {
    if (s.kind != Stmt::Kind::AccUpdate) {
      passes::reject(opt, "loop " + name + " holds a " +
                              (s.kind == Stmt::Kind::Loop    ? std::string("loop")
                               : s.kind == Stmt::Kind::Store ? std::string("store")
                                                             : std::string("statement other than a reduce's update")) +
                              "; lanes take an innermost reduce loop");
    }
    bool seen = false;
    for (const Reduced& r : reduced) seen = seen || r.acc == s.acc;
    if (!seen) reduced.push_back({s.acc, s.dtype, s.reduce});
  }
  if (reduced.empty()) passes::reject(opt, "loop " + name + " updates no accumulator");
  for (const Stmt& s : l.body) {
    k.visit({s.value}, [&](ExprId, const Expr& x) {
      for (const Reduced& r : reduced) {
        if (x.op == EOp::AccRead && x.arg == r.acc) {
          passes::reject(opt, "loop " + name + " reads acc" + std::to_string(x.arg) + ", which it updates");
        }
      }
      return true;
    });
  }
  // Each lane starts at its accumulator's initial value.
  std::vector<ExprId> init(reduced.size(), -1);
  passes::each_stmt(k.body, [&](const Stmt& s) {
    for (std::size_t r = 0; r < reduced.size(); ++r) {
      if (s.kind == Stmt::Kind::AccDef && s.acc == reduced[r].acc) init[r] = s.value;
    }
  });
  for (std::size_t r = 0; r < reduced.size(); ++r) {
    if (init[r] < 0) passes::reject(opt, "acc" + std::to_string(reduced[r].acc) + " has no definition");
  }

  std::vector<Stmt> out;
  std::vector<passes::Subst> copies(static_cast<std::size_t>(lanes));
  std::vector<std::vector<std::int32_t>> lane_accs(reduced.size());
  for (std::size_t r = 0; r < reduced.size(); ++r) {
    for (std::size_t j = 0; j < copies.size(); ++j) {
      Stmt def{Stmt::Kind::AccDef};
      def.acc = k.new_acc();
      def.dtype = reduced[r].dtype;
      def.reduce = reduced[r].kind;
      def.value = init[r];
      out.push_back(def);
      copies[j].accs[reduced[r].acc] = def.acc;
      lane_accs[r].push_back(def.acc);
    }
  }
  const ExprId f = k.constant_int(lanes);
  const ExprId done = k.constant_int(*extent / lanes * lanes);
  auto [block, block_var] = k.make_loop(k.constant_int(*extent / lanes));
  block.lanes = true;
  auto [rest, rest_var] = k.make_loop(k.constant_int(*extent % lanes));
  for (std::size_t j = 0; j < copies.size(); ++j) {
    copies[j].loops[loop] =
        k.binary(EOp::Add, k.binary(EOp::Mul, block_var, f), k.constant_int(static_cast<std::int64_t>(j)));
    for (const Stmt& s : l.body) block.body.push_back(passes::apply(k, s, copies[j]));
  }
  passes::Subst tail = copies[0];
  tail.loops[loop] = k.binary(EOp::Add, done, rest_var);
  tail.memo.clear();
  for (const Stmt& s : l.body) rest.body.push_back(passes::apply(k, s, tail));
  if (k.as_const(block.extent) != 0) out.push_back(std::move(block));
  if (k.as_const(rest.extent) != 0) out.push_back(std::move(rest));
  for (std::size_t r = 0; r < reduced.size(); ++r) {
    Stmt add{Stmt::Kind::AccUpdate};
    add.acc = reduced[r].acc;
    add.dtype = reduced[r].dtype;
    add.reduce = reduced[r].kind;
    add.value = combine_halves(k, reduced[r].kind, reduced[r].dtype, lane_accs[r]);
    out.push_back(add);
  }
  p.list->erase(p.list->begin() + static_cast<std::ptrdiff_t>(p.index));
  p.list->insert(p.list->begin() + static_cast<std::ptrdiff_t>(p.index), std::make_move_iterator(out.begin()),
                 std::make_move_iterator(out.end()));
}

}  // namespace tl::codegen
