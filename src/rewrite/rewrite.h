// SPDX-License-Identifier: Apache-2.0
// Graph rewriting with user rules (defoptimizer): patterns over the primitive graph, Lisp
// guards and replacements, rule sets, and a rewriter that runs them to a fixed point before
// the JIT schedules a graph.
//
// A pattern is a tree of op forms in the argument order of the prim:* builtins, e.g.
// (reduce :sum (mul (expand ?a) (expand ?b)) ?axes): ?x binds a node or an op argument (a
// repeated ?x must be the same node or an equal value), _ matches anything, (?f ?x) matches
// any op of that arity and binds its name, literals match equal arguments ((const 0) any
// zero constant), trailing op arguments may be left out, and the operands of commutative
// ops match in either order. A guard and a replacement are Lisp functions of the bound
// variables (nodes as tensors); a replacement returns a tensor, or nil to decline.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "eval/interp.h"
#include "tensor/graph.h"

namespace tl::schedule {
struct Schedule;
}

namespace tl::rewrite {

struct Pattern {
  enum class Kind { Var, Any, Literal, Op };
  Kind kind = Kind::Any;
  int var = -1;               // Var: the variable; Op: the variable naming the op (or -1)
  eval::Value literal;        // Literal: the value an op argument must equal
  tensor::Op op{};            // Op, when var < 0
  int arity = -1;             // Op with a variable op: the number of sources
  std::vector<Pattern> srcs;  // Op: source patterns
  std::vector<Pattern> args;  // Op: argument patterns, in the op's argument order (maybe fewer)
};

struct Rule {
  std::string name, doc, set, backend;  // backend "": any
  Pattern pattern;
  std::vector<std::string> vars;        // variable names, in binding order
  std::shared_ptr<tl::detail::RootCell> source, guard, replace;  // the form; functions or nil
  bool enabled = true;
  std::uint64_t fired = 0;
};

struct RuleSet {
  std::string name, doc;
  bool enabled = true;
};

// One rule firing, for explain-optimizers.
struct Firing {
  std::string rule;
  std::string before, after;  // the matched subgraph and its replacement
};

// The rules of one interpreter.
class Optimizers : public eval::Interp::Extension {
 public:
  std::vector<Rule> rules;           // in definition order (the order they are tried)
  std::vector<RuleSet> sets;
  bool enabled = true;               // all rewriting, globally
  std::vector<std::string> disabled_now;  // rule or set names disabled for a dynamic extent

  // Compiles and adds (or replaces) a rule. Throws a ConditionError naming it when the
  // pattern is malformed.
  void define(eval::Interp& in, Rule rule, eval::Value pattern);
  RuleSet& set(const std::string& name);
  const Rule* find_rule(const std::string& name) const;
  // Changes whenever a rule or set is added or switched on or off: part of a plan's key.
  std::uint64_t generation() const { return generation_; }
  void touch() { ++generation_; }

  // Rewrites the graph under `root` to a fixed point with the rules active for `backend`
  // (a rule restricted to a backend matches its name, or its kind: "gpu" or "host").
  // `log` (when given) receives each firing. Throws optimizer-error when a replacement
  // changes shape or dtype, or when the rules do not reach a fixed point.
  // `rewritten` (when given) receives each node of the graph and what it became.
  tensor::NodeRef run(eval::Interp& in, const tensor::NodeRef& root, const std::string& backend,
                      const std::string& kind, std::vector<Firing>* log = nullptr,
                      std::unordered_map<const tensor::Node*, const tensor::Node*>* rewritten = nullptr);

 private:
  std::uint64_t generation_ = 1;
  // Rules by root op, and rules whose root is a variable or an op variable.
  std::array<std::vector<std::size_t>, tensor::kOpCount> by_op_;
  std::vector<std::size_t> any_op_;
  void index();
  bool active(const Rule& r, const std::string& backend) const;
};

Optimizers& optimizers(eval::Interp& in);

// The slots of an op's form after its name: S a source, A an argument, * repeats the
// previous slot ("ASA" for reduce: kind, source, axes).
const char* op_signature(tensor::Op op);

// Argument k of node n (an A slot of its signature) as a Lisp value, as the prim:* builtins
// take it: a const's value, a reduce's kind or axes, a reshape's shape...
eval::Value node_argument(eval::Interp& in, const tensor::Node* n, std::size_t k);

// The nodes under root, each once, sources before their users (data nodes are leaves).
std::vector<const tensor::Node*> graph_order(const tensor::Node* root);

// The graph as numbered lines, sources first: "%2 = neg %1".
std::string graph_text(const tensor::Node* root);
// The graph in Graphviz's dot language; with `kernels` (a schedule of root), each kernel's
// nodes are a cluster labelled with the kernel's number and kind.
std::string graph_dot(const tensor::Node* root, const schedule::Schedule* kernels = nullptr);

void register_rewrite_builtins(eval::Interp& in);

}  // namespace tl::rewrite
