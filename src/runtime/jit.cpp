// SPDX-License-Identifier: Apache-2.0
// Running a graph on a JIT backend.
#include "runtime/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "codegen/lower.h"
#include "codegen/passes/passes.h"
#include "runtime/clock.h"
#include "runtime/reference.h"
#include "runtime/toolchain.h"
#include "schedule/schedule.h"
#include "support/condition_error.h"
#include "support/hash.h"
#include "support/log.h"

namespace tl::runtime {

using tensor::Buffer;
using tensor::Node;

JitDevice::JitDevice(std::shared_ptr<Backend> backend, JitSettings settings, DeviceSpec spec)
    : debug(settings.debug), backend_(std::move(backend)), spec_(std::move(spec)), plans_(settings.plan_cache_size) {
  try {
    std::string target = backend_->info().target;
    if (!settings.cpu.empty() && (target.empty() || target == "host")) target = "host:" + settings.cpu;
    codegen_ = make_codegen(target, settings.toolchain);
  } catch (const std::runtime_error& e) {
    throw ConditionError("device-error", "backend " + backend_->name() + ": " + e.what());
  }
  kernels_ = std::make_unique<KernelCache>(*backend_, *codegen_, std::move(settings.cache_dir), stats_, debug,
                                           settings.kernel_cache_size);
  tuner_ = std::make_unique<Tuner>(*backend_, stats_);
  schedule_options_ = settings.schedule;
  beam_ = settings.beam;
  lowering_ = codegen_->lowering();
  schedule_options_.host = lowering_.target != codegen::Target::Gpu;
  if (!settings.dump_after.empty()) {
    std::string known = "all";
    bool found = settings.dump_after == "all";
    for (const auto& p : codegen::lowering_passes()) {
      known += std::string(", ") + p.name;
      found = found || settings.dump_after == p.name;
    }
    if (!found) {
      throw ConditionError("device-error",
                           "dump after \"" + settings.dump_after + "\": no lowering pass of that name (" + known + ")");
    }
    lowering_.dump_after = settings.dump_after;
  }
  check_spec();
  if (!backend_->host_memory()) {
    memory_ = std::make_shared<DeviceMemory>(backend_);
    device_plan_memory_ = std::make_unique<DevicePlanMemory>(*memory_);
  }
  if (!settings.cross_targets.empty() && !settings.cross_dir.empty()) {
    cross_ = std::make_unique<CrossCompiler>(settings.cross_targets, settings.cross_dir, settings.toolchain);
  }
}

void JitDevice::check_spec() {
  auto fail = [&](const std::string& what) {
    throw ConditionError("device-error", "backend " + backend_->name() + ": its runtime file's " + what);
  };
  for (const auto& [key, v] : spec_.limits) {
    if (v <= 0) fail(":limits :" + key + " must be a positive integer, not " + std::to_string(v));
  }
  auto limit = [&](const char* key, std::int64_t otherwise) {
    auto it = spec_.limits.find(key);
    return it == spec_.limits.end() ? otherwise : it->second;
  };
  const std::int64_t max_threads = limit("max-threads-per-block", 1024);
  const std::int64_t shared = limit("shared-memory-per-block", std::int64_t{1} << 30);
  // A group's combine keeps 8 bytes per thread in shared memory (at most: NVPTX needs less).
  auto group_fits = [&](std::int64_t g) { return g <= max_threads && 8 * g <= shared; };
  for (const auto& [key, values] : spec_.search) {
    if (key != "block" && key != "group" && key != "tile-rows" && key != "tile-cols") {
      fail(":search has an unknown key :" + key + " (known: :block, :group, :tile-rows, :tile-cols)");
    }
    if (values.empty()) fail(":search :" + key + " lists no sizes");
    for (std::int64_t v : values) {
      if (key == "tile-rows" && (v < 1 || v > 16))
        fail(":search :tile-rows " + std::to_string(v) + " is not from 1 to 16");
      if (key == "tile-cols" && (v < 1 || v > 64))
        fail(":search :tile-cols " + std::to_string(v) + " is not from 1 to 64");
      if (key == "block" && (v < 1 || v > max_threads)) {
        fail(":search :block " + std::to_string(v) + " is not a block size from 1 to " + std::to_string(max_threads) +
             " (:limits :max-threads-per-block)");
      }
      if (key != "group" || v == 0) continue;
      if (v < 32 || v > 1024 || (v & (v - 1)) != 0) fail(":search :group " + std::to_string(v) + " is not 0 or a power of two from 32 to 1024");
      if (v > max_threads) fail(":search :group " + std::to_string(v) + " is over :limits :max-threads-per-block " + std::to_string(max_threads));
      if (!group_fits(v)) {
        fail(":search :group " + std::to_string(v) + " needs " + std::to_string(8 * v) +
             " bytes of shared memory, over :limits :shared-memory-per-block " + std::to_string(shared));
      }
    }
  }
  if (lowering_.target != codegen::Target::Gpu) {
    if (!spec_.tune) return;
    auto rows = spec_.search.find("tile-rows"), cols = spec_.search.find("tile-cols");
    if ((rows == spec_.search.end()) != (cols == spec_.search.end()))
      fail(":search has :tile-rows or :tile-cols without the other");
    if (rows != spec_.search.end()) {
      tile_rows_ = rows->second;
      tile_cols_ = cols->second;
    }
    return;
  }
  while (lowering_.group >= 32 && !group_fits(lowering_.group)) lowering_.group /= 2;
  if (lowering_.group < 32) lowering_.group = 0;
  if (!spec_.tune) return;
  if (auto it = spec_.search.find("block"); it != spec_.search.end()) blocks_ = it->second;
  if (auto it = spec_.search.find("group"); it != spec_.search.end()) {
    for (std::int64_t g : it->second) {
      if (g != lowering_.group && std::find(groups_.begin(), groups_.end(), g) == groups_.end()) groups_.push_back(static_cast<int>(g));
    }
  }
}

JitDevice::~JitDevice() = default;

std::shared_ptr<Buffer> JitDevice::realize(const Node* root, const tensor::Bindings& extra) {
  return realize_many({root}, extra)[0];
}

std::vector<std::shared_ptr<Buffer>> JitDevice::realize_many(const std::vector<const Node*>& roots,
                                                             const tensor::Bindings& extra) {
  std::vector<std::shared_ptr<Buffer>> out(roots.size());
  std::vector<const Node*> todo;  // the roots that need computing, each once
  tensor::Bindings b;
  try {
    for (std::size_t i = 0; i < roots.size(); ++i) {
      const Node* root = roots[i];
      if (auto c = root->cached()) {
        out[i] = c;
      } else if (root->op == tensor::Op::Buffer) {
        check_graph(root, collect_bindings(root, extra));
        out[i] = root->buffer;
      } else if (std::find(todo.begin(), todo.end(), root) == todo.end()) {
        // A quantized result that is not its data (a view of blocks) is refused before any
        // kernel is made (the lowering refuses one too, for a view scheduled inside a graph).
        if (tensor::is_quantized(root->dtype)) {
          const Node* d = root;
          while (d->op == tensor::Op::Copy) d = d->src[0].get();
          if (d->op != tensor::Op::Buffer)
            throw ConditionError("dtype-error", tensor::quantized_result_message(root->dtype));
          out[i] = d->buffer;
          continue;
        }
        for (const auto& [k, v] : collect_bindings(root, extra)) b.emplace(k, v);
        todo.push_back(root);
      }
    }
    if (todo.empty()) return out;
    // Intermediates are kept on their nodes only for values computed with the graph's own
    // variable values (a :bind given here may differ next time).
    std::vector<std::shared_ptr<Buffer>> computed = run(todo, b, extra.empty());
    for (std::size_t i = 0; i < roots.size(); ++i) {
      if (out[i]) continue;
      out[i] = computed[static_cast<std::size_t>(std::find(todo.begin(), todo.end(), roots[i]) - todo.begin())];
    }
    return out;
  } catch (const tensor::UnboundDim& e) {
    throw tensor::GraphError("shape-error", unbound_message(e.what()));
  }
}

namespace {

// The graph below root in a fixed post-order (sources first; nodes that hold data are leaves),
// and a text that identifies its structure: ops, dtypes, shapes, op arguments, which nodes are
// inputs, and the wiring. Two graphs with equal texts schedule and lower identically.
std::string structure_key(const std::vector<const Node*>& roots, std::vector<const Node*>& order) {
  std::unordered_map<const Node*, std::size_t> pos;
  std::vector<std::pair<const Node*, std::size_t>> stack;
  std::string key;
  for (const Node* root : roots) {
  if (!pos.count(root)) stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (pos.count(n)) {
      stack.pop_back();
      continue;
    }
    if (!schedule::holds_data(n) && next < n->src.size()) {
      const Node* c = n->src[next++].get();
      if (!pos.count(c)) stack.emplace_back(c, 0);
      continue;
    }
    pos[n] = order.size();
    order.push_back(n);
    key += std::to_string(static_cast<int>(n->op)) + ":" + std::to_string(static_cast<int>(n->dtype)) +
           tensor::shape_str(n->shape);
    if (schedule::holds_data(n)) {
      key += "I;";
    } else {
      for (auto a : n->axes) key.append(",").append(std::to_string(a));
      for (const auto& [lo, hi] : n->ranges) key.append("[").append(lo.str()).append(" ").append(hi.str()).append(")");
      char c[64];
      std::snprintf(c, sizeof c, "k%d v%a i%lld", static_cast<int>(n->reduce_kind), n->fvalue,
                    static_cast<long long>(n->ivalue));
      key.append(c).append(n->name);
      for (const auto& src : n->src) key.append(" ").append(std::to_string(pos.at(src.get())));
      key += ";";
    }
    stack.pop_back();
  }
  }
  key += "|roots";
  for (const Node* root : roots) key.append(" ").append(std::to_string(pos.at(root)));
  return key;
}

}  // namespace

