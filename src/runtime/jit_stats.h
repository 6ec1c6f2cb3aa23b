// SPDX-License-Identifier: Apache-2.0
// The JIT device's counters, kept by its components ((jit-stats) from Lisp).
#pragma once

#include <cstdint>

namespace tl::runtime {

struct JitStats {
  std::uint64_t realizes = 0;
  std::uint64_t kernels_run = 0;
  std::uint64_t kernels_compiled = 0;
  std::uint64_t cache_hits = 0;                // kernels found compiled in memory
  std::uint64_t disk_hits = 0;                 // kernels loaded from the disk cache
  std::uint64_t plan_hits = 0;                 // realizes that reused a whole schedule
  std::uint64_t traces = 0;                    // (jit f) signatures traced
  std::uint64_t replays = 0;                   // (jit f) calls replayed
  std::uint64_t kernels_tuned = 0;             // kernels whose launch shape was chosen by timing
  std::uint64_t kernels_tuned_from_cache = 0;  // kernels whose opts a tuner chose in an earlier process
  std::uint64_t kernels_searched = 0;          // kernels whose opts a beam search chose (runtime/beam.h)
  std::uint64_t kernels_searched_from_cache = 0;  // kernels whose opts a beam search chose in an earlier process
  std::uint64_t search_candidates = 0;            // kernels a beam search timed
  std::uint64_t search_disagreed = 0;             // of those, how many computed other values (not chosen)
  double compile_seconds = 0;
  double run_seconds = 0;
  double tune_seconds = 0;
  double search_seconds = 0;     // beam searches, their compiles included
  std::uint64_t peak_bytes = 0;  // the last realize's buffer plan: most bytes held at once
};

}  // namespace tl::runtime
