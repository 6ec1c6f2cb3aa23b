// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/graph.h and runtime/reference.h: hash-consing and node lifetime, the
// shape and dtype rules' errors, and the reference executor op by op against hand-computed values
// (every realize also runs the CPU JIT and checks it agrees).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/elements.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "tensor/graph.h"

using Catch::Matchers::Contains;
using tl::tensor::Bindings;
using tl::tensor::Buffer;
using tl::tensor::Dim;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;
using tl::tensor::Range;
using tl::tensor::ReduceKind;
using tl::tensor::Shape;

static_assert(std::is_same_v<tl::tensor::GraphError, tl::ConditionError>);

namespace {

using Ints = std::vector<std::int64_t>;
using Floats = std::vector<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kU32Max = std::numeric_limits<std::uint32_t>::max();

// A buffer node of dtype t holding the values (converted and rounded as the dtype stores them).
NodeRef floats(Graph& g, DType t, const Shape& shape, const Floats& v, Bindings b = {}) {
  auto buf = std::make_shared<Buffer>(t, v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    tl::runtime::store_float(*buf, static_cast<std::int64_t>(i), v[i]);
  return g.make_buffer(buf, shape, std::move(b));
}

NodeRef ints(Graph& g, DType t, const Shape& shape, const Ints& v, Bindings b = {}) {
  auto buf = std::make_shared<Buffer>(t, v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    tl::runtime::store_int(*buf, static_cast<std::int64_t>(i), v[i]);
  return g.make_buffer(buf, shape, std::move(b));
}

// The CPU JIT, which every realize below also runs: each hand-computed case checks it too.
tl::runtime::JitDevice& jit() {
  static auto device = std::make_unique<tl::runtime::JitDevice>(tl::runtime::Backend::load("cpu", "builtin", ""));
  return *device;
}

bool has_assign(const tl::tensor::Node* root) {
  std::vector<const tl::tensor::Node*> stack{root};
  std::set<const tl::tensor::Node*> seen;
  while (!stack.empty()) {
    const tl::tensor::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == Op::Assign) return true;
    for (const auto& s : n->src) stack.push_back(s.get());
  }
  return false;
}

// Equal elements: integers bit for bit; floats equal, both NaN, or (for transcendental
// functions computed in float by the JIT and in double by the reference) within 2 ulp.
std::string compare_buffers(const Buffer& want, const Buffer& got) {
  if (want.dtype != got.dtype || want.count() != got.count()) return "dtype or size differ";
  for (std::size_t i = 0; i < want.count(); ++i) {
    auto k = static_cast<std::int64_t>(i);
    if (!tl::tensor::is_float(want.dtype)) {
      if (tl::runtime::load_bits(want, k) != tl::runtime::load_bits(got, k)) {
        return "element " + std::to_string(i) + ": " + std::to_string(tl::runtime::load_int(want, k)) + " vs " +
               std::to_string(tl::runtime::load_int(got, k));
      }
      continue;
    }
    double a = tl::runtime::load_float(want, k), b = tl::runtime::load_float(got, k);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b && std::signbit(a) == std::signbit(b)) continue;
    double ulp = want.dtype == DType::F64 ? 2.3e-16 : want.dtype == DType::F32 ? 1.2e-7 : 8e-3;
    if (std::abs(a - b) <= 2 * ulp * std::max(std::abs(a), std::abs(b))) continue;
    char msg[120];
    std::snprintf(msg, sizeof msg, "element %zu: %.17g vs %.17g", i, a, b);
    return msg;
  }
  return "";
}

std::shared_ptr<Buffer> realize(const NodeRef& n, const Bindings& b = {}) {
  std::shared_ptr<Buffer> buf;
  try {
    buf = tl::runtime::realize_reference(n.get(), b);
  } catch (const tl::ConditionError& e) {
    // The JIT fails the same way.
    std::string jit_type = "(no error)";
    try {
      jit().realize(n.get(), b);
    } catch (const tl::ConditionError& je) {
      jit_type = je.type;
    }
    INFO("the reference raised " << e.type << ": " << e.what());
    CHECK(jit_type == e.type);
    throw;
  }
  REQUIRE(buf != nullptr);
  CHECK(buf->dtype == n->dtype);
  if (!has_assign(n.get())) {
    auto got = jit().realize(n.get(), b);
    INFO("graph: " << tl::tensor::node_str(n.get()));
    CHECK(compare_buffers(*buf, *got) == "");
  }
  return buf;
}

Floats as_floats(const NodeRef& n, const Bindings& b = {}) {
  auto buf = realize(n, b);
  Floats out;
  for (std::size_t i = 0; i < buf->count(); ++i)
    out.push_back(tl::runtime::load_float(*buf, static_cast<std::int64_t>(i)));
  return out;
}

Ints as_ints(const NodeRef& n, const Bindings& b = {}) {
  auto buf = realize(n, b);
  Ints out;
  for (std::size_t i = 0; i < buf->count(); ++i)
    out.push_back(tl::runtime::load_int(*buf, static_cast<std::int64_t>(i)));
  return out;
}

std::vector<std::uint64_t> as_bits(const NodeRef& n) {
  auto buf = realize(n);
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < buf->count(); ++i)
    out.push_back(tl::runtime::load_bits(*buf, static_cast<std::int64_t>(i)));
  return out;
}

// Floats printed exactly, so NaN, infinities and the sign of zero compare as text.
std::string fmt(const Floats& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    char buf[40];
    if (std::isnan(v[i])) {
      std::snprintf(buf, sizeof buf, "nan");
    } else {
      std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    }
    s += (i ? " " : "") + std::string(buf);
  }
  return s + "]";
}

// The float value as the dtype stores it.
double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

NodeRef bin(Graph& g, Op op, const NodeRef& a, const NodeRef& b) { return g.make_binary(op, a, b); }

// The ConditionError that f throws.
tl::ConditionError error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tl::ConditionError& e) {
    return e;
  }
  FAIL("no ConditionError");
  throw std::logic_error("unreachable");
}

}  // namespace

// --- hash-consing and lifetime ---------------------------------------------------------------

