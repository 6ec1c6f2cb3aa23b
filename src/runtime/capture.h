// SPDX-License-Identifier: Apache-2.0
// The runtime's side of (jit f): a trace as the list of plans it ran, and its replay. While f
// is traced, the JIT device records every plan run (JitDevice::recording); a Capture then
// says where each recorded leaf comes from at replay: an argument, the result of an earlier
// step, a random key drawn during the trace, or captured data (weights and constants, read
// from the same buffer at every replay, so updates made in place with assign are seen). A
// replay runs the steps in order on the new arguments' buffers and fresh random keys, with no
// Lisp evaluation, graph building or schedule lookup. The Lisp side (api/capture.cpp) traces
// f, keys calls by signature and turns buffers back into Lisp values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/jit.h"

namespace tl::runtime {

class Capture {
 public:
  // Where a plan's leaf, or an output, comes from at replay.
  struct Slot {
    enum Kind { Arg, Step, Rng, Data } kind = Data;
    std::size_t index = 0;                 // argument, step, or draw offset
    std::size_t output = 0;                // Step: which of the step's results
    std::shared_ptr<tensor::Buffer> data;  // Data: the captured buffer
  };
  struct Step {
    std::shared_ptr<const JitDevice::Plan> plan;  // kept alive here after the device's cache drops it
    std::vector<Slot> leaves;
    tensor::Bindings bindings;
  };
  // What tracing saw besides the recorded runs: the argument nodes f was given (by position)
  // and the random keys drawn, by their draw offset from the trace's first.
  struct Sources {
    std::unordered_map<const tensor::Node*, std::size_t> args;
    std::unordered_map<const tensor::Buffer*, std::uint64_t> draws;
  };

  Capture(std::shared_ptr<JitDevice> device, const std::vector<JitDevice::Recorded>& runs, Sources sources);

  // Where NODE (an argument's, or null) holding B comes from at replay: for the trace's
  // outputs and guards, while the recorded runs and the argument nodes are alive.
  Slot classify(const tensor::Node* node, const std::shared_ptr<tensor::Buffer>& b) const;
  // Forgets the trace's nodes and buffers (classify no longer works): they die with it.
  void seal() {
    sources_ = {};
    step_of_.clear();
  }
  const std::vector<Step>& steps() const { return steps_; }
  // Whether some step writes into a buffer (an assign).
  bool assigns() const { return assigns_; }

  // One replay's inputs.
  struct Inputs {
    std::function<std::shared_ptr<tensor::Buffer>(std::size_t)> arg;  // argument I's buffer
    // The random key of draw offset D (from this call's first draw).
    std::function<std::shared_ptr<tensor::Buffer>(std::uint64_t)> rng_key;
    // Called before a step that writes these buffers in place (the host retires their
    // readers, as for an eager assign).
    std::function<void(const std::unordered_set<const tensor::Buffer*>&)> before_writes;
    tensor::Bindings dims;  // this call's values of the trace's symbolic dimensions
  };
  // A replay's results: every step's buffers, and each slot's buffer for this call.
  class Run {
   public:
    std::shared_ptr<tensor::Buffer> resolve(const Slot& s);

   private:
    friend class Capture;
    const Inputs* inputs_ = nullptr;
    std::vector<std::vector<std::shared_ptr<tensor::Buffer>>> results_;
    std::unordered_map<std::uint64_t, std::shared_ptr<tensor::Buffer>> keys_;  // by draw offset
  };
  // Runs every step on the device with INPUTS (which must outlive the returned Run).
  Run replay(const Inputs& inputs) const;
  // B with this call's values of the dimensions in DIMS.
  static tensor::Bindings with_dims(tensor::Bindings b, const tensor::Bindings& dims);

 private:
  std::shared_ptr<JitDevice> device_;  // keeps the plans' compiled kernels alive
  Sources sources_;
  std::vector<Step> steps_;
  std::unordered_map<const tensor::Buffer*, std::pair<std::size_t, std::size_t>> step_of_;  // (step, output)
  bool assigns_ = false;
};

}  // namespace tl::runtime
