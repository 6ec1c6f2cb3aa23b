// SPDX-License-Identifier: Apache-2.0
// Unit tests for the JIT: index simplification in the loop IR, the inline exp2/log2 against
// the reference executor (libm in double), and random graphs run on both executors.
#include "runtime/jit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "codegen/llvm_emit.h"
#include "codegen/loop_ir.h"
#include "runtime/backend.h"
#include "runtime/elements.h"
#include "runtime/reference.h"
#include "tensor/graph.h"

using tl::codegen::EOp;
using tl::codegen::ExprId;
using tl::codegen::Kernel;
using tl::codegen::Stmt;
using tl::tensor::Buffer;
using tl::tensor::DType;
using tl::tensor::Graph;
using tl::tensor::NodeRef;
using tl::tensor::Op;

namespace {

tl::runtime::JitDevice& jit() {
  static auto device = std::make_unique<tl::runtime::JitDevice>(tl::runtime::Backend::load("cpu", "builtin", ""));
  return *device;
}

NodeRef f32_buffer(Graph& g, const std::vector<float>& v) {
  auto buf = std::make_shared<Buffer>(DType::F32, v.size());
  std::memcpy(buf->data(), v.data(), v.size() * 4);
  return g.make_buffer(buf, {static_cast<std::int64_t>(v.size())});
}

std::vector<float> as_f32(const Buffer& b) {
  std::vector<float> out(b.count());
  std::memcpy(out.data(), b.data(), out.size() * 4);
  return out;
}

// Distance in units in the last place between two floats (0 for equal, both NaN).
std::int64_t ulps(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::int64_t>::max();
  if (a == b) return 0;
  auto key = [](float f) {
    std::int32_t i = std::bit_cast<std::int32_t>(f);
    return i < 0 ? static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::min()) - i : static_cast<std::int64_t>(i);
  };
  return std::abs(key(a) - key(b));
}

}  // namespace

TEST_CASE("loop ir: max is commutative, float or integer: its operands are put in order", "[codegen]") {
  // Of -0 and +0 a float max gives +0 in either order (ops.def), so max(x, y) is max(y, x).
  Kernel k;
  k.buffers.push_back({DType::F32, true});
  k.buffers.push_back({DType::F32, false});
  k.buffers.push_back({DType::I32, false});
  auto [loop, i] = k.make_loop(k.constant_int(4));
  ExprId x = k.load(1, i), y = k.binary(EOp::Mul, x, k.constant_float(2.0, DType::F32));
  ExprId m = k.binary(EOp::Max, y, x);
  REQUIRE(k.expr(m).op == EOp::Max);
  CHECK(k.binary(EOp::Max, x, y) == m);
  ExprId n = k.load(2, i), n2 = k.binary(EOp::Add, n, n);
  CHECK(k.binary(EOp::Max, n2, n) == k.binary(EOp::Max, n, n2));
}

TEST_CASE("loop ir: index arithmetic simplifies over known loop ranges", "[codegen]") {
  Kernel k;
  auto [li, i] = k.make_loop(k.constant_int(8));
  auto [lj, j] = k.make_loop(k.constant_int(4));
  ExprId flat = k.binary(EOp::Add, k.binary(EOp::Mul, i, k.constant_int(4)), j);
  // (i*4 + j) / 4 = i and (i*4 + j) mod 4 = j when 0 <= j < 4.
  CHECK(k.binary(EOp::Idiv, flat, k.constant_int(4)) == i);
  CHECK(k.binary(EOp::Mod, flat, k.constant_int(4)) == j);
  // Nested divisions merge: ((i*4 + j) / 2) / 2 = i.
  CHECK(k.binary(EOp::Idiv, k.binary(EOp::Idiv, flat, k.constant_int(2)), k.constant_int(2)) == i);
  // Sums are canonical: j + i*4 is the same expression as i*4 + j; x - x = 0.
  CHECK(k.binary(EOp::Add, j, k.binary(EOp::Mul, k.constant_int(4), i)) == flat);
  CHECK(k.as_const(k.binary(EOp::Add, flat, k.binary(EOp::Mul, flat, k.constant_int(-1)))) == 0);
  // Comparisons decided by ranges: j < 4 always, j < 0 never, i*4 + j < 32 always.
  CHECK(k.as_const(k.binary(EOp::Cmplt, j, k.constant_int(4))) == 1);
  CHECK(k.as_const(k.binary(EOp::Cmplt, j, k.constant_int(0))) == 0);
  CHECK(k.as_const(k.binary(EOp::Cmplt, flat, k.constant_int(32))) == 1);
  // But not what the ranges leave open.
  CHECK_FALSE(k.as_const(k.binary(EOp::Cmplt, flat, k.constant_int(31))).has_value());
  CHECK(k.range(flat).lo == 0);
  CHECK(k.range(flat).hi == 31);
  // Coefficients of loop variables in an index.
  CHECK(k.coefficient(flat, i) == 4);
  CHECK(k.coefficient(flat, j) == 1);
  CHECK_FALSE(k.coefficient(k.binary(EOp::Idiv, flat, k.constant_int(3)), i).has_value());
  // A symbolic extent leaves the upper bound open.
  auto [ln, n] = k.make_loop(k.sym_var("batch"));
  CHECK_FALSE(k.range(n).hi.has_value());
  CHECK(k.binary(EOp::Idiv, k.binary(EOp::Mul, n, k.constant_int(6)), k.constant_int(3)) ==
        k.binary(EOp::Mul, n, k.constant_int(2)));
}