TEST_CASE("graph: building the same expression twice gives the same node", "[tensor][graph]") {
  Graph g;
  NodeRef c1 = g.make_const_float(1.5, DType::F32, {2, 3});
  NodeRef c2 = g.make_const_float(1.5, DType::F32, {2, 3});
  CHECK(c1.get() == c2.get());
  CHECK(c1 == c2);
  CHECK(c1.get() != g.make_const_float(2.5, DType::F32, {2, 3}).get());
  CHECK(c1.get() != g.make_const_float(1.5, DType::F64, {2, 3}).get());
  CHECK(c1.get() != g.make_const_float(1.5, DType::F32, {3, 2}).get());
  // Constants are interned by their value in the dtype.
  CHECK(g.make_const_int(1, DType::F32, {2}).get() ==
        g.make_const_float(1.0, DType::F32, {2}).get());
  CHECK(g.make_const_float(0.1, DType::F32, {}).get() ==
        g.make_const_float(f32(0.1), DType::F32, {}).get());
  CHECK(g.make_const_float(0.1, DType::F64, {}).get() !=
        g.make_const_float(f32(0.1), DType::F64, {}).get());
  CHECK(g.make_const_int(300, DType::U8, {}).get() == g.make_const_int(44, DType::U8, {}).get());
  CHECK(g.make_const_int(300, DType::I32, {}).get() != g.make_const_int(44, DType::I32, {}).get());
  CHECK(g.make_const_float(2.7, DType::I32, {}).get() == g.make_const_int(2, DType::I32, {}).get());
  CHECK(g.make_const_float(kNaN, DType::F32, {}).get() ==
        g.make_const_float(kNaN, DType::F32, {}).get());
  CHECK(g.make_const_float(-0.0, DType::F32, {}).get() !=
        g.make_const_float(0.0, DType::F32, {}).get());
  CHECK(g.make_const_int(1, DType::I32, {2}).get() != g.make_const_int(1, DType::I64, {2}).get());
  CHECK(g.make_const_int(1, DType::I32, {Dim::var("n")}).get() ==
        g.make_const_int(1, DType::I32, {Dim::var("n")}).get());
  CHECK(g.make_const_int(1, DType::I32, {Dim::var("n")}).get() !=
        g.make_const_int(1, DType::I32, {Dim::var("m")}).get());

  // Buffers are interned by identity.
  auto buf = std::make_shared<Buffer>(DType::F32, 6);
  NodeRef x = g.make_buffer(buf, {2, 3});
  CHECK(x.get() == g.make_buffer(buf, {2, 3}).get());
  CHECK(x.get() != g.make_buffer(std::make_shared<Buffer>(DType::F32, 6), {2, 3}).get());
  CHECK(x.get() != g.make_buffer(buf, {6}).get());

  // Expressions over the same sources and arguments.
  NodeRef s1 = bin(g, Op::Add, x, c1);
  NodeRef s2 = bin(g, Op::Add, x, c2);
  CHECK(s1.get() == s2.get());
  CHECK(s1.get() != bin(g, Op::Mul, x, c1).get());
  CHECK(g.make_unary(Op::Sqrt, s1).get() == g.make_unary(Op::Sqrt, s2).get());
  CHECK(g.make_reduce(ReduceKind::Sum, x, {1}).get() ==
        g.make_reduce(ReduceKind::Sum, x, {-1}).get());
  CHECK(g.make_reduce(ReduceKind::Sum, x, {0, 1}).get() ==
        g.make_reduce(ReduceKind::Sum, x, {1, 0}).get());
  CHECK(g.make_reduce(ReduceKind::Sum, x, {1}).get() !=
        g.make_reduce(ReduceKind::Max, x, {1}).get());
  CHECK(g.make_reduce(ReduceKind::Sum, x, {1}).get() !=
        g.make_reduce(ReduceKind::Sum, x, {0}).get());
  CHECK(g.make_permute(x, {1, 0}).get() == g.make_permute(x, {-1, 0}).get());
  CHECK(g.make_pad(x, {{1, 0}, {0, 0}}).get() == g.make_pad(x, {{1, 0}, {0, 0}}).get());
  CHECK(g.make_pad(x, {{1, 0}, {0, 0}}).get() != g.make_pad(x, {{0, 1}, {0, 0}}).get());
  CHECK(g.make_iota({4}, 0, DType::I32).get() == g.make_iota({4}, 0, DType::I32).get());
  CHECK(g.make_cast(x, DType::I32).get() != g.make_cast(x, DType::U32, true).get());

  // Ops that change nothing return their source.
  CHECK(g.make_cast(x, DType::F32).get() == x.get());
  CHECK(g.make_reduce(ReduceKind::Sum, x, {}).get() == x.get());
  CHECK(g.make_permute(x, {0, 1}).get() == x.get());
  CHECK(g.make_reshape(x, {2, 3}).get() == x.get());
  CHECK(g.make_expand(x, {2, 3}).get() == x.get());
  CHECK(g.make_pad(x, {{0, 0}, {0, 0}}).get() == x.get());
  CHECK(g.make_shrink(x, {{0, 2}, {0, 3}}).get() == x.get());
  CHECK(g.make_flip(x, {0, 0}).get() == x.get());
  // A reshape of a reshape stays two nodes in the graph (the views optimizer rules merge
  // them before scheduling).
  NodeRef r = g.make_reshape(g.make_reshape(x, {6}), {3, 2});
  CHECK(r->src[0]->op == Op::Reshape);
  CHECK(r->src[0]->src[0].get() == x.get());
}

TEST_CASE("graph: op names round trip", "[tensor][graph]") {
  for (int i = 0; i < tl::tensor::kOpCount; ++i) {
    auto op = static_cast<Op>(i);
    INFO(tl::tensor::op_name(op));
    CHECK(tl::tensor::op_from_name(tl::tensor::op_name(op)) == op);
  }
  CHECK_FALSE(tl::tensor::op_from_name("no-such-op").has_value());
  CHECK(tl::tensor::op_info(Op::Where).arity == 3);
  CHECK(tl::tensor::op_info(Op::Reshape).group == tl::tensor::OpGroup::Movement);
}

TEST_CASE("graph: nodes die with their last reference", "[tensor][graph]") {
  Graph g;
  CHECK(g.live_nodes() == 0);
  {
    NodeRef x = ints(g, DType::I32, {3}, {1, 2, 3});
    NodeRef c = g.make_const_int(1, DType::I32, {3});
    NodeRef y = bin(g, Op::Add, x, c);
    NodeRef y2 = bin(g, Op::Add, x, c);  // the same node: no new one
    CHECK(g.live_nodes() == 3);
    NodeRef root = g.make_unary(Op::Neg, y);
    CHECK(g.live_nodes() == 4);
    // Sources stay alive while a consumer holds them.
    x = NodeRef();
    c = NodeRef();
    y = NodeRef();
    y2 = NodeRef();
    CHECK(g.live_nodes() == 4);
    CHECK(as_ints(root) == Ints{-2, -3, -4});
  }
  CHECK(g.live_nodes() == 0);
}

TEST_CASE("graph: a 100000-node chain is built, realized and freed without recursion",
          "[tensor][graph]") {
  constexpr int kLength = 100000;
  Graph g;
  {
    NodeRef x = ints(g, DType::I32, {2}, {0, 5});
    NodeRef one = g.make_const_int(1, DType::I32, {2});
    for (int i = 0; i < kLength; ++i) x = bin(g, Op::Add, x, one);
    CHECK(g.live_nodes() == kLength + 2);
    CHECK(as_ints(x) == Ints{kLength, kLength + 5});
    one = NodeRef();
    CHECK(g.live_nodes() == kLength + 2);
    x = NodeRef();  // frees the whole chain
    CHECK(g.live_nodes() == 0);
  }
  // Building it again gives new nodes that are freed the same way.
  {
    NodeRef x = g.make_const_float(0.0, DType::F32, {});
    for (int i = 0; i < kLength; ++i) x = g.make_unary(Op::Sin, x);
    CHECK(g.live_nodes() == kLength + 1);
  }
  CHECK(g.live_nodes() == 0);
}

// --- shape and dtype rules -------------------------------------------------------------------

