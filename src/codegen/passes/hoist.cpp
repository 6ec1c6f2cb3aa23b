// SPDX-License-Identifier: Apache-2.0
// (hoist L P): reduce loop L leaves its accumulators' scope and goes up to enclose the body of
// loop P (P = -1: the kernel's body). This is how a matmul blocks its reduce: with L the outer
// part of a split reduce loop (K blocks) and P the loop around the row blocks, every row and
// column tile runs over one block of K before the next block starts, so a packed block of the
// right operand stays in cache while all the rows use it.
//
// Before, in the scope (the body of the loop holding L):
//   acc = init; L { ... acc op= v ... }; out[i] = f(acc)
// after, around P's body, the scope's loops between:
//   L { ... acc = L == 0 ? init : out[i]; ... acc op= v ...; out[i] = L == E-1 ? f(acc) : acc }
// Between the iterations of L each accumulator's partial value waits in the output element its
// store writes, in the accumulator's own dtype, so each sum adds its terms in the same order as
// before and the results are identical.
//
// What it needs: the loops from P's body down to the scope each hold only the next one (and are
// not parallel: L would leave the parallel loop); the scope holds only the definitions of the
// accumulators L updates, L, and after it one store to the output per accumulator that reads it;
// an initial value that is a constant; an output of the accumulator's dtype; L's extent a
// positive constant. Distinct iterations of the loops L crosses must write distinct output
// elements, as the loops over output axes that lowering builds do (a ragged split's repeated
// iteration masks its stores).
#include <set>
#include <unordered_map>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

// The chain of statement lists from `region` down to the one holding loop `var`: each entry
// is a list and the index of the loop taken in it. Empty when var is not inside region.
bool path_to(std::vector<Stmt>& region, std::int32_t var, std::vector<passes::LoopPlace>& path) {
  for (std::size_t i = 0; i < region.size(); ++i) {
    Stmt& s = region[i];
    if (s.kind != Stmt::Kind::Loop) continue;
    path.push_back({&region, i});
    if (s.var == var || path_to(s.body, var, path)) return true;
    path.pop_back();
  }
  return false;
}

}  // namespace

