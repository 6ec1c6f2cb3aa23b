// SPDX-License-Identifier: Apache-2.0
// What the loop-IR passes share: finding a loop, rebuilding expressions with loop variables and
// accumulators replaced, and what an expression depends on.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/loop_ir.h"
#include "codegen/opts.h"

namespace tl::codegen::passes {

// Where a loop is: the statement list holding it and its position there.
struct LoopPlace {
  std::vector<Stmt>* list = nullptr;
  std::size_t index = 0;
  Stmt& stmt() const { return (*list)[index]; }
};

// The loop with variable `var` in the kernel, or an optimizer-error naming the opt.
LoopPlace find_loop(Kernel& k, std::int32_t var, const std::string& opt);

// Calls fn(stmt) for every statement in `body`, nested ones included, outer first.
template <class F>
void each_stmt(std::vector<Stmt>& body, F&& fn) {
  for (Stmt& s : body) {
    fn(s);
    each_stmt(s.body, fn);
  }
}
template <class F>
void each_stmt(const std::vector<Stmt>& body, F&& fn) {
  for (const Stmt& s : body) {
    fn(s);
    each_stmt(s.body, fn);
  }
}

// A replacement of loop variables (by loop id) and accumulators (by id), applied to
// expressions through the kernel's builders, so the results simplify again.
struct Subst {
  std::unordered_map<std::int32_t, ExprId> loops;
  std::unordered_map<std::int32_t, std::int32_t> accs;
  std::unordered_map<ExprId, ExprId> exprs;  // whole expressions replaced (pack)
  std::unordered_map<ExprId, ExprId> memo;
};
ExprId apply(Kernel& k, ExprId e, Subst& s);
// The statement with its expressions and accumulator replaced (its body too).
Stmt apply(Kernel& k, const Stmt& st, Subst& s);

// The loop variables (ids) expression e uses, whether it reads an accumulator or memory.
struct Uses {
  std::set<std::int32_t> loops;
  bool acc = false;
  bool load = false;
};
Uses uses_of(const Kernel& k, ExprId e);
bool uses_loop(const Kernel& k, ExprId e, std::int32_t var);

[[noreturn]] void reject(const std::string& opt, const std::string& why);

// An optimizer-error for OPT when loop L is parallel and the kernel has other parallel loops:
// they all run the launch's part of one range (an interchanged reduce's), so none may change
// its extent alone.
void keep_shared_range(const Kernel& k, const Stmt& l, const std::string& opt);

}  // namespace tl::codegen::passes
