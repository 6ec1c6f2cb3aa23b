// SPDX-License-Identifier: Apache-2.0
// The host CPU target (x86 and whatever else LLVM's ORC JIT detects): kernels with the CPU
// entry point, no threads of their own (the backend splits the parallel loop), math inline
// where libm would be a scalar call; and CpuCodegen, which compiles them to object files.
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>

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

class CpuTarget : public EmitTarget {
 public:
  explicit CpuTarget(bool prefer_512) : prefer_512_(prefer_512) {}

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

 private:
  // CPU kernels are not lowered for a GPU: the emitter never asks for threads.
  [[noreturn]] static void no_threads() { TL_UNREACHABLE("llvm emit: GPU threads asked of the host CPU target"); }

  bool prefer_512_;
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
    case MathFn::Sin: return math::call_intrinsic(b, llvm::Intrinsic::sin, x);
  }
  TL_UNREACHABLE("llvm emit: unknown math function");
}

struct CpuCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string id;
  bool avx512 = false;  // use 512-bit vectors (LLVM prefers 256 bits by default)
};

CpuCodegen::CpuCodegen(const std::string& cpu) : impl_(std::make_unique<Impl>()) {
  impl_->tm = host_target_machine(cpu);
  impl_->avx512 = has_avx512(*impl_->tm);
  impl_->id = impl_->tm->getTargetTriple().str() + "/" + impl_->tm->getTargetCPU().str() + "/" +
              impl_->tm->getTargetFeatureString().str() + "/llvm" + LLVM_VERSION_STRING +
              // The emitter's build: code from an older emitter in the disk cache is stale.
              "/emitter " + emitter_build(__DATE__ " " __TIME__);
}

CpuCodegen::~CpuCodegen() = default;

const std::string& CpuCodegen::target_id() const { return impl_->id; }

llvm::PipelineTuningOptions cpu_pipeline_options() {
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  // No unrolling: LLVM fully unrolls loops of small constant trip count, which multiplies
  // compile time (a 64x100 elementwise kernel: 110 ms instead of 10) for little gain; the
  // vectorizer still interleaves.
  pto.LoopUnrolling = false;
  return pto;
}

std::unique_ptr<llvm::Module> emit_cpu_kernel(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                              const std::string& entry) {
  const CpuTarget target(has_avx512(tm));
  return emit_module(ctx, tm, k, entry, target);
}

CompileOutput CpuCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  const CpuTarget target(impl_->avx512);
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, target);
  return optimize_and_emit(*m, *impl_->tm, cpu_pipeline_options(), want_ir, llvm::CGFT_ObjectFile);
}

}  // namespace tl::codegen
