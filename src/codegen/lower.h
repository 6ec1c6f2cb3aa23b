// SPDX-License-Identifier: Apache-2.0
// Lowering: one scheduled node to a loop-IR kernel. The kernel writes the node, contiguous
// and row-major, into buffer 0 and reads the materialized nodes it depends on from buffers
// 1..n (listed in `inputs`, in slot order).
#pragma once

#include <unordered_set>
#include <vector>

#include "codegen/loop_ir.h"

namespace tl::codegen {

struct Lowered {
  Kernel kernel;
  std::vector<const tensor::Node*> inputs;  // nodes read from memory
  std::vector<std::int32_t> input_slots;    // the buffer slot of each (slot 0: the output)
  tensor::Dim parallel_extent = 1;          // iterations of the outermost (parallel) loop
  tensor::Dim work_per_iteration = 1;       // elements computed per iteration, for splitting
  // Static counts for reporting rates: the elements the innermost statements run for (the
  // output's, or a reduce's input's) and the arithmetic ops each runs (index math excluded).
  tensor::Dim elements = 1;
  int ops_per_element = 0;
};

// What the kernel is for. Cpu: the outermost loop is split across threads, matmul-like sums
// get register tiles and packed operands (scratch memory). Gpu: plain loops, no scratch; the
// parallel loop and the loops perfectly nested in it become one thread per iteration
// (gpu_thread_loops), and parallel_extent counts those threads.
enum class Target { Cpu, Gpu };

Lowered lower(const tensor::Node* out, const std::unordered_set<const tensor::Node*>& materialized,
              Target target = Target::Cpu);

}  // namespace tl::codegen
