// SPDX-License-Identifier: Apache-2.0
// Unit tests for the lowering passes (codegen/passes/) and kernel opts (codegen/opts.h): every
// transform keeps what a kernel computes, element for element (run before and after on the
// loop-IR interpreter), the CPU's matmul tile is a list of opts that replays, opts print and
// read back, and a transform that does not apply is an optimizer-error naming it.
#include "codegen/passes/passes.h"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "codegen/opts.h"
#include "loop_interpreter.h"
#include "schedule/schedule.h"
#include "support/condition_error.h"
#include "tensor/graph.h"
#include "tensorlisp/error.hpp"

using tl::codegen::Kernel;
using tl::codegen::Lowered;
using tl::codegen::Lowering;
using tl::codegen::Opt;
using tl::codegen::Opts;
using tl::codegen::Stmt;
using tl::tensor::Buffer;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;
using tl::tensor::ReduceKind;
using Scalar = tl::tensor::Scalar;

namespace {

NodeRef random_buffer(Graph& g, DType t, const tl::tensor::Shape& shape, std::mt19937& rng) {
  std::int64_t n = 1;
  for (const auto& d : shape) n *= d.value();
  auto buf = std::make_shared<Buffer>(t, static_cast<std::size_t>(n));
  std::uniform_real_distribution<float> dist(-1, 1);
  for (std::int64_t i = 0; i < n; ++i) {
    if (t == DType::F32) {
      float v = dist(rng);
      std::memcpy(static_cast<char*>(buf->data()) + 4 * i, &v, 4);
    } else {
      std::int32_t v = static_cast<std::int32_t>(rng() % 19) - 9;
      std::memcpy(static_cast<char*>(buf->data()) + 4 * i, &v, 4);
    }
  }
  return g.make_buffer(buf, shape);
}

// (M K) @ (K N) as the composites build it: expand both to (M K N), multiply, sum over K.
NodeRef matmul(Graph& g, const NodeRef& a, const NodeRef& b) {
  const auto m = a->shape[0], k = a->shape[1], n = b->shape[1];
  NodeRef a3 = g.make_expand(g.make_reshape(a, {m, k, 1}), {m, k, n});
  NodeRef b3 = g.make_expand(g.make_reshape(b, {1, k, n}), {m, k, n});
  return g.make_reshape(g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, a3, b3), {1}), {m, n});
}

// The kernels these graphs lower to: matmuls with and without an epilogue, a batched one, sums
// over several axes, a max, elementwise work through views, integer arithmetic.
std::vector<NodeRef> sample_graphs(Graph& g, std::mt19937& rng) {
  std::vector<NodeRef> out;
  for (auto [m, k, n] : {std::array<std::int64_t, 3>{8, 12, 16}, {6, 5, 10}, {12, 7, 32}, {5, 16, 6}}) {
    NodeRef mm = matmul(g, random_buffer(g, DType::F32, {m, k}, rng), random_buffer(g, DType::F32, {k, n}, rng));
    out.push_back(mm);
    out.push_back(g.make_binary(Op::Max, g.make_binary(Op::Add, mm, g.make_const_float(0.5, DType::F32, {m, n})),
                                g.make_const_float(0, DType::F32, {m, n})));
  }
  {
    NodeRef a = random_buffer(g, DType::F32, {2, 4, 6}, rng), b = random_buffer(g, DType::F32, {2, 6, 8}, rng);
    NodeRef a4 = g.make_expand(g.make_reshape(a, {2, 4, 6, 1}), {2, 4, 6, 8});
    NodeRef b4 = g.make_expand(g.make_reshape(b, {2, 1, 6, 8}), {2, 4, 6, 8});
    out.push_back(g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, a4, b4), {2}));
  }
  NodeRef x = random_buffer(g, DType::F32, {4, 6, 8}, rng);
  out.push_back(g.make_reduce(ReduceKind::Sum, x, {1, 2}));
  out.push_back(g.make_reduce(ReduceKind::Max, g.make_permute(x, {2, 0, 1}), {1}));
  out.push_back(
      g.make_unary(Op::Sqrt, g.make_binary(Op::Mul, g.make_permute(x, {1, 0, 2}), g.make_permute(x, {1, 0, 2}))));
  NodeRef i = random_buffer(g, DType::I32, {6, 4}, rng);
  out.push_back(
      g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, i, g.make_const_int(3, DType::I32, {6, 4})), {0}));
  return out;
}

struct Case {
  Lowered plain;
  std::vector<std::vector<Scalar>> inputs;  // by slot (slot 0 and scratch empty)
};

Case plain_case(const NodeRef& root, std::mt19937& rng) {
  tl::schedule::Schedule s = tl::schedule::make_schedule(root.get());
  REQUIRE(s.items.size() == 1);
  Lowering how;
  how.opts = Opts{};
  Case c{tl::codegen::lower(s.items[0], s.materialized, how), {}};
  c.inputs.resize(c.plain.kernel.buffers.size());
  for (std::size_t i = 0; i < c.plain.inputs.size(); ++i) {
    const tl::tensor::Node* n = c.plain.inputs[i];
    const Buffer& b = *n->buffer;
    auto& v = c.inputs[static_cast<std::size_t>(c.plain.input_slots[i])];
    for (std::size_t e = 0; e < b.count(); ++e) {
      float f;
      std::int32_t iv;
      std::memcpy(&f, static_cast<const char*>(b.data()) + 4 * e, 4);
      std::memcpy(&iv, static_cast<const char*>(b.data()) + 4 * e, 4);
      v.push_back(n->dtype == DType::F32 ? Scalar{0, f} : Scalar{iv, 0});
    }
  }
  (void)rng;
  return c;
}

std::vector<Scalar> run(const Kernel& k, const Case& c, const tl::tensor::Node* out) {
  std::vector<std::vector<Scalar>> buffers = c.inputs;
  buffers.resize(k.buffers.size());
  buffers[0].assign(static_cast<std::size_t>(tl::tensor::shape_numel(out->shape).value()), Scalar{});
  tl::test::LoopInterpreter(k, buffers).run();
  return buffers[0];
}

