// SPDX-License-Identifier: Apache-2.0
// The AMDGPU target (amdgcn-amd-amdhsa): kernels in the AMDGPU_KERNEL calling convention,
// blocks of kAmdgpuBlockSize threads, workgroup and workitem ids, s_barrier between
// workgroup fences, no shuffles (groups combine by a tree in shared memory, address space 3),
// f64 math from math_lib; and AmdgpuCodegen, which compiles to an object file and has it
// linked into a code object.
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

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

constexpr std::int64_t kAmdgpuBlock = kAmdgpuBlockSize;
constexpr unsigned kSharedAddressSpace = 3;

class AmdgpuTarget : public EmitTarget {
 public:
  bool runs_threads() const override { return true; }
  bool takes_kernel_params() const override { return true; }

  void mark_kernel(llvm::Function& fn, std::int64_t group) const override {
    fn.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    const std::int64_t block = group > 0 ? group : kAmdgpuBlock;
    fn.addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(block));
  }

  // Kernels run in blocks of kAmdgpuBlock threads (see AmdgpuCodegen in llvm_emit.h).
  Value* block_dim(llvm::IRBuilder<>& b) const override { return b.getInt64(kAmdgpuBlock); }
  Value* block_index(llvm::IRBuilder<>& b) const override {
    return read_register(b, llvm::Intrinsic::amdgcn_workgroup_id_x);
  }
  Value* thread_in_block(llvm::IRBuilder<>& b) const override {
    return read_register(b, llvm::Intrinsic::amdgcn_workitem_id_x);
  }

  // As HIP's __syncthreads: release the workgroup's memory, meet, acquire it.
  void barrier(llvm::IRBuilder<>& b) const override {
    const auto scope = b.getContext().getOrInsertSyncScopeID("workgroup");
    b.CreateFence(llvm::AtomicOrdering::Release, scope);
    b.CreateCall(llvm::Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), llvm::Intrinsic::amdgcn_s_barrier));
    b.CreateFence(llvm::AtomicOrdering::Acquire, scope);
  }

  bool has_shuffles() const override { return false; }
  Value* shuffle_xor32(llvm::IRBuilder<>&, Value*, int) const override {
    TL_UNREACHABLE("llvm emit: no warp shuffles on amdgcn");
  }

  Value* shared_memory(llvm::IRBuilder<>& b, llvm::Function& fn, std::int64_t bytes) const override {
    return shared_array(b, fn, bytes, kSharedAddressSpace);
  }
  unsigned shared_address_space() const override { return kSharedAddressSpace; }

  // AMDGPU has instructions for sin, exp2 and log2 of f32 only; those of f64 come from
  // math_lib (ROCm's device libraries are not linked).
  Value* math(llvm::IRBuilder<>& b, MathFn fn, Value* x) const override {
    const bool f32 = x->getType()->isFloatTy();
    llvm::Module* m = b.GetInsertBlock()->getModule();
    switch (fn) {
      case MathFn::Exp2:
        if (f32) return math::call_intrinsic(b, llvm::Intrinsic::exp2, x);
        return math::exp2_f64(b, x, [&](Value* e, Value* n) -> Value* {
          llvm::Function* ldexp = llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::amdgcn_ldexp, {b.getDoubleTy()});
          return b.CreateCall(ldexp, {e, b.CreateFPToSI(n, b.getInt32Ty())});
        });
      case MathFn::Log2:
        if (f32) return math::call_intrinsic(b, llvm::Intrinsic::log2, x);
        return math::log2_f64(b, x, [&](Value* v) -> std::pair<Value*, Value*> {
          llvm::Function* mant = llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::amdgcn_frexp_mant, {b.getDoubleTy()});
          llvm::Function* expo =
              llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::amdgcn_frexp_exp, {b.getInt32Ty(), b.getDoubleTy()});
          Value* mantissa = b.CreateCall(mant, {v});
          return {mantissa, b.CreateCall(expo, {v})};
        });
      case MathFn::Sin:
        if (f32) return math::call_intrinsic(b, llvm::Intrinsic::sin, x);
        return math::sin_f64(b, x);
      case MathFn::Cos:
        if (f32) return math::call_intrinsic(b, llvm::Intrinsic::cos, x);
        return math::sin_f64(b, x, 1);
    }
    TL_UNREACHABLE("llvm emit: unknown math function");
  }
};

}  // namespace

struct AmdgpuCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string arch;
  std::string id;
  LinkCodeObject link;
};

AmdgpuCodegen::AmdgpuCodegen(const std::string& arch, LinkCodeObject link) : impl_(std::make_unique<Impl>()) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  const std::string triple = "amdgcn-amd-amdhsa";
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) throw std::runtime_error("LLVM has no AMDGPU target: " + error);
  impl_->tm.reset(target->createTargetMachine(triple, arch, "", llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::None,
                                              llvm::CodeGenOpt::Aggressive));
  if (!impl_->tm) throw std::runtime_error("cannot create an AMDGPU target machine for " + arch);
  impl_->arch = arch;
  impl_->id = "amdgcn/" + arch + "/llvm" LLVM_VERSION_STRING "/emitter " + emitter_build(__DATE__ " " __TIME__);
  impl_->link = std::move(link);
}

AmdgpuCodegen::~AmdgpuCodegen() = default;

const std::string& AmdgpuCodegen::target_id() const { return impl_->id; }

CompileOutput AmdgpuCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  const AmdgpuTarget target;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, target);
  CompileOutput out = optimize_and_emit(*m, *impl_->tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_ObjectFile);
  if (!impl_->link) throw std::runtime_error("kernel " + entry + ": no linker for AMDGPU code objects was given");
  out.object = impl_->link(out.object, entry);
  return out;
}

}  // namespace tl::codegen
