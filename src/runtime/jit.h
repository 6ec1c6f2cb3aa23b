// SPDX-License-Identifier: Apache-2.0
// The JIT device: schedules a graph into kernels, lowers them to loop IR, compiles them
// through LLVM for the backend's target (cached by kernel text), and runs them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "codegen/llvm_emit.h"
#include "runtime/backend.h"
#include "runtime/beam.h"
#include "runtime/buffer_plan.h"
#include "runtime/cross_compiler.h"
#include "runtime/device_memory.h"
#include "runtime/jit_stats.h"
#include "runtime/kernel_cache.h"
#include "runtime/plan_cache.h"
#include "runtime/plan_memory.h"
#include "runtime/profiler.h"
#include "runtime/toolchain.h"
#include "runtime/tuner.h"
#include "schedule/schedule.h"
#include "tensor/graph.h"

namespace tl::runtime {

// What a backend's runtime file says of its device (defbackend :limits and :search), and
// whether to tune. The JIT reads the limits :max-threads-per-block and
// :shared-memory-per-block (others are for the reader), and the search keys :block (threads
// per block for kernels without thread groups, chosen at launch) and :group (threads per
// group for a reduce split across threads, 0 for not splitting; each is a kernel of its own).
// When tuning, the first run of each GPU kernel (per size) times every candidate and keeps
// the fastest; otherwise kernels get the first :block and :group. On the CPU the search keys
// are :tile-rows and :tile-cols, the register tiles tried on matmul-like kernels (lists of
// opts, codegen/opts.h); the one chosen is kept in the disk cache, so the next process
// compiles only that one.
struct DeviceSpec {
  std::map<std::string, std::int64_t> limits;
  std::map<std::string, std::vector<std::int64_t>> search;
  bool tune = false;
};

// How a JIT device works, as the host chose (TENSORLISP_CACHE_DIR and friends, parsed by the
// API layer: api/devices.cpp).
struct JitSettings {
  std::string cache_dir;  // where compiled kernels are kept across processes ("": no disk cache)
  int debug = 0;          // JitDevice::debug to start with
  // Other targets every kernel is also compiled for, into cross_dir/<target>/ (NAME.ptx,
  // NAME.hsaco, or NAME.error saying why not): checks code generation for devices this machine
  // lacks (tests/run_cross_check.cmake).
  std::vector<std::string> cross_targets;
  std::string cross_dir;
  ToolchainSettings toolchain;  // where libdevice and ld.lld are looked for (CUDA_HOME, PATH, ...)
  // Print each kernel's loop IR after the lowering passes of this name, or "all"
  // (codegen::Lowering::dump_after; tlisp --dump-after=PASS).
  std::string dump_after = {};
  // How many plans (a graph structure's schedule, lowered and compiled) the device keeps, the
  // most recently used (TENSORLISP_PLAN_CACHE; (jit-plan-cache N) changes it).
  std::size_t plan_cache_size = 1024;
  // How many compiled kernels the device keeps besides those its plans run, the most recently
  // used (TENSORLISP_KERNEL_CACHE; (jit-kernel-cache N) changes it).
  std::size_t kernel_cache_size = 4096;
  // The LLVM CPU a host-target backend compiles for instead of this machine's ("x86-64-v3";
  // TENSORLISP_CPU): another machine's kernels and rounding, reproduced here.
  std::string cpu = {};
  // How the scheduler fuses (TENSORLISP_ONLINE_SOFTMAX; (jit-online-softmax MODE) changes it).
  schedule::Options schedule = {};
  // Beam search over each new kernel's opts (TENSORLISP_BEAM, TENSORLISP_BEAM_BUDGET;
  // (jit-beam N) and (with-beam N ...) change it): JitDevice::set_beam.
  BeamSettings beam = {};
};

class JitDevice {
 public:
  struct Plan;  // a graph's schedule, lowered and compiled (defined below)