TEST_CASE("loop ir: division by a symbolic size simplifies when the remainder is provably smaller", "[codegen]") {
  // A (12 L+1 64) view flattened and read back (an attention's K^T at a decode step): with
  // D = L + 1 and E = 64 D, flat = i6 + D i5 + E i3 for i6 < D, i5 < 64.
  Kernel k;
  const ExprId len = k.sym_var("L");
  const ExprId d = k.binary(EOp::Add, len, k.constant_int(1));
  const ExprId e = k.binary(EOp::Mul, d, k.constant_int(64));
  auto [l3, i3] = k.make_loop(k.constant_int(12));
  auto [l5, i5] = k.make_loop(k.constant_int(64));
  auto [l6, i6] = k.make_loop(d);
  const ExprId flat = k.binary(EOp::Add, i6, k.binary(EOp::Add, k.binary(EOp::Mul, d, i5), k.binary(EOp::Mul, e, i3)));
  CHECK(k.binary(EOp::Mod, flat, d) == i6);
  CHECK(k.binary(EOp::Idiv, flat, d) == k.binary(EOp::Add, i5, k.binary(EOp::Mul, i3, k.constant_int(64))));
  CHECK(k.binary(EOp::Idiv, flat, e) == i3);
  CHECK(k.binary(EOp::Mod, flat, e) == k.binary(EOp::Add, i6, k.binary(EOp::Mul, d, i5)));
  // A multiple of the constant divisor hidden in a product: (64 (L + 1) i3 + 16 j) / 64.
  auto [lj, j] = k.make_loop(k.constant_int(4));
  const ExprId row = k.binary(EOp::Add, k.binary(EOp::Mul, e, i3), k.binary(EOp::Mul, j, k.constant_int(16)));
  CHECK(k.binary(EOp::Mod, row, k.constant_int(64)) == k.binary(EOp::Mul, j, k.constant_int(16)));
  CHECK(k.binary(EOp::Idiv, row, k.constant_int(64)) == k.binary(EOp::Mul, d, i3));
  // Not when the remainder may reach the divisor: i5 < 64 is not below L + 1 for every L, and
  // i6 + 1 may equal D.
  CHECK(k.expr(k.binary(EOp::Idiv, k.binary(EOp::Add, i5, d), d)).op == EOp::Idiv);
  CHECK(k.expr(k.binary(EOp::Mod, k.binary(EOp::Add, i6, k.constant_int(1)), d)).op == EOp::Mod);
  CHECK(k.expr(k.binary(EOp::Idiv, flat, len)).op == EOp::Idiv);  // L may be 0
  // Nor when the remainder's bound does not fit in 64 bits (it would wrap and prove anything).
  auto [lb0, b0] = k.make_loop(k.constant_int((std::int64_t{1} << 61) + 1));
  auto [lb1, b1] = k.make_loop(k.constant_int((std::int64_t{1} << 61) + 1));
  const ExprId huge =
      k.binary(EOp::Add, k.binary(EOp::Mul, b0, k.constant_int(3)), k.binary(EOp::Mul, b1, k.constant_int(3)));
  CHECK(k.expr(k.binary(EOp::Idiv, huge, d)).op == EOp::Idiv);
}