JitDevice::PlanKernel JitDevice::extern_kernel(const Node* n, const std::function<int(const Node*)>& pos) {
  PlanKernel k;
  k.compiled = kernels_->external(n->name);
  k.node = pos(n);
  k.op = n->op;
  k.dtype = n->dtype;
  k.shape = n->shape;
  static_assert(TL_DTYPE_F32 == static_cast<int>(tensor::DType::F32) && TL_DTYPE_F64 == static_cast<int>(tensor::DType::F64) &&
                TL_DTYPE_BOOL == static_cast<int>(tensor::DType::Bool));
  auto describe = [&](tensor::DType t, const tensor::Shape& shape) {
    k.extern_dims.push_back(tensor::Dim(static_cast<std::int64_t>(t)));
    k.extern_dims.push_back(tensor::Dim(static_cast<std::int64_t>(shape.size())));
    for (const auto& d : shape) k.extern_dims.push_back(d);
  };
  describe(n->dtype, n->shape);
  for (std::size_t i = 0; i < n->src.size(); ++i) {
    const Node* d = n->src[i].get();
    while (d->op == tensor::Op::Reshape && !schedule::holds_data(d)) d = d->src[0].get();
    k.inputs.push_back(pos(d));
    k.input_slots.push_back(static_cast<std::int32_t>(i + 1));
    describe(n->src[i]->dtype, n->src[i]->shape);
  }
  k.buffer_count = n->src.size() + 1;
  k.elements = tensor::shape_numel(n->shape);
  return k;
}

