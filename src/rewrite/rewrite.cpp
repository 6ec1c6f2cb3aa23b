// SPDX-License-Identifier: Apache-2.0
// The rewrite engine: pattern compilation, matching, and the fixed-point rewriter.
#include "rewrite/rewrite.h"

#include <cctype>
#include <functional>
#include <unordered_map>

#include "bindings/tensor_value.h"
#include "schedule/schedule.h"
#include "support/condition_error.h"

namespace tl::rewrite {

using eval::Interp;
using eval::Value;
using tensor::Node;
using tensor::NodeRef;
using tensor::Op;
using tensor::OpGroup;

namespace {

bool commutative(Op op);

}  // namespace

const char* op_signature(Op op) {
  if (op == Op::Cast || op == Op::Bitcast) return "SA";  // dtype
  switch (op) {
    case Op::Const: return "AAA";   // value dtype shape
    case Op::Iota: return "AAA";    // shape axis dtype
    case Op::Buffer: return "";
    case Op::Reduce: return "ASA";  // kind x axes
    case Op::Reshape:
    case Op::Permute:
    case Op::Expand:
    case Op::Pad:
    case Op::Shrink:
    case Op::Flip: return "SA";
    case Op::Gather: return "SSA";  // x index axis
    case Op::ScatterAdd: return "SSSA";  // x index values axis
    case Op::Copy: return "S";
    case Op::Assign: return "SS";
    case Op::Extern: return "AS*";  // name sources...
#include "tensor/elementwise_cases.inc"
      break;
  }
  static const char* const kSources[] = {"", "S", "SS", "SSS"};
  return kSources[tensor::op_info(op).arity];  // the other elementwise ops: their sources
}

namespace {

// Ops whose operands may trade places without changing any result (max too: of -0 and +0 it
// gives +0 in either order, ops.def).
bool commutative(Op op) {
  return op == Op::Add || op == Op::Mul || op == Op::Max || op == Op::Cmpeq || op == Op::And || op == Op::Or ||
         op == Op::Xor;
}

bool is_pattern_var(Value v) {
  return eval::is_symbol(v) && !v.is_nil() && eval::as_symbol(v)->name.size() > 1 && eval::as_symbol(v)->name[0] == '?';
}
bool is_wildcard(Value v) { return eval::is_symbol(v) && !v.is_nil() && eval::as_symbol(v)->name == "_"; }

[[noreturn]] void malformed(const std::string& rule, const std::string& what) {
  throw ConditionError("optimizer-error", "defoptimizer " + rule + ": " + what);
}

struct Compiler {
  Interp& in;
  const std::string& rule;
  std::vector<std::string>& vars;

  int var_index(Value sym) {
    const std::string& name = eval::as_symbol(sym)->name;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      if (vars[i] == name) return static_cast<int>(i);
    }
    vars.push_back(name);
    return static_cast<int>(vars.size() - 1);
  }

  // _ or a ?variable, in any position: true when v is one (p then describes it).
  bool variable(Value v, Pattern& p) {
    if (is_wildcard(v)) return true;
    if (!is_pattern_var(v)) return false;
    p.kind = Pattern::Kind::Var;
    p.var = var_index(v);
    return true;
  }

  Pattern argument(Value v) {
    Pattern p;
    if (variable(v, p)) return p;
    p.kind = Pattern::Kind::Literal;
    p.literal = v;
    return p;
  }