TEST_CASE("loop ir: integer folding wraps like the dtype", "[codegen]") {
  Kernel k;
  CHECK(k.as_const(k.binary(EOp::Add, k.constant_int(127, DType::I8), k.constant_int(1, DType::I8))) == -128);
  CHECK(k.as_const(k.binary(EOp::Idiv, k.constant_int(7, DType::I32), k.constant_int(0, DType::I32))) == 0);
  CHECK(k.as_const(k.binary(EOp::Mod, k.constant_int(-7, DType::I32), k.constant_int(2, DType::I32))) == -1);
  CHECK(k.as_const(k.binary(EOp::Cmplt, k.constant_int(-1, DType::U32), k.constant_int(1, DType::U32))) == 0);
}

TEST_CASE("jit: exp2 and log2 are within an ulp of the double-precision reference", "[codegen][jit]") {
  Graph g;
  std::mt19937 rng(7);
  std::vector<float> xs{0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 127.0f, 127.99f, 128.0f, 129.0f, -126.0f, -149.0f, -149.5f,
                        -150.0f, -151.0f, 1e-30f, -1e-30f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::max()};
  std::uniform_real_distribution<float> wide(-160.0f, 140.0f);
  for (int i = 0; i < 20000; ++i) xs.push_back(wide(rng));
  // Positive floats across every exponent (for log2), from their bit patterns.
  std::uniform_int_distribution<std::uint32_t> bits(1, 0x7f7fffffu);
  for (int i = 0; i < 20000; ++i) xs.push_back(std::bit_cast<float>(bits(rng)));
  NodeRef x = f32_buffer(g, xs);
  for (Op op : {Op::Exp2, Op::Log2}) {
    NodeRef y = g.make_unary(op, x);
    std::vector<float> want = as_f32(*tl::runtime::realize_reference(y.get(), {}));
    std::vector<float> got = as_f32(*jit().realize(y.get(), {}));
    std::int64_t worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      std::int64_t d = ulps(want[i], got[i]);
      if (d > worst) {
        worst = d;
        worst_at = i;
      }
    }
    INFO(tl::tensor::op_name(op) << "(" << xs[worst_at] << "): reference " << want[worst_at] << ", jit "
                                 << got[worst_at]);
    CHECK(worst <= 1);
  }
}

TEST_CASE("jit: sin and cos of floats are within an ulp of the correctly rounded result, whole range",
          "[codegen][jit]") {
  // Floats from every exponent (a dense stride through the bit patterns, both signs), the
  // floats nearest to multiples of pi/2 and pi/4 (where the reduction cancels most: up to
  // 2^20 of them, the result's relative accuracy is what matters), and the special values.
  // The reference is libm's double sin and cos, which are within an ulp of double, rounded
  // to float: at most an ulp from the correctly rounded float.
  std::vector<float> xs{0.0f,
                        -0.0f,
                        1.0f,
                        -1.0f,
                        1e-30f,
                        -1e-30f,
                        3.14159274f,
                        1.57079637f,
                        1e38f,
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::denorm_min(),
                        -std::numeric_limits<float>::denorm_min(),
                        std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::max(),
                        -std::numeric_limits<float>::max()};
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 2999) {
    xs.push_back(std::bit_cast<float>(bits));
    xs.push_back(-std::bit_cast<float>(bits + 1000));
  }
  for (int k = 1; k < (1 << 20); k += k < 4096 ? 1 : 97) {
    for (double m : {std::numbers::pi / 2, std::numbers::pi / 4}) {
      const float near = static_cast<float>(k * m);
      xs.push_back(near);
      xs.push_back(std::nextafter(near, 0.0f));
      xs.push_back(-std::nextafter(near, 1e30f));
    }
  }
  for (int e = 0; e < 128; ++e) {  // pi/2 scaled by powers of two: far up the range
    xs.push_back(std::ldexp(1.57079637f, e));
    xs.push_back(std::ldexp(3.14159274f, e));
  }
  Graph g;
  NodeRef x = f32_buffer(g, xs);
  // On this machine's CPU, and compiled for AVX2 and for plain x86-64 (SSE2).
  for (const char* cpu : {"", "x86-64-v3", "x86-64"}) {
    tl::runtime::JitSettings options;
    options.cpu = cpu;
    tl::runtime::JitDevice device(tl::runtime::Backend::load("cpu", "builtin", ""), options);
    for (Op op : {Op::Sin, Op::Cos}) {
      NodeRef y = g.make_unary(op, x);
      std::vector<float> got = as_f32(*device.realize(y.get(), {}));
      std::int64_t worst = 0;
      std::size_t worst_at = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double v = static_cast<double>(xs[i]);
        const float want = static_cast<float>(op == Op::Sin ? std::sin(v) : std::cos(v));
        const std::int64_t d = ulps(want, got[i]);
        if (d > worst) {
          worst = d;
          worst_at = i;
        }
      }
      const double at = static_cast<double>(xs[worst_at]);
      INFO("cpu '" << cpu << "': " << tl::tensor::op_name(op) << "(" << std::hexfloat << at << std::defaultfloat
                   << "): libm's double " << (op == Op::Sin ? std::sin(at) : std::cos(at)) << ", jit " << got[worst_at]
                   << " (" << worst << " ulps)");
      CHECK(worst <= 1);
      // sin keeps the sign of a zero; both give NaN for inf and NaN.
      CHECK(std::signbit(op == Op::Sin ? got[1] : -got[1]));
      CHECK(std::isnan(got[9]));
      CHECK(std::isnan(got[10]));
      CHECK(std::isnan(got[11]));
    }
  }
}