void JitDevice::set_schedule_options(const schedule::Options& o) {
  if (o.online_softmax == schedule_options_.online_softmax) return;
  schedule_options_.online_softmax = o.online_softmax;  // (host stays the device's)
  plans_.clear();                                       // their schedules were made with the old options
}

std::size_t JitDevice::kernel_count(const Node* root) {
  if (schedule::holds_data(root)) return 0;
  tensor::NodeRef g(const_cast<Node*>(root));
  if (rewrite) g = rewrite(g, nullptr);
  if (schedule::holds_data(g.get())) return 1;  // a copy
  return schedule::make_schedule(g.get(), schedule_options_).kernels.size();
}

schedule::Schedule JitDevice::rewritten_schedule(const std::vector<const Node*>& roots,
                                                 std::vector<tensor::NodeRef>& graphs) {
  std::vector<const Node*> outputs;
  for (const Node* root : roots) {
    tensor::NodeRef g(const_cast<Node*>(root));
    if (rewrite) g = rewrite(g, nullptr);
    if (schedule::holds_data(g.get())) g = g->graph->make_copy(g);
    outputs.push_back(g.get());
    graphs.push_back(std::move(g));
  }
  return schedule::make_schedule(outputs, schedule_options_);
}

std::string JitDevice::schedule_text(const std::vector<const Node*>& roots) {
  std::vector<tensor::NodeRef> graphs;
  return schedule::schedule_str(rewritten_schedule(roots, graphs));
}

std::string JitDevice::kernels_text(const std::vector<const Node*>& roots, const std::optional<codegen::Opts>& opts) {
  std::vector<tensor::NodeRef> graphs;  // alive while the schedule is used
  const schedule::Schedule s = rewritten_schedule(roots, graphs);
  const std::string lines = schedule::schedule_str(s);
  std::string out;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < s.items.size(); ++i) {
    const std::size_t line_end = lines.find('\n', line_start);
    out += lines.substr(line_start, line_end - line_start + 1);
    line_start = line_end + 1;
    if (s.items[i].kind == schedule::KernelKind::Extern) continue;
    codegen::Lowering how = lowering_;
    how.dump_after.clear();
    if (opts && i + 1 == s.items.size()) how.opts = *opts;
    codegen::Lowered l = codegen::lower(s.items[i], s.materialized, how);
    out += "opts: " + (l.opts.empty() ? std::string("none") : codegen::opts_str(l.opts)) + "\n" + l.kernel.str();
  }
  return out;
}