  Pattern node(Value v) {
    Pattern p;
    if (variable(v, p)) return p;
    if (!eval::is_cons(v) || !eval::is_symbol(eval::car(v)) || eval::car(v).is_nil()) {
      malformed(rule, "expected an op form such as (neg ?x), a ?variable or _ in the pattern, got " + in.repr(v));
    }
    p.kind = Pattern::Kind::Op;
    Value head = eval::car(v);
    std::vector<Value> rest;
    for (Value r = eval::cdr(v); eval::is_cons(r); r = eval::cdr(r)) rest.push_back(eval::car(r));
    if (is_pattern_var(head)) {
      // Any op with this many sources.
      p.var = var_index(head);
      p.arity = static_cast<int>(rest.size());
      for (Value s : rest) p.srcs.push_back(node(s));
      return p;
    }
    const std::string& name = eval::as_symbol(head)->name;
    auto op = tensor::op_from_name(name);
    if (!op) malformed(rule, "unknown op " + name + " in " + in.repr(v));
    p.op = *op;
    const std::string sig = op_signature(*op);
    std::size_t i = 0;
    for (std::size_t k = 0; k < sig.size(); ++k) {
      const bool repeat = k + 1 < sig.size() && sig[k + 1] == '*';
      if (sig[k] == '*') continue;
      do {
        if (i >= rest.size()) {
          if (sig[k] == 'S' && !repeat) {
            malformed(rule, name + " takes " + std::to_string(std::count(sig.begin(), sig.end(), 'S')) + " sources, got " +
                                std::to_string(p.srcs.size()) + " in " + in.repr(v));
          }
          break;
        }
        if (sig[k] == 'S') {
          p.srcs.push_back(node(rest[i++]));
        } else {
          p.args.push_back(argument(rest[i++]));
        }
      } while (repeat && i < rest.size());
      if (i >= rest.size() && sig[k] == 'A') break;  // trailing arguments left out
    }
    if (i < rest.size()) malformed(rule, "too many operands for " + name + " in " + in.repr(v));
    return p;
  }
};

// Numbers equal by value (0 matches 0.0), the rest as equal does.
bool same_value(Value a, Value b) {
  if (a.is_number() && b.is_number()) {
    return (a.is_int() ? static_cast<double>(a.i) : a.f) == (b.is_int() ? static_cast<double>(b.i) : b.f);
  }
  if (eval::is_cons(a) && eval::is_cons(b)) {
    for (; eval::is_cons(a) && eval::is_cons(b); a = eval::cdr(a), b = eval::cdr(b)) {
      if (!same_value(eval::car(a), eval::car(b))) return false;
    }
    return same_value(a, b);
  }
  return eval::equal(a, b);
}

Value ints_to_lisp(Interp& in, const std::vector<std::int64_t>& v) {
  Value out = eval::nil();
  for (auto it = v.rbegin(); it != v.rend(); ++it) out = in.cons(Value::integer(*it), out);
  return out;
}

}  // namespace

// Argument k of node n, as the prim:* builtins take it.
Value node_argument(Interp& in, const Node* n, std::size_t k) {
  if (n->op == Op::Cast || n->op == Op::Bitcast) return tensor::dtype_to_lisp(in, n->dtype);
  switch (n->op) {
    case Op::Const:
      if (k == 0) return tensor::is_float(n->dtype) ? Value::real(n->fvalue) : Value::integer(n->ivalue);
      if (k == 1) return tensor::dtype_to_lisp(in, n->dtype);
      return tensor::shape_to_lisp(in, n->shape);
    case Op::Iota:
      if (k == 0) return tensor::shape_to_lisp(in, n->shape);
      if (k == 1) return Value::integer(n->axes.at(0));
      return tensor::dtype_to_lisp(in, n->dtype);
    case Op::Reduce:
      if (k == 0) return Value::object(in.keyword(tensor::reduce_kind_name(n->reduce_kind)));
      return ints_to_lisp(in, n->axes);
    case Op::Reshape:
    case Op::Expand: return tensor::shape_to_lisp(in, n->shape);
    case Op::Permute: return ints_to_lisp(in, n->axes);
    case Op::Flip: {
      std::vector<std::int64_t> axes;
      for (std::size_t i = 0; i < n->axes.size(); ++i) {
        if (n->axes[i]) axes.push_back(static_cast<std::int64_t>(i));
      }
      return ints_to_lisp(in, axes);
    }
    case Op::Pad:
    case Op::Shrink: {
      Value out = eval::nil();
      for (auto it = n->ranges.rbegin(); it != n->ranges.rend(); ++it) {
        Value pair = in.cons(tensor::dim_to_lisp(in, it->first), in.cons(tensor::dim_to_lisp(in, it->second), eval::nil()));
        out = in.cons(pair, out);
      }
      return out;
    }
    case Op::Extern: return in.make_string(n->name);
    case Op::Gather:
    case Op::ScatterAdd: return Value::integer(n->axes.at(0));
#include "tensor/elementwise_cases.inc"
    case Op::Buffer:
    case Op::Copy:
    case Op::Assign: break;  // no arguments besides their sources
  }
  return eval::nil();
}