  // One run of a plan, as (jit f) records it while tracing: the plan (the recording keeps it
  // alive after the device's plan cache drops it), the buffers its leaves held (with their
  // nodes, valid only while the trace runs), the variable values, and the result. Replaying
  // it runs the same kernels on other leaf buffers.
  struct Recorded {
    std::shared_ptr<const Plan> plan;
    std::vector<const tensor::Node*> leaf_nodes;
    std::vector<std::shared_ptr<tensor::Buffer>> leaves;
    tensor::Bindings bindings;
    std::vector<std::shared_ptr<tensor::Buffer>> results;
  };

  // `settings`: what the host chose (the API layer reads them from the environment; the
  // device reads none). `spec`: the runtime file's limits and search space (checked here: a
  // device-error says what is wrong with them).
  explicit JitDevice(std::shared_ptr<Backend> backend, JitSettings settings = {}, DeviceSpec spec = {});
  ~JitDevice();
  JitDevice(const JitDevice&) = delete;
  JitDevice& operator=(const JitDevice&) = delete;

  // Computes `root` into a new contiguous host buffer. Errors (an unbound variable, a bad
  // symbolic shrink) are ConditionErrors, as from the reference executor.
  std::shared_ptr<tensor::Buffer> realize(const tensor::Node* root, const tensor::Bindings& extra);
  // Computes several roots in one plan, so work they share runs once.
  std::vector<std::shared_ptr<tensor::Buffer>> realize_many(const std::vector<const tensor::Node*>& roots,
                                                            const tensor::Bindings& extra);

  const Backend& backend() const { return *backend_; }
  // The device's own memory (a GPU's), or null when its kernels use host memory.
  DeviceMemory* device_memory() const { return memory_.get(); }
  const JitStats& stats() const { return stats_; }
  const DeviceSpec& spec() const { return spec_; }
  // Whether kernels are GPU kernels (a GPU's target, or the simulator's).
  bool gpu() const { return lowering_.target == codegen::Target::Gpu; }
  // 0: quiet; 1: kernel count and times per realize; 2: also the loop IR; 3: also LLVM IR.
  // Starts from JitSettings::debug (TENSORLISP_DEBUG).
  int debug = 0;
  // Rewrites a graph before it is scheduled (the optimizer rules), and a number that changes
  // when the rules do, so plans made under other rules are not reused. Rewrites must depend
  // on a graph's structure only (ops, shapes, dtypes, constants), never on data.
  // `rewritten` (when given) receives each node of the graph and what it became.
  using RewriteMap = std::unordered_map<const tensor::Node*, const tensor::Node*>;
  std::function<tensor::NodeRef(const tensor::NodeRef&, RewriteMap* rewritten)> rewrite;
  // Called before each kernel launch; it may throw to stop the realize there (Ctrl-C: the
  // host's interrupt, so a long run of kernels returns to the prompt between two of them).
  std::function<void()> poll;
  std::function<std::uint64_t()> rewrite_key;
  // How many kernels realizing `root` runs (after rewriting).
  std::size_t kernel_count(const tensor::Node* root);
  // The schedule of realizing `roots` together (after rewriting), as text
  // (schedule::schedule_str).
  std::string schedule_text(const std::vector<const tensor::Node*>& roots);
  // Each kernel of that schedule as lowering makes it: its schedule line, the opts applied and
  // its loop IR. `opts`, when given, replaces the opts chosen for the last kernel (the one
  // computing the last root); an opt that does not apply is an optimizer-error.
  std::string kernels_text(const std::vector<const tensor::Node*>& roots, const std::optional<codegen::Opts>& opts);
  // The most bytes the computed buffers of realizing `roots` together would hold at once, by
  // their buffer plan (what stats().peak_bytes reports after the run), without running it: the
  // cached plan for the graph's structure, or one made as a realize would make it (not cached).
  std::size_t planned_peak_bytes(const std::vector<const tensor::Node*>& roots);