namespace {

// out[i] = in[i] * 2 + 1 over n floats (out[i] + in[i] when `read_back`), i the parallel loop.
Kernel twice_plus_one(std::int64_t n, bool read_back = false) {
  Kernel k;
  k.buffers.push_back({DType::F32, true});
  k.buffers.push_back({DType::F32, false});
  auto [loop, i] = k.make_loop(k.constant_int(n));
  loop.parallel = true;
  Stmt store{Stmt::Kind::Store};
  store.buffer = 0;
  store.index = i;
  const ExprId x = k.load(1, i);
  store.value = read_back ? k.binary(EOp::Add, k.load(0, i), x)
                          : k.binary(EOp::Add, k.binary(EOp::Mul, x, k.constant_float(2, DType::F32)),
                                     k.constant_float(1, DType::F32));
  loop.body.push_back(store);
  k.body.push_back(loop);
  return k;
}

}  // namespace

TEST_CASE("jit: a large output is written with non-temporal stores, from any range of iterations", "[codegen][jit]") {
  // 16 MiB of output and 7 floats more: streamed (codegen/target_x86.cpp); a small output, or
  // one the kernel reads back, is not.
  const std::int64_t n = (std::int64_t{16} << 20) / 4 + 7;
  tl::codegen::CpuCodegen codegen;
  const tl::codegen::CompileOutput big = codegen.compile(twice_plus_one(n), "stream", true);
  CHECK(big.ir.find("!nontemporal") != std::string::npos);
  CHECK(big.ir.find("llvm.x86.sse.sfence") != std::string::npos);
  CHECK(codegen.compile(twice_plus_one(1000), "small", true).ir.find("!nontemporal") == std::string::npos);
  CHECK(codegen.compile(twice_plus_one(n, true), "rmw", true).ir.find("!nontemporal") == std::string::npos);
  // Run on 1, 2 and 7 threads: each thread's range starts where the split puts it (mostly not
  // on a 64-byte boundary), and every element is written once, right.
  std::vector<float> in(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 1000) - 500.0f;
  for (int threads : {1, 2, 7}) {
    auto backend = tl::runtime::Backend::load("cpu", "builtin", "threads=" + std::to_string(threads));
    void* kernel = backend->compile(big.object, "stream");
    void* out = backend->alloc(in.size() * 4);
    void* src = backend->alloc(in.size() * 4);
    backend->copy_in(src, in.data(), in.size() * 4);
    backend->launch(kernel, {out, src}, {}, tl_launch{n, 1, 0, 0});
    std::vector<float> got(in.size());
    backend->copy_out(got.data(), out, got.size() * 4);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < in.size(); ++i) wrong += got[i] != in[i] * 2 + 1 ? 1 : 0;
    INFO(threads << " threads");
    CHECK(wrong == 0);
    backend->free(out);
    backend->free(src);
    backend->release_kernel(kernel);
  }
}

