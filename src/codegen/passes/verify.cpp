// SPDX-License-Identifier: Apache-2.0
// The loop-IR verifier (passes.h), run after every lowering pass.
#include <map>
#include <set>

#include "codegen/passes/passes.h"
#include "support/check.h"

namespace tl::codegen {

namespace {

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k) {}

  std::string run() {
    walk(k_.body);
    return problem_;
  }

 private:
  const Kernel& k_;
  std::set<std::int32_t> loops_seen_, bound_, accs_seen_;
  std::map<std::int32_t, DType> accs_;  // in scope
  ExprId parallel_extent_ = -1;
  std::string problem_;

  void fail(const std::string& what) {
    if (problem_.empty()) problem_ = what;
  }

  void check(ExprId e, const char* what) {
    if (e < 0 || static_cast<std::size_t>(e) >= k_.expr_count()) return fail(std::string(what) + " has no expression");
    k_.visit({e}, [&](ExprId, const Expr& x) {
      if (x.op == EOp::LoopVar && !bound_.count(x.arg)) {
        fail(std::string(what) + " uses i" + std::to_string(x.arg) + " outside its loop");
      }
      if (x.op == EOp::AccRead) {
        auto it = accs_.find(x.arg);
        if (it == accs_.end()) fail(std::string(what) + " reads acc" + std::to_string(x.arg) + " outside its scope");
        else if (it->second != x.dtype)
          fail(std::string(what) + " reads acc" + std::to_string(x.arg) + " as another dtype");
      }
      if (x.op == EOp::Load && (x.arg < 0 || static_cast<std::size_t>(x.arg) >= k_.buffers.size())) {
        fail(std::string(what) + " loads from a buffer the kernel does not have");
      }
      return true;
    });
  }

  void walk(const std::vector<Stmt>& body) {
    std::vector<std::int32_t> defined;
    for (const Stmt& s : body) {
      switch (s.kind) {
        case Stmt::Kind::Loop:
          check(s.extent, "a loop's extent");
          if (!loops_seen_.insert(s.var).second) fail("loop i" + std::to_string(s.var) + " appears twice");
          // A CPU kernel's parallel loops all run the launch's part of one range (an interchanged
          // reduce has one to initialize its row and one inside its reduce loops).
          if (s.parallel && parallel_extent_ >= 0 && s.extent != parallel_extent_) {
            fail("parallel loops of different extents");
          }
          if (s.parallel) parallel_extent_ = s.extent;
          bound_.insert(s.var);
          walk(s.body);
          bound_.erase(s.var);
          break;
        case Stmt::Kind::Store: {
          const auto b = static_cast<std::size_t>(s.buffer);
          if (s.buffer < 0 || b >= k_.buffers.size()) {
            fail("a store to a buffer the kernel does not have");
          } else if (!k_.buffers[b].output && k_.buffers[b].local_elems == 0) {
            fail("a store to input buffer b" + std::to_string(s.buffer));
          }
          check(s.index, "a store's index");
          check(s.value, "a store's value");
          if (s.mask >= 0) {
            check(s.mask, "a store's mask");
            if (k_.expr(s.mask).dtype != DType::Bool) fail("a store's mask is not a bool");
          }
          break;
        }
        case Stmt::Kind::AccDef:
          check(s.value, "an accumulator's initial value");
          if (!accs_seen_.insert(s.acc).second) fail("acc" + std::to_string(s.acc) + " is defined twice");
          accs_[s.acc] = s.dtype;
          defined.push_back(s.acc);
          break;
        case Stmt::Kind::AccUpdate:
        case Stmt::Kind::AccSet:
        case Stmt::Kind::GroupCombine: {
          auto it = accs_.find(s.acc);
          if (it == accs_.end()) fail("acc" + std::to_string(s.acc) + " is updated outside its scope");
          else if (it->second != s.dtype) fail("acc" + std::to_string(s.acc) + " is updated as another dtype");
          if (s.kind == Stmt::Kind::AccUpdate) check(s.value, "an accumulator update");
          if (s.kind == Stmt::Kind::AccSet) check(s.value, "an accumulator's new value");
          break;
        }
      }
    }
    for (std::int32_t a : defined) accs_.erase(a);
  }
};

}  // namespace

void verify(const Kernel& k, const std::string& after) {
  const std::string problem = Verifier(k).run();
  if (!problem.empty()) TL_UNREACHABLE("loop IR after " + after + ": " + problem + "\n" + k.str());
}

}  // namespace tl::codegen
