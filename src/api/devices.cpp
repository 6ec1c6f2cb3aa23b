// SPDX-License-Identifier: Apache-2.0
// Devices from Lisp: switching the realize function between the reference executor and a
// JIT backend, and what the JIT reports. The Lisp side (defbackend, use-backend) is in
// stdlib/tensor/95-devices.lisp.
#include "api/devices.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "bindings/tensor_value.h"
#include "codegen/opts.h"
#include "eval/builtins.h"
#include "rewrite/rewrite.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "schedule/schedule.h"
#include "support/condition_error.h"
#include "support/log.h"
#include "support/search_path.h"

namespace tl::api {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

// The JIT's settings from the environment: the one place the runtime's variables are read.
//   TENSORLISP_CACHE=0                 no disk cache of compiled kernels
//   TENSORLISP_CACHE_DIR               the cache's folder (else $XDG_CACHE_HOME/tensorlisp, else
//                                      ~/.cache/tensorlisp)
//   TENSORLISP_DEBUG=N                 jit-debug's level to start with
//   TENSORLISP_PLAN_CACHE=N            how many plans the device keeps (1024; jit-plan-cache)
//   TENSORLISP_KERNEL_CACHE=N          how many compiled kernels it keeps besides its plans'
//                                      (4096; jit-kernel-cache)
//   TENSORLISP_DUMP_AFTER=PASS         print each kernel's loop IR after lowering pass PASS, or
//                                      after every pass for "all" (tlisp --dump-after=PASS)
//   TENSORLISP_CROSS_TARGETS=T1,T2 and TENSORLISP_CROSS_DIR   also compile every kernel for T1, T2
//   TENSORLISP_CPU=x86-64-v3           compile CPU kernels for this LLVM CPU, not this machine's
//   TENSORLISP_ONLINE_SOFTMAX=MODE     auto, always or never: where the scheduler fuses attention's
//                                      softmax and product (jit-online-softmax)
//   TENSORLISP_BEAM=N                  beam search over each new CPU kernel's opts, N kept per
//                                      round (jit-beam, with-beam; runtime/beam.h)
//   TENSORLISP_BEAM_BUDGET=S           the most seconds one kernel's search takes (30)
//   CUDA_HOME, CUDA_PATH               CUDA toolkits to look for libdevice in, before the usual places
//   TENSORLISP_LD_LLD                  an ld.lld to link AMDGPU code objects with (else lld's library,
//                                      or without it an ld.lld found on PATH)
// An online-softmax mode by name (auto, always, never), or none.
std::optional<schedule::Options::Online> online_mode(const std::string& name) {
  if (name == "auto") return schedule::Options::Online::Auto;
  if (name == "always") return schedule::Options::Online::Always;
  if (name == "never") return schedule::Options::Online::Never;
  return std::nullopt;
}

const char* online_mode_name(schedule::Options::Online m) {
  switch (m) {
    case schedule::Options::Online::Auto: return "auto";
    case schedule::Options::Online::Always: return "always";
    case schedule::Options::Online::Never: return "never";
  }
  return "auto";
}

runtime::JitSettings jit_settings_from_environment() {
  runtime::JitSettings s;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  // `text` split at `sep`, without empty pieces.
  auto split = [](const std::string& text, char sep) {
    std::vector<std::string> pieces;
    for (std::size_t i = 0; i <= text.size();) {
      std::size_t j = text.find(sep, i);
      if (j == std::string::npos) j = text.size();
      if (j > i) pieces.push_back(text.substr(i, j - i));
      i = j + 1;
    }
    return pieces;
  };
  if (env("TENSORLISP_CACHE") != "0") {
    if (!env("TENSORLISP_CACHE_DIR").empty()) s.cache_dir = env("TENSORLISP_CACHE_DIR");
    else if (!env("XDG_CACHE_HOME").empty()) s.cache_dir = env("XDG_CACHE_HOME") + "/tensorlisp";
    else if (!env("HOME").empty()) s.cache_dir = env("HOME") + "/.cache/tensorlisp";
  }
  if (!env("TENSORLISP_DEBUG").empty()) s.debug = std::atoi(env("TENSORLISP_DEBUG").c_str());
  auto cache_size = [&](const char* name, std::size_t& size) {  // a positive count, else unchanged
    const long long n = std::atoll(env(name).c_str());
    if (n >= 1) size = static_cast<std::size_t>(n);
  };
  cache_size("TENSORLISP_PLAN_CACHE", s.plan_cache_size);
  cache_size("TENSORLISP_KERNEL_CACHE", s.kernel_cache_size);
  s.dump_after = env("TENSORLISP_DUMP_AFTER");
  s.cpu = env("TENSORLISP_CPU");
  if (const std::string mode = env("TENSORLISP_ONLINE_SOFTMAX"); !mode.empty()) {
    const auto m = online_mode(mode);
    if (!m) throw std::runtime_error("TENSORLISP_ONLINE_SOFTMAX=" + mode + ": expected auto, always or never");
    s.schedule.online_softmax = *m;
  }
  if (const std::string beam = env("TENSORLISP_BEAM"); !beam.empty()) {
    char* end = nullptr;
    const long width = std::strtol(beam.c_str(), &end, 10);
    if (*end != '\0' || width < 0 || width > 64) {
      throw std::runtime_error("TENSORLISP_BEAM=" + beam + ": expected a beam width from 0 (no search) to 64");
    }
    s.beam.width = static_cast<int>(width);
  }
  if (const std::string budget = env("TENSORLISP_BEAM_BUDGET"); !budget.empty()) {
    char* end = nullptr;
    const double seconds = std::strtod(budget.c_str(), &end);
    if (*end != '\0' || !(seconds > 0)) {
      throw std::runtime_error("TENSORLISP_BEAM_BUDGET=" + budget + ": expected a positive number of seconds");
    }
    s.beam.budget_seconds = seconds;
  }
  s.cross_targets = split(env("TENSORLISP_CROSS_TARGETS"), ',');
  s.cross_dir = env("TENSORLISP_CROSS_DIR");
  s.toolchain.cuda_dirs = {env("CUDA_HOME"), env("CUDA_PATH")};
  s.toolchain.ld_lld = env("TENSORLISP_LD_LLD");
  s.toolchain.search_path = split(env("PATH"), ':');
  return s;
}

struct DeviceState : Interp::Extension {
  std::shared_ptr<runtime::JitDevice> jit;
  // profile-start and profile-stop's: every JIT device this interpreter makes records into it.
  std::shared_ptr<runtime::Profiler> profiler = std::make_shared<runtime::Profiler>();
  double profile_started_us = 0;
  int profile_depth = 0;  // profile-starts not yet stopped: profiles nest, the outermost records
  // How JIT devices made from now on schedule (jit-online-softmax); none: as the environment says.
  std::optional<schedule::Options> schedule;
  // Their beam search (jit-beam); none: as the environment says.
  std::optional<runtime::BeamSettings> beam;
};

DeviceState& state(Interp& in) {
  for (const auto& ext : in.extensions) {
    if (auto* s = dynamic_cast<DeviceState*>(ext.get())) return *s;
  }
  auto s = std::make_shared<DeviceState>();
  in.extensions.push_back(s);
  return *s;
}

// The nodes of tensor X, or of a list of tensors, that hold no data yet; a type-error from FN
// for anything else.
std::vector<const tensor::Node*> unrealized_roots(Interp& in, const char* fn, Value x) {
  std::vector<const tensor::Node*> roots;
  for (Value p = x; !p.is_nil(); p = eval::is_cons(p) ? eval::cdr(p) : eval::nil()) {
    Value t = eval::is_cons(p) ? eval::car(p) : p;
    if (!tensor::is_tensor(t)) in.type_error(fn, 1, "a tensor or a list of tensors", x);
    const tensor::Node* n = tensor::as_tensor(t)->node.get();
    if (!schedule::holds_data(n)) roots.push_back(n);
    if (!eval::is_cons(p)) break;
  }
  return roots;
}

// The schedule options JIT devices get (jit-online-softmax, else the environment's): what
// kernel-count and schedule->text show on the reference device, which has no scheduler.
schedule::Options chosen_schedule(Interp& in) {
  return state(in).schedule.value_or(jit_settings_from_environment().schedule);
}

runtime::JitDevice& jit_of(Interp& in, const char* fn) {
  DeviceState& s = state(in);
  if (!s.jit) in.error("device-error", std::string(fn) + ": the current device (ref) is not a JIT backend");
  return *s.jit;
}

// (jit-plan-cache [N]) and (jit-kernel-cache [N]): CACHE's capacity, set to N (at least 1)
// when given.
template <class V>
Value cache_capacity(Interp& in, const char* fn, Args a, N n, runtime::LruCache<V>& cache) {
  if (n == 1) {
    const std::int64_t size = eval::arg_int(in, fn, a, 0);
    if (size < 1) in.error("type-error", std::string(fn) + ": N must be at least 1, got " + std::to_string(size));
    cache.set_capacity(static_cast<std::size_t>(size));
  }
  return Value::integer(static_cast<std::int64_t>(cache.capacity()));
}

}  // namespace