TEST_CASE("jit: exp in the composite's f64 form is computed in f32 within an ulp", "[codegen][jit]") {
  // The composite exp of a float is cast(exp2(c * cast(x, f64)), f32) (stdlib %tensor-exp);
  // kernels compute it in f32 arithmetic (math::exp2_product_f32). Checked here against
  // long-double exp, for the constants exp (log2 e), sigmoid's exp(-x) and tanh's 2 log2 e use.
  Graph g;
  std::vector<float> xs{0.0f, -0.0f, 1.0f, -1.0f, 88.72f, 88.73f, 89.0f, -87.3f, -103.0f, -103.97f, -104.0f,
                        1e-30f, -1e-30f, 1e-8f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-110.0f, 90.0f);
  for (int i = 0; i < 40000; ++i) xs.push_back(wide(rng));
  std::uniform_real_distribution<float> near0(-1.0f, 1.0f);
  for (int i = 0; i < 10000; ++i) xs.push_back(near0(rng) * std::pow(2.0f, -static_cast<float>(rng() % 30)));
  NodeRef x = f32_buffer(g, xs);
  const double log2e = 1.4426950408889634;
  for (double c : {log2e, -log2e, 2 * log2e}) {
    NodeRef wide64 = g.make_cast(x, DType::F64);
    NodeRef scale = g.make_const_float(c, DType::F64, {static_cast<std::int64_t>(xs.size())});
    NodeRef y = g.make_cast(g.make_unary(Op::Exp2, g.make_binary(Op::Mul, scale, wide64)), DType::F32);
    std::vector<float> got = as_f32(*jit().realize(y.get(), {}));
    std::int64_t worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float want = static_cast<float>(std::exp2(static_cast<long double>(c) * xs[i]));
      std::int64_t d = ulps(want, got[i]);
      if (d > worst) {
        worst = d;
        worst_at = i;
      }
    }
    INFO("c = " << c << ", x = " << xs[worst_at] << ": jit " << got[worst_at]);
    CHECK(worst <= 1);
  }
}

