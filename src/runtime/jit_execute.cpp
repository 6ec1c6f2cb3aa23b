// SPDX-License-Identifier: Apache-2.0
// Running a plan (jit.h): its buffer plan, the executor (over host memory or a device's own,
// runtime/plan_memory.h), and its reports. Making plans, compiling and tuning are in jit.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/clock.h"
#include "runtime/jit.h"
#include "support/condition_error.h"
#include "support/log.h"

namespace tl::runtime {

using tensor::Buffer;
using tensor::Node;

void JitDevice::plan_buffers(Plan& plan) {
  plan.uses.clear();
  for (const PlanKernel& k : plan.kernels) {
    BufferUse u;
    u.node = k.node;
    u.reads = k.inputs;
    if (k.assign_target >= 0) u.reads.push_back(k.assign_target);
    if (k.into_copy()) u.reads.push_back(k.write_into);
    u.allocates = k.write_into < 0;
    u.elements = 1;
    for (const auto& d : k.shape) u.elements = u.elements * d;
    u.dtype = k.dtype;
    plan.uses.push_back(std::move(u));
  }
  plan.buffers = runtime::plan_buffers(plan.uses, plan.results);
}

std::vector<std::shared_ptr<Buffer>> JitDevice::execute(const std::shared_ptr<const Plan>& held,
                                                        std::vector<std::shared_ptr<Buffer>> leaves,
                                                        const tensor::Bindings& b, std::vector<const Node*> leaf_nodes,
                                                        const std::vector<char>* keep, Kept* kept) {
  const Plan& plan = *held;
  for (const Plan::RangeCheck& c : plan.checks) {
    const std::int64_t lo = c.lo.eval(b), hi = c.hi.eval(b), size = c.size.eval(b);
    if (lo < 0 || hi < lo || hi > size) {
      throw ConditionError("index-error", "shrink: range [" + std::to_string(lo) + ", " + std::to_string(hi) + ") (" + c.lo.str() +
                                              " to " + c.hi.str() + ") out of bounds for axis " + std::to_string(c.axis) +
                                              " of size " + std::to_string(size));
    }
  }
  std::vector<Recorded>* rec = recording;
  const std::size_t rec_index = rec ? rec->size() : 0;
  if (rec) rec->push_back(Recorded{held, std::move(leaf_nodes), leaves, b, {}});
  // A run that fails (out of memory, an interrupt) is no step of a trace: the function that
  // caught its error did not get its results, so a replay must not run it (recording_failed).
  struct Unrecord {
    std::vector<Recorded>* rec;
    std::size_t index;
    bool& failed;
    bool done = false;
    ~Unrecord() {
      if (rec != nullptr && !done) {
        rec->resize(index);
        failed = true;
      }
    }
  } unrecord{rec, rec_index, recording_failed};
  PlanMemory& mem = memory_ ? static_cast<PlanMemory&>(*device_plan_memory_) : host_plan_memory_;
  // Every value by its position in the graph's order: leaves, constants, and each kernel's
  // output once it has run (on a device, buffers whose data is their device copy).
  std::unordered_map<int, std::shared_ptr<Buffer>> values;
  for (std::size_t i = 0; i < plan.leaves.size(); ++i) {
    mem.prepare(*leaves[i]);
    values[plan.leaves[i]] = std::move(leaves[i]);
  }
  for (const auto& [p, buffer] : plan.constants) {
    mem.prepare(*buffer);
    values[p] = buffer;
  }
  // Buffers whose last reader has run, kept for the next output of their slot (buffer plan).
  std::vector<std::shared_ptr<Buffer>> spare(plan.buffers.slots.size());
  ++stats_.realizes;
  const bool profiled = profiling();
  double run_time = 0;
  const auto t0 = std::chrono::steady_clock::now();
  // Kernels are timed each to its end for debug output and profiles, and when some will be
  // tuned first (the tuning runs are not their time); else, on a device whose launches are
  // asynchronous, together, by the device when it can tell.
  const bool per_kernel =
      debug >= 1 || profiled || std::any_of(plan.kernels.begin(), plan.kernels.end(), [&](const PlanKernel& k) {
        return needs_tuning(k) && tuner_->find(tune_key(k, b)) == nullptr;
      });
  Backend::Event start;
  if (mem.asynchronous() && !per_kernel && !plan.kernels.empty() && backend_->has_events()) {
    start = backend_->record_event();
  }
  std::vector<std::tuple<std::shared_ptr<Buffer>, std::shared_ptr<Buffer>, int>> writes;  // (target, value, assign)
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlanKernel& k = plan.kernels[i];
    std::shared_ptr<Buffer> out;
    std::int64_t count = 0;
    if (k.write_into >= 0) {
      out = values.at(k.write_into);
      count = k.elements.eval(b);  // the view's elements
    } else {
      const int slot = plan.buffers.slot[i];
      if (slot >= 0 && spare[static_cast<std::size_t>(slot)]) {
        out = std::move(spare[static_cast<std::size_t>(slot)]);  // every element is written again
      } else {
        std::vector<std::int64_t> dims;
        for (const auto& d : k.shape) dims.push_back(d.eval(b));
        out = mem.allocate(k.dtype, dims, [&] {
          return "the output of kernel " + k.compiled->entry + " (" + label(k.op, k.dtype, k.shape) + ")";
        });
      }
      count = static_cast<std::int64_t>(out->count());
    }
    std::vector<void*> ptrs(k.buffer_count, nullptr);  // local scratch stays null
    ptrs[0] = k.write_into >= 0 ? mem.pointer_to_write(*out) : mem.pointer(*out);
    for (std::size_t j = 0; j < k.inputs.size(); ++j) {
      ptrs[static_cast<std::size_t>(k.input_slots[j])] = mem.pointer(*values.at(k.inputs[j]));
    }
    if (poll && !k.in_place()) poll();  // the writes at the end all happen, or none
    if (before_write && k.in_place()) before_write(*out);
    const double dt = launch(k, ptrs, count, b, per_kernel);
    run_time += dt;
    if (debug >= 1 || profiled) {
      double bytes = static_cast<double>(out->size_bytes());
      for (int in : k.inputs) bytes += static_cast<double>(values.at(in)->size_bytes());
      // The run started dt before now (a first launch may have been tuned before it ran).
      report_kernel(i, plan, k, dt, bytes, b, profiled ? profiler->now_us() - dt * 1e6 : 0);
    }
    if (k.in_place()) {
      mem.written_in_place(*out);
    } else if (k.assign_target >= 0) {
      // The value goes into the target's buffer once every kernel has run: until then,
      // kernels that read the target read its data from before this realize (issue 19), and
      // those that read the assign read the new value here. (An interrupted realize writes
      // nothing.)
      writes.emplace_back(values.at(k.assign_target), out, k.node);
    }
    values[k.node] = out;
    if (keep != nullptr && static_cast<std::size_t>(k.node) < keep->size() && (*keep)[static_cast<std::size_t>(k.node)]) {
      kept->emplace_back(k.node, out);  // on a device, there only until the host reads it
    }
    for (int p : plan.buffers.frees[i]) {
      auto it = values.find(p);
      if (it == values.end()) continue;
      std::shared_ptr<Buffer> freed = std::move(it->second);
      values.erase(it);
      // Held nowhere else (not kept, not an assign's value, not a leaf): its slot's next output
      // takes it (on a device too: launches run in order there).
      auto slot = plan.buffers.slot_of.find(p);
      if (slot != plan.buffers.slot_of.end() && freed.use_count() == 1 && plan.buffers.reused_after(slot->second, i)) {
        spare[static_cast<std::size_t>(slot->second)] = std::move(freed);
      }
    }
  }
  for (auto& [target, value, node] : writes) {
    if (before_write) before_write(*target);
    mem.assign(*target, *value);
    values[node] = target;  // the assign's result is its target's buffer
  }
  if (mem.asynchronous()) {
    // The kernels' time is until the device has finished them (without the copies back),
    // unless each was timed to its end already.
    if (start) {
      run_time = backend_->seconds_between(start, backend_->record_event());
    } else if (!plan.kernels.empty()) {
      backend_->synchronize();
      if (!per_kernel) run_time = seconds_since(t0);
    }
  }
  std::vector<std::shared_ptr<Buffer>> result;
  for (int r : plan.results) result.push_back(values.at(r));
  stats_.run_seconds += run_time;
  if (rec) (*rec)[rec_index].results = result;
  unrecord.done = true;
  report_run(plan, b, run_time);
  return result;
}