bool same(const std::vector<Scalar>& a, const std::vector<Scalar>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].i != b[i].i || std::memcmp(&a[i].f, &b[i].f, sizeof(double)) != 0) return false;
  }
  return true;
}

// The loops of a kernel, and for each whether an accumulator's scope encloses it.
void loops_of(const std::vector<Stmt>& body, bool in_acc, std::vector<std::pair<const Stmt*, bool>>& out) {
  bool acc = in_acc;
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::AccDef) acc = true;
    if (s.kind == Stmt::Kind::Loop) {
      out.emplace_back(&s, acc);
      loops_of(s.body, acc, out);
    }
  }
}

// Whether upcasting loop L reorders the terms of an accumulator: L holds a loop and updates an
// accumulator defined outside L, whose updates then interleave with that loop's iterations.
bool upcast_reorders(const Stmt& l) {
  std::set<std::int32_t> defined;
  bool loop = false, outside = false;
  std::function<void(const std::vector<Stmt>&)> walk = [&](const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == Stmt::Kind::Loop) loop = true;
      if (s.kind == Stmt::Kind::AccDef) defined.insert(s.acc);
      if (s.kind == Stmt::Kind::AccUpdate && !defined.count(s.acc)) outside = true;
      walk(s.body);
    }
  };
  walk(l.body);
  return loop && outside;
}

// A random opt that may apply to K, and whether it may reorder an accumulator's terms (a swap
// inside an accumulator's scope, an upcast around a loop of an outer accumulator's terms).
std::pair<Opt, bool> random_opt(const Kernel& k, std::mt19937& rng) {
  std::vector<std::pair<const Stmt*, bool>> loops;
  loops_of(k.body, false, loops);
  if (loops.empty()) return {Opt::split(0, 1), false};
  const auto& [l, in_acc] = loops[rng() % loops.size()];
  switch (rng() % 9) {
    case 0: {
      // A divisor of the extent, or any factor (a ragged split, where repeating is harmless).
      auto e = k.as_const(l->extent).value_or(1);
      std::vector<std::int64_t> divisors;
      for (std::int64_t d = 1; d <= e; ++d) {
        if (e % d == 0) divisors.push_back(d);
      }
      const std::int64_t f = rng() % 2 ? divisors[rng() % divisors.size()] : 1 + static_cast<std::int64_t>(rng() % e);
      return {Opt::split(l->var, f), false};
    }
    case 1: return {Opt::swap(l->var), in_acc};
    case 2: return {Opt::upcast(l->var), upcast_reorders(*l)};
    case 3: return {Opt::partial(l->var), true};
    case 4: return {Opt::lanes(l->var, 2 + static_cast<std::int64_t>(rng() % 7)), true};
    case 6: return {Opt::peel(l->var), false};
    case 7: return {Opt::merge(l->var), false};
    case 5: {
      // hoist out to the kernel or to another loop (most do not enclose it: rejected)
      const auto& into = loops[rng() % loops.size()].first;
      return {Opt::hoist(l->var, rng() % 3 == 0 ? -1 : into->var), false};
    }
    default: {
      // pack at the kernel or at this loop the values that do not change along another loop
      const auto& r = loops[rng() % loops.size()].first;
      return {Opt::pack(rng() % 2 ? -1 : l->var, r->var, {}), false};
    }
  }
}

// The optimizer-error lowering the first kernel of S with the opts TEXT raises, or "no error".
std::string lowering_error(const tl::schedule::Schedule& s, const std::string& text,
                           tl::codegen::Target target = tl::codegen::Target::Cpu) {
  Lowering how(target);
  how.opts = tl::codegen::parse_opts(text);
  try {
    tl::codegen::lower(s.items[0], s.materialized, how);
  } catch (const tl::ConditionError& e) {
    CHECK(e.type == "optimizer-error");
    return std::string(e.what());
  }
  return std::string("no error");
}