TEST_CASE("jit: the disk cache is reused by a new device and survives corruption", "[codegen][jit]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tl-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Graph g;
  NodeRef x = f32_buffer(g, {1.0f, 2.0f, 3.0f, 4.0f});
  // 2^(x + 1) of integers: exact in any exp2.
  NodeRef y = g.make_unary(Op::Exp2, g.make_binary(Op::Add, x, g.make_const_float(1, DType::F32, {4})));
  const std::vector<float> want = as_f32(*tl::runtime::realize_reference(y.get(), {}));
  auto run = [&]() {
    tl::runtime::JitDevice d(tl::runtime::Backend::load("cpu", "builtin", ""), {.cache_dir = dir.string()});
    CHECK(as_f32(*d.realize(y.get(), {})) == want);
    return d.stats();
  };
  auto first = run();
  CHECK(first.kernels_compiled == 1);
  CHECK(first.disk_hits == 0);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  auto second = run();
  CHECK(second.kernels_compiled == 0);
  CHECK(second.disk_hits == 1);
  // Damaged entries are ignored and replaced: flipped bytes, a truncated file, garbage.
  auto damage = [&](const std::function<void(std::string&)>& how) {
    std::string data;
    {
      std::ifstream f(files[0], std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    how(data);
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << data;
    auto s = run();
    CHECK(s.kernels_compiled == 1);
    CHECK(s.disk_hits == 0);
    CHECK(run().disk_hits == 1);  // rewritten
  };
  damage([](std::string& d) { d[d.size() - 100] ^= 0x5a; });
  damage([](std::string& d) { d.resize(d.size() / 2); });
  damage([](std::string& d) { d = "not a kernel"; });
  damage([](std::string& d) { d.clear(); });
  // An entry for another kernel at this file (a hash collision) is not used either.
  tl::runtime::DiskCache cache(dir.string());
  CHECK_FALSE(cache.load("some other key").has_value());
  fs::remove_all(dir);
  // With no directory the cache is off.
  tl::runtime::JitDevice off(tl::runtime::Backend::load("cpu", "builtin", ""), {.cache_dir = ""});
  CHECK(as_f32(*off.realize(y.get(), {})) == want);
  CHECK(off.stats().kernels_compiled == 1);
}

// Issue 19: a cache entry that is a directory made every realize fail (the read threw), and
// one that is a symlink to /dev/zero was read until memory ran out. Only regular files are
// read now; anything else is ignored, reported, and compiled again.
TEST_CASE("jit: poisoned disk cache entries are ignored", "[codegen][jit]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tl-cache-poison-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Graph g;
  NodeRef x = f32_buffer(g, {1.0f, 2.0f, 3.0f, 4.0f});
  NodeRef y = g.make_binary(Op::Mul, x, g.make_const_float(3.0, DType::F32, {4}));
  const std::vector<float> want = {3.0f, 6.0f, 9.0f, 12.0f};
  auto run = [&]() {
    tl::runtime::JitDevice d(tl::runtime::Backend::load("cpu", "builtin", ""), {.cache_dir = dir.string()});
    CHECK(as_f32(*d.realize(y.get(), {})) == want);
    return d.stats();
  };
  REQUIRE(run().kernels_compiled == 1);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  const fs::path entry = files[0];
  auto poison = [&](const std::function<void(const fs::path&)>& how) {
    fs::remove_all(entry);
    how(entry);
    auto s = run();
    CHECK(s.kernels_compiled == 1);
    CHECK(s.disk_hits == 0);
  };
  poison([](const fs::path& p) { fs::create_directory(p); });
  poison([](const fs::path& p) { fs::create_symlink("/dev/zero", p); });
  poison([](const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0600) == 0); });
  // What load() says about each kind of entry (TENSORLISP_DEBUG=1 prints it).
  tl::runtime::DiskCache cache(dir.string());
  cache.store("key", "compiled code");
  const fs::path file = cache.path_for("key");
  const fs::path good = dir / "good-copy";
  fs::copy_file(file, good);
  auto reason = [&](const std::function<void(const fs::path&)>& how) {
    fs::remove_all(file);
    how(file);
    std::string why;
    CHECK_FALSE(cache.load("key", &why).has_value());
    return why;
  };
  auto edited = [&](const std::function<void(std::string&)>& edit) {
    return [&good, edit](const fs::path& p) {
      std::ifstream in(good, std::ios::binary);
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      edit(data);
      std::ofstream(p, std::ios::binary) << data;
    };
  };
  CHECK(reason([](const fs::path& p) { fs::create_directory(p); }) == "is not a regular file");
  CHECK(reason([](const fs::path& p) { ::mkfifo(p.c_str(), 0600); }) == "is not a regular file");
  CHECK(reason([](const fs::path& p) { fs::create_symlink("/dev/zero", p); })== "is a symbolic link");
  CHECK(reason([&](const fs::path& p) { fs::create_symlink(good, p); })== "is a symbolic link");
  CHECK(reason(edited([](std::string& d) { d.resize(d.size() - 1); })) ==
        "has sizes in its header that do not match the file");
  CHECK(reason(edited([](std::string& d) { d.resize(10); })) == "is shorter than its header");
  CHECK(reason(edited([](std::string& d) { d.back() ^= 1; })) == "fails its checksum");
  CHECK(reason(edited([](std::string& d) { d[0] = 'X'; })) == "lacks the magic number TLKC1");
  fs::remove_all(file);
  fs::copy_file(good, file);
  std::string why;
  CHECK(cache.load("key", &why) == "compiled code");
  CHECK(why.empty());
  CHECK_FALSE(cache.load("another key", &why).has_value());
  CHECK(why.empty());  // no entry at all: nothing to report
  fs::remove_all(dir);
}

namespace {

// Random graphs of primitives and views over small shapes, for the differential test.
class GraphGen {
 public:
  GraphGen(Graph& g, std::uint64_t seed) : g_(g), rng_(seed) {}

  NodeRef make() {
    std::vector<std::int64_t> base;
    for (int r = pick(1, 3); r > 0; --r) base.push_back(pick(1, 5));
    pool_.push_back(buffer(DType::F32, base));
    pool_.push_back(buffer(DType::F32, base));
    pool_.push_back(buffer(DType::I32, base));
    for (int steps = pick(3, 10); steps > 0; --steps) step();
    return pool_[pool_.size() - 1 - static_cast<std::size_t>(pick(0, 1))];
  }

 private:
  Graph& g_;
  std::mt19937_64 rng_;
  std::vector<NodeRef> pool_;

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }

  static std::vector<std::int64_t> concrete(const NodeRef& n) {
    std::vector<std::int64_t> s;
    for (const auto& d : n->shape) s.push_back(d.value());
    return s;
  }

  NodeRef buffer(DType t, const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    for (auto d : shape) count *= d;
    auto buf = std::make_shared<Buffer>(t, static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      if (t == DType::F32) tl::runtime::store_float(*buf, i, std::uniform_real_distribution<double>(-2, 2)(rng_));
      else tl::runtime::store_int(*buf, i, pick(-5, 5));
    }
    return g_.make_buffer(buf, tl::tensor::Shape(shape.begin(), shape.end()));
  }

