// SPDX-License-Identifier: Apache-2.0
// The JIT device's compiled kernels (kernel_cache.h).
#include "runtime/kernel_cache.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "runtime/clock.h"
#include "support/condition_error.h"
#include "support/hash.h"
#include "support/log.h"

namespace tl::runtime {

namespace {

// Code for kernel k; a device-error naming the kernel when the target cannot have it.
codegen::CompileOutput compile_or_fail(const codegen::Codegen& cg, const codegen::Kernel& k, const std::string& name,
                                       bool want_ir) {
  try {
    return cg.compile(k, name, want_ir);
  } catch (const std::runtime_error& e) {
    throw ConditionError("device-error", std::string("compiling kernel ") + name + ": " + e.what());
  }
}

}  // namespace

std::shared_ptr<KernelCache::Compiled> KernelCache::hold(void* handle, std::string entry,
                                                         std::shared_ptr<const codegen::Kernel> kernel) {
  Backend* backend = &backend_;
  return std::shared_ptr<Compiled>(new Compiled{handle, std::move(entry), std::move(kernel)}, [backend](Compiled* c) {
    backend->release_kernel(c->handle);
    delete c;
  });
}

std::shared_ptr<KernelCache::Compiled> KernelCache::get(const codegen::Kernel& k) {
  const std::string text = k.str();
  if (auto found = kept_.find(text)) {
    ++stats_.cache_hits;
    return found;
  }
  return kept_.put(text, load_or_compile(k, text, true));
}

std::shared_ptr<KernelCache::Compiled> KernelCache::trial(const codegen::Kernel& k) {
  const std::string text = k.str();
  if (auto found = kept_.find(text)) return found;
  return load_or_compile(k, text, false);
}

std::shared_ptr<KernelCache::Compiled> KernelCache::load_or_compile(const codegen::Kernel& k, const std::string& text,
                                                                    bool store) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string key = codegen_.target_id() + "\n" + backend_.name() + "\n" + text;
  char name[32];
  std::snprintf(name, sizeof name, "tl_k%016llx", static_cast<unsigned long long>(fnv1a(key)));
  // The disk cache holds code for this exact kernel text and target; without debug output
  // asked for, it saves compiling.
  std::optional<std::string> code;
  if (debug_ < 3) {
    std::string rejected;
    code = disk_.load(key, &rejected);
    if (!rejected.empty() && debug_ >= 1) {
      tl::log("tensorlisp: ignoring kernel cache entry %s: it %s; compiling again\n", disk_.path_for(key).c_str(),
              rejected.c_str());
    }
  }
  const bool from_disk = code.has_value();
  if (!from_disk) {
    codegen::CompileOutput out = compile_or_fail(codegen_, k, name, debug_ >= 3);
    if (debug_ >= 3) tl::log("%s\n", out.ir.c_str());
    code = std::move(out.object);
  }
  const double codegen_ms = seconds_since(t0) * 1e3;
  void* handle = nullptr;
  try {
    handle = backend_.compile(*code, name);
  } catch (const ConditionError&) {
    if (!from_disk) throw;
    // A stale or damaged entry that passed the checks: compile afresh.
    codegen::CompileOutput out = compile_or_fail(codegen_, k, name, false);
    code = std::move(out.object);
    handle = backend_.compile(*code, name);
  }
  if (!from_disk && store) disk_.store(key, *code);
  double dt = seconds_since(t0);
  stats_.compile_seconds += dt;
  if (from_disk) ++stats_.disk_hits;
  else ++stats_.kernels_compiled;
  if (debug_ >= 2) tl::log("%s", text.c_str());
  if (debug_ >= 1) {
    tl::log("tensorlisp: %s %s in %.1f ms (%.1f ms generating code)\n", from_disk ? "loaded" : "compiled", name,
            dt * 1e3, codegen_ms);
  }
  return hold(handle, name, std::make_shared<const codegen::Kernel>(k));
}

std::shared_ptr<KernelCache::Compiled> KernelCache::external(const std::string& name) {
  const std::string key = "extern " + name;
  if (auto found = kept_.find(key)) return found;
  return kept_.put(key, hold(backend_.find_extern(name), key, nullptr));
}

}  // namespace tl::runtime
