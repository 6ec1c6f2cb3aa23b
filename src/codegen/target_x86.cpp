// SPDX-License-Identifier: Apache-2.0
// The host CPU target (x86 and whatever else LLVM's ORC JIT detects): kernels with the CPU
// entry point, no threads of their own (the backend splits the parallel loop), math inline
// where libm would be a scalar call; and CpuCodegen, which compiles them to object files.
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "codegen/emitter.h"
#include "codegen/llvm_emit.h"
#include "codegen/math_lib.h"
#include "codegen/target.h"
#include "support/check.h"

namespace tl::codegen {

namespace {

using llvm::Value;

// Whether TM's CPU has AVX-512, from its features or, for a CPU named without features
// (TENSORLISP_CPU, tlisp compile --cpu), from the CPU's own.
bool has_avx512(const llvm::TargetMachine& tm) {
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  return sti != nullptr && sti->checkFeatures("+avx512f");
}

// The integer dot-product instructions TM's CPU has: vpdpbusd on 512-bit vectors (AVX-512
// VNNI), and on 256- and 128-bit ones (with AVX-512 VL, or AVX-VNNI's VEX form).
struct DotInstructions {
  bool zmm = false;
  bool ymm = false;
};
DotInstructions dot_instructions(const llvm::TargetMachine& tm) {
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  DotInstructions d;
  if (sti == nullptr) return d;
  d.zmm = sti->checkFeatures("+avx512vnni");
  d.ymm = (d.zmm && sti->checkFeatures("+avx512vl")) || sti->checkFeatures("+avxvnni");
  return d;
}

class CpuTarget : public EmitTarget {
 public:
  CpuTarget(bool prefer_512, DotInstructions dot) : prefer_512_(prefer_512), dot_(dot) {}

  bool runs_threads() const override { return false; }
  bool takes_kernel_params() const override { return false; }
  void mark_kernel(llvm::Function&, std::int64_t) const override { no_threads(); }
  bool prefers_512_bit_vectors() const override { return prefer_512_; }

  Value* block_dim(llvm::IRBuilder<>&) const override { no_threads(); }
  Value* block_index(llvm::IRBuilder<>&) const override { no_threads(); }
  Value* thread_in_block(llvm::IRBuilder<>&) const override { no_threads(); }
  void barrier(llvm::IRBuilder<>&) const override { no_threads(); }
  bool has_shuffles() const override { return false; }
  Value* shuffle_xor32(llvm::IRBuilder<>&, Value*, int) const override { no_threads(); }
  Value* shared_memory(llvm::IRBuilder<>&, llvm::Function&, std::int64_t) const override { no_threads(); }
  unsigned shared_address_space() const override { return 0; }

  Value* math(llvm::IRBuilder<>& b, MathFn fn, Value* x) const override { return host_math(b, fn, x); }