  // While set, every plan run is appended here (see Recorded). A run that fails is taken out
  // again and sets recording_failed (the trace cannot replay what its function saw).
  std::vector<Recorded>* recording = nullptr;
  bool recording_failed = false;
  // Where realizes, plans, compiles, tunings and kernel runs are recorded while it is on (the
  // host's: one per interpreter, shared by the devices it makes); null: nowhere.
  std::shared_ptr<Profiler> profiler;

  // Runs a plan on leaf buffers (in the order of Recorded::leaves): a fresh buffer per root,
  // or the target's buffer for an assign. `leaf_nodes` go into the recording, if one is on.
  // With `keep` (a flag per position), the buffers of those kernels' nodes go into `kept`
  // instead of being freed after their last reader.
  using Kept = std::vector<std::pair<int, std::shared_ptr<tensor::Buffer>>>;
  std::vector<std::shared_ptr<tensor::Buffer>> execute(const std::shared_ptr<const Plan>& plan,
                                                       std::vector<std::shared_ptr<tensor::Buffer>> leaves,
                                                       const tensor::Bindings& b,
                                                       std::vector<const tensor::Node*> leaf_nodes = {},
                                                       const std::vector<char>* keep = nullptr, Kept* kept = nullptr);
  // Called with each buffer a plan is about to write in place (an assign's target, or the
  // buffer a view assign updates), before it is written; null: not called. tlisp compile
  // keeps the data a traced function started from (runtime/aot.h).
  std::function<void(tensor::Buffer&)> before_write;
  // Told the bytes of intermediates a realize kept on their nodes (see realize_many), for the
  // host's memory accounting.
  std::function<void(std::size_t)> on_keep;

 private:
  std::shared_ptr<Backend> backend_;
  std::unique_ptr<codegen::Codegen> codegen_;  // for the backend's target
  DeviceSpec spec_;
  codegen::Lowering lowering_;                  // codegen_'s, within the device's limits
  std::vector<std::int64_t> blocks_;            // :block candidates (none: the backend's own)
  std::vector<int> groups_;                     // :group candidates past the first (when tuning)
  // :tile-rows and :tile-cols (when tuning on the CPU): register tile sizes tried on each
  // matmul-like kernel, each a list of opts (codegen::tile_candidates).
  std::vector<std::int64_t> tile_rows_, tile_cols_;
  std::shared_ptr<DeviceMemory> memory_;        // for a backend with its own memory
  // Where execute keeps a plan's buffers: host memory, or memory_ when there is one.
  HostPlanMemory host_plan_memory_;
  std::unique_ptr<DevicePlanMemory> device_plan_memory_;
  // Other targets every kernel is also compiled for (JitSettings::cross_targets), or null.
  std::unique_ptr<CrossCompiler> cross_;
  using Compiled = KernelCache::Compiled;
  std::unique_ptr<KernelCache> kernels_;  // made once the code generator is

