// SPDX-License-Identifier: Apache-2.0
// Test helper: runs a loop-IR kernel on host values, one statement at a time, with the
// semantics of tensor::evaluate (what the reference executor computes). The passes' tests run
// a kernel before and after a transform and compare every element. CPU-shaped kernels only:
// parallel loops run their whole range; thread groups are not supported. (Its code is in
// loop_interpreter.cpp, compiled with optimization also where the tests are not: under the
// sanitizers the interpreted matmuls took minutes at -O0.)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "codegen/loop_ir.h"
#include "tensor/semantics.h"

namespace tl::test {

class LoopInterpreter {
 public:
  using Scalar = tensor::Scalar;

  // `buffers`: one per kernel buffer slot (scratch slots are sized here), `vars`: the values of
  // the kernel's symbolic dimensions.
  LoopInterpreter(const codegen::Kernel& k, std::vector<std::vector<Scalar>>& buffers,
                  std::vector<std::int64_t> vars = {})
      : k_(k), buffers_(buffers), vars_(std::move(vars)) {
    if (buffers_.size() != k.buffers.size()) throw std::runtime_error("interpreter: wrong number of buffers");
    for (std::size_t i = 0; i < k.buffers.size(); ++i) {
      if (k.buffers[i].local_elems > 0)
        buffers_[i].assign(static_cast<std::size_t>(k.buffers[i].local_elems), Scalar{});
    }
    loops_.assign(static_cast<std::size_t>(k.loop_count()), 0);
    accs_.assign(static_cast<std::size_t>(k.acc_count()), Scalar{});
  }

  void run();

 private:
  const codegen::Kernel& k_;
  std::vector<std::vector<Scalar>>& buffers_;
  std::vector<std::int64_t> vars_;
  std::vector<std::int64_t> loops_;
  std::vector<Scalar> accs_;

  Scalar& at(std::int32_t buffer, std::int64_t index);
  Scalar eval(codegen::ExprId id);
  void exec(const std::vector<codegen::Stmt>& body);
};

}  // namespace tl::test
