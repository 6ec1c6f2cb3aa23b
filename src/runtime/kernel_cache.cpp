// SPDX-License-Identifier: Apache-2.0
// The JIT device's compiled kernels (kernel_cache.h).
#include "runtime/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>

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

std::string KernelCache::disk_key(const std::string& text) const {
  return codegen_.target_id() + "\n" + backend_.name() + "\n" + text;
}

std::string KernelCache::entry_name(const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "tl_k%016llx", static_cast<unsigned long long>(fnv1a(key)));
  return name;
}

std::string KernelCache::name_of(const codegen::Kernel& k) const { return entry_name(disk_key(k.str())); }

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

std::vector<std::shared_ptr<KernelCache::Compiled>> KernelCache::trials(const std::vector<const codegen::Kernel*>& ks,
                                                                        unsigned threads) {
  std::vector<std::shared_ptr<Compiled>> out(ks.size());
  struct Job {
    std::size_t index;
    std::string key, name, code, error;
    bool from_disk = false;
    double seconds = 0;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if ((out[i] = kept_.find(ks[i]->str())) != nullptr) continue;
    Job j;
    j.index = i;
    j.key = disk_key(ks[i]->str());
    j.name = entry_name(j.key);
    jobs.push_back(std::move(j));
  }
  // The code of each, from disk or generated, on the threads; each job is its own.
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t n; (n = next.fetch_add(1)) < jobs.size();) {
      Job& j = jobs[n];
      const auto t0 = std::chrono::steady_clock::now();
      if (auto code = disk_.load(j.key)) {
        j.code = std::move(*code);
        j.from_disk = true;
      } else {
        try {
          j.code = compile_or_fail(codegen_, *ks[j.index], j.name, false).object;
        } catch (const std::exception& e) {  // nothing may leave a thread
          j.error = e.what();
        } catch (...) {
          j.error = "an unknown error";
        }
      }
      j.seconds = seconds_since(t0);
    }
  };
  const unsigned helpers = codegen_.concurrent() ? std::min<unsigned>(threads, static_cast<unsigned>(jobs.size())) : 1;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  // Loaded into the backend here, one at a time.
  for (Job& j : jobs) {
    if (!j.error.empty()) {
      if (debug_ >= 1) tl::log("tensorlisp: trial kernel %s does not compile: %s\n", j.name.c_str(), j.error.c_str());
      continue;
    }
    void* handle = nullptr;
    try {
      handle = backend_.compile(j.code, j.name);
    } catch (const ConditionError& e) {
      if (debug_ >= 1) tl::log("tensorlisp: trial kernel %s does not load: %s\n", j.name.c_str(), e.what());
      continue;
    }
    stats_.compile_seconds += j.seconds;
    if (j.from_disk) ++stats_.disk_hits;
    else ++stats_.kernels_compiled;
    out[j.index] = hold(handle, j.name, std::make_shared<const codegen::Kernel>(*ks[j.index]));
  }
  return out;
}

std::shared_ptr<KernelCache::Compiled> KernelCache::load_or_compile(const codegen::Kernel& k, const std::string& text,
                                                                    bool store) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string key = disk_key(text);
  const std::string name = entry_name(key);
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
    tl::log("tensorlisp: %s %s in %.1f ms (%.1f ms generating code)\n", from_disk ? "loaded" : "compiled", name.c_str(),
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