namespace {

struct Binding {
  bool bound = false;
  const Node* node = nullptr;  // a node variable's node, else null
  Value value;                 // an argument or op variable's value
};

// Matching with a continuation: each way the pattern matches (commutative operands give two)
// is passed on to `k`, which checks the guard; the first that k accepts wins.
using Cont = std::function<bool()>;

struct Matcher {
  Interp& in;
  std::vector<Binding>& b;

  bool bind_value(int var, Value v) {
    Binding& x = b[static_cast<std::size_t>(var)];
    if (x.bound) return x.node == nullptr && same_value(x.value, v);
    x.bound = true;
    x.value = v;
    return true;
  }

  bool sources(const std::vector<Pattern>& ps, const std::vector<const Node*>& ns, std::size_t i, const Cont& k) {
    if (i == ps.size()) return k();
    return match(ps[i], ns[i], [&] { return sources(ps, ns, i + 1, k); });
  }

  bool match(const Pattern& p, const Node* n, const Cont& k) {
    switch (p.kind) {
      case Pattern::Kind::Any: return k();
      case Pattern::Kind::Literal: return false;  // only in argument position
      case Pattern::Kind::Var: {
        Binding& x = b[static_cast<std::size_t>(p.var)];
        if (x.bound) return x.node == n && k();
        x.bound = true;
        x.node = n;
        if (k()) return true;
        b[static_cast<std::size_t>(p.var)] = Binding{};
        return false;
      }
      case Pattern::Kind::Op: break;
    }
    const std::vector<Binding> saved = b;
    auto fail = [&] {
      b = saved;
      return false;
    };
    const bool data = schedule::holds_data(n);
    if (p.var >= 0) {
      if (data || static_cast<int>(n->src.size()) != p.arity) return false;
      if (!bind_value(p.var, Value::object(in.intern(tensor::op_name(n->op))))) return fail();
    } else {
      if (data ? p.op != Op::Buffer : n->op != p.op) return false;
      // An extern's sources vary; an assign through a view has a third (the view).
      if ((p.op == Op::Extern || p.op == Op::Assign) && n->src.size() != p.srcs.size()) return false;
    }
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      const Pattern& a = p.args[i];
      if (a.kind == Pattern::Kind::Any) continue;
      Value v = node_argument(in, n, i);
      if (a.kind == Pattern::Kind::Literal ? !same_value(a.literal, v) : !bind_value(a.var, v)) return fail();
    }
    std::vector<const Node*> ns;
    for (const auto& s : n->src) ns.push_back(s.get());
    if (p.srcs.empty()) return k() || fail();
    if (sources(p.srcs, ns, 0, k)) return true;
    b = saved;
    if (p.srcs.size() == 2 && p.var < 0 && commutative(p.op)) {
      std::swap(ns[0], ns[1]);
      if (sources(p.srcs, ns, 0, k)) return true;
    }
    return fail();
  }
};

// A node like n with other sources (of the same shapes and dtypes).
NodeRef remake(tensor::Graph& g, const Node* n, std::vector<NodeRef> srcs) {
  Node p = tensor::identity_of(*n);
  p.src = std::move(srcs);
  return g.intern(std::move(p), true);
}

// node_str without buffer ids (they depend on how many nodes came before).
std::string expr_text(const Node* n) {
  std::string s = tensor::node_str(n, 4);
  for (std::size_t p = 0; (p = s.find("buffer#", p)) != std::string::npos;) {
    std::size_t e = p + 7;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    s.erase(p + 6, e - (p + 6));
    p += 6;
  }
  return s;
}

std::string describe(const Node* n) {
  return std::string(tensor::dtype_name(n->dtype)) + " " + tensor::shape_str(n->shape);
}

// Bounds that turn a rule set that never settles into an error.
constexpr int kMaxChain = 64;               // firings in a row on one node's replacements
constexpr std::size_t kMaxFiringsPerNode = 16;  // total firings, per node of the input graph

class Rewriter {
 public:
  Rewriter(Interp& in, Optimizers& opt, const std::vector<std::size_t>* by_op, const std::vector<std::size_t>& any,
           const std::string& backend, const std::string& kind, std::vector<Firing>* log)
      : in_(in), opt_(opt), by_op_(by_op), any_(any), backend_(backend), kind_(kind), log_(log) {
    done_.reserve(1024);
  }

