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
  std::size_t max_text = 0;
  // Opts lowered, unless they do not apply or make a kernel seen before, waiting to be timed.
  std::vector<std::pair<codegen::Opts, codegen::Lowered>> pending;
  auto add = [&](const codegen::Opts& opts, bool first) {
    codegen::Lowered l;
    try {
      l = lower_(opts);
    } catch (const ConditionError& e) {
      if (first || e.type != "optimizer-error") throw;
      return;
    }
    std::string text = l.kernel.str();
    // A kernel much larger than the first (an upcast of a loop that holds a register tile)
    // takes LLVM seconds to compile and spills: not a candidate.
    if (first) max_text = 4 * text.size() + 16384;
    if (text.size() > max_text) return;
    if (seen.insert(std::move(text)).second) pending.emplace_back(opts, std::move(l));
  };
  // Times the pending kernels, a batch at a time (prepared together: compiled side by side),
  // into INTO; stops early when the budget is spent.
  auto time_pending = [&](std::vector<Tried>& into, bool first) {
    for (std::size_t at = 0; at < pending.size() && !out_of_time; at += batch_) {
      if (at > 0 && over_budget()) {
        out_of_time = true;
        break;
      }
      const std::size_t end = std::min(pending.size(), at + batch_);
      std::vector<const codegen::Lowered*> batch;
      for (std::size_t i = at; i < end; ++i) batch.push_back(&pending[i].second);
      if (prepare_) prepare_(batch);
      for (std::size_t i = at; i < end; ++i) {
        if (poll_) poll_();
        if (i > 0 && over_budget()) {
          out_of_time = true;
          break;
        }
        const double t = time_(pending[i].second, best);
        ++result.candidates;
        if (t < 0) continue;
        if (first && i == 0) result.first_seconds = t;
        if (best < 0 || t < best) best = t;
        into.push_back(Tried{std::move(pending[i].first), std::move(pending[i].second.kernel), t});
      }
    }
    pending.clear();
  };
  std::vector<Tried> beam;
  for (std::size_t i = 0; i < starts.size(); ++i) add(starts[i], i == 0);
  time_pending(beam, true);
  auto by_time = [](const Tried& a, const Tried& b) { return a.seconds < b.seconds; };
  std::stable_sort(beam.begin(), beam.end(), by_time);
  if (beam.size() > width) beam.resize(width);
  for (int round = 1; round <= kMaxRounds && !beam.empty() && !out_of_time; ++round) {
    const double before = beam.front().seconds;
    for (const Tried& from : beam) {
      for (const codegen::Opt& action : codegen::search_actions(from.kernel, packs(from.opts))) {
        codegen::Opts opts = from.opts;
        opts.push_back(action);
        add(opts, false);
      }
    }
    std::vector<Tried> found;
    time_pending(found, false);
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