TEST_CASE("graph: elementwise rules report the op and both shapes or dtypes", "[tensor][graph]") {
  Graph g;
  NodeRef a = g.make_const_float(1, DType::F32, {2, 3});
  NodeRef b = g.make_const_float(1, DType::F32, {3, 2});
  NodeRef i = g.make_const_int(1, DType::I32, {2, 3});
  NodeRef flag = g.make_const_int(1, DType::Bool, {2, 3});

  auto e = error_of([&] { bin(g, Op::Add, a, b); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("add") && Contains("(2 3)") && Contains("(3 2)"));

  e = error_of([&] { bin(g, Op::Mul, a, i); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("mul") && Contains("f32") && Contains("i32"));

  const Dim n = Dim::var("n");
  e = error_of([&] {
    bin(g, Op::Cmplt, g.make_const_int(1, DType::I32, {n, 2}),
        g.make_const_int(1, DType::I32, {2, n}));
  });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("cmplt") && Contains("(n 2)") && Contains("(2 n)"));

  for (Op op : {Op::Idiv, Op::Mod}) {
    e = error_of([&] { bin(g, op, a, a); });
    CHECK(e.type == "dtype-error");
    CHECK_THAT(e.what(), Contains(tl::tensor::op_name(op)) && Contains("f32"));
  }
  for (Op op : {Op::And, Op::Or, Op::Xor}) {
    e = error_of([&] { bin(g, op, a, a); });
    CHECK(e.type == "dtype-error");
    CHECK_THAT(e.what(), Contains(tl::tensor::op_name(op)) && Contains("f32"));
  }
  for (Op op : {Op::Recip, Op::Sqrt, Op::Exp2, Op::Log2, Op::Sin}) {
    e = error_of([&] { g.make_unary(op, i); });
    CHECK(e.type == "dtype-error");
    CHECK_THAT(e.what(), Contains(tl::tensor::op_name(op)) && Contains("i32"));
  }
  e = error_of([&] { g.make_unary(Op::Neg, flag); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("neg") && Contains("bool"));
  // Comparisons give bool; integer and bool bitwise ops are allowed.
  CHECK(bin(g, Op::Cmpeq, a, a)->dtype == DType::Bool);
  CHECK(bin(g, Op::Xor, flag, flag)->dtype == DType::Bool);
  CHECK(bin(g, Op::And, i, i)->dtype == DType::I32);

  e = error_of([&] { g.make_where(a, a, a); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("where") && Contains("f32"));
  e = error_of([&] { g.make_where(flag, a, b); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("where") && Contains("(2 3)") && Contains("(3 2)"));
  e = error_of([&] { g.make_where(flag, a, i); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("where") && Contains("f32") && Contains("i32"));

  e = error_of([&] { g.make_cast(a, DType::F16, true); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("bitcast") && Contains("f32") && Contains("f16"));
  e = error_of([&] { g.make_cast(a, DType::I64, true); });
  CHECK(e.type == "dtype-error");
}

TEST_CASE("graph: source, reduce and movement rules report the op and shapes", "[tensor][graph]") {
  Graph g;
  NodeRef x = g.make_const_float(1, DType::F32, {2, 3});

  auto e = error_of([&] { g.make_const_int(0, DType::I32, {2, -1}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("const") && Contains("(2 -1)"));
  e = error_of([&] { g.make_iota({2, 3}, 2, DType::I32); });
  CHECK(e.type == "index-error");
  CHECK_THAT(e.what(), Contains("iota") && Contains("(2 3)"));
  e = error_of([&] { g.make_iota({2, 3}, -1, DType::I32); });
  CHECK(e.type == "index-error");
  e = error_of([&] { g.make_iota({2}, 0, DType::Bool); });
  CHECK(e.type == "dtype-error");
  CHECK_THAT(e.what(), Contains("iota") && Contains("bool"));

  e = error_of([&] { g.make_reduce(ReduceKind::Sum, x, {2}); });
  CHECK(e.type == "index-error");
  CHECK_THAT(e.what(), Contains("reduce") && Contains("(2 3)"));
  e = error_of([&] { g.make_reduce(ReduceKind::Sum, x, {-3}); });
  CHECK(e.type == "index-error");
  e = error_of([&] { g.make_reduce(ReduceKind::Max, x, {0, -2}); });
  CHECK(e.type == "index-error");
  CHECK_THAT(e.what(), Contains("reduce") && Contains("repeated"));
  NodeRef flag = g.make_const_int(1, DType::Bool, {2});
  for (ReduceKind k : {ReduceKind::Sum, ReduceKind::Prod}) {
    e = error_of([&] { g.make_reduce(k, flag, {0}); });
    CHECK(e.type == "dtype-error");
    CHECK_THAT(e.what(), Contains("reduce") && Contains("bool"));
  }
  CHECK(g.make_reduce(ReduceKind::Max, flag, {0})->shape == Shape{1});

  e = error_of([&] { g.make_reshape(x, {4, 2}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("reshape") && Contains("(2 3)") && Contains("(4 2)") &&
                           Contains("6") && Contains("8"));
  e = error_of([&] { g.make_reshape(x, {-2, -3}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("reshape") && Contains("(-2 -3)"));
  e = error_of([&] { g.make_reshape(x, {Dim::var("n"), 3}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("(n 3)") && Contains("(* 3 n)"));

  e = error_of([&] { g.make_permute(x, {0, 0}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("permute") && Contains("(0 0)") && Contains("(2 3)"));
  e = error_of([&] { g.make_permute(x, {1, 0, 2}); });
  CHECK(e.type == "shape-error");
  e = error_of([&] { g.make_permute(x, {2, 0}); });
  CHECK(e.type == "shape-error");

  e = error_of([&] { g.make_expand(x, {4, 3}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("expand") && Contains("(2 3)") && Contains("(4 3)"));
  e = error_of([&] { g.make_expand(x, {1, 2, 3}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("expand") && Contains("(1 2 3)") && Contains("ranks"));

  e = error_of([&] { g.make_pad(x, {{0, 0}, {-1, 0}}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("pad") && Contains("negative"));
  e = error_of([&] { g.make_pad(x, {{0, 0}}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("pad") && Contains("(2 3)"));

  e = error_of([&] { g.make_shrink(x, {{0, 2}, {0, 4}}); });
  CHECK(e.type == "index-error");
  CHECK_THAT(e.what(), Contains("shrink") && Contains("[0, 4)") && Contains("3"));
  e = error_of([&] { g.make_shrink(x, {{2, 1}, {0, 3}}); });
  CHECK(e.type == "index-error");
  e = error_of([&] { g.make_shrink(x, {{-1, 1}, {0, 3}}); });
  CHECK(e.type == "index-error");
  e = error_of([&] { g.make_shrink(x, {{0, 1}}); });
  CHECK(e.type == "shape-error");

  e = error_of([&] { g.make_flip(x, {1}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("flip") && Contains("(2 3)"));

  auto buf = std::make_shared<Buffer>(DType::F32, 6);
  NodeRef target = g.make_buffer(buf, {2, 3});
  e = error_of([&] { g.make_assign(x, x); });
  CHECK(e.type == "type-error");
  e = error_of([&] { g.make_assign(target, g.make_const_float(1, DType::F32, {3, 2})); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("assign") && Contains("(2 3)") && Contains("(3 2)"));
  e = error_of([&] { g.make_assign(target, g.make_const_int(1, DType::I32, {2, 3})); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("f32") && Contains("i32"));
}

TEST_CASE("graph: movement ops compute their shapes", "[tensor][graph]") {
  Graph g;
  const Dim n = Dim::var("n");
  NodeRef x = g.make_const_float(1, DType::F32, {2, n, 3});
  CHECK(g.make_permute(x, {2, 0, 1})->shape == Shape{3, 2, n});
  CHECK(g.make_reshape(x, {6 * n})->shape == Shape{6 * n});
  CHECK(g.make_pad(x, {{1, 0}, {0, n}, {2, 2}})->shape == Shape{3, 2 * n, 7});
  CHECK(g.make_shrink(x, {{0, 1}, {1, n}, {1, 3}})->shape == Shape{1, n - 1, 2});
  CHECK(g.make_reduce(ReduceKind::Sum, x, {1, 2})->shape == Shape{2, 1, 1});
  CHECK(g.make_expand(g.make_const_float(1, DType::F32, {1, 3}), {n, 3})->shape == Shape{n, 3});
  CHECK(bin(g, Op::Cmplt, x, x)->shape == x->shape);
}

// --- the reference executor ------------------------------------------------------------------

TEST_CASE("reference: f32 ops round to float and follow IEEE", "[tensor][reference]") {
  Graph g;
  const DType t = DType::F32;
  NodeRef a = floats(g, t, {4}, {1, 0.1, 1e30, -kInf});
  NodeRef b = floats(g, t, {4}, {2, 0.2, 1e30, kInf});
  CHECK(fmt(as_floats(bin(g, Op::Add, a, b))) ==
        fmt({3, static_cast<double>(0.1f + 0.2f), static_cast<double>(1e30f + 1e30f), kNaN}));
  CHECK(fmt(as_floats(bin(g, Op::Mul, floats(g, t, {3}, {3e38, 0.5, -2}),
                          floats(g, t, {3}, {10, 0.25, 0})))) == fmt({kInf, 0.125, -0.0}));
  CHECK(fmt(as_floats(g.make_unary(Op::Neg, floats(g, t, {3}, {1, -0.0, 0.0})))) ==
        fmt({-1, 0.0, -0.0}));
  CHECK(fmt(as_floats(g.make_unary(Op::Recip, floats(g, t, {5}, {2, 0.0, -0.0, kInf, 3})))) ==
        fmt({0.5, kInf, -kInf, 0, f32(1.0 / 3.0)}));
  CHECK(fmt(as_floats(g.make_unary(Op::Sqrt, floats(g, t, {4}, {4, 2, -1, kInf})))) ==
        fmt({2, f32(std::sqrt(2.0)), kNaN, kInf}));
  CHECK(fmt(as_floats(g.make_unary(Op::Exp2, floats(g, t, {4}, {3, -1, 0.5, -kInf})))) ==
        fmt({8, 0.5, f32(std::sqrt(2.0)), 0}));
  CHECK(fmt(as_floats(g.make_unary(Op::Log2, floats(g, t, {4}, {8, 0, -1, 0.5})))) ==
        fmt({3, -kInf, kNaN, -1}));
  CHECK(fmt(as_floats(g.make_unary(Op::Sin, floats(g, t, {2}, {0, std::acos(-1.0) / 2})))) ==
        fmt({0, 1}));
  NodeRef p = floats(g, t, {4}, {1, kNaN, 5, 3});
  NodeRef q = floats(g, t, {4}, {2, 1, -5, kNaN});
  CHECK(fmt(as_floats(bin(g, Op::Max, p, q))) == fmt({2, kNaN, 5, kNaN}));
  CHECK(as_ints(bin(g, Op::Cmplt, p, q)) == Ints{1, 0, 0, 0});
  CHECK(as_ints(bin(g, Op::Cmplt, q, p)) == Ints{0, 0, 1, 0});
  CHECK(as_ints(bin(g, Op::Cmpeq, p, p)) == Ints{1, 0, 1, 1});
  CHECK(as_ints(bin(g, Op::Cmpeq, p, floats(g, t, {4}, {1, kNaN, 5, 4}))) == Ints{1, 0, 1, 0});
}

TEST_CASE("reference: f64 ops compute in double", "[tensor][reference]") {
  Graph g;
  const DType t = DType::F64;
  CHECK(fmt(as_floats(bin(g, Op::Add, floats(g, t, {2}, {0.1, 1e308}),
                          floats(g, t, {2}, {0.2, 1e308})))) == fmt({0.30000000000000004, kInf}));
  CHECK(fmt(as_floats(bin(g, Op::Mul, floats(g, t, {2}, {1e300, 1.0 / 3}),
                          floats(g, t, {2}, {1e10, 3})))) == fmt({kInf, 1}));
  CHECK(fmt(as_floats(g.make_unary(Op::Recip, floats(g, t, {1}, {3})))) == fmt({1.0 / 3.0}));
  CHECK(fmt(as_floats(g.make_unary(Op::Sqrt, floats(g, t, {1}, {2})))) == fmt({std::sqrt(2.0)}));
}

TEST_CASE("reference: f16 and bf16 round every result to nearest even", "[tensor][reference]") {
  Graph g;
  const double tiny = std::ldexp(1.0, -11);  // half of f16's spacing at 1.0
  NodeRef a = floats(g, DType::F16, {4}, {1, 65504, 0.1, 1});
  NodeRef b = floats(g, DType::F16, {4}, {tiny, 16, 0, 3 * tiny});
  // 1 + 2^-11 ties to 1; 65520 ties to infinity; 0.1 is stored as the nearest half.
  CHECK(fmt(as_floats(bin(g, Op::Add, a, b))) == fmt({1, kInf, 0.0999755859375, 1 + 4 * tiny}));
  CHECK(fmt(as_floats(bin(g, Op::Mul, floats(g, DType::F16, {2}, {300, -300}),
                          floats(g, DType::F16, {2}, {300, 300})))) == fmt({kInf, -kInf}));
  CHECK(fmt(as_floats(g.make_unary(Op::Sqrt, floats(g, DType::F16, {1}, {2})))) ==
        fmt({1.4140625}));
  CHECK(fmt(as_floats(g.make_unary(Op::Recip, floats(g, DType::F16, {2}, {0, 65536})))) ==
        fmt({kInf, 0}));
  // The smallest subnormal half survives; half of it rounds to zero.
  CHECK(fmt(as_floats(bin(
            g, Op::Mul, floats(g, DType::F16, {2}, {std::ldexp(1.0, -14), std::ldexp(1.0, -14)}),
            floats(g, DType::F16, {2}, {std::ldexp(1.0, -10), std::ldexp(1.0, -11)})))) ==
        fmt({std::ldexp(1.0, -24), 0}));

  // 1 + 2^-8 ties to 1; 257 ties to 256; 259 ties to 260; 2^127 + 2^127 overflows.
  NodeRef c = floats(g, DType::BF16, {4}, {1, 256, 256, std::ldexp(1.0, 127)});
  NodeRef d = floats(g, DType::BF16, {4}, {std::ldexp(1.0, -8), 1, 3, std::ldexp(1.0, 127)});
  CHECK(fmt(as_floats(bin(g, Op::Add, c, d))) == fmt({1, 256, 260, kInf}));
  // 17 * 17 = 289 ties between 288 and 290: to 288.
  CHECK(fmt(as_floats(bin(g, Op::Mul, floats(g, DType::BF16, {2}, {17, 3}),
                          floats(g, DType::BF16, {2}, {17, 100})))) == fmt({288, 300}));
  CHECK(fmt(as_floats(bin(g, Op::Max, floats(g, DType::BF16, {2}, {kNaN, 2}),
                          floats(g, DType::BF16, {2}, {1, -2})))) == fmt({kNaN, 2}));
}

TEST_CASE("reference: i8 arithmetic wraps and divides toward zero", "[tensor][reference]") {
  Graph g;
  const DType t = DType::I8;
  CHECK(as_ints(bin(g, Op::Add, ints(g, t, {3}, {127, -128, 100}),
                    ints(g, t, {3}, {1, -1, 100}))) == Ints{-128, 127, -56});
  CHECK(as_ints(bin(g, Op::Mul, ints(g, t, {3}, {16, -128, 3}), ints(g, t, {3}, {16, -1, -5}))) ==
        Ints{0, -128, -15});
  CHECK(as_ints(g.make_unary(Op::Neg, ints(g, t, {3}, {-128, 5, 0}))) == Ints{-128, -5, 0});
  NodeRef a = ints(g, t, {6}, {-7, 7, 7, -128, 5, -7});
  NodeRef b = ints(g, t, {6}, {2, -2, 0, -1, 1, -2});
  CHECK(as_ints(bin(g, Op::Idiv, a, b)) == Ints{-3, -3, 0, -128, 5, 3});
  CHECK(as_ints(bin(g, Op::Mod, a, b)) == Ints{-1, 1, 7, 0, 0, -1});
  CHECK(as_ints(bin(g, Op::Max, ints(g, t, {2}, {-1, 5}), ints(g, t, {2}, {3, -5}))) == Ints{3, 5});
  CHECK(as_ints(bin(g, Op::Cmplt, ints(g, t, {2}, {-1, 5}), ints(g, t, {2}, {3, -5}))) ==
        Ints{1, 0});
  NodeRef m = ints(g, t, {3}, {-1, 0x55, -1});
  NodeRef k = ints(g, t, {3}, {0x0f, 0x2a, 1});
  CHECK(as_ints(bin(g, Op::And, m, k)) == Ints{15, 0, 1});
  CHECK(as_ints(bin(g, Op::Or, m, k)) == Ints{-1, 127, -1});
  CHECK(as_ints(bin(g, Op::Xor, m, k)) == Ints{-16, 127, -2});
  // i16 wraps at its own width.
  CHECK(as_ints(bin(g, Op::Add, ints(g, DType::I16, {1}, {32767}),
                    ints(g, DType::I16, {1}, {1}))) == Ints{-32768});
}

TEST_CASE("reference: u8 arithmetic wraps and compares unsigned", "[tensor][reference]") {
  Graph g;
  const DType t = DType::U8;
  CHECK(as_ints(bin(g, Op::Add, ints(g, t, {3}, {250, 255, 1}), ints(g, t, {3}, {10, 1, 2}))) ==
        Ints{4, 0, 3});
  CHECK(as_ints(bin(g, Op::Mul, ints(g, t, {2}, {16, 15}), ints(g, t, {2}, {16, 17}))) ==
        Ints{0, 255});
  CHECK(as_ints(g.make_unary(Op::Neg, ints(g, t, {2}, {1, 0}))) == Ints{255, 0});
  CHECK(as_ints(bin(g, Op::Idiv, ints(g, t, {3}, {255, 7, 200}), ints(g, t, {3}, {2, 0, 201}))) ==
        Ints{127, 0, 0});
  CHECK(as_ints(bin(g, Op::Mod, ints(g, t, {3}, {255, 7, 200}), ints(g, t, {3}, {10, 0, 201}))) ==
        Ints{5, 7, 200});
  CHECK(as_ints(bin(g, Op::Max, ints(g, t, {2}, {200, 3}), ints(g, t, {2}, {100, 4}))) ==
        Ints{200, 4});
  CHECK(as_ints(bin(g, Op::Cmplt, ints(g, t, {2}, {200, 3}), ints(g, t, {2}, {100, 4}))) ==
        Ints{0, 1});
  CHECK(as_ints(bin(g, Op::Xor, ints(g, t, {1}, {0xf0}), ints(g, t, {1}, {0xff}))) == Ints{0x0f});
}

TEST_CASE("reference: i32 and i64 wrap, including the most negative value over -1",
          "[tensor][reference]") {
  Graph g;
  DType t = DType::I32;
  CHECK(as_ints(bin(g, Op::Add, ints(g, t, {2}, {2147483647, kI32Min}),
                    ints(g, t, {2}, {1, -1}))) == Ints{kI32Min, 2147483647});
  CHECK(as_ints(bin(g, Op::Mul, ints(g, t, {2}, {65536, 46341}),
                    ints(g, t, {2}, {65536, 46341}))) == Ints{0, -2147479015});
  NodeRef a = ints(g, t, {5}, {kI32Min, kI32Min, -7, 7, 9});
  NodeRef b = ints(g, t, {5}, {-1, 0, 2, -3, 0});
  CHECK(as_ints(bin(g, Op::Idiv, a, b)) == Ints{kI32Min, 0, -3, -2, 0});
  CHECK(as_ints(bin(g, Op::Mod, a, b)) == Ints{0, kI32Min, -1, 1, 9});
  CHECK(as_ints(g.make_unary(Op::Neg, ints(g, t, {2}, {kI32Min, 3}))) == Ints{kI32Min, -3});

  t = DType::I64;
  CHECK(as_ints(bin(g, Op::Add, ints(g, t, {2}, {kI64Max, kI64Min}), ints(g, t, {2}, {1, -1}))) ==
        Ints{kI64Min, kI64Max});
  CHECK(as_ints(bin(g, Op::Mul, ints(g, t, {2}, {std::int64_t{1} << 32, 3}),
                    ints(g, t, {2}, {std::int64_t{1} << 32, -5}))) == Ints{0, -15});
  NodeRef c = ints(g, t, {4}, {kI64Min, kI64Min, -9, kI64Max});
  NodeRef d = ints(g, t, {4}, {-1, 0, 4, kI64Max});
  CHECK(as_ints(bin(g, Op::Idiv, c, d)) == Ints{kI64Min, 0, -2, 1});
  CHECK(as_ints(bin(g, Op::Mod, c, d)) == Ints{0, kI64Min, -1, 0});
  CHECK(as_ints(g.make_unary(Op::Neg, ints(g, t, {1}, {kI64Min}))) == Ints{kI64Min});
  CHECK(as_ints(bin(g, Op::Max, ints(g, t, {2}, {kI64Min, 5}), ints(g, t, {2}, {-1, kI64Max}))) ==
        Ints{-1, kI64Max});
}

TEST_CASE("reference: u32 is unsigned throughout", "[tensor][reference]") {
  Graph g;
  const DType t = DType::U32;
  CHECK(as_ints(bin(g, Op::Add, ints(g, t, {2}, {kU32Max, 7}), ints(g, t, {2}, {1, kU32Max}))) ==
        Ints{0, 6});
  CHECK(as_ints(bin(g, Op::Mul, ints(g, t, {2}, {65536, kU32Max}),
                    ints(g, t, {2}, {65536, kU32Max}))) == Ints{0, 1});
  CHECK(as_ints(g.make_unary(Op::Neg, ints(g, t, {2}, {1, 0}))) == Ints{kU32Max, 0});
  NodeRef a = ints(g, t, {4}, {kU32Max, kU32Max, 7, 3000000000});
  NodeRef b = ints(g, t, {4}, {2, 10, 0, 7});
  CHECK(as_ints(bin(g, Op::Idiv, a, b)) == Ints{2147483647, 429496729, 0, 428571428});
  CHECK(as_ints(bin(g, Op::Mod, a, b)) == Ints{1, 5, 7, 4});
  CHECK(as_ints(bin(g, Op::Max, ints(g, t, {2}, {kU32Max, 1}), ints(g, t, {2}, {1, 2}))) ==
        Ints{kU32Max, 2});
  CHECK(as_ints(bin(g, Op::Cmplt, ints(g, t, {2}, {1, kU32Max}), ints(g, t, {2}, {kU32Max, 1}))) ==
        Ints{1, 0});
}

TEST_CASE("reference: bool ops are logical", "[tensor][reference]") {
  Graph g;
  const DType t = DType::Bool;
  NodeRef a = ints(g, t, {4}, {0, 0, 1, 1});
  NodeRef b = ints(g, t, {4}, {0, 1, 0, 1});
  CHECK(as_ints(bin(g, Op::Mul, a, b)) == Ints{0, 0, 0, 1});
  CHECK(as_ints(bin(g, Op::And, a, b)) == Ints{0, 0, 0, 1});
  CHECK(as_ints(bin(g, Op::Or, a, b)) == Ints{0, 1, 1, 1});
  CHECK(as_ints(bin(g, Op::Xor, a, b)) == Ints{0, 1, 1, 0});
  CHECK(as_ints(bin(g, Op::Max, a, b)) == Ints{0, 1, 1, 1});
  CHECK(as_ints(bin(g, Op::Cmpeq, a, b)) == Ints{1, 0, 0, 1});
  CHECK(as_ints(bin(g, Op::Cmplt, a, b)) == Ints{0, 1, 0, 0});
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, ints(g, t, {2, 2}, {0, 0, 0, 1}), {1})) ==
        Ints{0, 1});
}

TEST_CASE("reference: reduce sum, max and prod over several axes", "[tensor][reference]") {
  Graph g;
  Ints v(24);
  for (int k = 0; k < 24; ++k) v[k] = k;  // element (i, j, l) is 12i + 4j + l
  for (DType t : {DType::I64, DType::I32, DType::F32}) {
    INFO(tl::tensor::dtype_name(t));
    NodeRef x = tl::tensor::is_float(t) ? floats(g, t, {2, 3, 4}, Floats(v.begin(), v.end()))
                                        : ints(g, t, {2, 3, 4}, v);
    auto sum = [&](std::vector<std::int64_t> axes, const Shape& shape) {
      NodeRef r = g.make_reduce(ReduceKind::Sum, x, std::move(axes));
      CHECK(r->shape == shape);
      return as_ints(tl::tensor::is_float(t) ? g.make_cast(r, DType::I64) : r);
    };
    CHECK(sum({0}, {1, 3, 4}) == Ints{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
    CHECK(sum({1}, {2, 1, 4}) == Ints{12, 15, 18, 21, 48, 51, 54, 57});
    CHECK(sum({-1}, {2, 3, 1}) == Ints{6, 22, 38, 54, 70, 86});
    CHECK(sum({0, 2}, {1, 3, 1}) == Ints{60, 92, 124});
    CHECK(sum({2, 0, 1}, {1, 1, 1}) == Ints{276});
  }

  NodeRef m = floats(g, DType::F32, {2, 3}, {-1, -5, -3, 2, kNaN, 0.5});
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Max, m, {1}))) == fmt({-1, kNaN}));
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Max, m, {0}))) == fmt({2, kNaN, 0.5}));
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Prod, m, {0}))) == fmt({-2, kNaN, -1.5}));
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, ints(g, DType::I8, {3}, {-128, -5, -100}), {0})) ==
        Ints{-5});
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, ints(g, DType::U8, {3}, {200, 3, 255}), {0})) ==
        Ints{255});
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, ints(g, DType::U32, {2}, {kU32Max, 0}), {0})) ==
        Ints{kU32Max});
  CHECK(as_ints(g.make_reduce(ReduceKind::Prod, ints(g, DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                              {1})) == Ints{6, 120});
  CHECK(as_ints(g.make_reduce(ReduceKind::Prod, ints(g, DType::I32, {2, 2}, {1, 2, 3, 4}),
                              {0, 1})) == Ints{24});
  // Sums and products wrap in the dtype.
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, ints(g, DType::I8, {2}, {100, 100}), {0})) ==
        Ints{-56});
  CHECK(as_ints(g.make_reduce(ReduceKind::Prod, ints(g, DType::U8, {2}, {16, 16}), {0})) ==
        Ints{0});
}

TEST_CASE("reference: reduce over empty axes and through views", "[tensor][reference]") {
  Graph g;
  // Empty: sum 0, prod 1, max -inf or the lowest integer.
  NodeRef e = g.make_buffer(std::make_shared<Buffer>(DType::F32, 0), {2, 0});
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Sum, e, {1}))) == fmt({0, 0}));
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Prod, e, {1}))) == fmt({1, 1}));
  CHECK(fmt(as_floats(g.make_reduce(ReduceKind::Max, e, {1}))) == fmt({-kInf, -kInf}));
  CHECK(as_floats(g.make_reduce(ReduceKind::Sum, e, {0})).empty());
  auto empty_max = [&](DType t) {
    return as_ints(
        g.make_reduce(ReduceKind::Max, g.make_buffer(std::make_shared<Buffer>(t, 0), {0}), {0}));
  };
  CHECK(empty_max(DType::I32) == Ints{kI32Min});
  CHECK(empty_max(DType::I8) == Ints{-128});
  CHECK(empty_max(DType::I64) == Ints{kI64Min});
  CHECK(empty_max(DType::U8) == Ints{0});
  CHECK(empty_max(DType::U32) == Ints{0});
  CHECK(empty_max(DType::Bool) == Ints{0});

  // Padding reads as 0, so it takes part in a sum and a max.
  NodeRef x = ints(g, DType::I32, {2, 2}, {1, 2, 3, 4});
  NodeRef padded = g.make_pad(x, {{0, 0}, {1, 1}});
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, padded, {1})) == Ints{3, 7});
  NodeRef neg = ints(g, DType::I32, {2, 2}, {-1, -2, -3, -4});
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, g.make_pad(neg, {{0, 0}, {1, 0}}), {1})) ==
        Ints{0, 0});
  CHECK(as_ints(g.make_reduce(ReduceKind::Max, neg, {1})) == Ints{-1, -3});
  // Through a transpose and through a broadcast.
  NodeRef y = ints(g, DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, g.make_permute(y, {1, 0}), {1})) == Ints{5, 7, 9});
  NodeRef row = ints(g, DType::I32, {1, 3}, {1, 2, 3});
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, g.make_expand(row, {4, 3}), {0})) == Ints{4, 8, 12});
}