std::size_t JitDevice::planned_peak_bytes(const std::vector<const Node*>& roots) {
  tensor::Bindings b;
  for (const Node* root : roots) {
    for (const auto& [k, v] : collect_bindings(root, {})) b.emplace(k, v);
  }
  std::vector<const Node*> order;
  std::string key = structure_key(roots, order);
  if (rewrite_key) key += "|rules " + std::to_string(rewrite_key());
  if (beam_.width > 0) key += "|beam " + std::to_string(beam_.width);
  std::shared_ptr<const Plan> plan = plans_.find(key);
  if (plan == nullptr) {
    // Its buffers do not depend on the kernels' opts: no search for a plan not kept.
    const BeamSettings beam = beam_;
    beam_.width = 0;
    try {
      plan = std::make_shared<const Plan>(make_plan(roots, order));
    } catch (...) {
      beam_ = beam;
      throw;
    }
    beam_ = beam;
  }
  return plan->buffers.peak_bytes(b);
}

namespace {

// Whether two lowerings of one kernel take the same buffers at launch (scratch aside).
bool same_launch(const codegen::Lowered& a, const codegen::Lowered& b) {
  auto passed = [](const codegen::Kernel& k) {
    return std::count_if(k.buffers.begin(), k.buffers.end(), [](const auto& x) { return x.local_elems == 0; });
  };
  return a.inputs == b.inputs && a.input_slots == b.input_slots && a.kernel.vars == b.kernel.vars &&
         passed(a.kernel) == passed(b.kernel) && a.group == b.group;
}

}  // namespace

std::size_t JitDevice::tile_variants(const schedule::ScheduledKernel& sk,
                                     const std::unordered_set<const Node*>& materialized, codegen::Lowered& l,
                                     PlanKernel& k) {
  std::size_t buffers = l.kernel.buffers.size();
  const std::vector<codegen::Opts> candidates =
      codegen::tile_candidates(sk, materialized, lowering_, tile_rows_, tile_cols_);
  if (candidates.empty()) return buffers;
  // The choice is kept by the default kernel's code and its iteration count, when constant.
  std::string key;
  if (auto count = l.parallel_extent.as_const()) key = "tuned-opts " + k.compiled->entry + "@" + std::to_string(*count);
  if (!key.empty() && kernels_->disk().enabled()) {
    if (auto stored = kernels_->disk().load(key)) {
      try {
        codegen::Lowering how = lowering_;
        how.opts = codegen::parse_opts(*stored);
        codegen::Lowered v = codegen::lower(sk, materialized, how);
        if (same_launch(v, l)) {
          l = std::move(v);
          k.compiled = compiled(l.kernel);
          ++stats_.kernels_tuned_from_cache;
          return l.kernel.buffers.size();
        }
      } catch (const ConditionError&) {
        // Opts stored for an older lowering of this kernel: tuned again.
      }
    }
  }
  k.variants.push_back({k.compiled, l.group, l.parallel_extent, l.work_per_iteration, codegen::opts_str(l.opts)});
  for (const codegen::Opts& opts : candidates) {
    codegen::Lowering how = lowering_;
    how.opts = opts;
    codegen::Lowered v = codegen::lower(sk, materialized, how);
    if (!same_launch(v, l)) continue;
    std::shared_ptr<Compiled> c = compiled(v.kernel);
    if (std::any_of(k.variants.begin(), k.variants.end(), [&](const auto& x) { return x.compiled == c; })) continue;
    k.variants.push_back({c, v.group, v.parallel_extent, v.work_per_iteration, codegen::opts_str(opts)});
    buffers = std::max(buffers, v.kernel.buffers.size());
  }
  if (k.variants.size() == 1) k.variants.clear();
  else k.tuned_key = key;
  return buffers;
}

