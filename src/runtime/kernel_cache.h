// SPDX-License-Identifier: Apache-2.0
// The compiled kernels of one JIT device: in memory by kernel text, on disk by text, target
// and backend (DiskCache), and compiled by the device's code generator when neither has them.
// Each is loaded into the backend once and released with the cache. Hits, compiles and their
// time go into the device's JitStats.
#pragma once

#include <string>
#include <unordered_map>

#include "codegen/llvm_emit.h"
#include "codegen/loop_ir.h"
#include "runtime/backend.h"
#include "runtime/disk_cache.h"
#include "runtime/jit_stats.h"

namespace tl::runtime {

class KernelCache {
 public:
  struct Compiled {
    void* handle;
    std::string entry;  // its entry point's name, tl_k<hash of target, backend and text>
  };

  // `debug`: the device's debug level, read at each compile (2: print the loop IR, 3: the LLVM
  // IR, and skip the disk cache).
  KernelCache(Backend& backend, const codegen::Codegen& codegen, std::string disk_dir, JitStats& stats,
              const int& debug)
      : backend_(backend), codegen_(codegen), disk_(std::move(disk_dir)), stats_(stats), debug_(debug) {}
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Kernel K loaded into the backend: from memory, else from disk, else compiled (a
  // device-error naming the kernel when the target cannot have it). Stays valid as long as
  // the cache.
  Compiled& get(const codegen::Kernel& k);
  // The backend's own kernel NAME (an extern op).
  Compiled& external(const std::string& name);
  const DiskCache& disk() const { return disk_; }

 private:
  Backend& backend_;
  const codegen::Codegen& codegen_;
  DiskCache disk_;
  JitStats& stats_;
  const int& debug_;
  std::unordered_map<std::string, Compiled> kernels_;  // by kernel text (node-based: stable)
};

}  // namespace tl::runtime