  NodeRef any() { return pool_[static_cast<std::size_t>(pick(0, static_cast<int>(pool_.size()) - 1))]; }

  // A node with the same shape and dtype as n (n itself, another from the pool, or a fresh
  // buffer).
  NodeRef partner(const NodeRef& n) {
    std::vector<NodeRef> same;
    for (const auto& m : pool_) {
      if (m->shape == n->shape && m->dtype == n->dtype) same.push_back(m);
    }
    if (coin() && !same.empty()) return same[static_cast<std::size_t>(pick(0, static_cast<int>(same.size()) - 1))];
    return buffer(n->dtype, concrete(n));
  }

  void step() {
    NodeRef x = any();
    const auto shape = concrete(x);
    const int rank = static_cast<int>(shape.size());
    const bool fl = x->dtype == DType::F32;
    NodeRef y;
    switch (pick(0, 13)) {
      case 0:
        if (!fl) return;
        y = g_.make_unary(std::vector<Op>{Op::Neg, Op::Sqrt, Op::Exp2, Op::Sin, Op::Log2}[pick(0, 4)], x);
        if (y->op == Op::Exp2 && coin()) y = g_.make_unary(Op::Recip, y);
        break;
      case 1:
      case 2: {
        std::vector<Op> ops{Op::Add, Op::Mul, Op::Max};
        if (!fl) ops.insert(ops.end(), {Op::Idiv, Op::Mod, Op::And, Op::Xor});
        y = g_.make_binary(ops[static_cast<std::size_t>(pick(0, static_cast<int>(ops.size()) - 1))], x, partner(x));
        break;
      }
      case 3: {
        NodeRef z = partner(x);
        y = g_.make_where(g_.make_binary(Op::Cmplt, x, z), x, z);
        break;
      }
      case 4: y = g_.make_cast(x, fl ? DType::I32 : DType::F32); break;
      case 5: {
        std::vector<std::int64_t> order(static_cast<std::size_t>(rank));
        for (int i = 0; i < rank; ++i) order[static_cast<std::size_t>(i)] = i;
        std::shuffle(order.begin(), order.end(), rng_);
        y = g_.make_permute(x, order);
        break;
      }
      case 6: {
        std::vector<std::int64_t> mask;
        for (int i = 0; i < rank; ++i) mask.push_back(coin());
        y = g_.make_flip(x, mask);
        break;
      }
      case 7: {
        std::vector<tl::tensor::Range> pads;
        for (int i = 0; i < rank; ++i) pads.emplace_back(pick(0, 2), pick(0, 2));
        y = g_.make_pad(x, pads);
        break;
      }
      case 8: {
        std::vector<tl::tensor::Range> r;
        for (int i = 0; i < rank; ++i) {
          int b = pick(0, static_cast<int>(shape[static_cast<std::size_t>(i)]) - 1);
          r.emplace_back(b, pick(b + 1, static_cast<int>(shape[static_cast<std::size_t>(i)])));
        }
        y = g_.make_shrink(x, r);
        break;
      }
      case 9: {
        // Flatten, or split the flattened elements into two axes.
        std::int64_t count = 1;
        for (auto d : shape) count *= d;
        std::vector<std::int64_t> divisors;
        for (std::int64_t d = 1; d <= count; ++d) {
          if (count % d == 0) divisors.push_back(d);
        }
        std::int64_t a = divisors[static_cast<std::size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
        y = coin() ? g_.make_reshape(x, {count}) : g_.make_reshape(x, {a, count / a});
        break;
      }
      case 10: {
        // Expand a size-1 axis (adding one when there is none).
        std::vector<std::int64_t> with_one = shape;
        int axis = pick(0, rank);
        with_one.insert(with_one.begin() + axis, 1);
        NodeRef r = g_.make_reshape(x, tl::tensor::Shape(with_one.begin(), with_one.end()));
        with_one[static_cast<std::size_t>(axis)] = pick(2, 3);
        y = g_.make_expand(r, tl::tensor::Shape(with_one.begin(), with_one.end()));
        break;
      }
      case 11: {
        std::vector<std::int64_t> axes{pick(0, rank - 1)};
        y = g_.make_reduce(coin() ? tl::tensor::ReduceKind::Sum : tl::tensor::ReduceKind::Max, x, axes);
        break;
      }
      case 12:
      case 13: {
        // A reduce broadcast back over what it reduced, as softmax and layer-norm do (the
        // scheduler fuses these row-wise).
        std::vector<std::int64_t> axes{pick(0, rank - 1)};
        NodeRef r = g_.make_reduce(coin() ? tl::tensor::ReduceKind::Sum : tl::tensor::ReduceKind::Max, x, axes);
        if (fl && coin()) r = g_.make_unary(coin() ? Op::Neg : Op::Exp2, r);
        NodeRef back = g_.make_expand(r, x->shape);
        y = g_.make_binary(coin() ? Op::Add : Op::Mul, x, back);
        if (coin()) {
          NodeRef r2 = g_.make_reduce(tl::tensor::ReduceKind::Sum, y, axes);
          y = g_.make_binary(Op::Add, y, g_.make_expand(r2, x->shape));
        }
        break;
      }
    }
    if (y) pool_.push_back(y);
  }
};

// Equal within float tolerances (sums may be reassociated by the JIT).
std::string close(const Buffer& want, const Buffer& got) {
  if (want.dtype != got.dtype || want.count() != got.count()) return "dtype or size differ";
  for (std::size_t i = 0; i < want.count(); ++i) {
    auto k = static_cast<std::int64_t>(i);
    if (want.dtype != DType::F32) {
      if (tl::runtime::load_int(want, k) != tl::runtime::load_int(got, k)) return "element " + std::to_string(i);
      continue;
    }
    double a = tl::runtime::load_float(want, k), b = tl::runtime::load_float(got, k);
    if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    if (std::abs(a - b) <= 1e-3 * (1 + std::max(std::abs(a), std::abs(b)))) continue;
    return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b);
  }
  return "";
}

}  // namespace