JitDevice::Plan JitDevice::make_plan(const std::vector<const Node*>& roots, const std::vector<const Node*>& order) {
  std::unordered_map<const Node*, int> known;
  for (std::size_t i = 0; i < order.size(); ++i) known[order[i]] = static_cast<int>(i);
  std::vector<tensor::NodeRef> graphs;
  std::vector<const Node*> outputs;
  RewriteMap rewritten;  // each node of the graph and what rewriting made of it
  for (const Node* root : roots) {
    tensor::NodeRef graph(const_cast<Node*>(root));
    if (rewrite) graph = rewrite(graph, &rewritten);
    // Rewritten to data (neg (neg x)) -> x: the result is still a new buffer, not x's.
    if (schedule::holds_data(graph.get())) graph = graph->graph->make_copy(graph);
    outputs.push_back(graph.get());
    graphs.push_back(std::move(graph));
  }
  schedule::Schedule s = schedule::make_schedule(outputs, schedule_options_);
  Plan plan;
  // Nodes of the rewritten graph keep their position in the original one; new nodes get
  // positions past it, and new data among them goes into the plan as constants.
  auto pos = [&](const Node* n) {
    auto [it, added] = known.emplace(n, static_cast<int>(known.size()));
    if (added && schedule::holds_data(n)) plan.constants.emplace_back(it->second, n->cached() ? n->cached() : n->buffer);
    return it->second;
  };
  auto lower_kernel = [&](const schedule::ScheduledKernel& sk) {
    const Node* n = sk.out;
    codegen::Lowered l = codegen::lower(sk, s.materialized, lowering_);
    if (beam_.width > 0) search_opts(sk, s.materialized, l);
    PlanKernel k;
    k.compiled = compiled(l.kernel);
    if (!groups_.empty()) {
      // The same kernel with each other group size to try (those that change it).
      k.variants.push_back({k.compiled, l.group, l.parallel_extent, l.work_per_iteration});
      for (int g : groups_) {
        codegen::Lowering how = lowering_;
        how.group = g;
        codegen::Lowered v = codegen::lower(sk, s.materialized, how);
        if (v.inputs != l.inputs || v.input_slots != l.input_slots || v.kernel.buffers.size() != l.kernel.buffers.size() ||
            v.kernel.vars != l.kernel.vars || v.kernel.str() == l.kernel.str()) {
          continue;
        }
        std::shared_ptr<Compiled> c = compiled(v.kernel);
        if (std::none_of(k.variants.begin(), k.variants.end(), [&](const auto& x) { return x.compiled == c; })) {
          k.variants.push_back({c, v.group, v.parallel_extent, v.work_per_iteration});
        }
      }
      if (k.variants.size() == 1) k.variants.clear();
    }
    std::size_t buffers = l.kernel.buffers.size();
    if (!tile_rows_.empty() && beam_.width == 0) buffers = tile_variants(sk, s.materialized, l, k);
    k.node = pos(n);
    k.op = n->op;
    k.dtype = n->dtype;
    k.shape = n->shape;
    if (n->op == tensor::Op::Assign) k.assign_target = pos(n->src[0].get());
    for (const Node* in : l.inputs) k.inputs.push_back(pos(in));
    k.input_slots = l.input_slots;
    k.buffer_count = buffers;
    k.vars = l.kernel.vars;
    k.parallel_extent = l.parallel_extent;
    k.work_per_iteration = l.work_per_iteration;
    k.group = l.group;
    k.elements = l.elements;
    k.ops_per_element = l.ops_per_element;
    k.flops = sk.flops;
    return k;
  };
  std::vector<const Node*> view_assigns;  // by kernel index (null for the others)
  for (const schedule::ScheduledKernel& sk : s.items) {
    const Node* n = sk.out;
    if (sk.kind == schedule::KernelKind::Extern) {
      plan.kernels.push_back(extern_kernel(n, pos));
      view_assigns.push_back(nullptr);
      continue;
    }
    if (poll) poll();  // lowering and compiling thousands of kernels takes a while
    if (cross_) cross_->compile(sk, s.materialized);
    plan.kernels.push_back(lower_kernel(sk));
    view_assigns.push_back(sk.kind == schedule::KernelKind::ViewAssign ? n : nullptr);
  }
  // Where each view assign writes (PlanKernel::write_into): in place unless another kernel
  // reads its target, which must see the data from before the realize's writes. (Two assigns
  // into one buffer in one realize are refused before: Graph::prepare_writes.)
  std::vector<PlanKernel> kernels;
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    PlanKernel& k = plan.kernels[i];
    if (view_assigns[i] != nullptr) {
      bool alone = true;
      for (std::size_t j = 0; j < plan.kernels.size(); ++j) {
        const PlanKernel& o = plan.kernels[j];
        alone = alone && std::find(o.inputs.begin(), o.inputs.end(), k.assign_target) == o.inputs.end() &&
                (j == i || o.assign_target != k.assign_target);
      }
      if (alone) {
        k.write_into = k.assign_target;
      } else {
        tensor::NodeRef target(const_cast<Node*>(view_assigns[i]->src[0].get()));
        tensor::NodeRef copy = target->graph->make_copy(target);
        graphs.push_back(copy);  // alive until the plan is made, so its address stays its own
        kernels.push_back(lower_kernel(schedule::describe(s, copy.get())));
        k.write_into = kernels.back().node;
      }
    }
    kernels.push_back(std::move(k));
  }
  // In-place writes whose results no kernel of the plan reads go last, after every kernel that
  // could fail or be interrupted: a realize stopped early has written nothing.
  auto read_by_another = [&](const PlanKernel& k) {
    return std::any_of(kernels.begin(), kernels.end(), [&](const PlanKernel& o) {
      return std::find(o.inputs.begin(), o.inputs.end(), k.node) != o.inputs.end();
    });
  };
  std::stable_partition(kernels.begin(), kernels.end(), [&](const PlanKernel& k) {
    return !(k.in_place() && !read_by_another(k));
  });
  plan.kernels = std::move(kernels);
  // Kernels of nodes rewriting made: the graph's node whose value each computes.
  std::unordered_map<int, int> origin_of;
  for (const auto& [from, to] : rewritten) {
    auto f = known.find(from);
    auto t = known.find(to);
    if (f != known.end() && t != known.end() && f->second < static_cast<int>(order.size()) &&
        t->second >= static_cast<int>(order.size())) {
      origin_of.emplace(t->second, f->second);
    }
  }
  for (PlanKernel& k : plan.kernels) {
    if (auto o = origin_of.find(k.node); o != origin_of.end()) k.origin = o->second;
  }
  for (const Node* r : s.results) plan.results.push_back(pos(r));
  for (const Node* n : order) {
    if (n->op != tensor::Op::Shrink || schedule::holds_data(n)) continue;
    for (std::size_t i = 0; i < n->ranges.size(); ++i) {
      const auto& [lo, hi] = n->ranges[i];
      const tensor::Dim& size = n->src[0]->shape[i];
      if (!lo.is_const() || !hi.is_const() || !size.is_const()) plan.checks.push_back({lo, hi, size, i});
    }
  }
  std::vector<char> is_leaf(order.size(), 0);
  auto mark = [&](int p) {
    if (p >= 0 && p < static_cast<int>(order.size()) && schedule::holds_data(order[static_cast<std::size_t>(p)]) &&
        !is_leaf[static_cast<std::size_t>(p)]) {
      is_leaf[static_cast<std::size_t>(p)] = 1;
      plan.leaves.push_back(p);
    }
  };
  for (const PlanKernel& k : plan.kernels) {
    for (int in : k.inputs) mark(in);
    mark(k.assign_target);
  }
  for (int r : plan.results) mark(r);
  plan_buffers(plan);
  if (debug >= 1) {
    tl::log("tensorlisp: plan: %zu kernels, %zu buffers\n%s", plan.kernels.size(), plan.buffers.slots.size(),
                 plan.buffers.str(plan.uses).c_str());
  }
  return plan;
}

