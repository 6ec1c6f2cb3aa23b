// SPDX-License-Identifier: Apache-2.0
// (jit f), the Lisp side: a function of tensors traced once per signature, then replayed as
// the list of compiled plans it ran (runtime/capture.h keeps and replays them).
//
// Tracing calls f with the JIT device recording every plan it runs. Tensor arguments go in
// on fresh graph nodes, so they are told apart from other tensors that share their data; the
// random keys drawn and the guards (%guard) checked are logged too. The signature (a key) is
// the tensor arguments' dtypes and shapes, and the other arguments' values; a new one traces
// again. (Arguments that share a buffer need nothing more: each has its own node.) What a
// replay cannot reproduce makes that signature run uncaptured, calling f every time: reading
// tensor data into Lisp (item, aref, print, save) or reseeding the generator during the trace.
// Lisp side effects of f other than tensor work (printing text, setq) happen only while it
// is traced.
#include <cstdio>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "api/devices.h"
#include "api/trace.h"
#include "bindings/tensor_value.h"
#include "eval/builtins.h"
#include "runtime/jit.h"
#include "support/log.h"

namespace tl::api {

using eval::Interp;
using eval::Value;
using runtime::JitDevice;
using tensor::Buffer;
using tensor::Node;
using tensor::TensorObj;
using Args = Value*;
using N = std::uint32_t;

namespace {

using Slot = runtime::Capture::Slot;

using Output = Traced::Output;

struct Trace {
  // The device it was traced on, kept alive: a trace's key holds the device's address, which a
  // later device must not take over.
  std::shared_ptr<JitDevice> device;
  std::shared_ptr<runtime::Capture> capture;  // the plans and where their leaves come from (none: uncaptured)
  bool uncaptured = false;
  std::vector<Output> outputs;
  Value result;  // f's result with each tensor replaced by the capture's marker
  std::uint64_t draws = 0;
  std::vector<Traced::Guard> guards;  // checks f made (%guard), evaluated again after each replay
};

struct CaptureObj : eval::Foreign {
  Value fn;
  Value marker;  // a cons of its own, standing for an output tensor in a result template
  std::unordered_map<std::string, Trace> traces;
  std::deque<std::string> trace_order;  // oldest first, for the bound on traces
  std::vector<Value> pinned;  // arguments keyed by identity, kept so their address stays theirs
  bool warned = false;
  const char* type_name() const override { return "jit-function"; }
  void print(std::string& out) const override { out += "#<jit-function>"; }
  void trace(const std::function<void(Value)>& visit) override {
    visit(fn);
    visit(marker);
    for (const auto& [k, t] : traces) visit(t.result);
    for (Value v : pinned) visit(v);
  }
};

constexpr std::size_t kMaxTraces = 64;

// The tensors of a call's arguments (searched through lists), with the original values.
struct CallTensors {
  std::vector<Value> values;
  std::vector<TensorObj*> tensors;
  tensor::Bindings dims;                   // the values of (dim NAME VALUE) arguments
  std::vector<tensor::BoundDim*> dim_args;
};

void key_of(Interp& in, CaptureObj& cap, Value v, std::string& key, CallTensors& ct) {
  for (;;) {
    if (tensor::is_tensor(v)) {
      TensorObj* t = tensor::as_tensor(v);
      tensor::realize(in, t);
      const Node* n = t->node.get();
      key.append(t->complex ? "C" : "T").append(tensor::dtype_name(n->dtype)).append(tensor::shape_str(n->shape));
      for (const auto& [name, value] : n->bindings) key.append(name).append("=").append(std::to_string(value)).append(",");
      ct.values.push_back(v);
      ct.tensors.push_back(t);
      return;
    }
    if (eval::is_cons(v)) {
      key += "(";
      key_of(in, cap, eval::car(v), key, ct);
      key += " ";
      v = eval::cdr(v);
      continue;
    }
    if (tensor::BoundDim* d = tensor::as_bound_dim(v)) {
      // A symbolic dimension counts by name: the trace's kernels are symbolic in it, and a
      // replay binds it to this call's value.
      key.append("D").append(d->name).append(";");
      auto [it, added] = ct.dims.emplace(d->name, d->value);
      if (!added && it->second != d->value) {
        in.error("shape-error", "jit: the arguments give dimension " + d->name + " two values, " + std::to_string(it->second) +
                                    " and " + std::to_string(d->value));
      }
      ct.dim_args.push_back(d);
      return;
    }
    char buf[48];
    if (v.is_nil() || v.is_int() || eval::is_symbol(v) || eval::is_string(v)) {
      key += in.repr(v);
    } else if (v.is_float()) {
      std::snprintf(buf, sizeof buf, "%a", v.f);
      key += buf;
    } else {
      // Any other object counts by identity.
      std::snprintf(buf, sizeof buf, "@%p", static_cast<void*>(v.o));
      key += buf;
      bool known = false;
      for (Value p : cap.pinned) known = known || p.same(v);
      if (!known) cap.pinned.push_back(v);
    }
    key += ";";
    return;
  }
}

// `v` with each tensor replaced by the next of `fresh` (tensors in key_of's order).
Value substitute(Interp& in, Value v, const std::vector<Value>& fresh, std::size_t& next) {
  if (tensor::is_tensor(v)) return fresh[next++];
  if (!eval::is_cons(v)) return v;
  Value a = substitute(in, eval::car(v), fresh, next);
  Value d = substitute(in, eval::cdr(v), fresh, next);
  return in.cons(a, d);
}

// The tensors of a result, in order; anything but tensors, lists, numbers, symbols and
// strings is refused (a replay could not rebuild it).
void collect_outputs(Interp& in, Value v, std::vector<TensorObj*>& outs) {
  for (;;) {
    if (tensor::is_tensor(v)) {
      outs.push_back(tensor::as_tensor(v));
      return;
    }
    if (eval::is_cons(v)) {
      collect_outputs(in, eval::car(v), outs);
      v = eval::cdr(v);
      continue;
    }
    if (v.is_nil() || v.is_number() || eval::is_symbol(v) || eval::is_string(v)) return;
    in.error("type-error", "jit: a jitted function returns tensors, numbers, symbols, strings or lists of them, got " +
                               in.repr(v));
  }
}

Value make_template(Interp& in, Value v, Value marker) {
  if (tensor::is_tensor(v)) return marker;
  if (!eval::is_cons(v)) return v;
  Value a = make_template(in, eval::car(v), marker);
  Value d = make_template(in, eval::cdr(v), marker);
  return in.cons(a, d);
}

Value rebuild(Interp& in, Value tmpl, Value marker, const std::vector<Value>& outs, std::size_t& next) {
  if (tmpl.same(marker)) return outs[next++];
  if (!eval::is_cons(tmpl)) return tmpl;
  Value a = rebuild(in, eval::car(tmpl), marker, outs, next);
  Value d = rebuild(in, eval::cdr(tmpl), marker, outs, next);
  return in.cons(a, d);
}

// Calls f with `argv` (rooted on the stack) and realizes the tensors of its result.
Value call_uncaptured(Interp& in, Value fn, Value* argv, std::size_t n) {
  Value r = in.apply(fn, argv, static_cast<std::uint32_t>(n));
  in.push(r);
  std::vector<TensorObj*> outs;
  collect_outputs(in, r, outs);
  for (TensorObj* t : outs) tensor::realize(in, t);
  return r;
}

// The tensor values of a call's results: an argument's own value, else a new tensor.
Value output_value(Interp& in, const Output& o, const std::shared_ptr<Buffer>& buf, const CallTensors& ct, bool fresh) {
  if (o.slot.kind == Slot::Arg) return ct.values[o.slot.index];
  if (fresh) {
    tensor::runtime(in).realized_bytes += buf->size_bytes();
    in.heap.account_external(buf->size_bytes());
  }
  return tensor::make_tensor_like(in, tensor::runtime(in).graph.make_buffer(buf, o.shape, o.bindings), o.complex);
}

struct RngLog : tensor::Tracer {
  std::vector<std::pair<std::shared_ptr<Buffer>, std::uint64_t>> keys;
  struct GuardSeen {
    std::shared_ptr<Buffer> flag;
    std::string type, message;
  };
  std::vector<GuardSeen> guards;
  void on_rng_key(const std::shared_ptr<Buffer>& key, std::uint64_t draw) override { keys.emplace_back(key, draw); }
  void on_guard(const std::shared_ptr<Buffer>& flag, const std::string& type, const std::string& message) override {
    guards.push_back({flag, type, message});
  }
};

}  // namespace

Traced trace_function(Interp& in, Value fn, const void* owner, const std::shared_ptr<JitDevice>& jit, Value args,
                      const std::vector<TensorObj*>& tensors, const std::vector<tensor::BoundDim*>& dim_args) {
  tensor::TensorRuntime& rt = tensor::runtime(in);
  Traced tr;
  // Fresh nodes for the tensor arguments: a tag keeps each apart from equal buffer nodes.
  std::vector<Value> fresh;
  for (std::size_t j = 0; j < tensors.size(); ++j) {
    const Node* n = tensors[j]->node.get();
    char tag[64];
    std::snprintf(tag, sizeof tag, "jit-argument %p %zu", owner, j);
    tensor::NodeRef node = rt.graph.make_buffer(n->buffer, n->shape, n->bindings, tag);
    tr.arg_of[node.get()] = j;
    fresh.push_back(tensor::make_tensor_like(in, std::move(node), tensors[j]->complex));
    in.push(fresh.back());
  }
  std::size_t next = 0;
  Value traced_args = substitute(in, args, fresh, next);
  in.push(traced_args);
  Value* argv = in.sp;
  std::size_t argc = 0;
  for (Value r = traced_args; eval::is_cons(r); r = eval::cdr(r), ++argc) in.push(eval::car(r));

  RngLog rng;
  std::vector<JitDevice::Recorded> runs;
  const std::uint64_t reads0 = rt.host_reads, draws0 = rt.rng_draws;
  const std::int64_t seed0 = rt.rng_seed;
  struct Restore {
    tensor::TensorRuntime& rt;
    JitDevice& jit;
    ~Restore() {
      rt.tracer = nullptr;
      jit.recording = nullptr;
    }
  } restore{rt, *jit};
  rt.tracer = &rng;
  jit->recording = &runs;
  jit->recording_failed = false;
  for (tensor::BoundDim* d : dim_args) d->value_read = false;
  tr.result = call_uncaptured(in, fn, argv, argc);
  rt.tracer = nullptr;
  jit->recording = nullptr;
  // Lisp code that took a dimension argument's value (dim-value) may have built it into the
  // graph as a constant: a replay for another value could not know.
  bool dim_read = false;
  for (tensor::BoundDim* d : dim_args) dim_read = dim_read || d->value_read;

  collect_outputs(in, tr.result, tr.outs);
  tr.draws = rt.rng_draws - draws0;
  // A realize that failed inside f (its error caught there) cannot be replayed either.
  if (dim_read) {
    tr.uncaptured = "reads the value of a (dim ...) argument (dim-value)";
  } else if (jit->recording_failed) {
    tr.uncaptured = "caught the error of a realize that failed";
  } else if (rt.host_reads != reads0 || rt.rng_seed != seed0 || rt.rng_draws < draws0) {
    tr.uncaptured = "reads tensor data into Lisp (item, aref, print, save) or reseeds";
  }
  if (tr.uncaptured == nullptr) {
    runtime::Capture::Sources sources;
    sources.args = tr.arg_of;
    for (const auto& [k, draw] : rng.keys) sources.draws[k.get()] = draw - draws0;
    tr.capture = std::make_shared<runtime::Capture>(jit, runs, std::move(sources));
    auto classify = [&](const Node* n, const std::shared_ptr<Buffer>& b) { return tr.capture->classify(n, b); };
    for (const auto& g : rng.guards) tr.guards.push_back(Traced::Guard{classify(nullptr, g.flag), g.type, g.message});
    for (TensorObj* t : tr.outs) {
      const Node* n = t->node.get();
      tr.outputs.push_back(Traced::Output{classify(n, n->buffer), n->shape, n->bindings, t->complex});
    }
    tr.capture->seal();
  }
  return tr;
}

namespace {

Value trace_call(Interp& in, CaptureObj& cap, const std::shared_ptr<JitDevice>& jit, const std::string& key, Value args,
                 const CallTensors& ct) {
  Traced traced = trace_function(in, cap.fn, &cap, jit, args, ct.tensors, ct.dim_args);
  Trace tr;
  tr.device = jit;
  tr.draws = traced.draws;
  tr.uncaptured = traced.uncaptured != nullptr;
  std::vector<Value> out_values;
  if (tr.uncaptured) {
    if (!cap.warned) {
      tl::log("tensorlisp: warning: jit: %s %s while traced; it runs uncaptured\n", in.repr(cap.fn).c_str(),
              traced.uncaptured);
      cap.warned = true;
    }
    // The arguments' own values stand for them in the result.
    for (TensorObj* t : traced.outs) {
      auto it = traced.arg_of.find(t->node.get());
      out_values.push_back(it != traced.arg_of.end() ? ct.values[it->second] : Value::object(t));
    }
  } else {
    tr.capture = traced.capture;
    tr.guards = traced.guards;
    tr.outputs = traced.outputs;
    for (std::size_t i = 0; i < tr.outputs.size(); ++i) {
      out_values.push_back(output_value(in, tr.outputs[i], traced.outs[i]->node->buffer, ct, false));
    }
    ++jit->mutable_stats().traces;
  }
  tr.result = make_template(in, traced.result, cap.marker);
  std::size_t used = 0;
  Value r = rebuild(in, tr.result, cap.marker, out_values, used);
  if (cap.traces.size() >= kMaxTraces) {
    cap.traces.erase(cap.trace_order.front());
    cap.trace_order.pop_front();
  }
  cap.traces.emplace(key, std::move(tr));
  cap.trace_order.push_back(key);
  return r;
}

Value replay(Interp& in, CaptureObj& cap, JitDevice& jit, const Trace& tr, const CallTensors& ct) {
  tensor::TensorRuntime& rt = tensor::runtime(in);
  const std::uint64_t draw0 = rt.rng_draws;
  runtime::Capture::Inputs inputs;
  inputs.arg = [&](std::size_t i) { return ct.tensors[i]->node->buffer; };
  inputs.rng_key = [&](std::uint64_t d) { return tensor::rng_key(rt.rng_seed, draw0 + d); };
  inputs.before_writes = [&](const std::unordered_set<const Buffer*>& written) {
    rt.graph.retire_readers(written, {}, {}, [&in] { in.collect(); });
  };
  inputs.dims = ct.dims;
  runtime::Capture::Run run = tr.capture->replay(inputs);
  rt.rng_draws = draw0 + tr.draws;
  for (const auto& g : tr.guards) {
    std::shared_ptr<Buffer> flag = run.resolve(g.flag);
    if (flag && flag->count() >= 1 && static_cast<const unsigned char*>(flag->data())[0] == 0) {
      in.error(g.type, g.message + " (found in a jit replay)");
    }
  }
  ++jit.mutable_stats().replays;
  std::vector<Value> out_values;
  for (const Output& traced : tr.outputs) {
    Output o = traced;
    o.bindings = runtime::Capture::with_dims(o.bindings, ct.dims);
    out_values.push_back(output_value(in, o, run.resolve(o.slot), ct, o.slot.kind == Slot::Step));
    in.push(out_values.back());
  }
  std::size_t used = 0;
  return rebuild(in, tr.result, cap.marker, out_values, used);
}

Value capture_call(Interp& in, CaptureObj& cap, Value args) {
  Interp::StackMark mark(in);
  in.push(args);
  tensor::TensorRuntime& rt = tensor::runtime(in);
  std::shared_ptr<JitDevice> jit = current_jit(in);
  if (!jit || rt.tracer || jit->recording) {
    // No JIT to replay on, or inside another trace (which records what this call runs).
    Value* argv = in.sp;
    std::size_t argc = 0;
    for (Value r = args; eval::is_cons(r); r = eval::cdr(r), ++argc) in.push(eval::car(r));
    return call_uncaptured(in, cap.fn, argv, argc);
  }
  char dev[32];
  std::snprintf(dev, sizeof dev, "%p|", static_cast<void*>(jit.get()));
  std::string key = dev;
  CallTensors ct;
  key_of(in, cap, args, key, ct);
  auto it = cap.traces.find(key);
  if (it == cap.traces.end()) return trace_call(in, cap, jit, key, args, ct);
  if (it->second.uncaptured) {
    Value* argv = in.sp;
    std::size_t argc = 0;
    for (Value r = args; eval::is_cons(r); r = eval::cdr(r), ++argc) in.push(eval::car(r));
    return call_uncaptured(in, cap.fn, argv, argc);
  }
  return replay(in, cap, *jit, it->second, ct);
}

CaptureObj* as_capture(Interp& in, const char* fn, Value v) {
  auto* f = eval::is_kind(v, eval::ObjKind::Foreign) ? dynamic_cast<CaptureObj*>(static_cast<eval::Foreign*>(v.o)) : nullptr;
  if (!f) in.type_error(fn, 1, "a capture made by %make-capture", v);
  return f;
}

}  // namespace

void register_capture_builtins(Interp& in) {
  TL_BUILTIN(in, "%make-capture", 1, 1, "(%make-capture F)", "The capture state of (jit F). Use jit instead.",
             [](Interp& in, Args a, N) -> Value {
               eval::arg_function(in, "jit", a, 0);
               auto* c = in.heap.make<CaptureObj>(eval::ObjKind::Foreign);
               c->fn = a[0];
               c->marker = in.cons(eval::nil(), eval::nil());
               return Value::object(c);
             });
  TL_BUILTIN(in, "%capture-call", 2, 2, "(%capture-call CAPTURE ARGS)",
             "Calls a jit function's capture with the list ARGS: replays its trace for their signature, "
             "tracing first when there is none. Use jit instead.",
             [](Interp& in, Args a, N) -> Value { return capture_call(in, *as_capture(in, "%capture-call", a[0]), a[1]); });
}

}  // namespace tl::api
