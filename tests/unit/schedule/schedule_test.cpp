// SPDX-License-Identifier: Apache-2.0
// Unit tests for the scheduler (schedule/schedule.h): which nodes become kernels, each
// kernel's kind, the reduces it fuses, what it reads and its cost estimate, on graphs built
// directly (no interpreter, no optimizer rules).
#include "schedule/schedule.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../codegen/test_buffers.h"
#include "tensor/graph.h"

using tl::schedule::KernelKind;
using tl::schedule::make_schedule;
using tl::schedule::Schedule;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;
using tl::tensor::ReduceKind;

namespace {

NodeRef buffer(Graph& g, const tl::tensor::Shape& shape) { return tl::test::zero_buffer(g, DType::F32, shape); }

// x - max(x) along the last axis, exp2, / sum: softmax's shape as primitives.
NodeRef softmax(Graph& g, const NodeRef& x) {
  const auto& s = x->shape;
  NodeRef m = g.make_expand(g.make_reduce(ReduceKind::Max, x, {1}), s);
  NodeRef e = g.make_unary(Op::Exp2, g.make_binary(Op::Add, x, g.make_unary(Op::Neg, m)));
  NodeRef z = g.make_expand(g.make_reduce(ReduceKind::Sum, e, {1}), s);
  return g.make_binary(Op::Mul, e, g.make_unary(Op::Recip, z));
}

}  // namespace

TEST_CASE("schedule: an elementwise chain through views is one kernel", "[schedule]") {
  Graph g;
  NodeRef a = buffer(g, {8, 16}), b = buffer(g, {16, 8});
  NodeRef y = g.make_unary(Op::Sqrt, g.make_binary(Op::Mul, g.make_binary(Op::Add, a, g.make_permute(b, {1, 0})),
                                                   g.make_const_float(2, DType::F32, {8, 16})));
  Schedule s = make_schedule(y.get());
  REQUIRE(s.items.size() == 1);
  CHECK(s.items[0].kind == KernelKind::Elementwise);
  CHECK(s.items[0].out == y.get());
  CHECK(s.items[0].reads.size() == 2);
  CHECK(s.inputs.size() == 2);
  // add and mul (work 1 each) and sqrt (work 4, ops.def); the permute is index arithmetic
  CHECK(s.items[0].ops == 6);
  CHECK(s.items[0].flops == tl::tensor::Dim(6 * 128));
  CHECK(s.items[0].bytes == tl::tensor::Dim(3 * 128 * 4));  // two inputs read, one output written
}

TEST_CASE("schedule: a reduce takes its elementwise input and its epilogue", "[schedule]") {
  Graph g;
  NodeRef a = buffer(g, {8, 16});
  NodeRef r = g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, a, a), {1});
  NodeRef y = g.make_binary(Op::Max, r, g.make_const_float(0, DType::F32, {8, 1}));
  Schedule s = make_schedule(y.get());
  REQUIRE(s.items.size() == 1);
  CHECK(s.items[0].kind == KernelKind::Reduce);
  CHECK(s.items[0].reduce == r.get());
  CHECK(s.items[0].out == y.get());
}

TEST_CASE("schedule: softmax in f32 is one row kernel fusing both reduces", "[schedule]") {
  Graph g;
  NodeRef x = buffer(g, {4, 32});
  NodeRef y = softmax(g, x);
  Schedule s = make_schedule(y.get());
  // Per row: a pass for the max, one for the sum of the exponentials (recomputed: exp2 in f32
  // costs less than a buffer of them), one writing the output.
  REQUIRE(s.items.size() == 1);
  CHECK(s.items[0].kind == KernelKind::Rows);
  REQUIRE(s.items[0].rows.size() == 2);
  CHECK(s.items[0].rows[0]->reduce_kind == ReduceKind::Max);  // inner first
  CHECK(s.items[0].rows[1]->reduce_kind == ReduceKind::Sum);
  REQUIRE(s.items[0].reads.size() == 1);
  CHECK(s.items[0].reads[0] == x.get());
  CHECK(s.result == y.get());
  const std::string text = tl::schedule::schedule_str(s);
  CHECK(text.find("kernel 0 (rows)") == 0);
  // The reduces in pass order.
  CHECK(text.find("fuses reduce :max (1) f32 (4 1), fuses reduce :sum (1) f32 (4 1)") != std::string::npos);
}

TEST_CASE("schedule: a matmul is one reduce kernel; realized work is an input", "[schedule]") {
  Graph g;
  NodeRef a = buffer(g, {8, 12}), b = buffer(g, {12, 16});
  NodeRef a3 = g.make_expand(g.make_reshape(a, {8, 12, 1}), {8, 12, 16});
  NodeRef b3 = g.make_expand(g.make_reshape(b, {1, 12, 16}), {8, 12, 16});
  NodeRef mm = g.make_reshape(g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, a3, b3), {1}), {8, 16});
  Schedule s = make_schedule(mm.get());
  REQUIRE(s.items.size() == 1);
  CHECK(s.items[0].kind == KernelKind::Reduce);
  // The root only reshapes the reduce: the reduce's buffer is the result, no copy.
  CHECK(s.result == s.items[0].out);
  CHECK(s.items[0].out->op == Op::Reduce);
  CHECK(s.items[0].iteration == tl::tensor::Shape{8, 12, 16});
  CHECK(s.items[0].flops == tl::tensor::Dim(2 * 8 * 12 * 16));
}

TEST_CASE("schedule: work two roots share runs once; a shared reduce is materialized", "[schedule]") {
  Graph g;
  NodeRef x = buffer(g, {4, 8});
  NodeRef total = g.make_reduce(ReduceKind::Sum, x, {0, 1});
  NodeRef t = g.make_expand(total, {4, 8});
  NodeRef y1 = g.make_binary(Op::Add, x, t);
  NodeRef y2 = g.make_binary(Op::Mul, x, t);
  Schedule s = make_schedule(std::vector<const tl::tensor::Node*>{y1.get(), y2.get()});
  // The full sum is one kernel both read; each root one more.
  REQUIRE(s.items.size() == 3);
  CHECK(s.items[0].out == total.get());
  CHECK(s.items[0].kind == KernelKind::Reduce);
  CHECK(s.results.size() == 2);
  CHECK(s.materialized.count(total.get()) == 1);
  for (int i = 1; i < 3; ++i) {
    CHECK(s.items[static_cast<std::size_t>(i)].kind == KernelKind::Elementwise);
    CHECK(std::count(s.items[static_cast<std::size_t>(i)].reads.begin(),
                     s.items[static_cast<std::size_t>(i)].reads.end(), total.get()) == 1);
  }
}

TEST_CASE("schedule: gathers fuse like views; scatter-adds are kernels of their own", "[schedule]") {
  Graph g;
  NodeRef table = buffer(g, {10, 4});
  NodeRef idx = tl::test::zero_buffer(g, DType::I32, {3, 4});
  NodeRef rows = g.make_gather(table, idx, 0);
  NodeRef y = g.make_binary(Op::Mul, rows, rows);
  Schedule s = make_schedule(y.get());
  REQUIRE(s.items.size() == 1);
  CHECK(s.items[0].kind == KernelKind::Elementwise);
  NodeRef grads = buffer(g, {3, 4});
  NodeRef back = g.make_scatter_add(g.make_const_float(0, DType::F32, {10, 4}), idx, grads, 0);
  Schedule bs = make_schedule(back.get());
  REQUIRE(bs.items.size() == 1);
  CHECK(bs.items[0].kind == KernelKind::ScatterAdd);
}