std::vector<char> JitDevice::keep_mask(const Plan& plan, const std::vector<const Node*>& order,
                                      const std::vector<std::int32_t>& refs, const std::vector<const Node*>& roots) {
  std::vector<char> keep;
  std::unordered_map<const Node*, int> edges;  // references from within this graph
  bool counted = false;
  // With symbolic dimensions: whether each node's value depends on a variable that no node
  // below it binds (a buffer's shape, with-dims). Such a value is this realize's, not the
  // node's: realized with other values the same node is another value, so it is not kept.
  std::unordered_map<const Node*, bool> open;
  auto has_vars = [](const Node* n) {
    for (const auto& d : n->shape) {
      if (!d.is_const()) return true;
    }
    for (const auto& [lo, hi] : n->ranges) {
      if (!lo.is_const() || !hi.is_const()) return true;
    }
    return false;
  };
  if (std::any_of(order.begin(), order.end(), has_vars)) {
    std::unordered_map<const Node*, std::pair<std::set<std::string>, std::set<std::string>>> vars;  // (used, bound)
    for (const Node* n : order) {
      auto& [used, bound] = vars[n];
      std::vector<std::string> own;
      for (const auto& d : n->shape) d.collect_vars(own);
      for (const auto& [lo, hi] : n->ranges) {
        lo.collect_vars(own);
        hi.collect_vars(own);
      }
      used.insert(own.begin(), own.end());
      for (const auto& [k, v] : n->bindings) bound.insert(k);
      if (schedule::holds_data(n)) {
        bound.insert(own.begin(), own.end());  // data: its values are fixed
      } else {
        for (const auto& src : n->src) {
          auto it = vars.find(src.get());
          if (it == vars.end()) continue;
          used.insert(it->second.first.begin(), it->second.first.end());
          bound.insert(it->second.second.begin(), it->second.second.end());
        }
      }
      open[n] = !std::includes(bound.begin(), bound.end(), used.begin(), used.end());
    }
  }
  for (const PlanKernel& k : plan.kernels) {
    // A node rewriting made (past the graph) is kept on the graph's node it stands for;
    // assigns (their value is their target's) are not kept.
    const auto p = static_cast<std::size_t>(k.node < static_cast<int>(order.size()) ? k.node : k.origin);
    if (k.op == tensor::Op::Assign || p >= order.size()) continue;
    const Node* n = order[p];
    if (std::find(roots.begin(), roots.end(), n) != roots.end()) continue;
    if (!counted) {
      for (const Node* m : order) {
        if (schedule::holds_data(m)) continue;
        for (const auto& s : m->src) ++edges[s.get()];
        for (const auto& s : m->custom_inputs) ++edges[s.get()];
      }
      counted = true;
    }
    if (refs[p] > edges[n] && !(open.count(n) && open.at(n))) {
      keep.resize(std::max<std::size_t>(keep.size(), static_cast<std::size_t>(k.node) + 1), 0);
      keep[static_cast<std::size_t>(k.node)] = 1;
    }
  }
  return keep;
}

