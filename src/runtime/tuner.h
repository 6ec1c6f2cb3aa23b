// SPDX-License-Identifier: Apache-2.0
// The tuner: on a kernel's first run (per size), times its candidate launches -- compiled
// variants of it (thread groups on a GPU, register tiles as lists of opts on the CPU) and
// launch shapes -- and remembers the fastest by key. The JIT device makes the candidates and
// keeps a choice of opts on disk; this times and chooses.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/jit_stats.h"

namespace tl::runtime {

// Runs one launch and waits for its end: the device's seconds for it (events), else the
// host's.
double launch_to_end(Backend& backend, void* handle, const std::vector<void*>& ptrs,
                     const std::vector<std::int64_t>& vars, const tl_launch& launch);

class Tuner {
 public:
  struct Candidate {
    std::size_t variant = 0;  // which compiled variant
    std::int64_t block = 0;   // the launch's block size (0: the backend's own)
    void* handle = nullptr;
    tl_launch launch{};
    std::string what;     // how a report names it: "block 256", "opts (split 0 6) ..."
    double seconds = -1;  // the best of its timed runs; -1 when it cannot run
  };
  struct Choice {
    std::size_t variant = 0;
    std::int64_t block = 0;
  };

  Tuner(Backend& backend, JitStats& stats) : backend_(backend), stats_(stats) {}

  // The choice made under KEY, or null.
  const Choice* find(const std::string& key) const;
  // Times every candidate on buffers PTRS with VARS (a warm-up, then the best of three runs:
  // each candidate computes the same values into the kernel's own output, so the last run
  // leaves the right result), keeps the fastest under KEY and returns it. A candidate the
  // device refuses (a device-error: too many registers for its block size, say) is not one;
  // when every candidate is refused, the first error is rethrown. With NAME non-empty, the
  // timings are logged under it.
  const Choice& choose(const std::string& key, std::vector<Candidate>& candidates, const std::vector<void*>& ptrs,
                       const std::vector<std::int64_t>& vars, const std::string& name);

 private:
  Backend& backend_;
  JitStats& stats_;
  std::unordered_map<std::string, Choice> chosen_;
};

}  // namespace tl::runtime
