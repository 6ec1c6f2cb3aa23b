// SPDX-License-Identifier: Apache-2.0
// The compiled kernels of one JIT device: in memory by kernel text, on disk by text, target
// and backend (DiskCache), and compiled by the device's code generator when neither has them.
// Each is loaded into the backend once and held by shared pointer: the cache keeps the N most
// recently used (LruCache), plans keep those they run, and the backend releases a kernel's code
// when the last of them lets it go, so a program whose shapes keep changing (a kernel per
// shape) does not grow its code without bound. Hits, compiles and their time go into the
// device's JitStats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/llvm_emit.h"
#include "codegen/loop_ir.h"
#include "runtime/backend.h"
#include "runtime/disk_cache.h"
#include "runtime/jit_stats.h"
#include "runtime/plan_cache.h"

namespace tl::runtime {

class KernelCache {
 public:
  struct Compiled {
    void* handle;
    std::string entry;  // its entry point's name, tl_k<hash of target, backend and text>
    // The loop IR it was compiled from (null for an external kernel): what tlisp compile
    // compiles again for the program it writes (runtime/aot.h).
    std::shared_ptr<const codegen::Kernel> kernel = nullptr;
  };

  // `debug`: the device's debug level, read at each compile (2: print the loop IR, 3: the LLVM
  // IR, and skip the disk cache). `capacity`: how many kernels the cache itself keeps. The
  // backend must outlive every kernel handed out.
  KernelCache(Backend& backend, const codegen::Codegen& codegen, std::string disk_dir, JitStats& stats,
              const int& debug, std::size_t capacity)
      : backend_(backend),
        codegen_(codegen),
        disk_(std::move(disk_dir)),
        stats_(stats),
        debug_(debug),
        kept_(capacity) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Kernel K loaded into the backend: from memory, else from disk, else compiled (a
  // device-error naming the kernel when the target cannot have it).
  std::shared_ptr<Compiled> get(const codegen::Kernel& k);
  // Kernel K for a trial (a beam search's candidate, runtime/beam.h): from memory or disk when
  // there, else compiled, but neither kept in memory nor stored on disk; its code is released
  // when the caller lets go.
  std::shared_ptr<Compiled> trial(const codegen::Kernel& k);
  // Kernels KS for trials, as trial makes each, their code generated on up to THREADS threads
  // at once when the code generator allows (Codegen::concurrent). A kernel that fails to
  // compile is null.
  std::vector<std::shared_ptr<Compiled>> trials(const std::vector<const codegen::Kernel*>& ks, unsigned threads);
  // The entry point kernel K has (or will have) when compiled: tl_k<hash of target, backend and
  // text>, without compiling it.
  std::string name_of(const codegen::Kernel& k) const;
  // The backend's own kernel NAME (an extern op).
  std::shared_ptr<Compiled> external(const std::string& name);
  const DiskCache& disk() const { return disk_; }
  // The kernels the cache keeps, the most recently used (capacity, size, dropped).
  LruCache<Compiled>& kept() { return kept_; }
  const LruCache<Compiled>& kept() const { return kept_; }

 private:
  std::string disk_key(const std::string& text) const;    // target, backend and TEXT
  static std::string entry_name(const std::string& key);  // tl_k<hash of KEY>
  // Kernel K (TEXT: its text) from disk or compiled, stored on disk when `store`.
  std::shared_ptr<Compiled> load_or_compile(const codegen::Kernel& k, const std::string& text, bool store);
  std::shared_ptr<Compiled> hold(void* handle, std::string entry, std::shared_ptr<const codegen::Kernel> kernel);
  Backend& backend_;
  const codegen::Codegen& codegen_;
  DiskCache disk_;
  JitStats& stats_;
  const int& debug_;
  LruCache<Compiled> kept_;  // by kernel text (node-based: stable)
};

}  // namespace tl::runtime
