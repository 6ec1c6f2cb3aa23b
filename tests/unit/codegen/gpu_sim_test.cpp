// SPDX-License-Identifier: Apache-2.0
// Thread groups on the GPU (a reduce split across the threads of a block, combined by warp
// shuffles and shared memory) and the CPU backend's SIMT simulator that runs them here: when
// the lowering splits a reduce, what the PTX and AMDGPU code contain, and that the simulator
// runs group kernels correctly and reports threads that miss a barrier or a shuffle.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/llvm_emit.h"
#include "runtime/toolchain.h"
#include "codegen/lower.h"
#include "runtime/backend.h"
#include "schedule/schedule.h"
#include "tensor/graph.h"
#include "test_buffers.h"
#include "test_toolchain.h"

using tl::codegen::Kernel;
using tl::codegen::Stmt;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;
using tl::tensor::ReduceKind;

namespace {

NodeRef buffer(Graph& g, DType t, const tl::tensor::Shape& shape) { return tl::test::zero_buffer(g, t, shape); }

// The GPU lowering of root's last kernel.
tl::codegen::Lowered lower_gpu(const NodeRef& root) {
  tl::schedule::Schedule s = tl::schedule::make_schedule(root.get());
  REQUIRE(!s.kernels.empty());
  return tl::codegen::lower(s.items.back(), s.materialized, tl::codegen::Target::Gpu);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A kernel of one iteration that counts, across a group of `group` threads, `n` ones; with
// `misplaced`, its combine is inside the group loop, which only the first n threads run.
Kernel counting_kernel(int group, std::int64_t n, bool misplaced) {
  Kernel k;
  k.name = "count";
  k.buffers.push_back(tl::codegen::BufferParam{DType::F32, true});
  k.group = group;
  auto [outer, i] = k.make_loop(k.constant_int(1));
  outer.parallel = true;
  Stmt def{Stmt::Kind::AccDef};
  def.acc = k.new_acc();
  def.value = k.constant_float(0, DType::F32);
  auto [loop, j] = k.make_loop(k.constant_int(n));
  loop.group = true;
  Stmt upd{Stmt::Kind::AccUpdate};
  upd.acc = def.acc;
  upd.value = k.constant_float(1, DType::F32);
  loop.body.push_back(upd);
  Stmt combine{Stmt::Kind::GroupCombine};
  combine.acc = def.acc;
  Stmt store{Stmt::Kind::Store};
  store.index = i;
  store.value = k.acc_read(def.acc, DType::F32);
  outer.body.push_back(def);
  if (misplaced) loop.body.push_back(combine);
  outer.body.push_back(loop);
  if (!misplaced) outer.body.push_back(combine);
  outer.body.push_back(store);
  k.body.push_back(outer);
  return k;
}

// Runs a one-output kernel on the simulator of `flavor`; returns the output.
float run_on_sim(const std::string& flavor, const Kernel& k, int group) {
  auto backend = tl::runtime::Backend::load("cpu", "builtin", "sim=" + flavor);
  REQUIRE(std::string(backend->info().target) == "sim:" + flavor);
  tl::codegen::SimCodegen codegen(flavor);
  void* kernel = backend->compile(codegen.compile(k, "count", false).object, "count");
  void* out = backend->alloc(sizeof(float));
  float result = 0;
  try {
    backend->launch(kernel, {out}, {}, tl_launch{1, 1, group});
    backend->copy_out(&result, out, sizeof result);
  } catch (...) {
    backend->free(out);
    backend->release_kernel(kernel);
    throw;
  }
  backend->free(out);
  backend->release_kernel(kernel);
  return result;
}

}  // namespace

TEST_CASE("GPU lowering splits a reduce across a thread group when it pays", "[codegen][gpu]") {
  Graph g;
  // Few outputs (64 rows), a long reduce along memory: one group of 256 threads per row.
  NodeRef rows = buffer(g, DType::F32, {64, 1000});
  tl::codegen::Lowered row_max = lower_gpu(g.make_reduce(ReduceKind::Max, rows, {1}));
  CHECK(row_max.group == 256);
  CHECK(row_max.parallel_extent == tl::tensor::Dim(64));
  const std::string text = row_max.kernel.str();
  INFO(text);
  CHECK(contains(text, "group(256)"));
  CHECK(contains(text, "in [0, 1000) group"));
  CHECK(contains(text, "max= across group"));
  // A full sum: one group.
  tl::codegen::Lowered total = lower_gpu(g.make_reduce(ReduceKind::Sum, rows, {0, 1}));
  CHECK(total.group == 256);
  CHECK(total.parallel_extent == tl::tensor::Dim(1));
  // Many outputs whose loads run along memory across them (a column sum): one thread each.
  NodeRef wide = buffer(g, DType::F32, {100, 8192});
  tl::codegen::Lowered columns = lower_gpu(g.make_reduce(ReduceKind::Sum, wide, {0}));
  CHECK(columns.group == 0);
  CHECK(columns.parallel_extent == tl::tensor::Dim(8192));
  // A short reduce stays within a thread.
  NodeRef narrow = buffer(g, DType::F32, {64, 8});
  CHECK(lower_gpu(g.make_reduce(ReduceKind::Sum, narrow, {1})).group == 0);
  // The CPU lowering never splits.
  NodeRef again = g.make_reduce(ReduceKind::Max, rows, {1});
  tl::schedule::Schedule s = tl::schedule::make_schedule(again.get());
  CHECK(tl::codegen::lower(s.items.back(), s.materialized).group == 0);
}

TEST_CASE("group kernels combine by warp shuffles on NVPTX and by a shared-memory tree on AMDGPU", "[codegen][gpu]") {
  Graph g;
  NodeRef rows = buffer(g, DType::F64, {64, 1000});
  tl::codegen::Lowered l = lower_gpu(g.make_reduce(ReduceKind::Sum, rows, {1}));
  REQUIRE(l.group == 256);
  const std::string ptx = tl::codegen::PtxCodegen("sm_80").compile(l.kernel, "row_sum");
  INFO(ptx);
  CHECK(contains(ptx, "shfl.sync.bfly.b32"));  // a double goes in two halves
  CHECK(contains(ptx, "bar.sync"));
  CHECK(contains(ptx, ".shared"));
  CHECK(contains(ptx, ".maxntid 256, 1, 1"));
  // The AMDGPU code object links (a tree: 2 + log2(256) barriers, checked in the IR).
  const tl::codegen::Toolchain toolchain = tl::runtime::find_toolchain(tl::test::toolchain_settings());
  tl::codegen::CompileOutput amd =
      tl::codegen::AmdgpuCodegen("gfx90a", toolchain.link_code_object).compile(l.kernel, "row_sum", true);
  CHECK(amd.object.compare(0, 4, "\x7f" "ELF") == 0);
  std::size_t barriers = 0;
  for (std::size_t at = amd.ir.find("@llvm.amdgcn.s.barrier()"); at != std::string::npos;
       at = amd.ir.find("@llvm.amdgcn.s.barrier()", at + 1)) {
    ++barriers;
  }
  CHECK(barriers == 1 + 2 + 8);  // the declaration, then the calls
  CHECK(contains(amd.ir, "fence syncscope(\"workgroup\") release"));
}

TEST_CASE("the SIMT simulator runs group kernels and reports threads that miss a barrier or shuffle", "[codegen][gpu][sim]") {
  for (const std::string flavor : {"nvptx", "amdgcn"}) {
    INFO(flavor);
    // 100 ones over 64 threads (some take two, some one), and fewer ones than threads.
    CHECK(run_on_sim(flavor, counting_kernel(64, 100, false), 64) == 100.0f);
    CHECK(run_on_sim(flavor, counting_kernel(64, 40, false), 64) == 40.0f);
    CHECK(run_on_sim(flavor, counting_kernel(128, 1000, false), 128) == 1000.0f);
    // Threads 40..63 never reach the combine: on NVPTX its first shuffle, on AMDGPU its
    // first barrier. The error says so, and the backend goes on working.
    const std::string expected = flavor == "nvptx" ? "a warp shuffle that 24 lanes of warp 1 did not reach (block 0 of 64 threads)"
                                                   : "a barrier that 24 of the threads did not reach (block 0 of 64 threads)";
    CHECK_THROWS_WITH(run_on_sim(flavor, counting_kernel(64, 40, true), 64), Catch::Matchers::Contains(expected));
    CHECK(run_on_sim(flavor, counting_kernel(64, 7, false), 64) == 7.0f);
  }
  // A group that is not a whole number of warps is refused at launch.
  CHECK_THROWS_WITH(run_on_sim("nvptx", counting_kernel(48, 10, false), 48),
                    Catch::Matchers::Contains("a thread group of 48 threads (must be a multiple of 32, at most 1024)"));
}