 public:
  // A graph's schedule, lowered and compiled: kernels referring to nodes by their position in
  // the graph's post-order, so any graph of the same structure can run it. Only the device
  // looks inside; a recording holds plans by shared pointer (and plans hold the compiled
  // kernels they run).
  struct PlanKernel {
    std::shared_ptr<Compiled> compiled;
    int node = 0;                          // the node the kernel computes
    tensor::Op op{};                       // its op, dtype and shape
    tensor::DType dtype{};
    tensor::Shape shape;
    int assign_target = -1;                // for an assign: the node whose buffer it writes
    // An assign through a view (Graph::make_assign_view) stores only the view's elements, in
    // place, into this node's buffer: its target's when nothing else in the plan reads or
    // writes the target, else a copy of the target made by the kernel before it (which then
    // becomes the target's data once all kernels have run, as a whole assign's value does).
    int write_into = -1;
    bool in_place() const { return write_into >= 0 && write_into == assign_target; }
    // A view assign writing into a copy of its target, made by the kernel before it.
    bool into_copy() const { return write_into >= 0 && write_into != assign_target; }
    // The node of the graph whose value this kernel computes when a rewrite made the kernel's
    // own node (it is past the graph): where a kept buffer goes (see keep_mask). -1: none.
    int origin = -1;
    std::vector<int> inputs;               // the nodes it reads
    std::vector<std::int32_t> input_slots; // their buffer slots
    std::size_t buffer_count = 0;
    std::vector<std::string> vars;
    std::vector<tensor::Dim> extern_dims;  // an external kernel's vars: rank and sizes per buffer
    tensor::Dim parallel_extent = 1, work_per_iteration = 1, elements = 1;
    int ops_per_element = 0;
    tensor::Dim flops = 0;  // the schedule's count (schedule::ScheduledKernel::flops), for reports
    int group = 0;  // GPU: threads per iteration (tl_launch::group)
    // When tuning: the kernel lowered with each :group candidate (the first is the one above),
    // the same computation with other thread groups.
    struct Variant {
      std::shared_ptr<Compiled> compiled;
      int group = 0;
      tensor::Dim parallel_extent = 1, work_per_iteration = 1;
      std::string opts = {};  // the opts it was lowered with (codegen::opts_str), for reports
    };
    // Where the tuner's choice among variants made of opts is kept on disk (empty: nowhere).
    std::string tuned_key;
    std::vector<Variant> variants;
  };
  struct Plan {
    std::vector<int> leaves;  // the nodes holding data that the kernels read or assign to
    // Data that rewriting brought in (not in the graph): positions past the graph's nodes.
    std::vector<std::pair<int, std::shared_ptr<tensor::Buffer>>> constants;
    std::vector<PlanKernel> kernels;
    std::vector<int> results;  // one per root
    // Ranges of the graph's shrinks that depend on symbolic dimensions: [lo, hi) must lie in
    // [0, size) for the values a run binds (checked by execute before any kernel runs, so a
    // replay with a new position cannot read or write out of bounds).
    struct RangeCheck {
      tensor::Dim lo, hi, size;
      std::size_t axis = 0;
    };
    std::vector<RangeCheck> checks;
    // When each computed buffer is last read and which outputs share storage (made once, with
    // the plan; buffer_plan.h).
    std::vector<BufferUse> uses;
    BufferPlan buffers;
  };

  // The code kernel K runs with bindings B: its own, or the variant the tuner chose for this
  // size (when it has chosen), with that code's iteration count.
  struct Chosen {
    std::shared_ptr<Compiled> compiled;
    std::int64_t count = 0;
  };
  Chosen chosen(const PlanKernel& k, const tensor::Bindings& b) const;

  // Counters kept by the users of execute (jit captures).
  JitStats& mutable_stats() { return stats_; }
  // The plans kept, the most recently used (JitSettings::plan_cache_size).
  LruCache<Plan>& plans() { return plans_; }
  // The compiled kernels kept besides those plans hold (JitSettings::kernel_cache_size).
  LruCache<KernelCache::Compiled>& kernels() { return kernels_->kept(); }
  const LruCache<Plan>& plans() const { return plans_; }
  // The beam search over each new CPU kernel's opts (runtime/beam.h), width 0 for none. With a
  // width, each elementwise or reduce kernel of constant sizes in a new plan is searched (its
  // candidates timed on buffers of its sizes, random floats and zero integers, each checked
  // against the heuristics' kernel), or its earlier search's result taken from the disk
  // cache; plans made with another width are kept apart.
  const BeamSettings& beam() const { return beam_; }
  void set_beam(const BeamSettings& b) { beam_ = b; }
  // How the scheduler fuses; setting other options drops the plans made with the old ones.
  const schedule::Options& schedule_options() const { return schedule_options_; }
  void set_schedule_options(const schedule::Options& o);