TEST_CASE("reference: iota counts along its axis in any dtype", "[tensor][reference]") {
  Graph g;
  CHECK(as_ints(g.make_iota({2, 3}, 1, DType::I32)) == Ints{0, 1, 2, 0, 1, 2});
  CHECK(fmt(as_floats(g.make_iota({2, 3}, 0, DType::F32))) == fmt({0, 0, 0, 1, 1, 1}));
  CHECK(as_ints(g.make_iota({2, 2, 2}, 1, DType::I64)) == Ints{0, 0, 1, 1, 0, 0, 1, 1});
  Ints u8 = as_ints(g.make_iota({300}, 0, DType::U8));
  CHECK(u8[255] == 255);
  CHECK(u8[256] == 0);
  CHECK(u8[299] == 43);
  Floats f16 = as_floats(g.make_iota({2051}, 0, DType::F16));
  CHECK(f16[2047] == 2047);
  CHECK(f16[2049] == 2048);  // rounds to even
  CHECK(f16[2050] == 2050);
  Floats bf = as_floats(g.make_iota({258}, 0, DType::BF16));
  CHECK(bf[257] == 256);
}

TEST_CASE("reference: cast converts values", "[tensor][reference]") {
  Graph g;
  NodeRef f = floats(g, DType::F32, {7}, {2.7, -2.7, 0.5, -0.5, kNaN, 255.9, -0.0});
  CHECK(as_ints(g.make_cast(f, DType::I32)) == Ints{2, -2, 0, 0, 0, 255, 0});
  CHECK(as_ints(g.make_cast(f, DType::I64)) == Ints{2, -2, 0, 0, 0, 255, 0});
  CHECK(as_ints(g.make_cast(f, DType::Bool)) == Ints{1, 1, 1, 1, 1, 1, 0});
  CHECK(as_ints(g.make_cast(floats(g, DType::F32, {2}, {255.9, 3.99}), DType::U8)) == Ints{255, 3});
  CHECK(as_ints(g.make_cast(floats(g, DType::F64, {2}, {0.0, 1e-300}), DType::Bool)) == Ints{0, 1});

  NodeRef i = ints(g, DType::I32, {4}, {300, -1, 255, 0});
  CHECK(as_ints(g.make_cast(i, DType::U8)) == Ints{44, 255, 255, 0});
  CHECK(as_ints(g.make_cast(i, DType::I8)) == Ints{44, -1, -1, 0});
  CHECK(as_ints(g.make_cast(i, DType::U32)) == Ints{300, kU32Max, 255, 0});
  CHECK(as_ints(g.make_cast(i, DType::Bool)) == Ints{1, 1, 1, 0});
  CHECK(as_ints(g.make_cast(ints(g, DType::U32, {1}, {kU32Max}), DType::I32)) == Ints{-1});
  CHECK(as_ints(g.make_cast(ints(g, DType::U32, {1}, {kU32Max}), DType::I64)) == Ints{kU32Max});
  CHECK(as_ints(g.make_cast(ints(g, DType::I8, {1}, {-1}), DType::I64)) == Ints{-1});
  CHECK(as_ints(g.make_cast(ints(g, DType::U8, {1}, {255}), DType::I8)) == Ints{-1});
  CHECK(as_ints(g.make_cast(ints(g, DType::I64, {1}, {kI64Min}), DType::I32)) == Ints{0});

  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::I64, {1}, {(std::int64_t{1} << 53) + 1}),
                                  DType::F64))) == fmt({9007199254740992.0}));
  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::I32, {1}, {16777217}), DType::F32))) ==
        fmt({16777216}));
  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::I32, {3}, {65519, 70000, -2049}), DType::F16))) ==
        fmt({65504, kInf, -2048}));
  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::Bool, {2}, {1, 0}), DType::F32))) == fmt({1, 0}));
  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::U32, {1}, {kU32Max}), DType::F64))) ==
        fmt({4294967295.0}));

  CHECK(fmt(as_floats(g.make_cast(floats(g, DType::F64, {2}, {0.1, 1e39}), DType::F32))) ==
        fmt({f32(0.1), kInf}));
  CHECK(fmt(as_floats(g.make_cast(floats(g, DType::F32, {2}, {0.1, 70000}), DType::F16))) ==
        fmt({0.0999755859375, kInf}));
  CHECK(fmt(as_floats(g.make_cast(floats(g, DType::F32, {2}, {1 + std::ldexp(1.0, -8), kNaN}),
                                  DType::BF16))) == fmt({1, kNaN}));
  CHECK(fmt(as_floats(g.make_cast(floats(g, DType::F16, {1}, {0.1}), DType::F64))) ==
        fmt({0.0999755859375}));
}