std::shared_ptr<runtime::JitDevice> current_jit(Interp& in) { return state(in).jit; }

void use_device(Interp& in, const std::string& name, const std::string& library, const std::string& options,
                runtime::DeviceSpec spec) {
  tensor::TensorRuntime& rt = tensor::runtime(in);
  DeviceState& s = state(in);
  rt.schedule_options = [ip = &in] {
    DeviceState& st = state(*ip);
    return st.jit ? st.jit->schedule_options() : chosen_schedule(*ip);
  };
  if (name == "ref") {
    rt.realize = [](const tensor::Node* n, const tensor::Bindings& extra) { return runtime::realize_reference(n, extra); };
    rt.realize_many = [](const std::vector<const tensor::Node*>& ns, const tensor::Bindings& extra) {
      return runtime::realize_reference_many(ns, extra);
    };
    rt.device = "ref";
    rt.device_kind = "host";
    s.jit.reset();
    return;
  }
  auto backend = runtime::Backend::load(name, library, options);
  Interp* ip = &in;
  // Ctrl-C inside one long kernel: a backend that can stops it between two chunks of its
  // iterations, and the realize raises the interrupt there (the output is dropped).
  backend->set_cancel([ip] { return ip->interrupt_requested.load(std::memory_order_relaxed); },
                      [ip] { ip->raise_interrupt(); });
  auto jit = std::make_shared<runtime::JitDevice>(std::move(backend), jit_settings_from_environment(), std::move(spec));
  runtime::JitDevice* device = jit.get();
  if (s.schedule) jit->set_schedule_options(*s.schedule);
  if (s.beam) jit->set_beam(*s.beam);
  jit->profiler = s.profiler;
  // Buffers a realize keeps on intermediate nodes live until those nodes die, which the
  // collector decides: they count toward its next collection, as realized tensors do.
  jit->on_keep = [ip](std::size_t bytes) { ip->heap.account_external(bytes); };
  jit->poll = [ip] {
    if (ip->interrupt_requested.load(std::memory_order_relaxed)) ip->raise_interrupt();
  };
  const std::string kind = jit->gpu() ? "gpu" : "host";
  jit->rewrite = [ip, name, kind, device](const tensor::NodeRef& root, runtime::JitDevice::RewriteMap* rewritten) {
    if (device->debug < 1) return rewrite::optimizers(*ip).run(*ip, root, name, kind, nullptr, rewritten);
    // At debug level 1 and up, say which rules fired.
    std::vector<rewrite::Firing> log;
    tensor::NodeRef r = rewrite::optimizers(*ip).run(*ip, root, name, kind, &log, rewritten);
    if (!log.empty()) {
      std::map<std::string, int> count;
      for (const auto& f : log) ++count[f.rule];
      std::string text;
      for (const auto& [rule, n] : count) text += (text.empty() ? "" : ", ") + rule + (n > 1 ? " x" + std::to_string(n) : "");
      tl::log("tensorlisp: optimizers: %zu rewrites (%s)\n", log.size(), text.c_str());
    }
    return r;
  };
  jit->rewrite_key = [ip] { return rewrite::optimizers(*ip).generation(); };
  rt.realize = [jit](const tensor::Node* n, const tensor::Bindings& extra) { return jit->realize(n, extra); };
  rt.realize_many = [jit](const std::vector<const tensor::Node*>& ns, const tensor::Bindings& extra) {
    return jit->realize_many(ns, extra);
  };
  rt.device = name;
  rt.device_kind = kind;
  s.jit = std::move(jit);
}

