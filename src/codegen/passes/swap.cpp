// SPDX-License-Identifier: Apache-2.0
// (swap L): loop L and the loop that is the one statement of its body trade places. The outer
// position keeps its parallel mark. Inside an accumulator's scope this reorders its terms.
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

void swap_loop(Kernel& k, std::int32_t loop) {
  const std::string opt = "(swap " + std::to_string(loop) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  Stmt& outer = p.stmt();
  const std::string name = "i" + std::to_string(loop);
  if (outer.body.size() != 1 || outer.body[0].kind != Stmt::Kind::Loop) {
    passes::reject(opt, "the body of loop " + name + " is not a single loop");
  }
  Stmt& inner = outer.body[0];
  const std::string inner_name = "i" + std::to_string(inner.var);
  if (passes::uses_loop(k, inner.extent, outer.var)) {
    passes::reject(opt, "the extent of loop " + inner_name + " depends on " + name);
  }
  if (outer.group || inner.group) passes::reject(opt, "a GPU thread group's loop does not move");
  passes::keep_shared_range(k, outer, opt);
  Stmt new_inner{Stmt::Kind::Loop};
  new_inner.var = outer.var;
  new_inner.extent = outer.extent;
  new_inner.body = std::move(inner.body);
  Stmt new_outer{Stmt::Kind::Loop};
  new_outer.var = inner.var;
  new_outer.extent = inner.extent;
  new_outer.parallel = outer.parallel;
  new_outer.body.push_back(std::move(new_inner));
  p.stmt() = std::move(new_outer);
}

}  // namespace tl::codegen