// ops.def: float->int truncates toward 0 and wraps to the type's width; NaN, or a value
// beyond the i64 range, gives 0.
TEST_CASE("reference: cast of a float out of the integer type's range wraps",
          "[tensor][reference]") {
  Graph g;
  CHECK(as_ints(g.make_cast(floats(g, DType::F32, {3}, {3e9, -3e9, 1e10}), DType::I32)) ==
        Ints{-1294967296, 1294967296, 1410065408});
  CHECK(as_ints(g.make_cast(floats(g, DType::F32, {4}, {-1, 256, 300.7, -0.9}), DType::U8)) ==
        Ints{255, 0, 44, 0});
  CHECK(as_ints(g.make_cast(floats(g, DType::F32, {2}, {128, -129}), DType::I8)) ==
        Ints{-128, 127});
  CHECK(as_ints(g.make_cast(floats(g, DType::F64, {2}, {-1, 4294967296.0}), DType::U32)) ==
        Ints{kU32Max, 0});
}

TEST_CASE("reference: cast beyond the i64 range gives 0", "[tensor][reference]") {
  Graph g;
  CHECK(as_ints(g.make_cast(floats(g, DType::F64, {4}, {1e19, -1e19, kInf, -kInf}), DType::I64)) ==
        Ints{0, 0, 0, 0});
  CHECK(as_ints(g.make_cast(floats(g, DType::F32, {2}, {kInf, -kInf}), DType::I32)) == Ints{0, 0});
}

