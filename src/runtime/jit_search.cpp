// SPDX-License-Identifier: Apache-2.0
// The JIT device's beam search over a kernel's opts (jit.h, JitDevice::search_opts; the search
// itself is runtime/beam.h): buffers of the kernel's sizes to time candidates on, every
// candidate's values checked against the heuristics' kernel, the result kept on disk.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_map>

#include "codegen/search.h"
#include "runtime/clock.h"
#include "runtime/jit.h"
#include "support/condition_error.h"
#include "support/log.h"

namespace tl::runtime {

using tensor::Buffer;
using tensor::DType;
using tensor::Node;

namespace {

std::optional<std::vector<std::int64_t>> const_dims(const tensor::Shape& shape) {
  std::vector<std::int64_t> dims;
  for (const auto& d : shape) {
    auto c = d.as_const();
    if (!c) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

// Values any kernel runs on: floats uniform in [-1, 1), everything else zero (an index that
// is valid anywhere; integer division by zero is defined, tensor/semantics.h).
void fill(Buffer& b, std::uint64_t seed) {
  auto* bytes = static_cast<std::uint8_t*>(b.data());
  std::memset(bytes, 0, b.size_bytes());
  if (!tensor::is_float(b.dtype)) return;
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < b.count(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const float v = static_cast<float>(static_cast<double>(x >> 11) * 0x1p-52 - 1.0);
    switch (b.dtype) {
      case DType::F64: reinterpret_cast<double*>(bytes)[i] = v; break;
      case DType::F32: reinterpret_cast<float*>(bytes)[i] = v; break;
      case DType::F16: reinterpret_cast<std::uint16_t*>(bytes)[i] = tensor::float_to_half(v); break;
      case DType::BF16: reinterpret_cast<std::uint16_t*>(bytes)[i] = tensor::float_to_bf16(v); break;
      default: return;
    }
  }
}

double float_at(DType t, const std::uint8_t* p, std::size_t i) {
  switch (t) {
    case DType::F64: return reinterpret_cast<const double*>(p)[i];
    case DType::F32: return reinterpret_cast<const float*>(p)[i];
    case DType::F16: return tensor::half_to_float(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DType::BF16: return tensor::bf16_to_float(reinterpret_cast<const std::uint16_t*>(p)[i]);
    default: return 0;
  }
}

// Whether a candidate's output GOT agrees with the reference's WANT: other dtypes than floats
// bit for bit; floats as a reordered sum does (within a small fraction of the output's largest
// magnitude), NaN where NaN, infinities equal.
bool agrees(const Buffer& got, const Buffer& want) {
  const auto* g = static_cast<const std::uint8_t*>(got.data());
  const auto* w = static_cast<const std::uint8_t*>(want.data());
  if (!tensor::is_float(want.dtype)) return std::memcmp(g, w, want.size_bytes()) == 0;
  const std::size_t n = want.count();
  double scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = std::abs(float_at(want.dtype, w, i));
    if (std::isfinite(v)) scale = std::max(scale, v);
  }
  const double tolerance = (want.dtype == DType::F64   ? 1e-9
                            : want.dtype == DType::F32 ? 1e-4
                                                       : 2e-2) *
                           std::max(scale, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = float_at(want.dtype, g, i), b = float_at(want.dtype, w, i);
    if (std::isnan(b) || std::isnan(a)) {
      if (std::isnan(a) != std::isnan(b)) return false;
      continue;
    }
    if (std::isinf(b) || std::isinf(a)) {
      if (a != b) return false;
      continue;
    }
    if (std::abs(a - b) > tolerance) return false;
  }
  return true;
}

// A search that cannot time this many candidates in its budget is not started.
constexpr int kMinCandidates = 20;

}  // namespace

void JitDevice::search_opts(const schedule::ScheduledKernel& sk, const std::unordered_set<const Node*>& materialized,
                            codegen::Lowered& l) {
  // CPU kernels whose loops opts apply to, of sizes known now.
  if (gpu() || memory_ != nullptr) {
    if (!beam_gpu_said_) {
      tl::log("tensorlisp: beam %d: %s\n", beam_.width,
              gpu() ? "GPU kernels are not searched (their launch shapes are tuned instead: use-backend's :tune)"
                    : "kernels on device memory are not searched");
      beam_gpu_said_ = true;
    }
    return;
  }
  if (sk.kind != schedule::KernelKind::Elementwise && sk.kind != schedule::KernelKind::Reduce) return;
  if (!l.kernel.vars.empty() || !l.parallel_extent.as_const()) return;
  const auto out_dims = const_dims(sk.out->shape);
  if (!out_dims || std::count(out_dims->begin(), out_dims->end(), 0) > 0) return;
  std::vector<std::vector<std::int64_t>> in_dims;
  for (const Node* in : l.inputs) {
    auto d = const_dims(in->shape);
    if (!d) return;
    in_dims.push_back(std::move(*d));
  }
  auto lower = [&](const codegen::Opts& opts) {
    codegen::Lowering how = lowering_;
    how.opts = opts;
    return codegen::lower(sk, materialized, how);
  };
  // Only a kernel whose opts replay: lowered again with the opts it was given, the same kernel
  // (not so for a kernel lowering builds another way, a softmax's weights recomputed inside
  // an attention's gradient).
  try {
    if (lower(l.opts).kernel.str() != l.kernel.str()) return;
  } catch (const ConditionError&) {
    return;
  }
  // Keyed by the heuristics' kernel's name, which a later process knows without compiling it.
  const std::string entry = kernels_->name_of(l.kernel);
  const std::string key = "beam-opts " + std::to_string(beam_.width) + " " + entry;
  if (kernels_->disk().enabled()) {
    if (auto stored = kernels_->disk().load(key)) {
      try {
        codegen::Lowered v = lower(codegen::parse_opts(*stored));
        if (v.inputs == l.inputs) {
          l = std::move(v);
          ++stats_.kernels_searched_from_cache;
          return;
        }
      } catch (const ConditionError&) {
        // Opts kept for an older lowering of this kernel: searched again.
      }
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::shared_ptr<Compiled> first = compiled(l.kernel);
  // The buffers candidates run on: the inputs filled once, the reference's output, and one
  // that each candidate writes (set to NaN bytes first, so an element it leaves unwritten
  // cannot pass for the reference's).
  std::vector<std::shared_ptr<Buffer>> inputs;
  for (std::size_t j = 0; j < in_dims.size(); ++j) {
    inputs.push_back(tensor::allocate_buffer(l.inputs[j]->dtype, in_dims[j]));
    fill(*inputs.back(), j + 1);
  }
  std::shared_ptr<Buffer> want, out = tensor::allocate_buffer(sk.out->dtype, *out_dims);
  const std::string name = label(sk.out->op, sk.out->dtype, sk.out->shape);
  // The candidates' code, by kernel text, while the search runs (a finalist is timed again).
  std::unordered_map<std::string, std::shared_ptr<Compiled>> code = {{l.kernel.str(), first}};
  // Code for a batch of candidates, generated side by side (one thread per core).
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  auto prepare = [&](const std::vector<const codegen::Lowered*>& batch) {
    std::vector<const codegen::Kernel*> ks;
    for (const codegen::Lowered* v : batch) {
      if (!code.count(v->kernel.str())) ks.push_back(&v->kernel);
    }
    std::vector<std::shared_ptr<Compiled>> made = kernels_->trials(ks, threads);
    for (std::size_t i = 0; i < ks.size(); ++i) code[ks[i]->str()] = std::move(made[i]);
  };
  // One launch of V's kernel on the search's buffers: its seconds.
  auto launch_once = [&](const codegen::Lowered& v) {
    std::shared_ptr<Compiled>& c = code[v.kernel.str()];
    if (c == nullptr) c = kernels_->trial(v.kernel);
    std::vector<void*> ptrs(v.kernel.buffers.size(), nullptr);
    ptrs[0] = out->data();
    for (std::size_t j = 0; j < inputs.size(); ++j)
      ptrs[static_cast<std::size_t>(v.input_slots[j])] = inputs[j]->data();
    const tl_launch launch{v.parallel_extent.eval({}), v.work_per_iteration.eval({}), v.group, 0};
    return launch_to_end(*backend_, c->handle, ptrs, {}, launch);
  };
  auto time = [&](const codegen::Lowered& v, double best) -> double {
    if (v.inputs != l.inputs) return -1;
    if (auto it = code.find(v.kernel.str()); it != code.end() && it->second == nullptr) return -1;  // no code
    std::memset(out->data(), 0xFF, out->size_bytes());
    double seconds = launch_once(v);  // also a warm-up
    ++stats_.search_candidates;
    if (want == nullptr) {
      want = tensor::allocate_buffer(sk.out->dtype, *out_dims);
      std::memcpy(want->data(), out->data(), out->size_bytes());
    } else if (!agrees(*out, *want)) {
      // A lowering pass that changed what the kernel computes (or a float sum reordered
      // beyond the tolerance): said always, so it gets reported.
      ++stats_.search_disagreed;
      const std::string text = debug >= 1 ? "\n" + v.kernel.str() : "";
      tl::log("tensorlisp: beam: %s with opts %s computes other values than with %s: not a candidate%s\n", name.c_str(),
              codegen::opts_str(v.opts).c_str(), codegen::opts_str(l.opts).c_str(), text.c_str());
      return -1;
    }
    if (best > 0 && seconds > 3 * best) return seconds;  // far behind: one run tells
    // The best of at least 3 runs and 1 ms (a short kernel's time varies from run to run).
    double spent = 0;
    for (int run = 0; run < 3 || (spent < 1e-3 && run < 200); ++run) {
      const double dt = launch_once(v);
      spent += dt;
      seconds = std::min(seconds, dt);
    }
    if (debug >= 2) tl::log("tensorlisp: beam: %s: %.4f ms\n", codegen::opts_str(v.opts).c_str(), seconds * 1e3);
    return seconds;
  };
  auto report = [&](const std::string& line) {
    tl::log("tensorlisp: beam %d: %s %s: %s\n", beam_.width, entry.c_str(), name.c_str(), line.c_str());
  };
  codegen::Opts chosen = l.opts;
  const double t_first = time(l, -1);
  int candidates = 0;
  bool out_of_time = false;
  double first_seconds = t_first, chosen_seconds = t_first;
  // A kernel too quick to tell candidates apart keeps its heuristics' opts.
  // A kernel so slow that the budget would time only a few candidates keeps them too.
  const bool too_slow = t_first * kMinCandidates * 4 > beam_.budget_seconds;
  if (too_slow && t_first >= beam_.min_seconds) {
    char line[160];
    std::snprintf(line, sizeof line, "one run takes %.1f ms: too slow to time %d candidates in the budget (%g s); kept",
                  t_first * 1e3, kMinCandidates, beam_.budget_seconds);
    report(line);
  }
  if (t_first >= beam_.min_seconds && !too_slow) {
    char line[64];
    std::snprintf(line, sizeof line, "searching from %.3f ms", t_first * 1e3);
    report(line);
    // Starts: the heuristics' opts, and unless they make a register tile (whose plain nest runs
    // many times slower: a 2048^3 matmul's for seconds), the plain nest (with the interchange
    // when they have it).
    std::vector<codegen::Opts> starts = {l.opts};
    const bool tiled = std::any_of(l.opts.begin(), l.opts.end(),
                                   [](const codegen::Opt& o) { return o.kind == codegen::Opt::Kind::Upcast; });
    if (!tiled) {
      starts.push_back({});
      if (!l.opts.empty() && l.opts.front().kind == codegen::Opt::Kind::Interchange) starts.push_back({l.opts.front()});
    }
    BeamSearch search(beam_, lower, time, report, poll, prepare, 2 * threads);
    const BeamResult r = search.run(starts);
    candidates = r.candidates;
    out_of_time = r.out_of_time;
    // The finalists and the heuristics' kernel timed again, in turns (this machine's noise
    // affects them alike); a finalist must beat the heuristics by 2% to replace them.
    std::vector<codegen::Lowered> finals = {l};
    for (const codegen::Opts& o : r.finalists) {
      if (o != l.opts) finals.push_back(lower(o));
    }
    std::vector<double> best(finals.size(), -1);
    double spent = 0;
    for (int turn = 0; turn < 5 || (spent < 5e-3 * static_cast<double>(finals.size()) && turn < 200); ++turn) {
      if (poll) poll();
      for (std::size_t i = 0; i < finals.size(); ++i) {
        const double dt = launch_once(finals[i]);
        spent += dt;
        if (best[i] < 0 || dt < best[i]) best[i] = dt;
      }
    }
    first_seconds = chosen_seconds = best[0];
    for (std::size_t i = 1; i < finals.size(); ++i) {
      if (best[i] < 0.98 * best[0] && best[i] < chosen_seconds) {
        chosen_seconds = best[i];
        chosen = finals[i].opts;
      }
    }
  }
  stats_.search_seconds += seconds_since(t0);
  ++stats_.kernels_searched;
  if (chosen != l.opts) l = lower(chosen);
  if (candidates > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "%.3f ms -> %.3f ms (%.2fx), %d kernels timed in %.1f s%s; opts ",
                  first_seconds * 1e3, chosen_seconds * 1e3, first_seconds / std::max(chosen_seconds, 1e-12),
                  candidates, seconds_since(t0), out_of_time ? " (budget spent)" : "");
    report(line + (l.opts.empty() ? std::string("none") : codegen::opts_str(l.opts)));
  }
  if (kernels_->disk().enabled()) kernels_->disk().store(key, codegen::opts_str(l.opts));
}

}  // namespace tl::runtime
