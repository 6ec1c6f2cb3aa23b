// SPDX-License-Identifier: Apache-2.0
// Unit tests for the rewrite engine (rewrite/rewrite.h): graphs built in C++, rules defined
// with defoptimizer in a set of the test's own (the built-in sets switched off), results
// compared as graph text. The Lisp side of the same features is tests/lisp/optimizers.lisp.
#include "rewrite/rewrite.h"

#include <catch2/catch.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "bindings/tensor_value.h"
#include "support/condition_error.h"
#include "tensorlisp/tensorlisp.hpp"

using tl::rewrite::Firing;
using tl::rewrite::Optimizers;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;

namespace {

// An interpreter whose only active rules are those a test defines in the set `unit`.
struct Fixture {
  tl::Interpreter lisp;
  tl::eval::Interp& in = lisp.internal();
  Graph& g = tl::tensor::runtime(in).graph;
  Optimizers& opt = tl::rewrite::optimizers(in);

  Fixture() {
    lisp.eval("(defoptimizer-set unit \"The unit tests' rules.\")");
    for (auto& s : opt.sets) s.enabled = s.name == "unit";
    opt.touch();
  }
  NodeRef input(const std::string& tag = "x") {
    auto b = tl::tensor::allocate_buffer(DType::F32, {2, 3});
    return g.make_buffer(b, {2, 3}, {}, tag);
  }
  NodeRef run(const NodeRef& root, std::vector<Firing>* log = nullptr, const std::string& backend = "cpu",
              std::unordered_map<const tl::tensor::Node*, const tl::tensor::Node*>* rewritten = nullptr) {
    return opt.run(in, root, backend, backend == "cpu" ? "host" : "gpu", log, rewritten);
  }
  std::string text(const NodeRef& n) { return tl::rewrite::graph_text(n.get()); }
  // The message of the optimizer-error `fn` throws.
  template <class F>
  std::string error(F&& fn) {
    try {
      fn();
    } catch (const tl::ConditionError& e) {
      CHECK(e.type == "optimizer-error");
      return e.what();
    } catch (const tl::Error& e) {
      CHECK(e.type() == "optimizer-error");
      return e.message();
    }
    return "no error";
  }
};

std::vector<std::string> rules_of(const std::vector<Firing>& log) {
  std::vector<std::string> names;
  for (const Firing& f : log) names.push_back(f.rule);
  return names;
}

}  // namespace

TEST_CASE("a rule rewrites the nodes it matches, to a fixed point", "[rewrite]") {
  Fixture f;
  f.lisp.eval("(defoptimizer double-neg (neg (neg ?x)) :set unit => ?x)");
  NodeRef x = f.input();
  NodeRef y =
      f.g.make_unary(Op::Exp2,
                     f.g.make_unary(Op::Neg,
                                    f.g.make_unary(Op::Neg, f.g.make_unary(Op::Neg, f.g.make_unary(Op::Neg, x)))));
  std::vector<Firing> log;
  NodeRef r = f.run(y, &log);
  // Sources first: the inner pair goes, and the outer pair, now equal to it, becomes what it became.
  CHECK(rules_of(log) == std::vector<std::string>{"double-neg"});
  CHECK(r.get() == f.g.make_unary(Op::Exp2, x).get());  // hash-consed: the same node
  // Nothing matches: the root itself comes back.
  NodeRef z = f.g.make_unary(Op::Exp2, x);
  CHECK(f.run(z).get() == z.get());
}

TEST_CASE("a repeated variable matches the same node only; commutative operands match in either order", "[rewrite]") {
  Fixture f;
  f.lisp.eval("(defoptimizer twice (add ?x ?x) :set unit => (mul ?x (const 2)))");
  f.lisp.eval("(defoptimizer times-one (mul (const 1) ?x) :set unit => ?x)");
  NodeRef x = f.input("x"), y = f.input("y");
  std::vector<Firing> log;
  f.run(f.g.make_binary(Op::Add, x, y), &log);
  CHECK(log.empty());
  NodeRef r = f.run(f.g.make_binary(Op::Add, x, x), &log);
  CHECK(rules_of(log) == std::vector<std::string>{"twice"});
  CHECK(r->op == Op::Mul);
  // (mul x 1): the pattern wrote the constant first.
  NodeRef one = f.g.make_const_float(1.0, DType::F32, {2, 3});
  log.clear();
  CHECK(f.run(f.g.make_binary(Op::Mul, x, one), &log).get() == x.get());
  CHECK(rules_of(log) == std::vector<std::string>{"times-one"});
}