TEST_CASE("reference: bitcast reinterprets bits", "[tensor][reference]") {
  Graph g;
  NodeRef f = floats(g, DType::F32, {4}, {1.0, -1.0, 0.0, -0.0});
  CHECK(as_bits(g.make_cast(f, DType::U32, true)) ==
        std::vector<std::uint64_t>{0x3f800000u, 0xbf800000u, 0, 0x80000000u});
  CHECK(as_ints(g.make_cast(f, DType::I32, true)) == Ints{0x3f800000, -0x40800000, 0, kI32Min});
  NodeRef u = ints(g, DType::U32, {3}, {0x3f800000, 0x40490fdb, 0x7f800000});
  CHECK(fmt(as_floats(g.make_cast(u, DType::F32, true))) ==
        fmt({1.0, f32(3.14159274101257324), kInf}));
  CHECK(fmt(as_floats(g.make_cast(ints(g, DType::I32, {1}, {-1}), DType::F32, true))) ==
        fmt({kNaN}));
  CHECK(as_ints(g.make_cast(floats(g, DType::F16, {2}, {1.0, -2.0}), DType::I16, true)) ==
        Ints{0x3c00, -16384});
  CHECK(as_ints(g.make_cast(floats(g, DType::BF16, {1}, {1.0}), DType::I16, true)) == Ints{0x3f80});
  CHECK(as_ints(g.make_cast(floats(g, DType::F64, {1}, {1.0}), DType::I64, true)) ==
        Ints{0x3ff0000000000000});
  CHECK(as_ints(g.make_cast(ints(g, DType::I8, {2}, {-1, -128}), DType::U8, true)) ==
        Ints{255, 128});
  // A round trip restores the value, including NaN payloads.
  NodeRef odd = floats(g, DType::F32, {3}, {0.1, -kInf, 1e-45});
  CHECK(fmt(as_floats(g.make_cast(g.make_cast(odd, DType::U32, true), DType::F32, true))) ==
        fmt({f32(0.1), -kInf, f32(1e-45)}));
  // Through a view: the transposed elements are reinterpreted.
  NodeRef t = floats(g, DType::F32, {2, 2}, {1, 2, 3, 4});
  CHECK(as_bits(g.make_cast(g.make_permute(t, {1, 0}), DType::U32, true)) ==
        std::vector<std::uint64_t>{0x3f800000u, 0x40400000u, 0x40000000u, 0x40800000u});
}