void JitDevice::report_run(const Plan& plan, const tensor::Bindings& b, double seconds) {
  stats_.peak_bytes = plan.buffers.peak_bytes(b);
  if (debug >= 1) {
    tl::log("tensorlisp: %zu kernels ran in %.3f ms; buffers: peak %.3f MB (%.3f MB with one per output)\n",
                 plan.kernels.size(), seconds * 1e3, static_cast<double>(stats_.peak_bytes) / 1e6,
                 static_cast<double>(plan.buffers.peak_bytes(b, false)) / 1e6);
  }
}

std::string JitDevice::label(tensor::Op op, tensor::DType dtype, const tensor::Shape& shape) {
  std::string text = tensor::op_name(op);
  return text.append(" ").append(tensor::dtype_name(dtype)).append(" ").append(tensor::shape_str(shape));
}

void JitDevice::report_kernel(std::size_t i, const Plan& plan, const PlanKernel& k, double dt, double bytes,
                              const tensor::Bindings& b, double start_us) const {
  const double flops = static_cast<double>(k.flops.eval(b));
  const std::string what = label(k.op, k.dtype, k.shape);
  if (debug >= 1) {
    tl::log("tensorlisp: kernel %zu/%zu %s %s: %.3f ms, %.2f GFLOP/s, %.2f GB/s\n", i + 1, plan.kernels.size(),
            k.compiled->entry.c_str(), what.c_str(), dt * 1e3, dt > 0 ? flops / dt * 1e-9 : 0.0,
            dt > 0 ? bytes / dt * 1e-9 : 0.0);
  }
  if (profiling()) profiler->kernel(k.compiled->entry, what, backend_->name(), start_us, dt, flops, bytes);
}

}  // namespace tl::runtime
