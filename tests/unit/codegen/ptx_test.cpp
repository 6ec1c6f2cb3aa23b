// SPDX-License-Identifier: Apache-2.0
// PTX from the shared emitter (the first step of the CUDA backend): kernels of every kind the
// scheduler makes (elementwise, reduces, row kernels, register-tiled matmuls, pads, casts)
// compile to PTX that declares a kernel entry, and ptxas (the CUDA toolkit's assembler, when
// installed) accepts it for sm_80.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "codegen/llvm_emit.h"
#include "runtime/toolchain.h"
#include "codegen/lower.h"
#include "schedule/schedule.h"
#include "tensor/graph.h"
#include "test_buffers.h"
#include "test_toolchain.h"
#include "tensorlisp/error.hpp"

using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;
using tl::tensor::ReduceKind;

namespace {

NodeRef buffer(Graph& g, DType t, const tl::tensor::Shape& shape) { return tl::test::zero_buffer(g, t, shape); }

const char* ptxas() {
  static const char* path = [] {
    const char* env = std::getenv("TENSORLISP_PTXAS");
    if (env != nullptr && *env != 0) return env;
    return std::filesystem::exists("/usr/local/cuda/bin/ptxas") ? "/usr/local/cuda/bin/ptxas" : "";
  }();
  return path;
}

// Every kernel of `root`'s schedule as PTX, each checked by ptxas when there is one.
void check_ptx(const NodeRef& root, const std::string& what) {
  static tl::codegen::PtxCodegen codegen("sm_80", tl::runtime::find_libdevice(tl::test::toolchain_settings()));
  tl::schedule::Schedule s = tl::schedule::make_schedule(root.get());
  int index = 0;
  for (const tl::schedule::ScheduledKernel& k : s.items) {
    tl::codegen::Lowered l = tl::codegen::lower(k, s.materialized, tl::codegen::Target::Gpu);
    const std::string name = "tl_" + what + "_" + std::to_string(index++);
    INFO(what << ": kernel " << name);
    std::string ptx;
    try {
      ptx = codegen.compile(l.kernel, name);
    } catch (const std::runtime_error& e) {
      // Without the CUDA toolkit's libdevice, kernels that call it cannot be built; the
      // message says so.
      if (std::string(e.what()).find("libdevice") == std::string::npos) throw;
      WARN(e.what());
      continue;
    }
    REQUIRE(ptx.find(".visible .entry " + name) != std::string::npos);
    CHECK(l.kernel.buffers.size() == static_cast<std::size_t>(std::count_if(l.kernel.buffers.begin(), l.kernel.buffers.end(),
                                                                             [](const auto& b) { return b.local_elems == 0; })));
    if (*ptxas() == 0) continue;
    auto dir = std::filesystem::temp_directory_path();
    auto file = dir / (name + ".ptx");
    std::ofstream(file) << ptx;
    std::string cmd = std::string(ptxas()) + " -arch=sm_80 " + file.string() + " -o " + (dir / (name + ".cubin")).string() +
                      " 2>" + (dir / (name + ".log")).string();
    int rc = std::system(cmd.c_str());
    std::ifstream log(dir / (name + ".log"));
    std::string messages((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    INFO(messages);
    CHECK(rc == 0);
    std::filesystem::remove(file);
    std::filesystem::remove(dir / (name + ".cubin"));
    std::filesystem::remove(dir / (name + ".log"));
  }
}

}  // namespace

TEST_CASE("kernels compile to PTX that ptxas accepts", "[codegen][ptx]") {
  if (*ptxas() == 0) WARN("ptxas not found (/usr/local/cuda/bin/ptxas or TENSORLISP_PTXAS): PTX is emitted but not assembled");
  Graph g;
  NodeRef a = buffer(g, DType::F32, {64, 48});
  NodeRef b = buffer(g, DType::F32, {64, 48});
  // Elementwise, with a broadcast and a cast.
  NodeRef sum = g.make_binary(Op::Add, a, b);
  check_ptx(g.make_binary(Op::Mul, sum, g.make_const_float(2.0, DType::F32, {64, 48})), "elementwise");
  check_ptx(g.make_cast(g.make_binary(Op::Max, a, b), DType::F16), "cast_f16");
  // A reduce over rows, and a row kernel (x - max(x), the start of softmax).
  NodeRef rmax = g.make_reduce(ReduceKind::Max, a, {1});
  check_ptx(rmax, "reduce");
  check_ptx(g.make_binary(Op::Add, a, g.make_unary(Op::Neg, g.make_expand(rmax, {64, 48}))), "rows");
  // Transcendentals: exp2, log2, sin, sqrt, recip.
  check_ptx(g.make_unary(Op::Exp2, g.make_unary(Op::Sin, a)), "exp2_sin");
  check_ptx(g.make_unary(Op::Log2, g.make_unary(Op::Sqrt, g.make_unary(Op::Recip, a))), "log2_sqrt");
  // A matmul (64 x 48) x (48 x 32): one thread per output element.
  NodeRef w = buffer(g, DType::F32, {48, 32});
  NodeRef ae = g.make_expand(g.make_reshape(a, {64, 48, 1}), {64, 48, 32});
  NodeRef we = g.make_expand(g.make_reshape(w, {1, 48, 32}), {64, 48, 32});
  check_ptx(g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, ae, we), {1}), "matmul");
  // A pad (a guarded, clamped index) and integer arithmetic.
  NodeRef ia = buffer(g, DType::I32, {10});
  NodeRef padded = g.make_pad(ia, {{2, 3}});
  check_ptx(g.make_binary(Op::Mod, g.make_binary(Op::Idiv, padded, g.make_const_int(3, DType::I32, {15})),
                          g.make_const_int(5, DType::I32, {15})),
            "pad_int");
}

TEST_CASE("GPU lowering maps output elements to threads", "[codegen][ptx]") {
  Graph g;
  NodeRef a = buffer(g, DType::F32, {64, 48});
  NodeRef w = buffer(g, DType::F32, {48, 32});
  NodeRef ae = g.make_expand(g.make_reshape(a, {64, 48, 1}), {64, 48, 32});
  NodeRef we = g.make_expand(g.make_reshape(w, {1, 48, 32}), {64, 48, 32});
  NodeRef mm = g.make_reduce(ReduceKind::Sum, g.make_binary(Op::Mul, ae, we), {1});
  tl::schedule::Schedule s = tl::schedule::make_schedule(mm.get());
  REQUIRE(s.kernels.size() == 1);
  // One thread per output element, the sum within the thread.
  tl::codegen::Lowered gpu = tl::codegen::lower(s.items[0], s.materialized, tl::codegen::Target::Gpu);
  CHECK(gpu.parallel_extent == tl::tensor::Dim(64 * 32));
  CHECK(tl::codegen::gpu_thread_loops(gpu.kernel).size() == 2);
  // The CPU's register tiles pack an operand beside the parallel loop: no GPU mapping.
  tl::codegen::Lowered cpu = tl::codegen::lower(s.items[0], s.materialized);
  CHECK_THROWS_AS(tl::codegen::gpu_thread_loops(cpu.kernel), tl::Error);  // an internal error
  // A full sum has no parallel loop: one thread.
  NodeRef total = g.make_reduce(ReduceKind::Sum, a, {0, 1});
  tl::schedule::Schedule t = tl::schedule::make_schedule(total.get());
  tl::codegen::Lowered one = tl::codegen::lower(t.items.back(), t.materialized, tl::codegen::Target::Gpu);
  CHECK(one.parallel_extent == tl::tensor::Dim(1));
}