TEST_CASE("reference: where picks per element", "[tensor][reference]") {
  Graph g;
  NodeRef c = ints(g, DType::Bool, {4}, {1, 0, 1, 0});
  CHECK(fmt(as_floats(g.make_where(c, floats(g, DType::F32, {4}, {1, 2, 3, 4}),
                                   floats(g, DType::F32, {4}, {10, 20, 30, 40})))) ==
        fmt({1, 20, 3, 40}));
  CHECK(as_ints(g.make_where(c, ints(g, DType::I8, {4}, {-1, -2, -3, -4}),
                             ints(g, DType::I8, {4}, {5, 6, 7, 8}))) == Ints{-1, 6, -3, 8});
  CHECK(fmt(as_floats(g.make_where(c, floats(g, DType::F16, {4}, {kNaN, 1, 0.1, 1}),
                                   floats(g, DType::F16, {4}, {0, kInf, 0, -0.0})))) ==
        fmt({kNaN, kInf, 0.0999755859375, -0.0}));
  // A broadcast constant and a padded source (padding reads as 0).
  NodeRef zero = g.make_expand(g.make_const_float(-1, DType::F32, {1}), {4});
  NodeRef padded = g.make_pad(floats(g, DType::F32, {2}, {7, 8}), {{1, 1}});
  CHECK(fmt(as_floats(g.make_where(c, padded, zero))) == fmt({0, -1, 8, -1}));
  // The condition from a comparison.
  NodeRef x = ints(g, DType::I32, {4}, {5, -3, 0, -1});
  NodeRef z = g.make_const_int(0, DType::I32, {4});
  CHECK(as_ints(g.make_where(bin(g, Op::Cmplt, x, z), g.make_unary(Op::Neg, x), x)) ==
        Ints{5, 3, 0, 1});
}