void register_device_builtins(Interp& in) {
  TL_BUILTIN(in, "%use-backend", 3, 6, "(%use-backend NAME LIBRARY OPTIONS [LIMITS SEARCH TUNE])",
             "Makes backend NAME, loaded from LIBRARY with OPTIONS, the device that realizes tensors "
             "(\"ref\" selects the reference executor); LIMITS and SEARCH are its runtime file's property "
             "lists, TUNE whether to tune kernels over SEARCH. Use use-backend instead.",
             [](Interp& in, Args a, N n) -> Value {
               const char* fn = "use-backend";
               const std::string file = std::string(fn) + ": backend " + eval::arg_string(in, fn, a, 0)->text + "'s runtime file";
               runtime::DeviceSpec spec;
               // (:key integer ...) and (:key (integer ...) ...)
               auto plist = [&](Value list, const char* what, auto&& put) {
                 for (Value p = list; !p.is_nil(); p = eval::cdr(eval::cdr(p))) {
                   Value k = eval::car(p), v = eval::car(eval::cdr(p));
                   if (!eval::is_cons(p) || !eval::is_symbol(k) || !eval::as_symbol(k)->is_keyword() || !eval::is_cons(eval::cdr(p))) {
                     in.error("type-error", file + ": " + what + " must be a property list (:key value ...), not " + in.repr(list));
                   }
                   put(eval::as_symbol(k)->name, v);
                 }
               };
               if (n > 3) {
                 plist(a[3], ":limits", [&](const std::string& key, Value v) {
                   if (!v.is_int()) in.error("type-error", file + ": :limits :" + key + " must be an integer, not " + in.repr(v));
                   spec.limits[key] = v.i;
                 });
               }
               if (n > 4) {
                 plist(a[4], ":search", [&](const std::string& key, Value v) {
                   std::vector<std::int64_t>& sizes = spec.search[key];
                   bool ok = eval::is_cons(v);
                   Value p = v;
                   for (; ok && eval::is_cons(p); p = eval::cdr(p)) {
                     ok = eval::car(p).is_int();
                     if (ok) sizes.push_back(eval::car(p).i);
                   }
                   if (!ok || !p.is_nil()) {
                     in.error("type-error", file + ": :search :" + key + " must be a list of integers, not " + in.repr(v));
                   }
                 });
               }
               spec.tune = n > 5 && !a[5].is_nil();
               use_device(in, eval::arg_string(in, fn, a, 0)->text, eval::arg_string(in, fn, a, 1)->text,
                          eval::arg_string(in, fn, a, 2)->text, std::move(spec));
               return in.sym(eval::arg_string(in, fn, a, 0)->text);
             });
  TL_BUILTIN(in, "device", 0, 0, "(device)",
             "The name of the device that realizes tensors: cpu, ref, ..."
             "\n  (device)  ; => cpu",
             [](Interp& in, Args, N) -> Value { return in.sym(tensor::runtime(in).device); });
  TL_BUILTIN(in, "device-info", 0, 0, "(device-info)",
             "A description of the current device: its name, memory and compute units."
             "\n  (subseq (device-info) 0 4)  ; => \"cpu:\"",
             [](Interp& in, Args, N) -> Value {
               DeviceState& s = state(in);
               if (!s.jit) return in.make_string("ref: the reference executor (plain C++ loops, one op at a time)");
               const tl_device_info& i = s.jit->backend().info();
               return in.make_string(s.jit->backend().name() + ": " + i.name + ", " +
                                     std::to_string(i.memory_bytes >> 20) + " MiB, " + std::to_string(i.compute_units) +
                                     " compute units");
             });
  TL_BUILTIN(in, "jit-stats", 0, 0, "(jit-stats)",
             "Counters of the JIT device as a plist: :realizes :kernels-run :kernels-compiled :cache-hits "
             ":disk-hits :plan-hits (realizes that reused a schedule) :plans (the plans kept now, see "
             "jit-plan-cache) :plans-dropped (plans the cache let go) :kernels (compiled kernels the cache keeps, "
             "see jit-kernel-cache) :kernels-dropped (kernels it let go; their code is released once no plan "
             "runs them) :traces and :replays (of jit functions) "
             ":kernels-tuned :kernels-tuned-from-cache (kernels whose tile an earlier process chose) "
             ":kernels-searched :kernels-searched-from-cache :search-candidates :search-disagreed (beam searches: "
             "kernels searched, taken from an earlier search, candidates timed, and those that computed other "
             "values than the heuristics' kernel and were dropped; see jit-beam) "
             ":compile-seconds :run-seconds (how long kernels ran; on a GPU, the device's own time "
             "from the first launch of a realize to the end of the last, without the copies to and from it) "
             ":tune-seconds (spent timing launch shapes, see use-backend) :search-seconds (in beam searches) "
             ":peak-bytes (the most bytes the "
             "last realize's computed buffers held at once, by its buffer plan)."
             "\n  (let ((before (getf (jit-stats) :realizes)))"
             "\n    (realize (+ (tensor '(1 2)) 1))"
             "\n    (- (getf (jit-stats) :realizes) before))  ; => 1",
             [](Interp& in, Args, N) -> Value {
               runtime::JitDevice& jit = jit_of(in, "jit-stats");
               const runtime::JitStats& st = jit.stats();
               Interp::StackMark mark(in);
               Value* base = in.sp;
               auto put = [&](const char* k, Value v) {
                 in.push(Value::object(in.keyword(k)));
                 in.push(v);
               };
               put("realizes", Value::integer(static_cast<std::int64_t>(st.realizes)));
               put("kernels-run", Value::integer(static_cast<std::int64_t>(st.kernels_run)));
               put("kernels-compiled", Value::integer(static_cast<std::int64_t>(st.kernels_compiled)));
               put("cache-hits", Value::integer(static_cast<std::int64_t>(st.cache_hits)));
               put("disk-hits", Value::integer(static_cast<std::int64_t>(st.disk_hits)));
               put("plan-hits", Value::integer(static_cast<std::int64_t>(st.plan_hits)));
               put("plans", Value::integer(static_cast<std::int64_t>(jit.plans().size())));
               put("plans-dropped", Value::integer(static_cast<std::int64_t>(jit.plans().dropped())));
               put("kernels", Value::integer(static_cast<std::int64_t>(jit.kernels().size())));
               put("kernels-dropped", Value::integer(static_cast<std::int64_t>(jit.kernels().dropped())));
               put("traces", Value::integer(static_cast<std::int64_t>(st.traces)));
               put("replays", Value::integer(static_cast<std::int64_t>(st.replays)));
               put("kernels-tuned", Value::integer(static_cast<std::int64_t>(st.kernels_tuned)));
               put("kernels-tuned-from-cache", Value::integer(static_cast<std::int64_t>(st.kernels_tuned_from_cache)));
               put("kernels-searched", Value::integer(static_cast<std::int64_t>(st.kernels_searched)));
               put("kernels-searched-from-cache",
                   Value::integer(static_cast<std::int64_t>(st.kernels_searched_from_cache)));
               put("search-candidates", Value::integer(static_cast<std::int64_t>(st.search_candidates)));
               put("search-disagreed", Value::integer(static_cast<std::int64_t>(st.search_disagreed)));
               put("compile-seconds", Value::real(st.compile_seconds));
               put("run-seconds", Value::real(st.run_seconds));
               put("tune-seconds", Value::real(st.tune_seconds));
               put("search-seconds", Value::real(st.search_seconds));
               put("peak-bytes", Value::integer(static_cast<std::int64_t>(st.peak_bytes)));
               return in.list_from(base, static_cast<std::size_t>(in.sp - base));
             });
  TL_BUILTIN(in, "%to-device", 1, 1, "(%to-device X)",
             "Realizes tensor X and copies its data into the current device's own memory (a GPU's), "
             "where kernels read it from then on. Use to-device.",
             [](Interp& in, Args a, N) -> Value {
               tensor::TensorObj* t = tensor::tensor_arg(in, "to-device", a, 0);
               const tensor::Buffer& b = tensor::realize(in, t);
               DeviceState& s = state(in);
               if (s.jit && s.jit->device_memory()) {
                 try {
                   s.jit->device_memory()->upload(b);
                 } catch (const ConditionError& e) {
                   in.error(e.type, std::string("to-device: ") + e.what());
                 }
               }
               return a[0];
             });
  TL_BUILTIN(in, "device-memory", 0, 0, "(device-memory)",
             "The current device's own memory as a plist: :in-use bytes held by tensors' device copies "
             "and kernel outputs, :cached bytes kept for reuse, and the copies so far: :uploads and "
             ":upload-bytes to the device, :downloads and :download-bytes from it (results stay on the "
             "device until the host reads them); nil for a device on host memory."
             "\n  (device-memory)  ; => nil",
             [](Interp& in, Args, N) -> Value {
               DeviceState& s = state(in);
               if (!s.jit || !s.jit->device_memory()) return eval::nil();
               Interp::StackMark mark(in);
               Value* base = in.sp;
               in.push(Value::object(in.keyword("in-use")));
               in.push(Value::integer(static_cast<std::int64_t>(s.jit->device_memory()->in_use_bytes())));
               in.push(Value::object(in.keyword("cached")));
               in.push(Value::integer(static_cast<std::int64_t>(s.jit->device_memory()->cached_bytes())));
               const runtime::DeviceMemory::Traffic& t = s.jit->device_memory()->traffic();
               for (auto [key, v] : {std::pair{"uploads", t.uploads}, {"upload-bytes", t.upload_bytes},
                                     {"downloads", t.downloads}, {"download-bytes", t.download_bytes}}) {
                 in.push(Value::object(in.keyword(key)));
                 in.push(Value::integer(static_cast<std::int64_t>(v)));
               }
               return in.list_from(base, 12);
             });
  TL_BUILTIN(in, "jit-debug", 0, 1, "(jit-debug [LEVEL])",
             "The JIT's debug level, set to LEVEL when given: 0 quiet, 1 kernels and times per realize, "
             "2 also loop IR, 3 also LLVM IR (printed to stderr)."
             "\n  (jit-debug)  ; => 0",
             [](Interp& in, Args a, N n) -> Value {
               runtime::JitDevice& jit = jit_of(in, "jit-debug");
               if (n == 1) jit.debug = static_cast<int>(eval::arg_int(in, "jit-debug", a, 0));
               return Value::integer(jit.debug);
             });
  TL_BUILTIN(in, "profile-start", 0, 0, "(profile-start)",
             "Starts profiling (dropping an earlier profile): from now on the JIT device records each realize, "
             "each new plan (scheduling, lowering, compiling), each kernel compiled or loaded from the disk "
             "cache, each tuning and every kernel run (timed to its end, also on GPUs), until profile-stop. "
             "Inside a running profile it starts nothing: profiles nest, and the outermost one records "
             "(its profile-stop stops). See with-profile."
             "\n  (progn (profile-start) (realize (+ (tensor '(1 2)) 1)) (subseq (profile-stop) 0 8))"
             "  ; => \"profile:\"",
             [](Interp& in, Args, N) -> Value {
               DeviceState& s = state(in);
               if (s.profile_depth++ == 0) {
                 s.profiler->start();
                 s.profile_started_us = s.profiler->now_us();
               }
               return in.boolean(true);
             });
  TL_BUILTIN(in, "profile-stop", 0, 1, "(profile-stop [TRACE-FILE])",
             "Stops profiling and returns its summary as text: time per stage (realize, plan, compile, load, "
             "tune, kernel) and the kernels that took longest, with calls, ms, GFLOP/s and GB/s. With "
             "TRACE-FILE, also writes every event there as a Chrome trace (JSON; open it in Perfetto or "
             "chrome://tracing), the host and each device on a track of their own. Inside an enclosing "
             "profile it stops nothing: the summary and trace are the enclosing profile's so far."
             "\n  (progn (profile-start) (realize (+ (tensor '(1 2)) 1)) (stringp (profile-stop)))  ; => t"
             "\n  (progn (profile-start)"
             "\n         (realize (+ (tensor '(1 2)) 1))"
             "\n         (profile-stop \"/tmp/tl-doc-profile-stop.json\")"
             "\n         (probe-file \"/tmp/tl-doc-profile-stop.json\"))  ; => t",
             [](Interp& in, Args a, N n) -> Value {
               DeviceState& s = state(in);
               runtime::Profiler& p = *s.profiler;
               if (s.profile_depth == 0) {
                 in.error("program-error", "profile-stop: no profile is running (profile-start starts one)");
               }
               if (--s.profile_depth == 0) {
                 p.span("profile", "lisp", "host", s.profile_started_us);
                 p.stop();
               }
               if (n == 1 && !a[0].is_nil()) {
                 const std::string path = eval::arg_string(in, "profile-stop", a, 0)->text;
                 std::FILE* f = std::fopen(path.c_str(), "wb");
                 if (f == nullptr) {
                   in.error("file-error",
                            "profile-stop: cannot write the trace to " + path + ": " + std::strerror(errno));
                 }
                 const std::string json = p.trace_json();
                 const bool written = std::fwrite(json.data(), 1, json.size(), f) == json.size();
                 if (std::fclose(f) != 0 || !written) {
                   in.error("file-error", "profile-stop: could not write all of the trace to " + path);
                 }
               }
               return in.make_string(p.summary());
             });
  TL_BUILTIN(in, "profilingp", 0, 0, "(profilingp)",
             "True while a profile is running (profile-start)."
             "\n  (progn (profile-start) (prog1 (profilingp) (profile-stop)))  ; => t"
             "\n  (profilingp)  ; => nil",
             [](Interp& in, Args, N) -> Value { return in.boolean(state(in).profile_depth > 0); });
  TL_BUILTIN(in, "jit-plan-cache", 0, 1, "(jit-plan-cache [N])",
             "How many plans (a graph structure's schedule, lowered and compiled) the JIT device keeps, the "
             "most recently used; set to N (at least 1) when given. A program whose shapes keep changing "
             "holds at most that many; a dropped plan is made again when its structure comes back (its "
             "kernels stay compiled). Starts at 1024, or TENSORLISP_PLAN_CACHE."
             "\n  (let ((old (jit-plan-cache))) (prog1 (jit-plan-cache 16) (jit-plan-cache old)))  ; => 16",
             [](Interp& in, Args a, N n) -> Value {
               return cache_capacity(in, "jit-plan-cache", a, n, jit_of(in, "jit-plan-cache").plans());
             });
  TL_BUILTIN(in, "jit-kernel-cache", 0, 1, "(jit-kernel-cache [N])",
             "How many compiled kernels the JIT device keeps, the most recently used, besides those its "
             "kept plans run; set to N (at least 1) when given. A kernel let go is released (its code "
             "freed) once no plan runs it, and compiled again, or loaded from the disk cache, when it "
             "comes back. Starts at 4096, or TENSORLISP_KERNEL_CACHE."
             "\n  (let ((old (jit-kernel-cache))) (prog1 (jit-kernel-cache 64) (jit-kernel-cache old)))  ; => 64",
             [](Interp& in, Args a, N n) -> Value {
               return cache_capacity(in, "jit-kernel-cache", a, n, jit_of(in, "jit-kernel-cache").kernels());
             });
  TL_BUILTIN(in, "jit-online-softmax", 0, 1, "(jit-online-softmax [MODE])",
             "Where the scheduler computes a softmax's weighted sum (attention: softmax(Q K^T) V) as one "
             "online-softmax kernel, which keeps a running max and sum per row and never stores the weights or "
             "the scores: :auto (where each row of values is read by few rows of weights, a decode step's), "
             ":always (wherever the graph allows) or :never (three kernels: scores, softmax, product). Returns "
             "the mode; sets it to MODE when given (for every JIT device made from then on too). Starts at "
             ":auto, or TENSORLISP_ONLINE_SOFTMAX."
             "\n  (let ((old (jit-online-softmax))) (prog1 (jit-online-softmax :always) (jit-online-softmax old)))"
             "  ; => :always",
             [](Interp& in, Args a, N n) -> Value {
               DeviceState& s = state(in);
               schedule::Options o =
                   s.jit ? s.jit->schedule_options() : s.schedule.value_or(jit_settings_from_environment().schedule);
               if (n == 1) {
                 const bool kw = eval::is_symbol(a[0]) && eval::as_symbol(a[0])->is_keyword();
                 auto m = kw ? online_mode(eval::as_symbol(a[0])->name) : std::nullopt;
                 if (!m) in.type_error("jit-online-softmax", 1, ":auto, :always or :never", a[0]);
                 o.online_softmax = *m;
                 s.schedule = o;
                 if (s.jit) s.jit->set_schedule_options(o);
               }
               return Value::object(in.keyword(online_mode_name(o.online_softmax)));
             });
  TL_BUILTIN(in, "jit-beam", 0, 3, "(jit-beam [WIDTH [BUDGET [SHORTEST]]])",
             "The beam search's width: 0 (the start, unless TENSORLISP_BEAM says otherwise) when kernels "
             "get the opts the heuristics choose; N when the CPU JIT searches the opts of each new elementwise or "
             "reduce kernel, keeping the N fastest lists per round, each candidate timed on buffers of the "
             "kernel's sizes (random floats, zero integers) and checked against the heuristics' kernel. A "
             "search takes at most BUDGET seconds per kernel (30, or TENSORLISP_BEAM_BUDGET), prints a line per "
             "round, and its result goes into the disk cache: a later process with the same width takes it "
             "without searching. Kernels faster than SHORTEST seconds (2e-5) keep the heuristics' opts; 0 "
             "searches every kernel. Sets the width (and budget and shortest) when given, for every JIT device "
             "made from then on too; returns the width. GPU kernels are not searched (their launch shapes are "
             "tuned: use-backend's :tune). See with-beam."
             "\n  (let ((old (jit-beam))) (prog1 (jit-beam 2) (jit-beam old)))  ; => 2",
             [](Interp& in, Args a, N n) -> Value {
               DeviceState& s = state(in);
               runtime::BeamSettings b = s.jit ? s.jit->beam() : s.beam.value_or(jit_settings_from_environment().beam);
               if (n >= 1) {
                 const std::int64_t width = eval::arg_int(in, "jit-beam", a, 0);
                 if (width < 0 || width > 64) in.type_error("jit-beam", 1, "a beam width from 0 to 64", a[0]);
                 b.width = static_cast<int>(width);
               }
               if (n >= 2) {
                 const double seconds = eval::arg_number(in, "jit-beam", a, 1);
                 if (!(seconds > 0)) in.type_error("jit-beam", 2, "a positive number of seconds", a[1]);
                 b.budget_seconds = seconds;
               }
               if (n == 3) {
                 const double seconds = eval::arg_number(in, "jit-beam", a, 2);
                 if (!(seconds >= 0)) in.type_error("jit-beam", 3, "a non-negative number of seconds", a[2]);
                 b.min_seconds = seconds;
               }
               if (n >= 1) {
                 s.beam = b;
                 if (s.jit) s.jit->set_beam(b);
               }
               return Value::integer(b.width);
             });
  TL_BUILTIN(in, "kernel-count", 1, 1, "(kernel-count X)",
             "How many kernels realizing tensor X would run on a JIT device (0 when X is realized): what "
             "the optimizer rules and the scheduler made of it."
             "\n  (kernel-count (+ (tensor '(1 2)) 1))  ; => 1"
             "\n  (kernel-count (sum (* (tensor '(1.0 2.0)) 2.0)))  ; => 1"
             "\n  (kernel-count (tensor '(1 2)))  ; => 0",
             [](Interp& in, Args a, N) -> Value {
               if (!tensor::is_tensor(a[0])) in.type_error("kernel-count", 1, "a tensor", a[0]);
               const tensor::Node* n = tensor::as_tensor(a[0])->node.get();
               if (schedule::holds_data(n)) return Value::integer(0);
               if (DeviceState& s = state(in); s.jit)
                 return Value::integer(static_cast<std::int64_t>(s.jit->kernel_count(n)));
               return Value::integer(
                   static_cast<std::int64_t>(schedule::make_schedule(n, chosen_schedule(in)).kernels.size()));
             });
  TL_BUILTIN(in, "schedule->text", 1, 1, "(schedule->text X)",
             "The kernels realizing tensor X (or a list of tensors, together) would run on a JIT device, as "
             "text: one line per kernel with its kind, the node it computes, how many ops it runs, the reduces "
             "fused into it, what it reads (inputs and earlier kernels) and its cost estimate. What the optimizer "
             "rules and the "
             "scheduler made of X, before lowering; \"\" when everything is realized."
             "\n  (schedule->text (+ (tensor '(1 2)) 1))"
             "  ; => \"kernel 0 (elementwise): add i32 (2), 1 op, reads input 0; about 2 flops, 16 bytes\\n\""
             "\n  (schedule->text (tensor '(1 2)))  ; => \"\"",
             [](Interp& in, Args a, N) -> Value {
               const std::vector<const tensor::Node*> roots = unrealized_roots(in, "schedule->text", a[0]);
               if (roots.empty()) return in.make_string("");
               if (DeviceState& s = state(in); s.jit) return in.make_string(s.jit->schedule_text(roots));
               return in.make_string(schedule::schedule_str(schedule::make_schedule(roots, chosen_schedule(in))));
             });
  TL_BUILTIN(in, "kernels->text", 1, 3, "(kernels->text X &key opts)",
             "The kernels realizing tensor X (or a list of tensors, together) as the JIT lowers them, as text: "
             "each kernel's schedule line, the opts applied to it (codegen/opts.h: split, swap, pack, upcast, "
             "partial, interchange) and its loop IR. :opts, a list such as '((split 0 4) (upcast 5)) or its text, "
             "replaces "
             "the opts chosen for the last kernel (nil: none, the plain nest); loops are named by the ids of "
             "the plain nest (opts: none) and of the loops earlier opts made. \"\" when everything is realized."
             "\n  (second (string-split (kernels->text (+ (tensor '(1 2)) 1)) (string #\\Newline)))"
             "  ; => \"opts: none\""
             "\n  (kernels->text (tensor '(1 2)))  ; => \"\"",
             [](Interp& in, Args a, N n) -> Value {
               std::optional<codegen::Opts> opts;
               if (n == 3) {
                 const bool key = eval::is_symbol(a[1]) && eval::as_symbol(a[1])->is_keyword();
                 if (!key || eval::as_symbol(a[1])->name != "opts") {
                   in.error("program-error",
                            "kernels->text: unknown keyword argument " + in.repr(a[1]) + " (expected :opts)");
                 }
                 opts = a[2].is_nil() ? codegen::Opts{}
                        : codegen::parse_opts(eval::is_string(a[2]) ? eval::as_string(a[2])->text : in.repr(a[2]));
               } else if (n == 2) {
                 in.error("program-error", "kernels->text: keyword arguments come in pairs");
               }
               const std::vector<const tensor::Node*> roots = unrealized_roots(in, "kernels->text", a[0]);
               if (roots.empty()) return in.make_string("");
               return in.make_string(jit_of(in, "kernels->text").kernels_text(roots, opts));
             });
  TL_BUILTIN(in, "plan-peak-bytes", 1, 1, "(plan-peak-bytes X)",
             "The most bytes the computed buffers of a realize of tensor X (or of a list of tensors, "
             "together) would hold at once on this JIT device, by its buffer plan: what (jit-stats) reports "
             "as :peak-bytes after running it, found without running it (the kernels are compiled). 0 when "
             "everything is realized."
             "\n  (plan-peak-bytes (+ (tensor '(1.0 2.0)) 1.0))  ; => 8"
             "\n  (plan-peak-bytes (tensor '(1 2)))  ; => 0",
             [](Interp& in, Args a, N) -> Value {
               const std::vector<const tensor::Node*> roots = unrealized_roots(in, "plan-peak-bytes", a[0]);
               if (roots.empty()) return Value::integer(0);
               return Value::integer(
                   static_cast<std::int64_t>(jit_of(in, "plan-peak-bytes").planned_peak_bytes(roots)));
             });
  TL_BUILTIN(in, "%find-backend-file", 1, 1, "(%find-backend-file NAME)",
             "The path of backend NAME's runtime file NAME.lisp, or nil: searched in TENSORLISP_PATH "
             "folders (as NAME.lisp or NAME/NAME.lisp), then the installed and source backends folders.",
             [](Interp& in, Args a, N) -> Value {
               const std::string name = eval::arg_string(in, "%find-backend-file", a, 0)->text;
               std::vector<std::string> dirs = tensorlisp_path();
               dirs.push_back(std::string(TL_INSTALL_DATA_DIR) + "/backends");
               dirs.push_back(TL_SOURCE_BACKENDS_DIR);
               std::error_code ec;
               for (const auto& d : dirs) {
                 for (const auto& f : {d + "/" + name + ".lisp", d + "/" + name + "/" + name + ".lisp"}) {
                   if (std::filesystem::is_regular_file(f, ec)) return in.make_string(f);
                 }
               }
               return eval::nil();
             });
}

}  // namespace tl::api