TEST_CASE("op variables, guards and backend restrictions", "[rewrite]") {
  Fixture f;
  // (?f (?g ?x)) with a guard on the ops' names: sin of sin only.
  f.lisp.eval("(defoptimizer sin-sin (?f (?g ?x)) :set unit :when (and (eq ?f 'sin) (eq ?g 'sin)) => (sin ?x))");
  f.lisp.eval("(defoptimizer gpu-recip (recip (recip ?x)) :set unit :backend :gpu => ?x)");
  NodeRef x = f.input();
  std::vector<Firing> log;
  NodeRef r = f.run(f.g.make_unary(Op::Sin, f.g.make_unary(Op::Sin, x)), &log);
  CHECK(rules_of(log) == std::vector<std::string>{"sin-sin"});
  CHECK(r.get() == f.g.make_unary(Op::Sin, x).get());
  log.clear();
  f.run(f.g.make_unary(Op::Sin, f.g.make_unary(Op::Sqrt, x)), &log);
  CHECK(log.empty());
  // The GPU rule fires for a GPU backend only.
  NodeRef e = f.g.make_unary(Op::Recip, f.g.make_unary(Op::Recip, x));
  CHECK(f.run(e, &log, "cpu").get() == e.get());
  CHECK(log.empty());
  CHECK(f.run(e, &log, "cuda").get() == x.get());
  CHECK(rules_of(log) == std::vector<std::string>{"gpu-recip"});
}

TEST_CASE("the rewritten map says what each node became; the graph text shows it", "[rewrite]") {
  Fixture f;
  f.lisp.eval("(defoptimizer neg-neg (neg (neg ?x)) :set unit => ?x)");
  NodeRef x = f.input();
  NodeRef inner = f.g.make_unary(Op::Neg, f.g.make_unary(Op::Neg, x));
  NodeRef root = f.g.make_binary(Op::Add, inner, x);
  std::unordered_map<const tl::tensor::Node*, const tl::tensor::Node*> rewritten;
  NodeRef r = f.run(root, nullptr, "cpu", &rewritten);
  CHECK(rewritten.at(inner.get()) == x.get());
  CHECK(rewritten.at(root.get()) == r.get());
  const std::string t = f.text(r);
  CHECK(t.find("add %1 %1") != std::string::npos);
  CHECK(t.find("neg") == std::string::npos);
}

TEST_CASE("rule sets and the generation: switching a set off stops its rules and changes the key", "[rewrite]") {
  Fixture f;
  f.lisp.eval("(defoptimizer neg-neg (neg (neg ?x)) :set unit => ?x)");
  NodeRef x = f.input();
  NodeRef y = f.g.make_unary(Op::Neg, f.g.make_unary(Op::Neg, x));
  const auto before = f.opt.generation();
  f.lisp.eval("(optimizer-disable 'unit)");
  CHECK(f.opt.generation() != before);
  CHECK(f.run(y).get() == y.get());
  f.lisp.eval("(optimizer-enable 'unit)");
  CHECK(f.run(y).get() == x.get());
}

TEST_CASE("errors: a changed shape or dtype, a non-tensor replacement, no fixed point, a malformed pattern",
          "[rewrite]") {
  Fixture f;
  NodeRef x = f.input();
  f.lisp.eval("(defoptimizer bad-shape (exp2 ?x) :set unit => (reshape ?x '(3 2)))");
  CHECK(f.error([&] { f.run(f.g.make_unary(Op::Exp2, x)); }).find("bad-shape") != std::string::npos);
  f.lisp.eval("(optimizer-disable 'bad-shape)");
  f.lisp.eval("(defoptimizer bad-value (sin ?x) :set unit => 42)");
  CHECK(f.error([&] { f.run(f.g.make_unary(Op::Sin, x)); }).find("bad-value") != std::string::npos);
  f.lisp.eval("(optimizer-disable 'bad-value)");
  f.lisp.eval("(defoptimizer there (log2 ?x) :set unit => (neg (neg (log2 ?x))))");
  f.lisp.eval("(defoptimizer back (neg (neg ?x)) :set unit => ?x)");
  // log2 -> neg neg log2 -> log2 ... never settles: an error.
  const std::string loop = f.error([&] { f.run(f.g.make_unary(Op::Log2, x)); });
  CHECK(loop != "no error");
  CHECK(f.error([&] { f.lisp.eval("(defoptimizer broken (frobnicate ?x) :set unit => ?x)"); }).find("frobnicate") !=
        std::string::npos);
}
