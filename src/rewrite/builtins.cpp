// SPDX-License-Identifier: Apache-2.0
// The Lisp side of the rewrite engine: defining rules and sets (the defoptimizer macros in
// stdlib/optimizers/ call these), switching them, seeing them work, and constant folding.
#include "eval/builtins.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bindings/tensor_value.h"
#include "rewrite/rewrite.h"
#include "schedule/schedule.h"
#include "support/condition_error.h"
#include "tensor/semantics.h"

namespace tl::rewrite {

using eval::Interp;
using eval::Value;
using tensor::Node;
using tensor::NodeRef;
using tensor::Op;
using Args = Value*;
using N = std::uint32_t;

namespace {

std::string name_of(Interp& in, const char* fn, Value v) {
  if (eval::is_symbol(v) && !v.is_nil()) return eval::as_symbol(v)->name;
  if (eval::is_string(v)) return eval::as_string(v)->text;
  in.type_error(fn, 1, "a rule or set name", v);
}

std::vector<std::string> strings_of(Interp& in, const char* fn, Value list) {
  std::vector<std::string> out;
  if (!eval::is_list(list)) list = in.cons(list, eval::nil());
  for (Value r = list; eval::is_cons(r); r = eval::cdr(r)) out.push_back(name_of(in, fn, eval::car(r)));
  return out;
}

// Switches a rule or a set; an unknown name is an error.
void switch_optimizer(Interp& in, const char* fn, Value name, bool on) {
  Optimizers& o = optimizers(in);
  const std::string n = name_of(in, fn, name);
  bool found = false;
  for (auto& r : o.rules) {
    if (r.name == n) r.enabled = on, found = true;
  }
  for (auto& s : o.sets) {
    if (s.name == n) s.enabled = on, found = true;
  }
  if (!found) in.error("optimizer-error", std::string(fn) + ": no optimizer rule or set named " + n);
  o.touch();
}

// The backend rules are checked against: the current device's name.
std::string backend_name(Interp& in) { return tensor::runtime(in).device; }

// A constant that a node of constants folds to; none when the node does not fold exactly.
NodeRef fold(Interp& in, const Node* n) {
  tensor::Graph& g = tensor::runtime(in).graph;
  auto is_const = [](const NodeRef& s) { return s->op == Op::Const; };
  const auto group = tensor::op_info(n->op).group;
  if (group == tensor::OpGroup::Reduce) {
    // Over an axis of length 0, whatever its source: the identity, however long the other axes
    // (a loop over them would find nothing to reduce).
    const tensor::Shape& in = n->src[0]->shape;
    const bool empty = std::any_of(n->axes.begin(), n->axes.end(),
                                   [&](auto a) { return in[static_cast<std::size_t>(a)] == tensor::Dim(0); });
    if (empty) {
      const tensor::Scalar v = tensor::reduce_identity(n->reduce_kind, n->dtype);
      if (tensor::is_float(n->dtype)) return g.make_const_float(v.f, n->dtype, n->shape);
      return g.make_const_int(v.i, n->dtype, n->shape);
    }
  }
  if (n->src.empty() || !std::all_of(n->src.begin(), n->src.end(), is_const)) return {};
  auto const_like = [&](const Node* c, const tensor::Shape& shape, tensor::DType t) {
    return tensor::is_float(t) ? g.make_const_float(c->fvalue, t, shape) : g.make_const_int(c->ivalue, t, shape);
  };
  switch (group) {
    case tensor::OpGroup::Unary:
    case tensor::OpGroup::Binary:
    case tensor::OpGroup::Ternary: {
      // The op's semantics (semantics.h) on the constants' values.
      std::vector<tensor::Scalar> x;
      for (const auto& s : n->src) x.push_back({s->ivalue, s->fvalue});
      const tensor::DType operand = n->src[n->op == Op::Where ? 1 : 0]->dtype;
      const tensor::Scalar v = tensor::evaluate(n->op, operand, n->dtype, x);
      if (tensor::is_float(n->dtype)) return g.make_const_float(v.f, n->dtype, n->shape);
      return g.make_const_int(v.i, n->dtype, n->shape);
    }
    case tensor::OpGroup::Movement:
      if (n->op == Op::Pad) return {};  // padding reads zeros: not uniform
      return const_like(n->src[0].get(), n->shape, n->dtype);
    case tensor::OpGroup::Reduce: {
      const Node* c = n->src[0].get();
      const bool zero = tensor::is_float(c->dtype) ? c->fvalue == 0 : c->ivalue == 0;
      const bool one = tensor::is_float(c->dtype) ? c->fvalue == 1 : c->ivalue == 1;
      // Exact in any order: the max of copies, a sum of zeros, a product of zeros or ones
      // (over a non-empty reduce: an empty one is its identity, above).
      if (n->reduce_kind == tensor::ReduceKind::Max || (n->reduce_kind == tensor::ReduceKind::Sum && zero) ||
          (n->reduce_kind == tensor::ReduceKind::Prod && (zero || one))) {
        return const_like(c, n->shape, n->dtype);
      }
      return {};
    }
    case tensor::OpGroup::Source:
    case tensor::OpGroup::Index:  // out-of-range indices read 0: not uniform
    case tensor::OpGroup::Memory:
    case tensor::OpGroup::Escape: return {};
  }
  return {};
}

}  // namespace

namespace {

// The dot text of (graph->dot X FILE &key stage) and graph->svg.
std::string graph_picture(Interp& in, const char* fn, Args a, N n) {
  const NodeRef& x = tensor::arg_tensor(in, fn, a, 0);
  std::string stage = "graph";
  if (n > 2) {
    if (n != 4 || in.repr(a[2]) != ":stage") {
      in.error("program-error", std::string(fn) + ": expected :stage and a stage after FILE, got " + in.repr(a[2]));
    }
    stage = in.repr(a[3]);
    if (!stage.empty() && stage[0] == ':') stage.erase(0, 1);
  }
  if (stage == "graph") return graph_dot(x.get());
  if (stage != "optimized" && stage != "kernels") {
    in.error("program-error",
             std::string(fn) + ": unknown stage :" + stage + " (expected :graph, :optimized or :kernels)");
  }
  NodeRef g = optimizers(in).run(in, x, backend_name(in), tensor::runtime(in).device_kind);
  if (stage == "optimized" || schedule::holds_data(g.get())) return graph_dot(g.get());
  const tensor::TensorRuntime& rt = tensor::runtime(in);
  const schedule::Schedule s =
      schedule::make_schedule(g.get(), rt.schedule_options ? rt.schedule_options() : schedule::Options{});
  return graph_dot(g.get(), &s);
}

// Runs Graphviz's dot on DOT, writing the SVG file PATH.
void render_svg(Interp& in, const std::string& dot, const std::string& path) {
  char tmp[] = "/tmp/tensorlisp-graph-XXXXXX";
  const int fd = mkstemp(tmp);
  if (fd < 0) in.error("file-error", "graph->svg: cannot make a temporary file in /tmp");
  const bool written = write(fd, dot.data(), dot.size()) == static_cast<ssize_t>(dot.size());
  close(fd);
  if (!written) {
    unlink(tmp);
    in.error("file-error", "graph->svg: cannot write the temporary file " + std::string(tmp));
  }
  std::string out_arg = "-o" + path;
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), out_arg.data(), tmp, nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ);
  int status = 0;
  if (spawned == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  unlink(tmp);
  if (spawned == ENOENT) {
    in.error("file-error",
             "graph->svg: Graphviz's dot is not on PATH (Debian: apt install graphviz); graph->dot writes the "
             "dot file without it");
  }
  if (spawned != 0) in.error("file-error", std::string("graph->svg: cannot run dot: ") + std::strerror(spawned));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    in.error("file-error", "graph->svg: dot failed writing " + path + " (exit status " +
                               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
}

}  // namespace

void register_rewrite_builtins(Interp& in) {
  TL_BUILTIN(in, "%define-optimizer", 8, 8, "(%define-optimizer NAME DOC PATTERN VARS GUARD REPLACE SET BACKEND)",
             "Adds rule NAME: PATTERN with variables VARS (the parameters, after ?root, of the functions "
             "GUARD and REPLACE), in SET, for BACKEND (nil: any). Use defoptimizer instead.",
             [](Interp& in, Args a, N) -> Value {
               Optimizers& o = optimizers(in);
               Rule r;
               r.name = name_of(in, "defoptimizer", a[0]);
               r.doc = eval::is_string(a[1]) ? eval::as_string(a[1])->text : "";
               for (Value v = a[3]; eval::is_cons(v); v = eval::cdr(v)) r.vars.push_back(name_of(in, "defoptimizer", eval::car(v)));
               r.source = in.make_root(a[2]);
               r.guard = in.make_root(a[4]);
               r.replace = in.make_root(a[5]);
               r.set = a[6].is_nil() ? "user" : name_of(in, "defoptimizer", a[6]);
               r.backend = a[7].is_nil() ? "" : name_of(in, "defoptimizer", a[7]);
               o.define(in, std::move(r), a[2]);
               return a[0];
             });
  TL_BUILTIN(in, "%define-optimizer-set", 2, 2, "(%define-optimizer-set NAME DOC)",
             "Declares the optimizer rule set NAME. Use defoptimizer-set instead.", [](Interp& in, Args a, N) -> Value {
               RuleSet& s = optimizers(in).set(name_of(in, "defoptimizer-set", a[0]));
               if (eval::is_string(a[1])) s.doc = eval::as_string(a[1])->text;
               return a[0];
             });
  TL_BUILTIN(in, "optimizer-enable", 1, 1, "(optimizer-enable NAME)",
             "Turns the optimizer rule or rule set NAME on (rules and sets start on)."
             "\n  (unwind-protect (progn (optimizer-enable 'unsafe-math)"
             "\n                         (optimizers-fired (prim:recip (prim:recip (tensor '(2.0))))))"
             "\n    (optimizer-disable 'unsafe-math))  ; => (double-recip)",
             [](Interp& in, Args a, N) -> Value {
               switch_optimizer(in, "optimizer-enable", a[0], true);
               return a[0];
             });
  TL_BUILTIN(in, "optimizer-disable", 1, 1, "(optimizer-disable NAME)",
             "Turns the optimizer rule or rule set NAME off, for every graph realized from now on."
             "\n  (unwind-protect (progn (optimizer-disable 'double-neg)"
             "\n                         (optimizers-fired (prim:neg (prim:neg (tensor '(1 2))))))"
             "\n    (optimizer-enable 'double-neg))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               switch_optimizer(in, "optimizer-disable", a[0], false);
               return a[0];
             });
  TL_BUILTIN(in, "optimizers-enabled", 0, 1, "(optimizers-enabled [FLAG])",
             "Whether graph rewriting runs at all before scheduling; FLAG, when given, sets it."
             "\n  (optimizers-enabled)  ; => t"
             "\n  (unwind-protect (progn (optimizers-enabled nil) (optimizers-fired (prim:neg (prim:neg (tensor '(1 "
             "2))))))"
             "\n    (optimizers-enabled t))  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               Optimizers& o = optimizers(in);
               if (n == 1) {
                 o.enabled = a[0].truthy();
                 o.touch();
               }
               return in.boolean(o.enabled);
             });
  TL_BUILTIN(in, "%call-with-optimizers-disabled", 2, 2, "(%call-with-optimizers-disabled NAMES THUNK)",
             "Calls THUNK with the rules and sets NAMES off. Use with-optimizers-disabled instead.",
             [](Interp& in, Args a, N) -> Value {
               Optimizers& o = optimizers(in);
               std::vector<std::string> names = strings_of(in, "with-optimizers-disabled", a[0]);
               for (const auto& s : names) {
                 bool known = o.find_rule(s) != nullptr;
                 for (const auto& set : o.sets) known = known || set.name == s;
                 if (!known) in.error("optimizer-error", "with-optimizers-disabled: no optimizer rule or set named " + s);
               }
               const std::size_t before = o.disabled_now.size();
               o.disabled_now.insert(o.disabled_now.end(), names.begin(), names.end());
               o.touch();
               struct Restore {
                 Optimizers& o;
                 std::size_t size;
                 ~Restore() {
                   o.disabled_now.resize(size);
                   o.touch();
                 }
               } restore{o, before};
               return in.apply(a[1], a, 0);
             });
  TL_BUILTIN(in, "list-optimizers", 0, 0, "(list-optimizers)",
             "The optimizer rules, in the order they are tried: for each, a plist (:name :set :enabled "
             ":backend :fired :doc)."
             "\n  (getf (find 'double-neg (list-optimizers) :key (lambda (r) (getf r :name))) :set)  ; => simplify",
             [](Interp& in, Args, N) -> Value {
               Optimizers& o = optimizers(in);
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const auto& r : o.rules) {
                 bool on = r.enabled;
                 for (const auto& s : o.sets) on = on && !(s.name == r.set && !s.enabled);
                 in.push(in.list({Value::object(in.keyword("name")), Value::object(in.intern(r.name)),
                                  Value::object(in.keyword("set")), Value::object(in.intern(r.set)),
                                  Value::object(in.keyword("enabled")), in.boolean(on),
                                  Value::object(in.keyword("backend")),
                                  r.backend.empty() ? eval::nil() : Value::object(in.keyword(r.backend)),
                                  Value::object(in.keyword("fired")), Value::integer(static_cast<std::int64_t>(r.fired)),
                                  Value::object(in.keyword("doc")), in.make_string(r.doc)}));
               }
               return in.list_from(base, static_cast<std::size_t>(in.sp - base));
             });
  TL_BUILTIN(in, "optimize", 1, 1, "(optimize X)",
             "Tensor X's graph rewritten by the active optimizer rules, as the JIT rewrites it before "
             "scheduling."
             "\n  (let ((x (tensor '(1 2)))) (same-node-p x (optimize (prim:neg (prim:neg x)))))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = tensor::arg_tensor(in, "optimize", a, 0);
               return tensor::make_tensor(in, optimizers(in).run(in, x, backend_name(in), tensor::runtime(in).device_kind));
             });
  TL_BUILTIN(in, "explain-optimizers", 1, 1, "(explain-optimizers X)",
             "Prints tensor X's graph, each optimizer rule that fires on it (in order, with the subgraph "
             "it matched and its replacement), and the graph after; returns the names of the rules fired."
             "\n  (explain-optimizers (prim:neg (prim:neg (tensor '(1.0 2.0)))))  ; => (double-neg)",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = tensor::arg_tensor(in, "explain-optimizers", a, 0);
               std::vector<Firing> log;
               NodeRef after = optimizers(in).run(in, x, backend_name(in), tensor::runtime(in).device_kind, &log);
               std::string out = "graph before:\n" + graph_text(x.get());
               if (log.empty()) out += "no rule fired\n";
               for (std::size_t i = 0; i < log.size(); ++i) {
                 out += std::to_string(i + 1) + ". " + log[i].rule + ": " + log[i].before + "\n   => " + log[i].after + "\n";
               }
               out += "graph after:\n" + graph_text(after.get());
               in.write(out);
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const auto& f : log) in.push(Value::object(in.intern(f.rule)));
               return in.list_from(base, log.size());
             });
  TL_BUILTIN(in, "optimizers-fired", 1, 1, "(optimizers-fired X)",
             "The names of the optimizer rules that fire on tensor X's graph, in order (explain-optimizers "
             "without the printing)."
             "\n  (optimizers-fired (prim:neg (prim:neg (tensor '(1 2)))))  ; => (double-neg)"
             "\n  (optimizers-fired (prim:mul (tensor '(1 2)) (prim:const 1 'i32 '(2))))  ; => (mul-one)",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = tensor::arg_tensor(in, "optimizers-fired", a, 0);
               std::vector<Firing> log;
               optimizers(in).run(in, x, backend_name(in), tensor::runtime(in).device_kind, &log);
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const auto& f : log) in.push(Value::object(in.intern(f.rule)));
               return in.list_from(base, log.size());
             });
  TL_BUILTIN(in, "graph->text", 1, 1, "(graph->text X)",
             "Tensor X's graph as text, one numbered line per node, sources first."
             "\n  (graph->text (prim:neg (prim:iota '(3) 0 'i32)))"
             "  ; => \"%1 = iota (0) i32 (3)   ; i32 (3)\\n%2 = neg %1   ; i32 (3)\\n\"",
             [](Interp& in, Args a, N) -> Value {
               return in.make_string(graph_text(tensor::tensor_arg_any(in, "graph->text", a, 0)->node.get()));
             });
  TL_BUILTIN(in, "graph->dot", 2, 4, "(graph->dot X FILE &key (stage :graph))",
             "Writes tensor X's graph to FILE in Graphviz's dot language (render it with dot -Tsvg, or use "
             "graph->svg). STAGE :graph is the graph as built, :optimized after the optimizer rules of the "
             "current device, :kernels after the rules with each kernel the scheduler makes drawn as a box "
             "around the nodes it computes.\n"
             "  (graph->dot (softmax (tensor '((1.0 2.0) (3.0 4.0))) :axis 1) \"/tmp/softmax.dot\" :stage :kernels)  ; "
             "=> \"/tmp/softmax.dot\"",
             [](Interp& in, Args a, N n) -> Value {
               const std::string path = eval::arg_string(in, "graph->dot", a, 1)->text;
               const std::string dot = graph_picture(in, "graph->dot", a, n);
               std::ofstream f(path);
               f << dot;
               if (!f) in.error("file-error", "graph->dot: cannot write " + path);
               return a[1];
             });
  TL_BUILTIN(in, "graph->svg", 2, 4, "(graph->svg X FILE &key (stage :graph))",
             "Draws tensor X's graph into the SVG file FILE with Graphviz's dot (found on PATH; Debian: apt "
             "install graphviz). STAGE is as in graph->dot: :graph, :optimized, or :kernels (the kernels the "
             "scheduler makes, each a box around the nodes it computes). Returns FILE.\n"
             "  (graph->svg (relu (matmul (tensor '((1.0 -2.0))) (tensor '((1.0) (2.0))))) \"/tmp/mlp.svg\" :stage "
             ":kernels)",
             [](Interp& in, Args a, N n) -> Value {
               const std::string path = eval::arg_string(in, "graph->svg", a, 1)->text;
               render_svg(in, graph_picture(in, "graph->svg", a, n), path);
               return a[1];
             });
  TL_BUILTIN(in, "prim-op-p", 1, 1, "(prim-op-p SYMBOL)",
             "True when SYMBOL names a primitive op (neg, add, reduce, ...)."
             "\n  (prim-op-p 'add)  ; => t"
             "\n  (prim-op-p 'matmul)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(eval::is_symbol(a[0]) && !a[0].is_nil() && tensor::op_from_name(eval::as_symbol(a[0])->name));
             });
  TL_BUILTIN(in, "%op-signature", 1, 1, "(%op-signature OP)",
             "The slots of an op form after its name, as in the prim:* builtins: S a source, A an argument.",
             [](Interp& in, Args a, N) -> Value {
               auto op = tensor::op_from_name(name_of(in, "%op-signature", a[0]));
               if (!op) in.error("optimizer-error", "no primitive op named " + in.repr(a[0]));
               return in.make_string(op_signature(*op));
             });
  TL_BUILTIN(in, "%prim-function-name", 1, 1, "(%prim-function-name OP)", "The symbol prim:OP.",
             [](Interp& in, Args a, N) -> Value {
               return Value::object(in.intern("prim:" + name_of(in, "%prim-function-name", a[0])));
             });
  TL_BUILTIN(in, "%fold-constant", 1, 1, "(%fold-constant X)",
             "The constant that tensor X, an op on constants or a reduce over an axis of length 0, folds to "
             "exactly, or nil.",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = tensor::arg_tensor(in, "%fold-constant", a, 0);
               if (schedule::holds_data(x.get())) return eval::nil();
               NodeRef r = fold(in, x.get());
               return r ? tensor::make_tensor(in, std::move(r)) : eval::nil();
             });
  TL_BUILTIN(in, "sign-bit-p", 1, 1, "(sign-bit-p X)",
             "True when number X has its sign bit set (so -0.0 too)."
             "\n  (sign-bit-p -0.0)  ; => t"
             "\n  (sign-bit-p 0.0)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(a[0].is_int() ? a[0].i < 0 : std::signbit(eval::arg_number(in, "sign-bit-p", a, 0)));
             });
  TL_BUILTIN(in, "graph-size", 1, 1, "(graph-size X)",
             "The number of distinct nodes in tensor X's graph."
             "\n  (graph-size (let ((a (tensor '(1 2)))) (prim:add a a)))  ; => 2",
             [](Interp& in, Args a, N) -> Value {
               return Value::integer(static_cast<std::int64_t>(
                   graph_order(tensor::tensor_arg_any(in, "graph-size", a, 0)->node.get()).size()));
             });
  TL_BUILTIN(in, "unexpanded", 1, 1, "(unexpanded X)",
             "The tensor that X's graph node expands, or X when it is not an expand (for guards and "
             "replacements)."
             "\n  (let ((x (broadcast-to (tensor '(1 2)) '(3 2)))) (list (node-op x) (shape (unexpanded x))))"
             "  ; => (expand (1 2))"
             "\n  (let ((x (tensor '(1 2)))) (eq x (unexpanded x)))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = tensor::arg_tensor(in, "unexpanded", a, 0);
               if (x->op != Op::Expand || schedule::holds_data(x.get())) return a[0];
               return tensor::make_tensor(in, x->src[0]);
             });
  TL_BUILTIN(in, "node-sources", 1, 1, "(node-sources X)",
             "The sources of tensor X's graph node, as tensors (nil for data: buffers and realized tensors)."
             "\n  (mapcar #'node-op (node-sources (prim:add (prim:iota '(2) 0 'i32) (tensor '(3 4)))))"
             "  ; => (iota buffer)"
             "\n  (node-sources (tensor '(1 2)))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               const Node* n = tensor::tensor_arg_any(in, "node-sources", a, 0)->node.get();
               Interp::StackMark mark(in);
               Value* base = in.sp;
               if (!schedule::holds_data(n)) {
                 for (const auto& s : n->src) in.push(tensor::make_tensor(in, s));
               }
               return in.list_from(base, static_cast<std::size_t>(in.sp - base));
             });
  TL_BUILTIN(in, "node-arg", 2, 2, "(node-arg X K)",
             "Argument K of tensor X's graph node, in the order of its prim:* builtin's arguments: for "
             "(prim:reduce KIND X AXES) 0 is KIND and 1 is AXES."
             "\n  (node-arg (prim:reduce :sum (tensor '((1 2) (3 4))) '(1)) 0)  ; => :sum"
             "\n  (node-arg (prim:reduce :sum (tensor '((1 2) (3 4))) '(1)) 1)  ; => (1)",
             [](Interp& in, Args a, N) -> Value {
               const Node* n = tensor::tensor_arg_any(in, "node-arg", a, 0)->node.get();
               return node_argument(in, n, static_cast<std::size_t>(eval::arg_int(in, "node-arg", a, 1)));
             });
  TL_BUILTIN(in, "graph-order", 1, 1, "(graph-order X)",
             "The nodes of tensor X's graph as tensors, each once, sources before the nodes that use them "
             "(data nodes are leaves); X is last."
             "\n  (mapcar #'node-op (graph-order (prim:neg (prim:add (tensor '(1 2)) (tensor '(3 4))))))"
             "  ; => (buffer buffer add neg)",
             [](Interp& in, Args a, N) -> Value {
               std::vector<const Node*> order =
                   graph_order(tensor::tensor_arg_any(in, "graph-order", a, 0)->node.get());
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const Node* n : order) in.push(tensor::make_tensor(in, NodeRef(const_cast<Node*>(n))));
               return in.list_from(base, order.size());
             });
  TL_BUILTIN(in, "node-id", 1, 1, "(node-id X)",
             "A number identifying tensor X's graph node, in creation order (for ordering guards)."
             "\n  (let* ((a (tensor '(1 2))) (b (prim:neg a))) (< (node-id a) (node-id b)))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               return Value::integer(tensor::tensor_arg_any(in, "node-id", a, 0)->node->id);
             });
  TL_BUILTIN(in, "node-op", 1, 1, "(node-op X)",
             "The primitive op of tensor X's graph node, a symbol (buffer for data)."
             "\n  (node-op (prim:neg (tensor '(1 2))))  ; => neg"
             "\n  (node-op (tensor '(1 2)))  ; => buffer",
             [](Interp& in, Args a, N) -> Value {
               return Value::object(in.intern(tensor::op_name(tensor::tensor_arg_any(in, "node-op", a, 0)->node->op)));
             });
}

}  // namespace tl::rewrite
