// SPDX-License-Identifier: Apache-2.0
// The NVPTX target (NVIDIA GPUs): kernel entry points marked in nvvm.annotations, thread and
// block indices from PTX special registers, bar.sync, warp shuffles, shared memory in address
// space 3, and NVIDIA's libdevice for what PTX lacks; and PtxCodegen, which links libdevice
// in as needed and compiles to PTX text.
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
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

constexpr unsigned kSharedAddressSpace = 3;

class NvptxTarget : public EmitTarget {
 public:
  bool runs_threads() const override { return true; }
  bool takes_kernel_params() const override { return true; }

  // A kernel entry point (__global__), as NVVM marks them; a group kernel runs in blocks of
  // exactly its group.
  void mark_kernel(llvm::Function& fn, std::int64_t group) const override {
    llvm::LLVMContext& ctx = fn.getContext();
    llvm::Module& m = *fn.getParent();
    auto annotate = [&](const char* what, int value) {
      llvm::Constant* v = llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), static_cast<std::uint32_t>(value));
      llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, what), llvm::ValueAsMetadata::get(v)};
      m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
    };
    annotate("kernel", 1);
    if (group > 0) annotate("maxntidx", static_cast<int>(group));
  }

  Value* block_dim(llvm::IRBuilder<>& b) const override {
    return read_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  }
  Value* block_index(llvm::IRBuilder<>& b) const override {
    return read_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  }
  Value* thread_in_block(llvm::IRBuilder<>& b) const override {
    return read_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  }

  void barrier(llvm::IRBuilder<>& b) const override {
    b.CreateCall(llvm::Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), llvm::Intrinsic::nvvm_barrier0));
  }

  bool has_shuffles() const override { return true; }
  Value* shuffle_xor32(llvm::IRBuilder<>& b, Value* v, int mask) const override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    return b.CreateCall(llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32),
                        {b.getInt32(0xffffffffu), v, b.getInt32(static_cast<std::uint32_t>(mask)), b.getInt32(31)});
  }

  Value* shared_memory(llvm::IRBuilder<>& b, llvm::Function& fn, std::int64_t bytes) const override {
    return shared_array(b, fn, bytes, kSharedAddressSpace);
  }
  unsigned shared_address_space() const override { return kSharedAddressSpace; }

  // NVPTX has no instructions for sin, or for exp2 and log2 of doubles: those call
  // libdevice's functions (linked in by PtxCodegen::compile).
  Value* math(llvm::IRBuilder<>& b, MathFn fn, Value* x) const override {
    switch (fn) {
      case MathFn::Exp2:
        if (x->getType()->isFloatTy()) return math::exp2_f32(b, x);
        return math::call_external(b, "__nv_exp2", x);
      case MathFn::Log2:
        if (x->getType()->isFloatTy()) return math::log2_f32(b, x);
        return math::call_external(b, "__nv_log2", x);
      case MathFn::Sin: return math::call_external(b, x->getType()->isFloatTy() ? "__nv_sinf" : "__nv_sin", x);
      case MathFn::Cos: return math::call_external(b, x->getType()->isFloatTy() ? "__nv_cosf" : "__nv_cos", x);
    }
    TL_UNREACHABLE("llvm emit: unknown math function");
  }
};

// Links NVIDIA's libdevice (the file at `path`) into m when m calls it.
void link_libdevice(llvm::Module& m, const std::string& path, const std::string& entry) {
  bool needs_libdevice = false;
  for (const llvm::Function& f : m) needs_libdevice = needs_libdevice || (f.isDeclaration() && f.getName().startswith("__nv_"));
  if (!needs_libdevice) return;
  if (path.empty()) {
    throw std::runtime_error("kernel " + entry + " needs NVIDIA's libdevice (nvvm/libdevice/libdevice.10.bc under CUDA_HOME or /usr/local/cuda) for sin, or exp2/log2 of f64");
  }
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, m.getContext());
  if (!lib) throw std::runtime_error("cannot read " + path + ": " + diag.getMessage().str());
  lib->setDataLayout(m.getDataLayout());
  lib->setTargetTriple(m.getTargetTriple());
  if (llvm::Linker::linkModules(m, std::move(lib), llvm::Linker::LinkOnlyNeeded)) {
    throw std::runtime_error("cannot link libdevice into " + entry);
  }
  // Only the kernel is visible: libdevice's functions inline and the rest goes.
  for (llvm::Function& f : m) {
    if (!f.isDeclaration() && f.getName() != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

}  // namespace

struct PtxCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string libdevice;  // path of libdevice.10.bc, or empty
  std::string id;
};

PtxCodegen::PtxCodegen(const std::string& arch, std::string libdevice) : impl_(std::make_unique<Impl>()) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) throw std::runtime_error("LLVM has no NVPTX target: " + error);
  impl_->tm.reset(target->createTargetMachine(triple, arch, "+ptx70", llvm::TargetOptions(), llvm::None, llvm::None,
                                              llvm::CodeGenOpt::Aggressive));
  if (!impl_->tm) throw std::runtime_error("cannot create an NVPTX target machine for " + arch);
  impl_->id = "nvptx64/" + arch + "/llvm" LLVM_VERSION_STRING "/emitter " + emitter_build(__DATE__ " " __TIME__);
  impl_->libdevice = std::move(libdevice);
}

PtxCodegen::~PtxCodegen() = default;

const std::string& PtxCodegen::target_id() const { return impl_->id; }

CompileOutput PtxCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  const NvptxTarget target;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, target);
  link_libdevice(*m, impl_->libdevice, entry);
  return optimize_and_emit(*m, *impl_->tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_AssemblyFile);
}

}  // namespace tl::codegen