  Value* dot4(llvm::IRBuilder<>& b, Value* acc, Value* a, Value* s) const override {
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
    const unsigned n = vt == nullptr ? 0 : vt->getNumElements();
    llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
    if (n == 16 && dot_.zmm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    if (n == 8 && dot_.ymm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    if (n == 4 && dot_.ymm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    if (id == llvm::Intrinsic::not_intrinsic) return dot4_bytes(b, acc, a, s);
    llvm::Function* f = llvm::Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id);
    return b.CreateCall(f, {acc, a, s});
  }

 private:
  // CPU kernels are not lowered for a GPU: the emitter never asks for threads.
  [[noreturn]] static void no_threads() { TL_UNREACHABLE("llvm emit: GPU threads asked of the host CPU target"); }

  bool prefer_512_;
  DotInstructions dot_;
};

}  // namespace

Value* host_math(llvm::IRBuilder<>& b, MathFn fn, Value* x) {
  switch (fn) {
    case MathFn::Exp2:
      // Inline, so loops over it vectorize (libm's exp2 is a scalar call).
      if (x->getType()->isFloatTy()) return math::exp2_f32(b, x);
      if (x->getType()->isDoubleTy()) {
        return math::exp2_f64(b, x, [&](Value* e, Value* n) { return math::scale_by_exponent_bits(b, e, n); });
      }
      return math::call_intrinsic(b, llvm::Intrinsic::exp2, x);
    case MathFn::Log2:
      if (x->getType()->isFloatTy()) return math::log2_f32(b, x);
      return math::call_intrinsic(b, llvm::Intrinsic::log2, x);
    case MathFn::Sin:
    case MathFn::Cos:
      // Inline for floats (f16 and bf16 compute in f32), so loops vectorize: libm's are
      // scalar calls. Doubles keep libm's.
      if (x->getType()->getScalarType()->isFloatTy()) return math::sin_cos_f32(b, x, fn == MathFn::Cos);
      return math::call_intrinsic(b, fn == MathFn::Sin ? llvm::Intrinsic::sin : llvm::Intrinsic::cos, x);
  }
  TL_UNREACHABLE("llvm emit: unknown math function");
}

struct CpuCodegen::Impl {
  std::string cpu;
  std::string id;
  bool avx512 = false;  // use 512-bit vectors (LLVM prefers 256 bits by default)
  // Target machines not in use: compile takes one (making one when none is left) and puts it
  // back, so compiles on several threads each have their own (a TargetMachine caches its
  // subtargets: it is not safe to share).
  std::mutex mu;
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle;
};

bool cpu_has_int8_dot(const std::string& cpu) {
  static std::mutex mu;
  static std::map<std::string, bool> known;
  const std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(cpu);
  if (it == known.end()) {
    const DotInstructions d = dot_instructions(*host_target_machine(cpu));
    it = known.emplace(cpu, d.zmm || d.ymm).first;
  }
  return it->second;
}

CpuCodegen::CpuCodegen(const std::string& cpu) : impl_(std::make_unique<Impl>()) {
  std::unique_ptr<llvm::TargetMachine> tm = host_target_machine(cpu);
  impl_->cpu = cpu;
  impl_->avx512 = has_avx512(*tm);
  impl_->id = tm->getTargetTriple().str() + "/" + tm->getTargetCPU().str() + "/" + tm->getTargetFeatureString().str() +
              "/llvm" + LLVM_VERSION_STRING +
              // The emitter's build: code from an older emitter in the disk cache is stale.
              "/emitter " + emitter_build(__DATE__ " " __TIME__);
  impl_->idle.push_back(std::move(tm));
}

CpuCodegen::~CpuCodegen() = default;

bool CpuCodegen::concurrent() const { return true; }

Lowering CpuCodegen::lowering() const {
  Lowering how(Target::Cpu);
  if (impl_->avx512) {
    how.vector_floats = 16;
    how.vector_registers = 32;
  }
  return how;
}

const std::string& CpuCodegen::target_id() const { return impl_->id; }

// O3 runs each of instcombine, simplifycfg and early-cse several times, GVN, DSE, indvars,
// loop idiom recognition, the inliner and more over kernels that have one function and no calls;
// its loop unroller fully unrolls short loops, which multiplied compile time (a 64x100
// elementwise kernel: 110 ms instead of 10). What the emitted code needs: SROA (accumulators
// and lane vectors start as allocas), early CSE (the index arithmetic of unrolled tiles and
// the lane-by-lane loads), loop rotation and LICM (loads and addresses hoisted out of reduce
// loops), the loop vectorizer (the loops the emitter leaves scalar) and the SLP vectorizer (it
// merges the scalar operations of unrolled register tiles into vectors: without it code
// generation took twice as long and a bf16 1024^3 matmul ran 16% slower), then instcombine
// and CSE to clean up after them. Measured on bench/tensor/jit.lisp's 46 kernels (one AVX-512
// thread): 2.5x less optimizer time than O3 (a 6 x 64 matmul tile kernel 190-340 ms -> 52-56
// ms), code generation time unchanged, every kernel as fast or faster.
const char* const kCpuPasses =
    "function(sroa,early-cse<memssa>,simplifycfg,loop-mssa(loop-rotate,licm),loop-simplify,lcssa,loop-vectorize,"
    "slp-vectorizer,instcombine,early-cse,simplifycfg)";

std::unique_ptr<llvm::Module> emit_cpu_kernel(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                              const std::string& entry) {
  const CpuTarget target(has_avx512(tm), dot_instructions(tm));
  return emit_module(ctx, tm, k, entry, target);
}

CompileOutput CpuCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm;
  {
    const std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->idle.empty()) {
      tm = std::move(impl_->idle.back());
      impl_->idle.pop_back();
    }
  }
  if (tm == nullptr) tm = host_target_machine(impl_->cpu);
  struct GiveBack {
    Impl& impl;
    std::unique_ptr<llvm::TargetMachine>& tm;
    ~GiveBack() {
      const std::lock_guard<std::mutex> lock(impl.mu);
      impl.idle.push_back(std::move(tm));
    }
  } give_back{*impl_, tm};
  const CpuTarget target(impl_->avx512, dot_instructions(*tm));
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *tm, k, entry, target);
  return optimize_and_emit(*m, *tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_ObjectFile, kCpuPasses);
}

}  // namespace tl::codegen