TEST_CASE("reference: movement ops realize through views", "[tensor][reference]") {
  Graph g;
  NodeRef x = ints(g, DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(as_ints(g.make_permute(x, {1, 0})) == Ints{1, 4, 2, 5, 3, 6});
  CHECK(as_ints(g.make_flip(x, {1, 0})) == Ints{4, 5, 6, 1, 2, 3});
  CHECK(as_ints(g.make_flip(x, {0, 1})) == Ints{3, 2, 1, 6, 5, 4});
  CHECK(as_ints(g.make_pad(x, {{0, 1}, {1, 0}})) == Ints{0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0});
  CHECK(as_ints(g.make_shrink(x, {{1, 2}, {0, 2}})) == Ints{4, 5});
  CHECK(as_ints(g.make_expand(g.make_reshape(x, {2, 1, 3}), {2, 2, 3})) ==
        Ints{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  // A reshape of a transpose needs two views; the sum reads through both.
  NodeRef t = g.make_reshape(g.make_permute(x, {1, 0}), {2, 3});
  CHECK(as_ints(t) == Ints{1, 4, 2, 5, 3, 6});
  CHECK(as_ints(bin(g, Op::Add, t, x)) == Ints{2, 6, 5, 9, 8, 12});
  CHECK(as_ints(g.make_copy(g.make_flip(x, {1, 1}))) == Ints{6, 5, 4, 3, 2, 1});
  CHECK(fmt(as_floats(g.make_pad(floats(g, DType::F16, {1}, {1}), {{1, 0}}))) == fmt({0, 1}));
  // A chain of views on a computed value.
  NodeRef sq = bin(g, Op::Mul, x, x);
  CHECK(as_ints(g.make_shrink(g.make_flip(g.make_permute(sq, {1, 0}), {1, 0}), {{0, 2}, {1, 2}})) ==
        Ints{36, 25});
  // A constant realized through an expand.
  CHECK(as_ints(g.make_expand(g.make_const_int(7, DType::I64, {1, 1}), {2, 2})) ==
        Ints{7, 7, 7, 7});
}

TEST_CASE("reference: assign writes into the target buffer, extern has no kernel",
          "[tensor][reference]") {
  Graph g;
  auto buf = std::make_shared<Buffer>(DType::I32, 3);
  for (int k = 0; k < 3; ++k) tl::runtime::store_int(*buf, k, k + 1);
  NodeRef target = g.make_buffer(buf, {3});
  NodeRef value = bin(g, Op::Add, target, g.make_const_int(10, DType::I32, {3}));
  NodeRef assigned = g.make_assign(target, value);
  CHECK(as_ints(assigned) == Ints{11, 12, 13});
  CHECK(tl::runtime::load_int(*buf, 0) == 11);
  CHECK(tl::runtime::load_int(*buf, 2) == 13);

  NodeRef ext = g.make_extern("sgemm", {target}, DType::F32, {3});
  auto e = error_of([&] { realize(ext); });
  CHECK(e.type == "device-error");
  CHECK_THAT(e.what(), Contains("sgemm"));
}

TEST_CASE("reference: symbolic shapes realize with bindings", "[tensor][reference]") {
  Graph g;
  const Dim n = Dim::var("n");
  // The buffer carries its binding.
  NodeRef x = ints(g, DType::I32, {n, 3}, {1, 2, 3, 4, 5, 6}, {{"n", 2}});
  NodeRef y = bin(g, Op::Add, x, g.make_const_int(10, DType::I32, {n, 3}));
  CHECK(as_ints(y) == Ints{11, 12, 13, 14, 15, 16});
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, x, {0})) == Ints{5, 7, 9});
  CHECK(as_ints(g.make_reshape(g.make_permute(x, {1, 0}), {3 * n})) == Ints{1, 4, 2, 5, 3, 6});
  Bindings collected = tl::runtime::collect_bindings(y.get(), {{"m", 1}});
  CHECK(collected == Bindings{{"m", 1}, {"n", 2}});
  // The binding given when realizing.
  CHECK(as_ints(g.make_iota({n}, 0, DType::I32), {{"n", 5}}) == Ints{0, 1, 2, 3, 4});
  CHECK(as_ints(g.make_const_int(3, DType::U8, {n, n}), {{"n", 2}}) == Ints{3, 3, 3, 3});
  NodeRef z = ints(g, DType::I32, {2}, {1, 2});
  CHECK(as_ints(g.make_pad(z, {{0, n}}), {{"n", 2}}) == Ints{1, 2, 0, 0});
  CHECK(as_ints(g.make_reduce(ReduceKind::Sum, g.make_iota({n, 2}, 0, DType::I64), {0}),
                {{"n", 4}}) == Ints{6, 6});
  NodeRef w = ints(g, DType::I32, {n}, {1, 2, 3});
  CHECK(as_ints(g.make_shrink(w, {{1, n}}), {{"n", 3}}) == Ints{2, 3});
}

TEST_CASE("reference: unbound, conflicting and inconsistent bindings are errors",
          "[tensor][reference]") {
  Graph g;
  const Dim n = Dim::var("n");
  auto e = error_of([&] { realize(g.make_iota({n}, 0, DType::I32)); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("symbolic dimension n") && Contains("has no value"));
  e = error_of([&] {
    realize(g.make_const_int(1, DType::I32, {2, Dim::var("batch")}), {{"n", 2}});
  });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("batch"));

  NodeRef a = ints(g, DType::I32, {n}, {1, 2}, {{"n", 2}});
  NodeRef b = ints(g, DType::I32, {n}, {1, 2, 3}, {{"n", 3}});
  e = error_of([&] { realize(bin(g, Op::Add, a, b)); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("n") && Contains("2") && Contains("3"));
  e = error_of([&] { realize(a, {{"n", 4}}); });
  CHECK(e.type == "shape-error");

  // The buffer holds 3 elements but its shape says 4.
  NodeRef c = ints(g, DType::I32, {n}, {1, 2, 3});
  e = error_of([&] { realize(g.make_unary(Op::Neg, c), {{"n", 4}}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("3 elements") && Contains("4"));
  // A dimension that evaluates negative.
  e = error_of([&] { realize(g.make_const_int(1, DType::I32, {n - 3}), {{"n", 1}}); });
  CHECK(e.type == "shape-error");
  CHECK_THAT(e.what(), Contains("negative"));
  // A symbolic shrink that turns out out of bounds.
  e = error_of([&] { realize(g.make_shrink(c, {{1, n}}), {{"n", 6}}); });
  CHECK(e.type == "shape-error");
  e = error_of([&] {
    realize(g.make_shrink(ints(g, DType::I32, {4}, {1, 2, 3, 4}), {{1, n}}), {{"n", 6}});
  });
  CHECK(e.type == "index-error");
  CHECK_THAT(e.what(), Contains("shrink") && Contains("[1, 6)") && Contains("4"));
}

// Regression (see view_test.cpp): a shrink of a symbolic axis leaves the view's mask
// unclamped; a later pad must not turn that padding into data.
TEST_CASE("reference: pad after a shrink of a symbolic axis reads zeros", "[tensor][reference]") {
  Graph g;
  const Dim n = Dim::var("n");
  NodeRef x = ints(g, DType::I32, {n}, {10, 20, 30, 40}, {{"n", 4}});
  // [10 20 30 40] -> [0 10 20 30 40 0 0] -> [20] -> [0 20 0 0]
  NodeRef y = g.make_pad(g.make_shrink(g.make_pad(x, {{1, 2}}), {{2, 3}}), {{1, 2}});
  CHECK(as_ints(y) == Ints{0, 20, 0, 0});
  // The same chain on a constant shape is right.
  NodeRef z = ints(g, DType::I32, {4}, {10, 20, 30, 40});
  CHECK(as_ints(g.make_pad(g.make_shrink(g.make_pad(z, {{1, 2}}), {{2, 3}}), {{1, 2}})) ==
        Ints{0, 20, 0, 0});
}
