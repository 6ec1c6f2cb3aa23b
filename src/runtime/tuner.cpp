// SPDX-License-Identifier: Apache-2.0
// Timing candidate launches and keeping the fastest (tuner.h).
#include "runtime/tuner.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include "runtime/clock.h"
#include "support/condition_error.h"
#include "support/log.h"

namespace tl::runtime {

double launch_to_end(Backend& backend, void* handle, const std::vector<void*>& ptrs,
                     const std::vector<std::int64_t>& vars, const tl_launch& launch) {
  if (backend.has_events()) {
    Backend::Event start = backend.record_event();
    backend.launch(handle, ptrs, vars, launch);
    Backend::Event end = backend.record_event();
    return backend.seconds_between(start, end);
  }
  auto t0 = std::chrono::steady_clock::now();
  backend.launch(handle, ptrs, vars, launch);
  backend.synchronize();
  return seconds_since(t0);
}

const Tuner::Choice* Tuner::find(const std::string& key) const {
  auto it = chosen_.find(key);
  return it == chosen_.end() ? nullptr : &it->second;
}

const Tuner::Choice& Tuner::choose(const std::string& key, std::vector<Candidate>& candidates,
                                   const std::vector<void*>& ptrs, const std::vector<std::int64_t>& vars,
                                   const std::string& name) {
  if (const Choice* c = find(key)) return *c;
  const auto t0 = std::chrono::steady_clock::now();
  std::exception_ptr first_error;
  constexpr int kRuns = 3;
  for (Candidate& c : candidates) {
    try {
      backend_.launch(c.handle, ptrs, vars, c.launch);  // a warm-up: the first run loads code
      backend_.synchronize();
      for (int run = 0; run < kRuns; ++run) {
        const double dt = launch_to_end(backend_, c.handle, ptrs, vars, c.launch);
        if (c.seconds < 0 || dt < c.seconds) c.seconds = dt;
      }
    } catch (const ConditionError&) {
      if (!first_error) first_error = std::current_exception();
      c.seconds = -1;
    }
  }
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (c.seconds >= 0 && (best == nullptr || c.seconds < best->seconds)) best = &c;
  }
  if (best == nullptr) std::rethrow_exception(first_error);
  ++stats_.kernels_tuned;
  stats_.tune_seconds += seconds_since(t0);
  if (!name.empty()) {
    std::string text;
    for (const Candidate& c : candidates) {
      char t[64];
      std::snprintf(t, sizeof t, c.seconds >= 0 ? "%.3f ms" : "fails", c.seconds * 1e3);
      text += (text.empty() ? "" : ", ") + c.what + " " + t;
    }
    tl::log("tensorlisp: tuned %s: %s; chose %s\n", name.c_str(), text.c_str(), best->what.c_str());
  }
  return chosen_.emplace(key, Choice{best->variant, best->block}).first->second;
}

}  // namespace tl::runtime
