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

}  // namespace tl::codegen