TEST_CASE("jit: random graphs of primitives and views agree with the reference", "[codegen][jit][fuzz]") {
  const int graphs = 300;
  int failures = 0;
  for (int i = 0; i < graphs; ++i) {
    Graph g;
    GraphGen gen(g, 1000 + static_cast<std::uint64_t>(i));
    NodeRef root = gen.make();
    auto want = tl::runtime::realize_reference(root.get(), {});
    auto got = jit().realize(root.get(), {});
    std::string diff = close(*want, *got);
    if (!diff.empty() && failures++ < 3) {
      INFO("seed " << 1000 + i << ": " << tl::tensor::node_str(root.get()));
      CHECK(diff == "");
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("jit: register-tiled matmuls agree with the reference, with and without an epilogue", "[codegen][jit]") {
  Graph g;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](std::int64_t rows, std::int64_t cols) {
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (auto& x : v) x = dist(rng);
    auto buf = std::make_shared<Buffer>(DType::F32, v.size());
    std::memcpy(buf->data(), v.data(), v.size() * 4);
    return g.make_buffer(buf, {rows, cols});
  };
  // (M K) @ (K N) as the composites build it: expand both to (M K N), multiply, sum over K.
  for (auto [m, k, n] : {std::array<std::int64_t, 3>{8, 32, 16}, {12, 5, 48}, {4, 1, 16}, {6, 7, 16}, {8, 3, 20},
                        {128, 9, 32}, {192, 16, 16}}) {
    NodeRef a = random(m, k), b = random(k, n);
    NodeRef a3 = g.make_expand(g.make_reshape(a, {m, k, 1}), {m, k, n});
    NodeRef b3 = g.make_expand(g.make_reshape(b, {1, k, n}), {m, k, n});
    NodeRef prod = g.make_reduce(tl::tensor::ReduceKind::Sum, g.make_binary(Op::Mul, a3, b3), {1});
    NodeRef mm = g.make_reshape(prod, {m, n});
    NodeRef biased = g.make_binary(Op::Max, g.make_binary(Op::Add, mm, g.make_const_float(0.5, DType::F32, {m, n})),
                                   g.make_const_float(0.0, DType::F32, {m, n}));
    for (const NodeRef& y : {mm, biased}) {
      std::vector<float> want = as_f32(*tl::runtime::realize_reference(y.get(), {}));
      std::vector<float> got = as_f32(*jit().realize(y.get(), {}));
      INFO(m << "x" << k << " @ " << k << "x" << n);
      REQUIRE(want.size() == got.size());
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(std::abs(want[i] - got[i]) <= 1e-5f * (1 + std::abs(want[i])));
    }
  }
}
