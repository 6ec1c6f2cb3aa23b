// SPDX-License-Identifier: Apache-2.0
// LLVM code generation: a loop-IR kernel becomes an LLVM module, optimized for a target
// machine and emitted as an object file that a backend loads.
//
// CPU kernels have one entry point:
//   void entry(void** buffers, const int64_t* vars, int64_t begin, int64_t end)
// which runs iterations [begin, end) of the kernel's parallel (outermost) loop.
#pragma once

#include <memory>
#include <string>

#include "codegen/loop_ir.h"

namespace tl::codegen {

struct CompileOutput {
  std::string object;   // an ELF object defining the entry point
  std::string ir;       // the optimized LLVM IR, when asked for
};

class CpuCodegen {
 public:
  // Targets the host CPU with all its vector extensions. Throws std::runtime_error when LLVM
  // has no target for the host.
  CpuCodegen();
  ~CpuCodegen();
  CpuCodegen(const CpuCodegen&) = delete;
  CpuCodegen& operator=(const CpuCodegen&) = delete;

  // Identifies the generated code: triple, CPU, features and LLVM version. Part of every
  // cache key.
  const std::string& target_id() const;
  CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// PTX for NVIDIA GPUs through LLVM's NVPTX target, from the same emitter: the entry point
// takes the CPU's arguments (a device array of buffer pointers, the variables, begin, end),
// and the parallel loop becomes one thread per iteration (blockIdx.x * blockDim.x +
// threadIdx.x, from begin, below end); the other loops run within the thread. The first
// step of the CUDA backend: kernels are checked with ptxas, not yet launched.
class PtxCodegen {
 public:
  explicit PtxCodegen(const std::string& arch = "sm_80");
  ~PtxCodegen();
  PtxCodegen(const PtxCodegen&) = delete;
  PtxCodegen& operator=(const PtxCodegen&) = delete;
  std::string compile(const Kernel& k, const std::string& entry) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tl::codegen