  NodeRef rewrite(const NodeRef& start) {
    if (auto it = done_.find(start.get()); it != done_.end()) return it->second.second;
    std::vector<std::pair<NodeRef, bool>> stack{{start, false}};
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      stack.pop_back();
      if (done_.count(n.get())) continue;
      if (schedule::holds_data(n.get())) {
        finish(n, n);
        continue;
      }
      if (!expanded) {
        stack.emplace_back(n, true);
        for (const auto& s : n->src) {
          if (!done_.count(s.get())) stack.emplace_back(s, false);
        }
        continue;
      }
      std::vector<NodeRef> srcs;
      bool changed = false;
      for (const auto& s : n->src) {
        const NodeRef& r = done_.at(s.get()).second;
        changed = changed || r.get() != s.get();
        srcs.push_back(r);
      }
      NodeRef m = changed ? remake(in_graph(), n.get(), std::move(srcs)) : n;
      if (auto it = done_.find(m.get()); it != done_.end()) {
        finish(n, it->second.second);
        continue;
      }
      NodeRef r = fire(m);
      finish(m, r);
      finish(n, r);
    }
    return done_.at(start.get()).second;
  }

  // Each node rewritten so far, and what it became.
  void mapping(std::unordered_map<const Node*, const Node*>& out) const {
    for (const auto& [n, pair] : done_) out[n] = pair.second.get();
  }

 private:
  Interp& in_;
  Optimizers& opt_;
  const std::vector<std::size_t>* by_op_;
  const std::vector<std::size_t>& any_;
  const std::string& backend_;
  const std::string& kind_;
  std::vector<Firing>* log_;
  std::size_t firings_ = 0;
  std::vector<std::string> chain_;  // the rules that fired on replacements of one node
  // node -> (the node itself, kept alive so its address stays its own; its rewritten form)
  std::unordered_map<const Node*, std::pair<NodeRef, NodeRef>> done_;

  tensor::Graph& in_graph() { return tensor::runtime(in_).graph; }

  void finish(const NodeRef& n, const NodeRef& r) { done_.emplace(n.get(), std::make_pair(n, r)); }

  // Applies the first rule that fires on m, then rewrites the replacement; m when none does.
  NodeRef fire(const NodeRef& m) {
    const Rule* rule = nullptr;
    NodeRef replacement;
    for (const std::vector<std::size_t>* list : {&by_op_[static_cast<std::size_t>(m->op)], &any_}) {
      for (std::size_t i : *list) {
        const Rule& r = opt_.rules[i];
        if (!opt_.rules[i].enabled || !active(r)) continue;
        replacement = try_rule(r, m);
        if (replacement) {
          rule = &r;
          break;
        }
      }
      if (rule) break;
    }
    if (!rule) return m;
    // A bound on firings that a rule set reaching its fixed point stays far under.
    if (++firings_ > kMaxFiringsPerNode * done_.size() + 1024 || static_cast<int>(chain_.size()) >= kMaxChain) {
      loop_error(m.get(), rule->name);
    }
    ++opt_.rules[static_cast<std::size_t>(rule - opt_.rules.data())].fired;
    if (log_) log_->push_back(Firing{rule->name, expr_text(m.get()), expr_text(replacement.get())});
    chain_.push_back(rule->name);
    NodeRef r = rewrite(replacement);
    chain_.pop_back();
    return r;
  }

  bool active(const Rule& r) const {
    if (!r.backend.empty() && r.backend != backend_ && r.backend != kind_) return false;
    for (const auto& s : opt_.sets) {
      if (s.name == r.set && !s.enabled) return false;
    }
    for (const auto& d : opt_.disabled_now) {
      if (d == r.name || d == r.set) return false;
    }
    return true;
  }

  [[noreturn]] void loop_error(const Node* at, const std::string& last) {
    std::vector<std::string> names = chain_;
    names.push_back(last);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string list;
    for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
    throw ConditionError("optimizer-error", "optimizer rules do not reach a fixed point (" + list +
                                                " keep rewriting " + tensor::node_str(at, 3) +
                                                "); disable one of them with optimizer-disable");
  }

  NodeRef try_rule(const Rule& r, const NodeRef& m) {
    std::vector<Binding> b(r.vars.size());
    Matcher matcher{in_, b};
    NodeRef result;
    // For each way the pattern matches: the guard, then the replacement, with ?root and the
    // variables as arguments.
    matcher.match(r.pattern, m.get(), [&] {
      Interp::StackMark mark(in_);
      Value* base = in_.sp;
      in_.push(tensor::make_tensor(in_, m));
      for (const Binding& x : b) {
        if (!x.bound) in_.push(eval::nil());
        else if (x.node) in_.push(tensor::make_tensor(in_, NodeRef(const_cast<Node*>(x.node))));
        else in_.push(x.value);
      }
      const auto argc = static_cast<std::uint32_t>(b.size() + 1);
      Value guard = r.guard->value;
      if (!guard.is_nil() && !in_.apply(guard, base, argc).truthy()) return false;
      Value out = in_.apply(r.replace->value, base, argc);
      if (out.is_nil()) return false;
      if (!tensor::is_tensor(out)) {
        throw ConditionError("optimizer-error", "optimizer " + r.name + ": the replacement must be a tensor or nil, got " +
                                                    in_.repr(out));
      }
      result = tensor::as_tensor(out)->node;
      return true;
    });
    if (!result || result.get() == m.get()) return {};
    if (result->dtype != m->dtype || result->shape != m->shape) {
      throw ConditionError("optimizer-error", "optimizer " + r.name + ": its replacement is " + describe(result.get()) +
                                                  " but the node it replaces, " + tensor::node_str(m.get(), 2) + ", is " +
                                                  describe(m.get()) + "; the rule was not applied");
    }
    return result;
  }
};

}  // namespace