std::vector<std::shared_ptr<Buffer>> JitDevice::run(const std::vector<const Node*>& roots, const tensor::Bindings& b,
                                                    bool keep_intermediates) {
  for (const Node* root : roots) check_graph(root, b);
  auto t_start = std::chrono::steady_clock::now();
  // The plan for this graph's structure: scheduled, lowered and compiled once.
  std::vector<const Node*> order;
  std::string key = structure_key(roots, order);
  if (rewrite_key) key += "|rules " + std::to_string(rewrite_key());
  if (beam_.width > 0) key += "|beam " + std::to_string(beam_.width);
  // References to each node now, before planning: rewriting's guards wrap nodes in tensors
  // that are garbage after, and must not count as tensors that refer to them (keep_mask).
  std::vector<std::int32_t> refs;
  if (keep_intermediates && !recording) {
    refs.reserve(order.size());
    for (const Node* n : order) refs.push_back(n->refs);
  }
  // Held here while it runs: the cache may drop it (a nested realize, or a later one).
  std::shared_ptr<const Plan> held = plans_.find(key);
  const bool profiled = profiling();
  const double t_realize = profiled ? profiler->now_us() : 0;
  const bool reused = held != nullptr;
  if (reused) {
    ++stats_.plan_hits;
  } else {
    held = plans_.put(std::move(key), std::make_shared<Plan>(make_plan(roots, order)));
    if (profiled) {
      profiler->span("plan", "plan", "host", t_realize,
                     {{"kernels", std::to_string(held->kernels.size())}, {"nodes", std::to_string(order.size())}});
    }
  }
  const Plan& plan = *held;
  std::vector<std::shared_ptr<Buffer>> leaves;
  for (int p : plan.leaves) {
    const Node* n = order[static_cast<std::size_t>(p)];
    leaves.push_back(n->cached() ? n->cached() : n->buffer);
  }
  std::vector<const Node*> leaf_nodes;
  if (recording) {
    for (int p : plan.leaves) leaf_nodes.push_back(order[static_cast<std::size_t>(p)]);
  }
  // Nothing computed is computed twice (issue 20): an intermediate this realize materializes
  // anyway, which a live tensor or another graph still refers to, keeps its buffer on its node,
  // so what is built on it later reads it. (Not while a jit trace records: a replay computes
  // everything again, and must not take a kept buffer for captured data.)
  std::vector<char> keep;
  if (keep_intermediates && !recording) keep = keep_mask(plan, order, refs, roots);
  Kept kept;
  std::vector<std::shared_ptr<Buffer>> results =
      execute(held, std::move(leaves), b, std::move(leaf_nodes), keep.empty() ? nullptr : &keep, &kept);
  std::size_t kept_bytes = 0;
  if (!kept.empty()) {
    std::unordered_map<int, int> origin;  // kernel node -> the graph's node
    for (const PlanKernel& k : plan.kernels) origin[k.node] = k.node < static_cast<int>(order.size()) ? k.node : k.origin;
    for (auto& [p, buf] : kept) {
      // (A buffer that is also a result's, a matmul's sums under the reshape the result is,
      // is counted once, as the result: counted twice, a 256 x 256 product asked for a
      // collection after every realize, half a millisecond each.)
      const bool result = std::find(results.begin(), results.end(), buf) != results.end();
      if (!result) kept_bytes += buf->size_bytes();
      order[static_cast<std::size_t>(origin.at(p))]->set_cached(std::move(buf));
    }
  }
  if (kept_bytes > 0 && on_keep) on_keep(kept_bytes);
  if (profiled) {
    const Node* last = roots.back();
    profiler->span("realize", "realize", "host", t_realize,
                   {{"result", label(last->op, last->dtype, last->shape)},
                    {"kernels", std::to_string(plan.kernels.size())},
                    {"plan", reused ? "reused" : "new"}});
  }
  if (debug >= 1) {
    tl::log("tensorlisp: realize: %zu kernels, %.3f ms total", plan.kernels.size(), seconds_since(t_start) * 1e3);
    if (!kept.empty()) tl::log("; kept %zu intermediates (%.2f MB) that live tensors refer to", kept.size(), kept_bytes / 1e6);
    tl::log("\n");
  }
  return results;
}

bool JitDevice::needs_tuning(const PlanKernel& k) const {
  return !k.variants.empty() || (k.group == 0 && blocks_.size() > 1 && k.extern_dims.empty());
}

std::string JitDevice::tune_key(const PlanKernel& k, const tensor::Bindings& b) const {
  return k.compiled->entry + "@" + std::to_string(k.parallel_extent.eval(b));
}

JitDevice::Chosen JitDevice::chosen(const PlanKernel& k, const tensor::Bindings& b) const {
  if (!k.variants.empty()) {
    if (const Tuner::Choice* t = tuner_->find(tune_key(k, b))) {
      const PlanKernel::Variant& v = k.variants[t->variant];
      return {v.compiled, v.parallel_extent.eval(b)};
    }
  }
  return {k.compiled, k.parallel_extent.eval(b)};
}