// Equal element for element, or (after a reordering) floats within rounding of a reordered sum.
bool close(const std::vector<Scalar>& a, const std::vector<Scalar>& b, bool reordered) {
  if (!reordered) return same(a, b);
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].i != b[i].i || std::abs(a[i].f - b[i].f) > 1e-5 * (1 + std::abs(b[i].f))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("opts print and read back; bad text is an optimizer-error", "[codegen][passes]") {
  const Opts opts = {Opt::interchange(), Opt::split(3, 4), Opt::swap(7),      Opt::pack(-1, 2, {5, 9, 8}),
                     Opt::upcast(11),    Opt::partial(2),  Opt::hoist(6, -1), Opt::hoist(6, 3),
                     Opt::peel(4),       Opt::group(128)};
  const std::string text = tl::codegen::opts_str(opts);
  CHECK(text ==
        "(interchange) (split 3 4) (swap 7) (pack -1 2 5 9 8) (upcast 11) (partial 2) (hoist 6 -1) (hoist 6 3) "
        "(peel 4) (group 128)");
  CHECK(tl::codegen::opts_str(tl::codegen::parse_opts(text)) == text);
  CHECK(tl::codegen::opts_str(tl::codegen::parse_opts("(" + text + ")")) == text);
  CHECK(tl::codegen::parse_opts("()").empty());
  CHECK(tl::codegen::parse_opts("  ").empty());
  auto error = [](const std::string& t) {
    try {
      tl::codegen::parse_opts(t);
    } catch (const tl::ConditionError& e) {
      CHECK(e.type == "optimizer-error");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("(tile 0 4)") ==
        "opts: unknown opt \"tile\" (known: interchange, split, swap, pack, upcast, partial, lanes, qdot, hoist, peel, "
        "merge, "
        "group) in \"(tile 0 4)\"");
  CHECK(error("(split 0 0)") == "opts: split needs a positive factor, not 0 in \"(split 0 0)\"");
  CHECK(error("(split 0)") == "opts: expected an integer at position 8 in \"(split 0)\"");
  CHECK(error("(upcast 1) (interchange)") == "opts: interchange must come first in \"(upcast 1) (interchange)\"");
  CHECK(error("(upcast 1) x") == "opts: expected '(' at position 11 in \"(upcast 1) x\"");
  CHECK(error("(group 100)") ==
        "opts: group needs 0 or a power of two from 32 to 1024 threads, not 100 in \"(group 100)\"");
  CHECK(error("(group 16)") ==
        "opts: group needs 0 or a power of two from 32 to 1024 threads, not 16 in \"(group 16)\"");
  CHECK(error("(group 64) (upcast 1)") == "opts: group must come last in \"(group 64) (upcast 1)\"");
  CHECK(tl::codegen::opts_str(tl::codegen::parse_opts("(group 0)")) == "(group 0)");
}

TEST_CASE("every pass keeps what a kernel computes, element for element", "[codegen][passes]") {
  std::mt19937 rng(7);
  Graph g;
  int applied = 0, rejected = 0;
  for (const NodeRef& root : sample_graphs(g, rng)) {
    const Case c = plain_case(root, rng);
    const std::vector<Scalar> want = run(c.plain.kernel, c, root.get());
    for (int trial = 0; trial < 12; ++trial) {
      Kernel k = c.plain.kernel;
      Opts done;
      bool reordered = false;
      for (int step = 0; step < 6; ++step) {
        const auto [o, reorders] = random_opt(k, rng);
        Kernel before = k;
        try {
          tl::codegen::apply_opt(k, o);
        } catch (const tl::ConditionError& e) {
          CHECK(e.type == "optimizer-error");
          CHECK(k.str() == before.str());  // a rejected opt leaves the kernel as it was
          ++rejected;
          continue;
        }
        ++applied;
        reordered = reordered || reorders;
        done.push_back(o);
        tl::codegen::verify(k, tl::codegen::opt_str(o));
        INFO(tl::tensor::node_str(root.get()) << "\nopts " << tl::codegen::opts_str(done) << "\n" << k.str());
        REQUIRE(close(run(k, c, root.get()), want, reordered));
      }
    }
  }
  // The walk reaches both outcomes often.
  CHECK(applied > 200);
  CHECK(rejected > 50);
}

TEST_CASE("the CPU's matmul register tile is a list of opts that replays", "[codegen][passes]") {
  std::mt19937 rng(1);
  Graph g;
  // 8 rows, 16 columns: a 4 x 16 tile; the right operand (12 x 16 floats) is packed whole.
  NodeRef mm = matmul(g, random_buffer(g, DType::F32, {8, 12}, rng), random_buffer(g, DType::F32, {12, 16}, rng));
  tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
  REQUIRE(s.items.size() == 1);
  const Lowered chosen = tl::codegen::lower(s.items[0], s.materialized);
  // The plain nest's loops: i0 rows, i1 columns, i2 the sum; the splits make i3 .. i6.
  CHECK(tl::codegen::opts_str(chosen.opts) ==
        "(split 0 4) (split 1 16) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  CHECK(chosen.kernel.buffers.back().local_elems == 12 * 16);
  CHECK(chosen.parallel_extent == tl::tensor::Dim(2));
  // The same opts given explicitly, or read back from their text, make the same kernel.
  Lowering how;
  how.opts = tl::codegen::parse_opts(tl::codegen::opts_str(chosen.opts));
  CHECK(tl::codegen::lower(s.items[0], s.materialized, how).kernel.str() == chosen.kernel.str());
  // And it computes what the plain nest computes.
  const Case c = plain_case(mm, rng);
  CHECK(same(run(chosen.kernel, c, mm.get()), run(c.plain.kernel, c, mm.get())));
  // Many rows that 6 does not divide: a ragged tile of 6 rows, the last computing row 49 again
  // (its stores masked), peeled: the last tile runs as a copy of its own, so neither copy has a
  // masked store left (the full tiles need none, and the last one's masks are constants).
  NodeRef tall = matmul(g, random_buffer(g, DType::F32, {50, 12}, rng), random_buffer(g, DType::F32, {12, 16}, rng));
  tl::schedule::Schedule ts = tl::schedule::make_schedule(tall.get());
  const Lowered ragged = tl::codegen::lower(ts.items[0], ts.materialized);
  CHECK(tl::codegen::opts_str(ragged.opts) ==
        "(split 0 6) (split 1 16) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4) (peel 3)");
  CHECK(ragged.parallel_extent == tl::tensor::Dim(9));
  CHECK(ragged.kernel.str().find(" if ") == std::string::npos);
  const Case tc = plain_case(tall, rng);
  CHECK(same(run(ragged.kernel, tc, tall.get()), run(tc.plain.kernel, tc, tall.get())));
  // A wide right operand is packed per column panel instead, inside the column loop, when the
  // rows are many enough to repay the packing (64); with fewer, the tiles read it in place.
  NodeRef wide = matmul(g, random_buffer(g, DType::F32, {72, 512}, rng), random_buffer(g, DType::F32, {512, 128}, rng));
  tl::schedule::Schedule w = tl::schedule::make_schedule(wide.get());
  CHECK(tl::codegen::opts_str(tl::codegen::lower(w.items[0], w.materialized).opts) ==
        "(split 0 6) (split 1 16) (swap 4) (swap 3) (pack 5 3 2 6) (upcast 6) (upcast 4)");
  NodeRef few = matmul(g, random_buffer(g, DType::F32, {8, 512}, rng), random_buffer(g, DType::F32, {512, 128}, rng));
  tl::schedule::Schedule f = tl::schedule::make_schedule(few.get());
  const Lowered unpacked = tl::codegen::lower(f.items[0], f.materialized);
  CHECK(tl::codegen::opts_str(unpacked.opts) == "(split 0 4) (split 1 16) (swap 4) (swap 3) (upcast 6) (upcast 4)");
  const Case fc = plain_case(few, rng);
  CHECK(same(run(unpacked.kernel, fc, few.get()), run(fc.plain.kernel, fc, few.get())));
  // Fewer rows than a tile's 6 accumulate in the output row instead (a matrix-vector product's
  // streaming, row by row).
  NodeRef four = matmul(g, random_buffer(g, DType::F32, {4, 512}, rng), random_buffer(g, DType::F32, {512, 128}, rng));
  tl::schedule::Schedule fr = tl::schedule::make_schedule(four.get());
  CHECK(tl::codegen::opts_str(tl::codegen::lower(fr.items[0], fr.materialized).opts) == "(interchange)");
}

TEST_CASE("register tiles take their shape from the target's vectors", "[codegen][passes]") {
  std::mt19937 rng(11);
  Graph g;
  // AVX-512: 16 f32 lanes in 32 registers. Columns four vectors wide (64) where they divide,
  // the widest whole vectors that divide otherwise, a narrow result one tile wide, else a
  // ragged tile: 64 wide when that wastes at most an eighth of the columns, else 32; 6 rows.
  Lowering avx512;
  avx512.vector_floats = 16;
  avx512.vector_registers = 32;
  auto opts_of = [&](std::int64_t m, std::int64_t k, std::int64_t n, const Lowering& how) {
    NodeRef mm = matmul(g, random_buffer(g, DType::F32, {m, k}, rng), random_buffer(g, DType::F32, {k, n}, rng));
    tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
    const Lowered l = tl::codegen::lower(s.items[0], s.materialized, how);
    const Case c = plain_case(mm, rng);
    CHECK(same(run(l.kernel, c, mm.get()), run(c.plain.kernel, c, mm.get())));
    return tl::codegen::opts_str(l.opts);
  };
  CHECK(opts_of(96, 256, 128, avx512) == "(split 0 6) (split 1 64) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  CHECK(opts_of(12, 8, 96, avx512) == "(split 0 6) (split 1 48) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  CHECK(opts_of(12, 8, 10, avx512) == "(split 0 6) (split 1 10) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  CHECK(opts_of(12, 8, 60, avx512) == "(split 0 6) (split 1 60) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  CHECK(opts_of(48, 8, 86, avx512) ==
        "(split 0 6) (split 1 32) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4) (peel 5)");
  CHECK(opts_of(12, 4, 1030, avx512).find("(split 1 64)") != std::string::npos);
  // AVX2 (the default Lowering): 8 lanes in 16 registers, 6 x 16 as before.
  CHECK(opts_of(96, 256, 128, Lowering()) ==
        "(split 0 6) (split 1 16) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
}

TEST_CASE("a matmul with an epilogue of another dtype keeps its register tile", "[codegen][passes]") {
  std::mt19937 rng(12);
  Graph g;
  // (cast (matmul a b) f64): the f32 sums accumulate in the tile, the epilogue widens each on
  // its store (a composite computed in f64, tanh's, once ran the whole product untiled: 40x
  // slower at 512^3).
  NodeRef mm = matmul(g, random_buffer(g, DType::F32, {12, 8}, rng), random_buffer(g, DType::F32, {8, 32}, rng));
  NodeRef wide = g.make_unary(Op::Neg, g.make_cast(mm, DType::F64));
  tl::schedule::Schedule s = tl::schedule::make_schedule(wide.get());
  REQUIRE(s.items.size() == 1);
  const Lowered l = tl::codegen::lower(s.items[0], s.materialized);
  CHECK(tl::codegen::opts_str(l.opts) == "(split 0 6) (split 1 16) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4)");
  const Case c = plain_case(wide, rng);
  CHECK(same(run(l.kernel, c, wide.get()), run(c.plain.kernel, c, wide.get())));
}

TEST_CASE("a matmul of many rows runs in cache blocks: the reduce hoisted out of the tiles", "[codegen][passes]") {
  std::mt19937 rng(5);
  Graph g;
  // 50 rows (ragged tiles of 6), 384 terms (2 blocks of 192), 96 columns (one block of 6
  // tiles of 16): the right operand (144 KiB) is too large to pack whole, and by default, with
  // fewer than 64 rows, not packed at all.
  NodeRef mm = matmul(g, random_buffer(g, DType::F32, {50, 384}, rng), random_buffer(g, DType::F32, {384, 96}, rng));
  tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
  // Not the default: one of the tuner's candidates.
  const std::string kBlocked =
      "(split 0 6) (split 1 96) (split 6 16) (split 2 192) (swap 4) (swap 3) (swap 4) (hoist 9 5) "
      "(pack 9 3 7 10 8) (pack 3 7 10 4) (upcast 8) (upcast 4) (peel 3)";
  CHECK(tl::codegen::opts_str(tl::codegen::lower(s.items[0], s.materialized).opts) ==
        "(split 0 6) (split 1 16) (swap 4) (swap 3) (upcast 6) (upcast 4) (peel 3)");
  const std::vector<Opts> candidates = tl::codegen::tile_candidates(s.items[0], s.materialized, Lowering(), {6}, {16});
  REQUIRE(candidates.size() == 2);
  CHECK(tl::codegen::opts_str(candidates[1]) == kBlocked);
  Lowering how_blocked;
  how_blocked.opts = candidates[1];
  const Lowered blocked = tl::codegen::lower(s.items[0], s.materialized, how_blocked);
  const std::string text = blocked.kernel.str();
  INFO(text);
  // The partial sums are read back where a block of the reduce starts, kept where it ends; the
  // ragged tile's rows past the end store nothing (the last row tile, peeled, has no store for
  // them, and the others need no mask).
  CHECK(text.find("for i9 in [0, 2)") < text.find("for i14 in [0, 8)"));
  CHECK(text.find("where:f32(") != std::string::npos);
  CHECK(text.find(" if ") == std::string::npos);
  const Case c = plain_case(mm, rng);
  CHECK(same(run(blocked.kernel, c, mm.get()), run(c.plain.kernel, c, mm.get())));
  // With an epilogue (relu of the sum plus 0.5), computed once, after the last block.
  NodeRef relu = g.make_binary(Op::Max, g.make_binary(Op::Add, mm, g.make_const_float(0.5, DType::F32, {50, 96})),
                               g.make_const_float(0, DType::F32, {50, 96}));
  tl::schedule::Schedule rs = tl::schedule::make_schedule(relu.get());
  const Lowered fused = tl::codegen::lower(rs.items[0], rs.materialized, how_blocked);
  const Case rc = plain_case(relu, rng);
  CHECK(same(run(fused.kernel, rc, relu.get()), run(rc.plain.kernel, rc, relu.get())));

  auto error = [&](const std::string& opts) {
    Lowering how;
    how.opts = tl::codegen::parse_opts(opts);
    try {
      tl::codegen::lower(s.items[0], s.materialized, how);
    } catch (const tl::ConditionError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The plain nest: i0 rows (parallel), i1 columns, i2 the sum.
  CHECK(error("(split 2 192) (hoist 3 -1)") == "opt (hoist 3 -1): loop i0 is the kernel's parallel loop");
  CHECK(error("(split 2 192) (hoist 3 0)") == "no error");
  CHECK(error("(split 2 192) (hoist 4 0)") == "opt (hoist 4 0): loop i3 is not the only statement of its loop's body");
  CHECK(error("(hoist 2 1)") == "opt (hoist 2 1): loop i2 is directly in loop i1: nothing to hoist it out of");
  CHECK(error("(hoist 1 2)") == "opt (hoist 1 2): loop i1 is not inside loop i2");
  CHECK(error("(hoist 2 0)") == "no error");
  CHECK(error("(hoist 0 1)") == "opt (hoist 0 1): loop i0 is not inside loop i1");
}

TEST_CASE("a ragged tile's last block runs as a copy of its own (peel)", "[codegen][passes]") {
  std::mt19937 rng(11);
  Graph g;
  // Columns and rows that no tile divides: 37 columns (ragged tiles of 16, packed per column
  // panel: the column loop is the parallel one) and 50 rows (ragged tiles of 6).
  for (auto [rows, depth, cols] : {std::array<std::int64_t, 3>{50, 300, 37}, std::array<std::int64_t, 3>{50, 12, 37},
                                   std::array<std::int64_t, 3>{9, 7, 86}}) {
    NodeRef mm = matmul(g, random_buffer(g, DType::F32, {rows, depth}, rng),
                        random_buffer(g, DType::F32, {depth, cols}, rng));
    tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
    const Lowered chosen = tl::codegen::lower(s.items[0], s.materialized);
    const std::string opts = tl::codegen::opts_str(chosen.opts);
    const std::string text = chosen.kernel.str();
    INFO(opts << "\n" << text);
    CHECK(opts.find("(peel ") != std::string::npos);
    // No store is masked: the full tiles need no mask, and the last one's became constants.
    CHECK(text.find(" if ") == std::string::npos);
    const Case c = plain_case(mm, rng);
    CHECK(same(run(chosen.kernel, c, mm.get()), run(c.plain.kernel, c, mm.get())));
  }
  // Errors, on a 6 x 5 @ 5 x 10 matmul: i0 rows (parallel), i1 columns, i2 the sum.
  NodeRef mm = matmul(g, random_buffer(g, DType::F32, {6, 5}, rng), random_buffer(g, DType::F32, {5, 10}, rng));
  tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
  auto error = [&](const std::string& text) {
    Lowering how;
    how.opts = tl::codegen::parse_opts(text);
    try {
      tl::codegen::lower(s.items[0], s.materialized, how);
    } catch (const tl::ConditionError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("(peel 7)") == "opt (peel 7): the kernel has no loop i7");
  CHECK(error("(split 1 10) (peel 3)") == "opt (peel 3): loop i3 has 1 iteration(s)");
  CHECK(error("(peel 0) (peel 1) (peel 2)") == "no error");
}

TEST_CASE("an opt that does not apply is an optimizer-error naming it", "[codegen][passes]") {
  std::mt19937 rng(2);
  Graph g;
  NodeRef mm = matmul(g, random_buffer(g, DType::F32, {6, 5}, rng), random_buffer(g, DType::F32, {5, 10}, rng));
  tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
  auto error = [&](const std::string& text, tl::codegen::Target target = tl::codegen::Target::Cpu) {
    return lowering_error(s, text, target);
  };
  // The plain nest: i0 over 6 rows (parallel), i1 over 10 columns, i2 over the 5 summed.
  CHECK(error("(split 2 4)") ==
        "opt (split 2 4): loop i2 has extent 5, which 4 does not divide, and repeating its last iteration would change "
        "the result: it adds to acc0, defined outside it");
  CHECK(error("(split 1 4)") == "no error");  // a ragged split of the columns: the last block repeats column 9
  CHECK(error("(split 9 2)") == "opt (split 9 2): the kernel has no loop i9");
  CHECK(error("(swap 1)") == "opt (swap 1): the body of loop i1 is not a single loop");
  CHECK(error("(upcast 0)") == "opt (upcast 0): loop i0 is the kernel's parallel loop");
  CHECK(error("(pack -1 2)") ==
        "opt (pack -1 2): no value that an accumulator update inside the kernel reads stays the same along loop i2");
  CHECK(error("(pack 2 1)") == "opt (pack 2 1): loop i1 is not inside loop i2");
  CHECK(error("(pack -1 0 2)") ==
        "opt (pack -1 0 2): the packed value b2[add(i1, mul(i2, 10))] uses loop i1, which the layout does not list");
  CHECK(error("(split 1 5) (upcast 3)") == "no error");
  CHECK(error("(partial 1)") == "opt (partial 1): loop i1 adds to no accumulator defined outside it");
  CHECK(error("(partial 2)") == "no error");
  CHECK(error("(pack -1 0)", tl::codegen::Target::Gpu) ==
        "opt (pack -1 0): GPU kernels have no scratch memory to pack into");
  CHECK(error("(interchange)", tl::codegen::Target::Gpu)
            .rfind("opt (interchange): only a float sum or max on the CPU", 0) == 0);
}

TEST_CASE("an interchanged reduce's loops refuse what would break them (found by the beam search)",
          "[codegen][passes]") {
  std::mt19937 rng(4);
  Graph g;
  NodeRef sum = g.make_reduce(ReduceKind::Sum, random_buffer(g, DType::F32, {8, 2}, rng), {0});
  tl::schedule::Schedule s = tl::schedule::make_schedule(sum.get());
  auto error = [&](const std::string& text) { return lowering_error(s, text); };
  // (interchange): i2 sets the 2 outputs to 0 (parallel), i3 runs over the 8 rows, and inside
  // it i4 (parallel too, the same range) adds row i3 into the outputs: b0[i4] = b0[i4] + ...
  CHECK(error("(interchange)") == "no error");
  // Splitting one of the two parallel loops would give them different ranges.
  CHECK(error("(interchange) (split 2 2)") ==
        "opt (split 2 2): loop i2 is one of the kernel's 2 parallel loops, which share one range");
  CHECK(error("(interchange) (split 3 2)") == "no error");
  // Copies of the rows' loop would read b0[i4] once and store it twice: the sums lost a row.
  CHECK(error("(interchange) (split 3 2) (upcast 6)") ==
        "opt (upcast 6): loop i6's copies could read and store the same elements of b0 (its store's index is not i6 "
        "times a constant plus the rest)");
  // Merged with the output loop, the copies store b0[i5 mod 2]: the same elements again.
  CHECK(error("(interchange) (merge 3) (upcast 5)").rfind("opt (upcast 5): loop i5's copies could read and store", 0) ==
        0);
}

TEST_CASE("the verifier names a broken kernel's fault", "[codegen][passes]") {
  Kernel k;
  k.buffers.push_back({DType::F32, true});
  k.buffers.push_back({DType::F32, false});
  auto [loop, i] = k.make_loop(k.constant_int(4));
  Stmt store{Stmt::Kind::Store};
  store.buffer = 0;
  store.index = i;
  store.value = k.load(1, i);
  k.body.push_back(store);  // outside the loop that defines i
  k.body.push_back(std::move(loop));
  try {
    tl::codegen::verify(k, "a test");
    FAIL("verify accepted a loop variable outside its loop");
  } catch (const tl::Error& e) {
    CHECK(std::string(e.what()).find("loop IR after a test: a store's index uses i0 outside its loop") !=
          std::string::npos);
  }
  Kernel w;
  w.buffers.push_back({DType::F32, true});
  w.buffers.push_back({DType::F32, false});
  Stmt bad{Stmt::Kind::Store};
  bad.buffer = 1;
  bad.index = w.constant_int(0);
  bad.value = w.constant_float(1, DType::F32);
  w.body.push_back(bad);
  CHECK_THROWS_WITH(tl::codegen::verify(w, "x"), Catch::Contains("a store to input buffer b1"));
}

TEST_CASE("a float max adds into lanes (lanes); a float sum over two loops, a partial per pass (partial)",
          "[codegen][passes]") {
  std::mt19937 rng(3);
  Graph g;
  NodeRef x = random_buffer(g, DType::F32, {3, 40, 50}, rng);
  // i0 over the 3 outputs, i1 and i2 the max's loops: 16 f32 lanes in i2, combined into the
  // max after each pass of i2; i3 the 3 blocks, i4 the 2 left over.
  NodeRef m = g.make_reduce(ReduceKind::Max, x, {1, 2});
  tl::schedule::Schedule ms = tl::schedule::make_schedule(m.get());
  const Lowered max_lanes = tl::codegen::lower(ms.items[0], ms.materialized);
  CHECK(tl::codegen::opts_str(max_lanes.opts) == "(lanes 2 16)");
  std::string text = max_lanes.kernel.str();
  CHECK(text.find("for i3 in [0, 3) lanes") != std::string::npos);
  CHECK(text.find("for i4 in [0, 2)") != std::string::npos);
  CHECK(text.find("acc1:f32 = -inff") != std::string::npos);
  CHECK(text.find("acc16:f32 = -inff") != std::string::npos);
  CHECK(text.find("acc17:f32") == std::string::npos);
  const Case mc = plain_case(m, rng);
  CHECK(same(run(max_lanes.kernel, mc, m.get()), run(mc.plain.kernel, mc, m.get())));  // any order
  // Fewer iterations than lanes: none.
  NodeRef narrow = g.make_reduce(ReduceKind::Max, random_buffer(g, DType::F32, {3, 40, 12}, rng), {2});
  tl::schedule::Schedule ns = tl::schedule::make_schedule(narrow.get());
  CHECK(tl::codegen::lower(ns.items[0], ns.materialized).opts.empty());
  // A float sum over two loops: a partial sum per pass of i2 (LLVM splits the sum itself).
  NodeRef total = g.make_reduce(ReduceKind::Sum, x, {1, 2});
  tl::schedule::Schedule s = tl::schedule::make_schedule(total.get());
  const Lowered chosen = tl::codegen::lower(s.items[0], s.materialized);
  CHECK(tl::codegen::opts_str(chosen.opts) == "(partial 1)");
  text = chosen.kernel.str();
  CHECK(text.find("acc1:f32 = 0f") != std::string::npos);
  CHECK(text.find("acc0 sum= acc1") != std::string::npos);
  const Case c = plain_case(total, rng);
  CHECK(close(run(chosen.kernel, c, total.get()), run(c.plain.kernel, c, total.get()), true));
  // Lanes by hand on the sum regroup it too.
  Lowering how;
  how.opts = tl::codegen::parse_opts("(lanes 2 8)");
  const Lowered summed = tl::codegen::lower(s.items[0], s.materialized, how);
  CHECK(close(run(summed.kernel, c, total.get()), run(c.plain.kernel, c, total.get()), true));
  how.opts = tl::codegen::parse_opts("(partial 1)");
  CHECK_THROWS_WITH(tl::codegen::lower(ms.items[0], ms.materialized, how),
                    "opt (partial 1): loop i1 updates an accumulator that is not a float sum");
  // lanes needs an innermost reduce loop.
  how.opts = tl::codegen::parse_opts("(lanes 1 8)");
  CHECK_THROWS_WITH(tl::codegen::lower(s.items[0], s.materialized, how),
                    "opt (lanes 1 8): loop i1 holds a loop; lanes take an innermost reduce loop");
  how.opts = tl::codegen::parse_opts("(lanes 0 8)");
  CHECK_THROWS_WITH(tl::codegen::lower(s.items[0], s.materialized, how),
                    Catch::Contains("opt (lanes 0 8): loop i0 is the kernel's parallel loop"));
}

namespace {

// A buffer of one-byte values: int8 from -128 to 127, or uint8 from 0 to 255.
NodeRef byte_buffer(Graph& g, DType t, const tl::tensor::Shape& shape, std::mt19937& rng) {
  std::int64_t n = 1;
  for (const auto& d : shape) n *= d.value();
  auto buf = std::make_shared<Buffer>(t, static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) static_cast<std::uint8_t*>(buf->data())[i] = static_cast<std::uint8_t>(rng());
  return g.make_buffer(buf, shape);
}

// The inputs of a lowered kernel as the interpreter holds them.
std::vector<std::vector<Scalar>> interpreter_inputs(const Lowered& l) {
  std::vector<std::vector<Scalar>> in(l.kernel.buffers.size());
  for (std::size_t i = 0; i < l.inputs.size(); ++i) {
    const tl::tensor::Node* n = l.inputs[i];
    const Buffer& b = *n->buffer;
    auto& v = in[static_cast<std::size_t>(l.input_slots[i])];
    for (std::size_t e = 0; e < b.count(); ++e) {
      const char* p = static_cast<const char*>(b.data());
      if (n->dtype == DType::F32) {
        float f;
        std::memcpy(&f, p + 4 * e, 4);
        v.push_back(Scalar{0, f});
      } else if (n->dtype == DType::I8) {
        v.push_back(Scalar{static_cast<std::int8_t>(p[e]), 0});
      } else {
        v.push_back(Scalar{static_cast<std::uint8_t>(p[e]), 0});
      }
    }
  }
  return in;
}

}  // namespace

TEST_CASE("a sum of scaled products of bytes runs as integer dot products (qdot)", "[codegen][passes]") {
  std::mt19937 rng(11);
  Graph g;
  const std::int64_t k = 128, n = 3, blocks = k / 32;
  // out[i][j] = sum over k of x[i][k] d[i][k/32] * w'[j][k] s[j][k/32], x int8 and w' either int8
  // (two rows) or uint8 less 100 (one row: an offset, as a 4-bit block's codes are u - 8), built
  // as the quantized-dot rule builds it, so that the schedule keeps the bytes in the kernel; x
  // read as it is or, as the rule reads it, through max(x, -127) (x holds -128 here: the clamp
  // changes values, and the kernels must apply it).
  for (auto [wt, clamp] : {std::pair{DType::I8, false}, std::pair{DType::U8, false}, std::pair{DType::I8, true},
                           std::pair{DType::U8, true}}) {
    const std::int64_t m = wt == DType::I8 ? 2 : 1;
    NodeRef x = byte_buffer(g, DType::I8, {m, k}, rng);
    if (clamp) x = g.make_binary(Op::Max, x, g.make_const_int(-127, DType::I8, {m, k}));
    NodeRef w = byte_buffer(g, wt, {n, k}, rng);
    NodeRef d = random_buffer(g, DType::F32, {m, blocks}, rng);
    NodeRef s = random_buffer(g, DType::F32, {n, blocks}, rng);
    auto per_block = [&](const NodeRef& scale, std::int64_t rows) {
      return g.make_reshape(g.make_expand(g.make_reshape(scale, {rows, blocks, 1}), {rows, blocks, 32}), {rows, k});
    };
    auto left = [&](const NodeRef& v) { return g.make_expand(g.make_reshape(v, {m, k, 1}), {m, k, n}); };
    auto right = [&](const NodeRef& v) {
      return g.make_expand(g.make_reshape(g.make_permute(v, {1, 0}), {1, k, n}), {m, k, n});
    };
    NodeRef wv = g.make_cast(w, DType::F32);
    if (wt == DType::U8) {
      wv = g.make_cast(g.make_binary(Op::Add, g.make_cast(w, DType::I32), g.make_const_int(-100, DType::I32, {n, k})),
                       DType::F32);
    }
    NodeRef prod = g.make_binary(Op::Mul, left(g.make_cast(x, DType::F32)),
                                 g.make_binary(Op::Mul, left(per_block(d, m)),
                                               g.make_binary(Op::Mul, right(wv), right(per_block(s, n)))));
    NodeRef y = g.make_reduce(ReduceKind::Sum, prod, {1});
    tl::schedule::Schedule sch = tl::schedule::make_schedule(y.get());
    REQUIRE(sch.items.size() == 1);
    const Lowered chosen = tl::codegen::lower(sch.items[0], sch.materialized);
    INFO(chosen.kernel.str());
    CHECK(tl::codegen::opts_str(chosen.opts).rfind("(qdot ", 0) == 0);
    CHECK(chosen.kernel.str().find("dot4:i32(") != std::string::npos);
    CHECK(chosen.kernel.str().find("@byte") != std::string::npos);
    // Clamped, signed weights multiply the activation's bytes as signed ones, in one Dot4 each.
    CHECK((chosen.kernel.str().find("; b >= -127)") != std::string::npos) == clamp);
    CHECK((chosen.kernel.str().find("; signed; b >= -127)") != std::string::npos) == (clamp && wt == DType::I8));
    Lowering how;
    how.opts = Opts{};
    const Lowered plain = tl::codegen::lower(sch.items[0], sch.materialized, how);
    auto run_kernel = [&](const Lowered& l) {
      std::vector<std::vector<Scalar>> buffers = interpreter_inputs(l);
      buffers[0].assign(static_cast<std::size_t>(m * n), Scalar{});
      tl::test::LoopInterpreter(l.kernel, buffers).run();
      return buffers[0];
    };
    const std::vector<Scalar> want = run_kernel(plain), got = run_kernel(chosen);
    REQUIRE(want.size() == got.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(std::abs(got[i].f - want[i].f) <= 1e-4 * (1 + std::abs(want[i].f)));
    // 32 iterations per block replay too; 12 do not divide the reduce.
    REQUIRE(!chosen.opts.empty());
    const std::string red = std::to_string(chosen.opts[0].loop);
    how.opts = tl::codegen::parse_opts("(qdot " + red + " 32)");
    const std::vector<Scalar> narrow = run_kernel(tl::codegen::lower(sch.items[0], sch.materialized, how));
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(std::abs(narrow[i].f - want[i].f) <= 1e-4 * (1 + std::abs(want[i].f)));
    how.opts = tl::codegen::parse_opts("(qdot " + red + " 12)");
    CHECK_THROWS_WITH(tl::codegen::lower(sch.items[0], sch.materialized, how),
                      Catch::Contains("(qdot " + red + " 12)") && Catch::Contains("not a multiple of 12"));
    // A register tile of the n outputs (split and upcast the loop around the reduce): the reduce
    // loop then holds n updates, each given its lanes; the activation's words and the
    // corrections are shared expressions.
    std::vector<std::pair<const Stmt*, bool>> loops;
    loops_of(plain.kernel.body, false, loops);
    std::int32_t around = -1;
    for (const auto& [l, in_acc] : loops) {
      for (const Stmt& inner : l->body) {
        if (inner.kind == Stmt::Kind::Loop && inner.var == chosen.opts[0].loop) around = l->var;
      }
    }
    REQUIRE(around >= 0);
    const std::string inner = std::to_string(plain.kernel.loop_count() + 1);
    how.opts = tl::codegen::parse_opts("(split " + std::to_string(around) + " " + std::to_string(n) + ") (upcast " +
                                       inner + ") (qdot " + red + " 32)");
    const Lowered tiled = tl::codegen::lower(sch.items[0], sch.materialized, how);
    INFO(tiled.kernel.str());
    std::size_t dots = 0;
    for (std::size_t at = tiled.kernel.str().find("dot4:i32("); at != std::string::npos;
         at = tiled.kernel.str().find("dot4:i32(", at + 1)) {
      ++dots;
    }
    CHECK(dots >= static_cast<std::size_t>(n) * 8);
    const std::vector<Scalar> tile = run_kernel(tiled);
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(std::abs(tile[i].f - want[i].f) <= 1e-4 * (1 + std::abs(want[i].f)));
  }
  // Terms the pass must compute exactly as written or leave alone: a u8 less 8 that wraps in
  // u8, an int8 cast to u32 (wraps too), a scale that appears twice, an i8 plus 100 in i8.
  // (One output, so that nothing is broadcast and the schedule keeps the terms inline.)
  {
    const std::int64_t n = 1;
    NodeRef xu = byte_buffer(g, DType::U8, {1, k}, rng);
    NodeRef xs = byte_buffer(g, DType::I8, {1, k}, rng);
    NodeRef w = byte_buffer(g, DType::I8, {n, k}, rng);
    NodeRef s = random_buffer(g, DType::F32, {1, k}, rng);
    const std::vector<NodeRef> lefts = {
        g.make_cast(g.make_binary(Op::Add, xu, g.make_const_int(248, DType::U8, {1, k})), DType::F32),
        g.make_cast(g.make_cast(xs, DType::U32), DType::F32),
        g.make_binary(Op::Mul, g.make_binary(Op::Mul, g.make_cast(xs, DType::F32), s), s),
        g.make_cast(g.make_binary(Op::Add, xs, g.make_const_int(100, DType::I8, {1, k})), DType::F32),
    };
    for (const NodeRef& left : lefts) {
      NodeRef a3 = g.make_expand(g.make_reshape(left, {1, k, 1}), {1, k, n});
      NodeRef b3 = g.make_reshape(g.make_permute(g.make_cast(w, DType::F32), {1, 0}), {1, k, n});
      NodeRef y = g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, a3, b3), {1});
      tl::schedule::Schedule sch = tl::schedule::make_schedule(y.get());
      REQUIRE(sch.items.size() == 1);
      const Lowered chosen = tl::codegen::lower(sch.items[0], sch.materialized);
      Lowering plain_how;
      plain_how.opts = Opts{};
      const Lowered plain = tl::codegen::lower(sch.items[0], sch.materialized, plain_how);
      INFO(tl::codegen::opts_str(chosen.opts) << "\n" << chosen.kernel.str());
      auto run_kernel = [&](const Lowered& l) {
        std::vector<std::vector<Scalar>> buffers = interpreter_inputs(l);
        buffers[0].assign(static_cast<std::size_t>(n), Scalar{});
        tl::test::LoopInterpreter(l.kernel, buffers).run();
        return buffers[0];
      };
      const std::vector<Scalar> want = run_kernel(plain), got = run_kernel(chosen);
      for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(std::abs(got[i].f - want[i].f) <= 1e-4 * (1 + std::abs(want[i].f)));
    }
  }
  // A sum whose terms are not products of two bytes: the opt names what is missing.
  NodeRef f = random_buffer(g, DType::F32, {2, 64}, rng);
  NodeRef fy = g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, f, f), {1});
  tl::schedule::Schedule fs = tl::schedule::make_schedule(fy.get());
  Lowering how;
  how.opts = tl::codegen::parse_opts("(qdot 1 32)");
  CHECK_THROWS_WITH(tl::codegen::lower(fs.items[0], fs.materialized, how), Catch::Contains("(qdot 1 32)"));
}
