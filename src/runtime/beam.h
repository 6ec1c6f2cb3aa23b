// SPDX-License-Identifier: Apache-2.0
// Beam search over a kernel's opts (TENSORLISP_BEAM=N, (with-beam N ...)). Starting from the
// lists of opts given (the heuristics' choice, the plain loop nest), each round appends every
// opt codegen::search_actions proposes to each list in the beam, lowers and times the new
// kernels, and keeps the N fastest of all seen; it stops when a round finds nothing faster by
// at least 1%, after kMaxRounds rounds, or when the time budget is spent. The JIT device
// supplies the lowering and the timing (on buffers of the kernel's sizes) and keeps the
// result on disk (runtime/jit.cpp, JitDevice::search_opts); this is the search alone.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "codegen/opts.h"

namespace tl::runtime {

struct BeamSettings {
  int width = 0;               // lists kept per round; 0: no search
  double budget_seconds = 30;  // per kernel: lowering, compiling and timing candidates
  // Kernels faster than this keep the heuristics' opts (timing cannot tell their candidates
  // apart); 0 searches every kernel (the op fuzzer's --beam).
  double min_seconds = 20e-6;
};

struct BeamResult {
  codegen::Opts opts;                    // the fastest list found
  double seconds = 0;                    // its time
  double first_seconds = 0;              // the time of the first start (the heuristics' kernel)
  std::vector<codegen::Opts> finalists;  // the beam at the end, fastest first
  int candidates = 0;                    // distinct kernels timed
  int rounds = 0;
  bool out_of_time = false;  // stopped by the budget
};

class BeamSearch {
 public:
  // Kernel lowered with opts, or a ConditionError (optimizer-error) when one does not apply.
  using Lower = std::function<codegen::Lowered(const codegen::Opts&)>;
  // One kernel's time in seconds, or a negative number when it cannot run or computes other
  // values than the first (it is then no candidate). `best`: the best time so far (a
  // candidate much slower than it need not be timed to the end), or a negative number.
  using Time = std::function<double(const codegen::Lowered&, double best)>;
  // Called with each progress line (a round's best), and between candidates (may throw to stop:
  // Ctrl-C).
  using Report = std::function<void(const std::string&)>;
  using Poll = std::function<void()>;
  // Called with each batch of kernels before they are timed one by one (the JIT device
  // compiles a batch side by side); may be empty.
  using Prepare = std::function<void(const std::vector<const codegen::Lowered*>&)>;

  static constexpr int kMaxRounds = 8;

  // BATCH: how many kernels PREPARE gets at once (the budget is checked between batches).
  BeamSearch(BeamSettings settings, Lower lower, Time time, Report report, Poll poll, Prepare prepare = {},
             std::size_t batch = 1)
      : settings_(settings),
        lower_(std::move(lower)),
        time_(std::move(time)),
        report_(std::move(report)),
        poll_(std::move(poll)),
        prepare_(std::move(prepare)),
        batch_(std::max<std::size_t>(batch, 1)) {}

  // Searches from `starts` (the first must lower: it is the reference every candidate's values
  // are compared with).
  BeamResult run(const std::vector<codegen::Opts>& starts);

 private:
  BeamSettings settings_;
  Lower lower_;
  Time time_;
  Report report_;
  Poll poll_;
  Prepare prepare_;
  std::size_t batch_;
};

}  // namespace tl::runtime
