// SPDX-License-Identifier: Apache-2.0
// The buffer plan of a run of kernels (issue 20): when each computed buffer is last read,
// decided once when the plan is made (not at every run), and storage shared by outputs whose
// lifetimes do not overlap, so the bytes a run needs at most are known before it starts.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/dim.h"
#include "tensor/dtype.h"

namespace tl::runtime {

// What the buffer plan needs to know of one kernel.
struct BufferUse {
  int node = 0;                 // the position its output is known by
  std::vector<int> reads;       // positions it reads (inputs, an assign's target, a copy it writes into)
  bool allocates = true;        // false when it writes into another's buffer (a view assign)
  tensor::Dim elements = 0;     // its output's elements
  tensor::DType dtype = tensor::DType::F32;
};

struct BufferPlan {
  // After kernel i, the positions no later kernel reads and that are not results: their
  // buffers can go.
  std::vector<std::vector<int>> frees;
  // The storage slot of kernel i's output (-1 when it allocates nothing). Outputs share a
  // slot when one's last reader ran before the other is computed and their sizes are equal.
  std::vector<int> slot;
  // Each slot's size, and the kernels that use it, in order.
  struct Slot {
    tensor::Dim elements = 0;
    tensor::DType dtype = tensor::DType::F32;
    std::vector<int> kernels;
  };
  std::vector<Slot> slots;
  std::unordered_map<int, int> slot_of;  // each computed position's slot
  std::vector<int> results;
  // Whether a kernel after `kernel` computes into slot `slot`.
  bool reused_after(int slot, std::size_t kernel) const;
  // The most bytes the run's outputs occupy at once, with slots shared (`shared`) or with one
  // buffer per output: for the sizes bindings `b` give.
  std::size_t peak_bytes(const tensor::Bindings& b, bool shared = true) const;
  // One line per kernel (each starting "tensorlisp: ", as all debug output): its output's
  // slot and the positions freed after it.
  std::string str(const std::vector<BufferUse>& uses) const;
};

// The buffer plan of kernels `uses`, run in order, whose outputs at positions `results` are
// kept to the end.
BufferPlan plan_buffers(const std::vector<BufferUse>& uses, const std::vector<int>& results);

}  // namespace tl::runtime
