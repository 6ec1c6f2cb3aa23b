// SPDX-License-Identifier: Apache-2.0
// The simulated GPUs (the CPU backend's option sim=nvptx or sim=amdgcn): GPU kernels compiled
// for the host with the CPU entry point, asking the backend's SIMT simulator (tl_sim_*
// functions in cpu_backend.cpp) for block and thread indices, barriers, shared memory and warp
// shuffles; math as on the host. The flavour picks whose group combine is emitted: NVPTX's
// (warp shuffles, then shared memory) or AMDGPU's (a tree in shared memory).
#include <llvm/IR/Module.h>

#include <stdexcept>

#include "codegen/emitter.h"
#include "codegen/llvm_emit.h"
#include "codegen/target.h"
#include "support/check.h"

namespace tl::codegen {

namespace {

using llvm::Value;

class SimTarget : public EmitTarget {
 public:
  explicit SimTarget(bool shuffles) : shuffles_(shuffles) {}

  bool runs_threads() const override { return true; }
  bool takes_kernel_params() const override { return false; }
  void mark_kernel(llvm::Function&, std::int64_t) const override {
    TL_UNREACHABLE("llvm emit: simulated GPU kernels have the CPU entry point");
  }

  Value* block_dim(llvm::IRBuilder<>& b) const override { return sim_call(b, "tl_sim_block_dim"); }
  Value* block_index(llvm::IRBuilder<>& b) const override { return sim_call(b, "tl_sim_block"); }
  Value* thread_in_block(llvm::IRBuilder<>& b) const override { return sim_call(b, "tl_sim_thread"); }

  void barrier(llvm::IRBuilder<>& b) const override {
    b.CreateCall(module_of(b).getOrInsertFunction("tl_sim_barrier", llvm::FunctionType::get(b.getVoidTy(), false)));
  }

  bool has_shuffles() const override { return shuffles_; }
  Value* shuffle_xor32(llvm::IRBuilder<>& b, Value* v, int mask) const override {
    auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty()}, false);
    return b.CreateCall(module_of(b).getOrInsertFunction("tl_sim_shfl_xor", fty),
                        {v, b.getInt32(static_cast<std::uint32_t>(mask))});
  }

  // The simulator's buffer for the block, asked for once at the kernel's start.
  Value* shared_memory(llvm::IRBuilder<>& b, llvm::Function& fn, std::int64_t) const override {
    llvm::IRBuilder<> eb(&fn.getEntryBlock(), fn.getEntryBlock().begin());
    auto* fty = llvm::FunctionType::get(b.getInt8PtrTy(), false);
    return eb.CreateCall(module_of(b).getOrInsertFunction("tl_sim_shared", fty), {}, "shared");
  }
  unsigned shared_address_space() const override { return 0; }

  Value* math(llvm::IRBuilder<>& b, MathFn fn, Value* x) const override { return host_math(b, fn, x); }

 private:
  static llvm::Module& module_of(llvm::IRBuilder<>& b) { return *b.GetInsertBlock()->getModule(); }

  // A function of the simulator returning i64.
  static Value* sim_call(llvm::IRBuilder<>& b, const char* name) {
    return b.CreateCall(module_of(b).getOrInsertFunction(name, llvm::FunctionType::get(b.getInt64Ty(), false)));
  }

  bool shuffles_;  // the NVPTX flavour
};

}  // namespace

struct SimCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  bool nvptx = true;  // the flavour: NVPTX's combine, else AMDGPU's
  std::string id;
};

SimCodegen::SimCodegen(const std::string& flavor) : impl_(std::make_unique<Impl>()) {
  if (flavor != "nvptx" && flavor != "amdgcn") {
    throw std::runtime_error("no simulated GPU \"" + flavor + "\" (known: sim:nvptx, sim:amdgcn)");
  }
  impl_->tm = host_target_machine();
  impl_->nvptx = flavor == "nvptx";
  impl_->id = "sim/" + flavor + "/" + impl_->tm->getTargetTriple().str() + "/llvm" LLVM_VERSION_STRING "/emitter " +
              emitter_build(__DATE__ " " __TIME__);
}

SimCodegen::~SimCodegen() = default;

const std::string& SimCodegen::target_id() const { return impl_->id; }

Lowering SimCodegen::lowering() const {
  Lowering l(Target::Gpu);
  l.group = kSimGroup;
  l.min_group_reduce = 2;
  l.few_threads = 1;
  return l;
}

CompileOutput SimCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  const SimTarget target(impl_->nvptx);
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, target);
  // Host code, optimized as the CPU's kernels are.
  return optimize_and_emit(*m, *impl_->tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_ObjectFile, kCpuPasses);
}

}  // namespace tl::codegen