void hoist_loop(Kernel& k, std::int32_t loop, std::int32_t into) {
  const std::string opt = opt_str(Opt::hoist(loop, into));
  const std::string name = "i" + std::to_string(loop);
  passes::find_loop(k, loop, opt);  // names a missing loop
  std::vector<Stmt>* region = &k.body;
  std::string where = "the kernel's body";
  if (into != -1) {
    passes::LoopPlace p = passes::find_loop(k, into, opt);
    region = &p.stmt().body;
    where = "loop i" + std::to_string(into);
  }
  std::vector<passes::LoopPlace> path;
  if (!path_to(*region, loop, path)) passes::reject(opt, "loop " + name + " is not inside " + where);
  if (path.size() < 2) {
    passes::reject(opt, "loop " + name + " is directly in " + where + ": nothing to hoist it out of");
  }
  // path[0 .. n-2]: the loops crossed (each the only statement of its list); path[n-1]: L.
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const Stmt& l = path[i].stmt();
    if (path[i].list->size() != 1) {
      passes::reject(opt, "loop i" + std::to_string(l.var) + " is not the only statement of its loop's body");
    }
    if (l.parallel) passes::reject(opt, "loop i" + std::to_string(l.var) + " is the kernel's parallel loop");
    if (l.group) passes::reject(opt, "loop i" + std::to_string(l.var) + " is a GPU thread group's loop");
  }
  std::vector<Stmt>& scope = *path.back().list;
  const std::size_t at = path.back().index;
  Stmt& l = scope[at];
  if (l.group) passes::reject(opt, "loop " + name + " is a GPU thread group's loop");
  auto extent = k.as_const(l.extent);
  if (!extent || *extent < 1) {
    passes::reject(opt, "loop " + name + " needs a positive constant extent, not " + k.expr_str(l.extent));
  }
  // The accumulators L updates (defined in the scope) and the scope's other statements.
  std::set<std::int32_t> updated, inner_defs;
  passes::each_stmt(l.body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::AccDef) inner_defs.insert(s.acc);
    if (s.kind == Stmt::Kind::AccUpdate || s.kind == Stmt::Kind::AccSet || s.kind == Stmt::Kind::GroupCombine)
      updated.insert(s.acc);
    if (s.kind == Stmt::Kind::AccSet)
      passes::reject(opt, "loop " + name + " sets acc" + std::to_string(s.acc) + " outright");
  });
  for (std::int32_t a : inner_defs) updated.erase(a);
  if (updated.empty()) passes::reject(opt, "loop " + name + " updates no accumulator defined outside it");
  const BufferParam& out = k.buffers[0];
  std::set<std::int32_t> defined;
  std::unordered_map<std::int32_t, ExprId> index_of;        // each accumulator's output element
  std::unordered_map<std::size_t, std::int32_t> acc_stored;  // the accumulator each store reads
  for (std::size_t i = 0; i < scope.size(); ++i) {
    const Stmt& s = scope[i];
    if (i == at) continue;
    const std::string acc = "acc" + std::to_string(s.acc);
    if (s.kind == Stmt::Kind::AccDef) {
      if (i > at || !updated.count(s.acc)) {
        passes::reject(opt, acc + " is defined beside loop " + name + " but not updated in it");
      }
      if (!k.as_const(s.value) && k.expr(s.value).op != EOp::Const) {
        passes::reject(opt, acc + " starts from " + k.expr_str(s.value) + ", not a constant");
      }
      if (s.dtype != out.dtype) {
        passes::reject(opt, acc + " is " + std::string(tensor::dtype_name(s.dtype)) + " and the output " +
                                std::string(tensor::dtype_name(out.dtype)) + ": its partial value would not keep");
      }
      defined.insert(s.acc);
    } else if (s.kind == Stmt::Kind::Store && i > at && s.buffer == 0) {
      std::set<std::int32_t> reads;
      k.visit({s.value}, [&](ExprId, const Expr& x) {
        if (x.op == EOp::AccRead) reads.insert(x.arg);
        return true;
      });
      if (reads.size() != 1 || !updated.count(*reads.begin())) {
        passes::reject(opt, "a store after loop " + name + " reads " + std::to_string(reads.size()) +
                                " of its accumulators, not one");
      }
      if (!index_of.emplace(*reads.begin(), s.index).second) {
        passes::reject(opt, "acc" + std::to_string(*reads.begin()) + " is stored twice after loop " + name);
      }
      if (passes::uses_of(k, s.index).acc) passes::reject(opt, "a store's index reads an accumulator");
      acc_stored[i] = *reads.begin();
    } else {
      passes::reject(opt, "the scope of loop " + name + "'s accumulators holds other statements than their "
                          "definitions and stores to the output");
    }
  }
  for (std::int32_t a : updated) {
    if (!defined.count(a)) passes::reject(opt, "acc" + std::to_string(a) + " is not defined beside loop " + name);
    if (!index_of.count(a)) passes::reject(opt, "acc" + std::to_string(a) + " is not stored after loop " + name);
  }

  // The change.
  const ExprId var = k.loop_var(loop);
  const ExprId first = k.binary(EOp::Cmpeq, var, k.constant_int(0));
  const ExprId last = k.binary(EOp::Cmpeq, var, k.constant_int(*extent - 1));
  std::vector<Stmt> new_scope;
  for (std::size_t i = 0; i < scope.size(); ++i) {
    Stmt& s = scope[i];
    if (i == at) {
      for (Stmt& c : l.body) new_scope.push_back(std::move(c));
    } else if (s.kind == Stmt::Kind::AccDef) {
      s.value = k.where(first, s.value, k.load(0, index_of.at(s.acc)));
      new_scope.push_back(std::move(s));
    } else {
      s.value = k.where(last, s.value, k.acc_read(acc_stored.at(i), out.dtype));
      new_scope.push_back(std::move(s));
    }
  }
  Stmt hoisted{Stmt::Kind::Loop};
  hoisted.var = l.var;
  hoisted.extent = l.extent;
  scope = std::move(new_scope);
  // L encloses what was the first loop below P (its list holds only it).
  std::vector<Stmt>& top = *path.front().list;
  hoisted.body = std::move(top);
  top.clear();
  top.push_back(std::move(hoisted));
}

}  // namespace tl::codegen