double JitDevice::launch(const PlanKernel& k, const std::vector<void*>& ptrs, std::int64_t count, const tensor::Bindings& b,
                         bool timed) {
  // A kernel writing its target in place runs to its end: Ctrl-C must not leave half a write.
  struct HoldCancel {
    Backend& backend;
    bool on;
    HoldCancel(Backend& be, bool hold) : backend(be), on(hold) {
      if (on) backend.hold_cancel = true;
    }
    ~HoldCancel() {
      if (on) backend.hold_cancel = false;
    }
  } hold(*backend_, k.in_place());
  std::vector<std::int64_t> vars;
  for (const auto& name : k.vars) vars.push_back(b.at(name));
  for (const auto& d : k.extern_dims) vars.push_back(d.eval(b));
  void* handle = k.compiled->handle;
  tl_launch launch{k.parallel_extent.eval(b), k.work_per_iteration.eval(b), k.group, 0};
  if (count > 0 && needs_tuning(k)) {
    const Tuner::Choice& t = tune(k, ptrs, vars, b);
    if (!k.variants.empty()) {
      const PlanKernel::Variant& v = k.variants[t.variant];
      handle = v.compiled->handle;
      launch = tl_launch{v.parallel_extent.eval(b), v.work_per_iteration.eval(b), v.group, 0};
    }
    launch.block = t.block;
  }
  ++stats_.kernels_run;
  if (count <= 0) return 0;
  // Launches on a device with its own memory are asynchronous: time each to its end.
  if (timed && memory_) return launch_to_end(*backend_, handle, ptrs, vars, launch);
  auto t0 = std::chrono::steady_clock::now();
  backend_->launch(handle, ptrs, vars, launch);
  return seconds_since(t0);
}


const Tuner::Choice& JitDevice::tune(const PlanKernel& k, const std::vector<void*>& ptrs,
                                     const std::vector<std::int64_t>& vars, const tensor::Bindings& b) {
  const std::string key = tune_key(k, b);
  if (const Tuner::Choice* c = tuner_->find(key)) return *c;
  // The candidates: each variant, and on a GPU each block size for a variant without groups.
  const bool by_opts = !k.tuned_key.empty() || std::any_of(k.variants.begin(), k.variants.end(),
                                                           [](const auto& v) { return !v.opts.empty(); });
  std::vector<Tuner::Candidate> candidates;
  const std::size_t n = std::max<std::size_t>(k.variants.size(), 1);
  for (std::size_t v = 0; v < n; ++v) {
    const PlanKernel::Variant var = k.variants.empty() ? PlanKernel::Variant{k.compiled, k.group, k.parallel_extent,
                                                                             k.work_per_iteration}
                                                       : k.variants[v];
    tl_launch l{var.parallel_extent.eval(b), var.work_per_iteration.eval(b), var.group, 0};
    auto what = [&](std::int64_t block) {
      if (by_opts) return "opts " + (var.opts.empty() ? std::string("none") : var.opts);
      return var.group > 0 ? "group " + std::to_string(var.group)
                           : block > 0 ? "block " + std::to_string(block) : std::string("default");
    };
    if (var.group > 0 || blocks_.empty()) {
      candidates.push_back({v, 0, var.compiled->handle, l, what(0)});
      continue;
    }
    for (std::int64_t block : blocks_) {
      l.block = block;
      candidates.push_back({v, block, var.compiled->handle, l, what(block)});
    }
  }
  const std::string name =
      debug >= 1 ? k.compiled->entry + " (" + std::to_string(k.parallel_extent.eval(b)) + " iterations)" : "";
  const double t_tune = profiling() ? profiler->now_us() : 0;
  const Tuner::Choice& choice = tuner_->choose(key, candidates, ptrs, vars, name);
  // A choice among lists of opts is kept on disk: the next process compiles only it.
  if (!k.tuned_key.empty() && kernels_->disk().enabled()) {
    kernels_->disk().store(k.tuned_key, k.variants[choice.variant].opts);
  }
  if (profiling()) {
    profiler->span(k.compiled->entry, "tune", "host", t_tune, {{"candidates", std::to_string(candidates.size())}});
  }
  return choice;
}

std::shared_ptr<KernelCache::Compiled> JitDevice::compiled(const codegen::Kernel& k) {
  if (!profiling()) return kernels_->get(k);
  const double t = profiler->now_us();
  const std::uint64_t compiled_before = stats_.kernels_compiled, loaded_before = stats_.disk_hits;
  std::shared_ptr<Compiled> c = kernels_->get(k);
  if (stats_.kernels_compiled != compiled_before || stats_.disk_hits != loaded_before) {
    profiler->span(c->entry, stats_.kernels_compiled != compiled_before ? "compile" : "load", "host", t);
  }
  return c;
}

}  // namespace tl::runtime
