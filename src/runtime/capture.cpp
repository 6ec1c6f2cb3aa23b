// SPDX-License-Identifier: Apache-2.0
#include "runtime/capture.h"

namespace tl::runtime {

using tensor::Buffer;

Capture::Capture(std::shared_ptr<JitDevice> device, const std::vector<JitDevice::Recorded>& runs, Sources sources)
    : device_(std::move(device)), sources_(std::move(sources)) {
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const JitDevice::Recorded& r = runs[k];
    Step st;
    st.plan = r.plan;
    for (const auto& pk : r.plan->kernels) assigns_ = assigns_ || pk.assign_target >= 0;
    st.bindings = r.bindings;
    // A step's leaves come from the arguments, earlier steps, random keys or captured data.
    for (std::size_t i = 0; i < r.leaves.size(); ++i) st.leaves.push_back(classify(r.leaf_nodes[i], r.leaves[i]));
    steps_.push_back(std::move(st));
    for (std::size_t j = 0; j < r.results.size(); ++j) step_of_[r.results[j].get()] = {k, j};
  }
}

Capture::Slot Capture::classify(const tensor::Node* node, const std::shared_ptr<Buffer>& b) const {
  Slot s;
  if (auto a = sources_.args.find(node); node != nullptr && a != sources_.args.end()) {
    s.kind = Slot::Arg;
    s.index = a->second;
  } else if (auto st = step_of_.find(b.get()); st != step_of_.end()) {
    s.kind = Slot::Step;
    s.index = st->second.first;
    s.output = st->second.second;
  } else if (auto d = sources_.draws.find(b.get()); d != sources_.draws.end()) {
    s.kind = Slot::Rng;
    s.index = d->second;
  } else {
    s.data = b;
  }
  return s;
}

tensor::Bindings Capture::with_dims(tensor::Bindings b, const tensor::Bindings& dims) {
  for (const auto& [name, value] : dims) {
    if (auto it = b.find(name); it != b.end()) it->second = value;
  }
  return b;
}

std::shared_ptr<Buffer> Capture::Run::resolve(const Slot& s) {
  switch (s.kind) {
    case Slot::Arg: return inputs_->arg(s.index);
    case Slot::Step: return results_[s.index][s.output];
    case Slot::Rng: {
      auto& k = keys_[s.index];
      if (!k) k = inputs_->rng_key(s.index);
      return k;
    }
    case Slot::Data: return s.data;
  }
  return nullptr;
}

Capture::Run Capture::replay(const Inputs& inputs) const {
  Run run;
  run.inputs_ = &inputs;
  run.results_.resize(steps_.size());
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const Step& st = steps_[k];
    std::vector<std::shared_ptr<Buffer>> leaves;
    leaves.reserve(st.leaves.size());
    for (const Slot& s : st.leaves) leaves.push_back(run.resolve(s));
    if (assigns_ && inputs.before_writes) {
      // Lazy values outside the function that read a buffer this step writes keep their
      // meaning, as for an eager assign (Graph::retire_readers; issue 19).
      std::unordered_set<const Buffer*> written;
      for (const auto& pk : st.plan->kernels) {
        if (pk.assign_target < 0) continue;
        for (std::size_t i = 0; i < st.plan->leaves.size(); ++i) {
          if (st.plan->leaves[i] == pk.assign_target) written.insert(leaves[i].get());
        }
      }
      if (!written.empty()) inputs.before_writes(written);
    }
    run.results_[k] = device_->execute(st.plan, std::move(leaves), with_dims(st.bindings, inputs.dims));
  }
  return run;
}

}  // namespace tl::runtime