 private:
  LruCache<Plan> plans_;  // by graph structure
  schedule::Options schedule_options_;
  BeamSettings beam_;
  bool beam_gpu_said_ = false;  // that a beam width does not search this device's kernels
  // With a beam width: replaces L, kernel SK's lowering, by the one a beam search finds (or an
  // earlier search kept on disk), when SK can be searched.
  void search_opts(const schedule::ScheduledKernel& sk, const std::unordered_set<const tensor::Node*>& materialized,
                   codegen::Lowered& l);
  JitStats stats_;
  std::unique_ptr<Tuner> tuner_;  // chosen variants and launch shapes, by kernel entry and iteration count
  // The tuner's choice for kernel k at this size (timing its candidates on the first run).
  const Tuner::Choice& tune(const PlanKernel& k, const std::vector<void*>& ptrs, const std::vector<std::int64_t>& vars,
                            const tensor::Bindings& b);
  void check_spec();
  // Kernel k from the kernel cache (recorded as a compile or a load when profiling).
  std::shared_ptr<Compiled> compiled(const codegen::Kernel& k);
  bool profiling() const { return profiler != nullptr && profiler->on(); }
  Plan make_plan(const std::vector<const tensor::Node*>& roots, const std::vector<const tensor::Node*>& order);
  // The schedule of `roots` after the optimizer rules; `graphs` keeps the rewritten graphs
  // alive as long as the schedule is used.
  schedule::Schedule rewritten_schedule(const std::vector<const tensor::Node*>& roots,
                                        std::vector<tensor::NodeRef>& graphs);
  // When tuning tiles: K's variants, one per register tile that fits (L is the default
  // lowering), or L replaced by the choice the disk cache keeps for it; the most buffers a
  // variant takes at launch.
  std::size_t tile_variants(const schedule::ScheduledKernel& sk,
                            const std::unordered_set<const tensor::Node*>& materialized, codegen::Lowered& l,
                            PlanKernel& k);
  PlanKernel extern_kernel(const tensor::Node* n, const std::function<int(const tensor::Node*)>& pos);
  std::vector<std::shared_ptr<tensor::Buffer>> run(const std::vector<const tensor::Node*>& roots,
                                                   const tensor::Bindings& b, bool keep_intermediates);
  // The kernels of PLAN whose nodes (ORDER's) a tensor or graph outside this realize refers
  // to: a flag per position, or empty when there are none.
  // REFS: each node's reference count (Node::refs) before the plan was made.
  static std::vector<char> keep_mask(const Plan& plan, const std::vector<const tensor::Node*>& order,
                                     const std::vector<std::int32_t>& refs,
                                     const std::vector<const tensor::Node*>& roots);
  // Runs kernel k (count output elements) on device pointers ptrs, with the launch shape
  // tuning chose for it (tuning it first if it has not been); the seconds it took, on a
  // device with its own memory only when `timed` (its launches are asynchronous).
  double launch(const PlanKernel& k, const std::vector<void*>& ptrs, std::int64_t count, const tensor::Bindings& b,
                bool timed);
  bool needs_tuning(const PlanKernel& k) const;
  std::string tune_key(const PlanKernel& k, const tensor::Bindings& b) const;
  // The buffer plan of a plan's kernels (Plan::uses and Plan::buffers).
  static void plan_buffers(Plan& plan);
  // Records the run's peak bytes (stats) and, when debugging, prints them with its time.
  void report_run(const Plan& plan, const tensor::Bindings& b, double seconds);
  // "op dtype (shape)", how reports name a kernel or a result.
  static std::string label(tensor::Op op, tensor::DType dtype, const tensor::Shape& shape);
  // Logs a kernel run (debug) and records it (profiling); START_US: when it started, on the
  // profiler's clock.
  void report_kernel(std::size_t i, const Plan& plan, const PlanKernel& k, double seconds, double bytes,
                     const tensor::Bindings& b, double start_us) const;
};

}  // namespace tl::runtime