Optimizers& optimizers(Interp& in) {
  for (const auto& ext : in.extensions) {
    if (auto* o = dynamic_cast<Optimizers*>(ext.get())) return *o;
  }
  auto o = std::make_shared<Optimizers>();
  in.extensions.push_back(o);
  return *o;
}

void Optimizers::define(Interp& in, Rule rule, Value pattern) {
  std::vector<std::string> vars;
  Compiler c{in, rule.name, vars};
  rule.pattern = c.node(pattern);
  if (rule.pattern.kind == Pattern::Kind::Any) malformed(rule.name, "the pattern _ would match every node");
  // The Lisp side passes the variables in the order it bound its functions' parameters;
  // they must be the pattern's.
  if (!rule.vars.empty()) {
    std::vector<std::string> sorted_have = rule.vars, sorted_found = vars;
    std::sort(sorted_have.begin(), sorted_have.end());
    std::sort(sorted_found.begin(), sorted_found.end());
    if (sorted_have != sorted_found) malformed(rule.name, "the variables given do not match the pattern's");
    // Recompile in the given order, so binding i is parameter i.
    vars = rule.vars;
    Compiler again{in, rule.name, vars};
    rule.pattern = again.node(pattern);
  }
  rule.vars = vars;
  set(rule.set);
  bool replaced = false;
  for (auto& r : rules) {
    if (r.name == rule.name) {
      r = std::move(rule);
      replaced = true;
      break;
    }
  }
  if (!replaced) rules.push_back(std::move(rule));
  index();
  touch();
}

RuleSet& Optimizers::set(const std::string& name) {
  for (auto& s : sets) {
    if (s.name == name) return s;
  }
  sets.push_back(RuleSet{name, "", true});
  touch();
  return sets.back();
}

const Rule* Optimizers::find_rule(const std::string& name) const {
  for (const auto& r : rules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

void Optimizers::index() {
  for (auto& v : by_op_) v.clear();
  any_op_.clear();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Pattern& p = rules[i].pattern;
    if (p.kind == Pattern::Kind::Op && p.var < 0) {
      by_op_[static_cast<std::size_t>(p.op)].push_back(i);
      // Data nodes of any op match (buffer).
      if (p.op == Op::Buffer) any_op_.push_back(i);
    } else {
      any_op_.push_back(i);
    }
  }
}

NodeRef Optimizers::run(Interp& in, const NodeRef& root, const std::string& backend, const std::string& kind,
                        std::vector<Firing>* log, std::unordered_map<const Node*, const Node*>* rewritten) {
  if (!enabled || rules.empty()) return root;
  Rewriter rw(in, *this, by_op_.data(), any_op_, backend, kind, log);
  NodeRef r = rw.rewrite(root);
  if (rewritten != nullptr) rw.mapping(*rewritten);
  return r;
}

// --- printing ------------------------------------------------------------------------------

std::vector<const Node*> graph_order(const Node* root) {
  std::vector<const Node*> order;
  std::unordered_map<const Node*, bool> seen;
  std::vector<std::pair<const Node*, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(n);
      continue;
    }
    if (!seen.emplace(n, true).second) continue;
    stack.emplace_back(n, true);
    if (schedule::holds_data(n)) continue;
    for (auto it = n->src.rbegin(); it != n->src.rend(); ++it) {
      if (!seen.count(it->get())) stack.emplace_back(it->get(), false);
    }
  }
  return order;
}

