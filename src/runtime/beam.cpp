// SPDX-License-Identifier: Apache-2.0
// Beam search over opts (beam.h).
#include "runtime/beam.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "codegen/search.h"
#include "runtime/clock.h"
#include "support/condition_error.h"

namespace tl::runtime {

namespace {

struct Tried {
  codegen::Opts opts;
  codegen::Kernel kernel;  // as lowered with them (what the next round appends to)
  double seconds;
};

bool packs(const codegen::Opts& opts) {
  return std::any_of(opts.begin(), opts.end(),
                     [](const codegen::Opt& o) { return o.kind == codegen::Opt::Kind::Pack; });
}

std::string ms(double seconds) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f ms", seconds * 1e3);
  return t;
}

}  // namespace

BeamResult BeamSearch::run(const std::vector<codegen::Opts>& starts) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t width = static_cast<std::size_t>(std::max(settings_.width, 1));
  BeamResult result;
  std::unordered_set<std::string> seen;  // kernel texts lowered so far
  bool out_of_time = false;
  auto over_budget = [&] { return seconds_since(t0) > settings_.budget_seconds; };
  double best = -1;
  // Lowers and times opts, unless they do not apply or make a kernel seen before.
  auto attempt = [&](const codegen::Opts& opts, std::vector<Tried>& into, bool first) {
    if (poll_) poll_();
    codegen::Lowered l;
    try {
      l = lower_(opts);
    } catch (const ConditionError& e) {
      if (first) throw;
      if (e.type != "optimizer-error") throw;
      return;
    }
    if (!seen.insert(l.kernel.str()).second) return;
    const double t = time_(l, best);
    ++result.candidates;
    if (t < 0) return;
    if (first) result.first_seconds = t;
    if (best < 0 || t < best) best = t;
    into.push_back(Tried{opts, std::move(l.kernel), t});
  };
  std::vector<Tried> beam;
  for (std::size_t i = 0; i < starts.size(); ++i) attempt(starts[i], beam, i == 0);
  auto by_time = [](const Tried& a, const Tried& b) { return a.seconds < b.seconds; };
  std::stable_sort(beam.begin(), beam.end(), by_time);
  if (beam.size() > width) beam.resize(width);
  for (int round = 1; round <= kMaxRounds && !beam.empty() && !out_of_time; ++round) {
    const double before = beam.front().seconds;
    std::vector<Tried> found;
    for (const Tried& from : beam) {
      for (const codegen::Opt& action : codegen::search_actions(from.kernel, packs(from.opts))) {
        if (over_budget()) {
          out_of_time = true;
          break;
        }
        codegen::Opts opts = from.opts;
        opts.push_back(action);
        attempt(opts, found, false);
      }
      if (out_of_time) break;
    }
    result.rounds = round;
    for (Tried& t : found) beam.push_back(std::move(t));
    std::stable_sort(beam.begin(), beam.end(), by_time);
    if (beam.size() > width) beam.resize(width);
    if (report_) {
      report_("round " + std::to_string(round) + ": best " + ms(beam.front().seconds) + " (first " +
              ms(result.first_seconds) + "), " + std::to_string(result.candidates) + " kernels timed in " +
              std::to_string(static_cast<int>(seconds_since(t0) + 0.5)) + " s" + (out_of_time ? ", out of time" : ""));
    }
    if (beam.front().seconds > before * 0.99) break;  // no better by 1%: done
  }
  result.out_of_time = out_of_time;
  if (beam.empty()) {  // the first start could not run: it stays
    result.opts = starts.front();
    result.seconds = -1;
    return result;
  }
  result.opts = beam.front().opts;
  result.seconds = beam.front().seconds;
  for (const Tried& t : beam) result.finalists.push_back(t.opts);
  return result;
}

}  // namespace tl::runtime