namespace {

// The node's op with its arguments, without sources: "reduce :sum (1)".
std::string label(const Node* n) {
  if (schedule::holds_data(n)) return "buffer";
  std::string s = tensor::node_str(n, 0);
  // node_str prints sources as "..." at depth 0: drop them.
  for (std::size_t p; (p = s.find(" ...")) != std::string::npos;) s.erase(p, 4);
  return s.substr(1, s.size() - 2);
}

}  // namespace

std::string graph_text(const Node* root) {
  std::vector<const Node*> order = graph_order(root);
  std::unordered_map<const Node*, std::size_t> num;
  std::string out;
  for (const Node* n : order) {
    num[n] = num.size() + 1;
    out += "%" + std::to_string(num[n]) + " = " + label(n);
    if (!schedule::holds_data(n)) {
      for (const auto& s : n->src) out += " %" + std::to_string(num.at(s.get()));
    }
    out += "   ; " + describe(n) + "\n";
  }
  return out;
}

namespace {

std::string dot_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"') escaped += "\\\"";
    else escaped += c;
  }
  return escaped;
}

// The kernel of S that computes each node: a kernel's own node and the nodes it inlines (those
// under it that S does not materialize; a node inlined into several kernels goes with the first).
std::unordered_map<const Node*, std::size_t> kernel_of(const schedule::Schedule& s) {
  std::unordered_map<const Node*, std::size_t> owner;
  for (std::size_t k = 0; k < s.kernels.size(); ++k) {
    std::vector<const Node*> work{s.kernels[k]};
    while (!work.empty()) {
      const Node* n = work.back();
      work.pop_back();
      if (owner.count(n) != 0) continue;
      owner[n] = k;
      for (const auto& src : n->src) {
        if (s.materialized.count(src.get()) == 0 && !schedule::holds_data(src.get())) work.push_back(src.get());
      }
    }
  }
  return owner;
}

}  // namespace

std::string graph_dot(const Node* root, const schedule::Schedule* kernels) {
  std::vector<const Node*> order = graph_order(root);
  std::unordered_map<const Node*, std::size_t> num;
  std::unordered_map<const Node*, std::size_t> owner;
  if (kernels != nullptr) owner = kernel_of(*kernels);
  std::vector<std::string> cluster_nodes(kernels != nullptr ? kernels->kernels.size() : 0);
  std::string out = "digraph tensorlisp {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n";
  std::string edges;
  for (const Node* n : order) {
    num[n] = num.size() + 1;
    const char* style = schedule::holds_data(n) ? ", style=filled, fillcolor=lightgrey" : "";
    const std::string line = "n" + std::to_string(num[n]) + " [label=\"" + dot_escape(label(n) + "\\n" + describe(n)) +
                             "\"" + style + "];\n";
    auto k = owner.find(n);
    if (k != owner.end()) {
      cluster_nodes[k->second] += "    " + line;
    } else {
      out += "  " + line;
    }
    if (!schedule::holds_data(n)) {
      for (const auto& s : n->src)
        edges += "  n" + std::to_string(num.at(s.get())) + " -> n" + std::to_string(num[n]) + ";\n";
    }
  }
  for (std::size_t k = 0; k < cluster_nodes.size(); ++k) {
    const schedule::ScheduledKernel& item = kernels->items[k];
    const std::string title = "kernel " + std::to_string(k) + ": " + schedule::kernel_kind_name(item.kind) + ", " +
                              std::to_string(item.ops) + " ops per element";
    out += "  subgraph cluster_" + std::to_string(k) + " {\n    label=\"" + dot_escape(title) +
           "\";\n    style=rounded;\n    color=steelblue;\n" + cluster_nodes[k] + "  }\n";
  }
  return out + edges + "}\n";
}

}  // namespace tl::rewrite
