// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time programs (program.h): every kernel emitted into one module, the driver
// written as LLVM IR beside them, optimized and emitted together as one object file.
#include "codegen/program.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <stdexcept>

#include "codegen/emitter.h"
#include "codegen/target.h"
#include "support/check.h"

namespace tl::codegen {

namespace {

const llvm::Target& host_target(std::string& triple) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (t == nullptr) throw std::runtime_error("LLVM has no target for " + triple + ": " + error);
  return *t;
}

// A position-independent target machine for CPU (see ProgramTarget).
std::unique_ptr<llvm::TargetMachine> program_machine(const std::string& cpu) {
  std::string triple;
  const llvm::Target& t = host_target(triple);
  std::string name = cpu, features;
  if (cpu == "native") {
    name = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> host;
    if (llvm::sys::getHostCPUFeatures(host)) {
      for (const auto& f : host)
        features += (features.empty() ? "" : ",") + std::string(f.second ? "+" : "-") + f.first().str();
    }
  } else {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(t.createMCSubtargetInfo(triple, "", ""));
    if (!sti || !sti->isCPUStringValid(cpu)) {
      throw std::runtime_error(
          "unknown CPU \"" + cpu + "\" for " + triple +
          " (try native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or a name such as skylake-avx512)");
    }
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(t.createTargetMachine(triple, name, features, options, llvm::Reloc::PIC_,
                                                                llvm::None, llvm::CodeGenOpt::Aggressive));
  if (!tm) throw std::runtime_error("cannot create an LLVM target machine for " + triple + " " + name);
  return tm;
}

// Writes the driver of P into M, whose kernel i is the function KERNELS[i].
class Driver {
 public:
  Driver(llvm::Module& m, const Program& p, const std::vector<llvm::Function*>& kernels)
      : m_(m), p_(p), kernels_(kernels), ctx_(m.getContext()), b_(ctx_) {}

  void emit() {
    make_data();
    make_error_function();
    llvm::Type* i8p = b_.getInt8PtrTy();
    std::vector<llvm::Type*> params(static_cast<std::size_t>(p_.params) + 1, i8p);
    fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getInt32Ty(), params, false),
                                 llvm::Function::ExternalLinkage, p_.name, m_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    done_ = llvm::BasicBlock::Create(ctx_, "done", fn_);
    b_.SetInsertPoint(entry);
    std::size_t most = 1;
    for (const Program::Op& op : p_.ops) most = std::max(most, op.buffers.size());
    pointers_ = b_.CreateAlloca(i8p, b_.getInt64(most), "buffers");
    workspace(entry);  // continues in a block of its own when it may allocate
    llvm::PHINode* code = nullptr;
    {
      llvm::IRBuilder<> at_done(done_);
      code = at_done.CreatePHI(b_.getInt32Ty(), 2, "code");
      codes_ = code;
    }
    for (const Program::Op& op : p_.ops) {
      switch (op.kind) {
        case Program::Op::Call: call(op); break;
        case Program::Op::Copy:
          b_.CreateMemMove(ref(op.dst), llvm::MaybeAlign(1), ref(op.src), llvm::MaybeAlign(1), op.bytes);
          break;
        case Program::Op::Check: check(op); break;
      }
    }
    code->addIncoming(b_.getInt32(0), b_.GetInsertBlock());
    b_.CreateBr(done_);
    b_.SetInsertPoint(done_);
    if (owned_ != nullptr) {
      auto* free_it = llvm::BasicBlock::Create(ctx_, "free", fn_);
      auto* out = llvm::BasicBlock::Create(ctx_, "out", fn_);
      b_.CreateCondBr(owned_, free_it, out);
      b_.SetInsertPoint(free_it);
      b_.CreateCall(m_.getOrInsertFunction("free", b_.getVoidTy(), i8p), {workspace_});
      b_.CreateBr(out);
      b_.SetInsertPoint(out);
    }
    b_.CreateRet(code);
  }

 private:
  // The weights and constants, as private globals (constant unless written).
  void make_data() {
    for (std::size_t i = 0; i < p_.data.size(); ++i) {
      const Program::Data& d = p_.data[i];
      llvm::Constant* init = llvm::ConstantDataArray::getRaw(d.bytes, d.bytes.size(), b_.getInt8Ty());
      auto* g = new llvm::GlobalVariable(m_, init->getType(), !d.writable, llvm::GlobalValue::PrivateLinkage, init,
                                         p_.name + "_data" + std::to_string(i));
      g->setAlignment(llvm::Align(64));
      data_.push_back(g);
    }
  }

  // const char* NAME_error(int code): the message of a failed check, "" for 0.
  void make_error_function() {
    llvm::Type* i8p = b_.getInt8PtrTy();
    auto* f = llvm::Function::Create(llvm::FunctionType::get(i8p, {b_.getInt32Ty()}, false),
                                     llvm::Function::ExternalLinkage, p_.name + "_error", m_);
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f);
    auto* other = llvm::BasicBlock::Create(ctx_, "other", f);
    llvm::IRBuilder<> b(entry);
    auto* sw = b.CreateSwitch(&*f->arg_begin(), other, static_cast<unsigned>(p_.errors.size()) + 2);
    auto message = [&](int code, const std::string& text) {
      auto* bb = llvm::BasicBlock::Create(ctx_, "code" + std::to_string(code), f);
      llvm::IRBuilder<> at(bb);
      at.CreateRet(at.CreateGlobalStringPtr(text, p_.name + "_message"));
      sw->addCase(b.getInt32(code), bb);
    };
    message(0, "");
    message(-1, p_.name + ": cannot allocate its workspace (" + std::to_string(p_.workspace_bytes) + " bytes)");
    for (std::size_t i = 0; i < p_.errors.size(); ++i) message(static_cast<int>(i) + 1, p_.errors[i]);
    llvm::IRBuilder<> at(other);
    at.CreateRet(at.CreateGlobalStringPtr(p_.name + ": unknown error code", p_.name + "_message"));
  }

  // The workspace: the caller's, or allocated here when it passed null (and freed at the end).
  void workspace(llvm::BasicBlock* entry) {
    llvm::Value* given = fn_->getArg(static_cast<unsigned>(p_.params));
    if (p_.workspace_bytes == 0) {
      workspace_ = given;
      return;
    }
    llvm::Type* i8p = b_.getInt8PtrTy();
    owned_ = b_.CreateIsNull(given, "owned");
    auto* alloc = llvm::BasicBlock::Create(ctx_, "allocate", fn_, done_);
    auto* failed = llvm::BasicBlock::Create(ctx_, "no_memory", fn_, done_);
    auto* ready = llvm::BasicBlock::Create(ctx_, "ready", fn_, done_);
    b_.CreateCondBr(owned_, alloc, ready);
    b_.SetInsertPoint(alloc);
    llvm::Value* mem = b_.CreateCall(m_.getOrInsertFunction("malloc", i8p, b_.getInt64Ty()),
                                     {b_.getInt64(static_cast<std::uint64_t>(p_.workspace_bytes))});
    b_.CreateCondBr(b_.CreateIsNull(mem), failed, ready);
    b_.SetInsertPoint(failed);
    b_.CreateRet(b_.getInt32(-1));  // nothing to free
    b_.SetInsertPoint(ready);
    llvm::PHINode* ws = b_.CreatePHI(i8p, 2, "workspace");
    ws->addIncoming(given, entry);
    ws->addIncoming(mem, alloc);
    workspace_ = ws;
  }

  llvm::Value* ref(const ProgramRef& r) {
    switch (r.kind) {
      case ProgramRef::Null: return llvm::ConstantPointerNull::get(b_.getInt8PtrTy());
      case ProgramRef::Param: return fn_->getArg(static_cast<unsigned>(r.index));
      case ProgramRef::Data: return b_.CreateBitCast(data_[static_cast<std::size_t>(r.index)], b_.getInt8PtrTy());
      case ProgramRef::Workspace:
        return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), workspace_, static_cast<std::uint64_t>(r.offset));
    }
    TL_UNREACHABLE("program: unknown buffer kind");
  }

  void call(const Program::Op& op) {
    if (op.count <= 0) return;
    llvm::Type* i8p = b_.getInt8PtrTy();
    for (std::size_t i = 0; i < op.buffers.size(); ++i) {
      b_.CreateStore(ref(op.buffers[i]), b_.CreateConstInBoundsGEP1_64(i8p, pointers_, i));
    }
    llvm::Value* vars = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(b_.getInt64Ty()));
    if (!op.vars.empty()) {
      llvm::Constant* init =
          llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<std::uint64_t>(reinterpret_cast<const std::uint64_t*>(
                                                                               op.vars.data()),
                                                                           op.vars.size()));
      auto* g = new llvm::GlobalVariable(m_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                         p_.name + "_vars");
      vars = b_.CreateConstInBoundsGEP2_64(init->getType(), g, 0, 0);
    }
    b_.CreateCall(kernels_[static_cast<std::size_t>(op.kernel)],
                  {pointers_, vars, b_.getInt64(0), b_.getInt64(static_cast<std::uint64_t>(op.count))});
  }

  void check(const Program::Op& op) {
    llvm::Value* flag = b_.CreateLoad(b_.getInt8Ty(), ref(op.src));
    auto* ok = llvm::BasicBlock::Create(ctx_, "ok", fn_, done_);
    codes_->addIncoming(b_.getInt32(static_cast<std::uint32_t>(op.code)), b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateIsNull(flag), done_, ok);
    b_.SetInsertPoint(ok);
  }

  llvm::Module& m_;
  const Program& p_;
  const std::vector<llvm::Function*>& kernels_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* done_ = nullptr;
  llvm::PHINode* codes_ = nullptr;
  llvm::Value* pointers_ = nullptr;
  llvm::Value* workspace_ = nullptr;
  llvm::Value* owned_ = nullptr;  // whether the workspace was allocated here
  std::vector<llvm::GlobalVariable*> data_;
};

}  // namespace

std::string compile_program(const Program& p, const ProgramTarget& target) {
  std::unique_ptr<llvm::TargetMachine> tm = program_machine(target.cpu);
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>(p.name, ctx);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  std::vector<std::string> names;
  llvm::Linker linker(*m);
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    names.push_back(p.name + "_kernel" + std::to_string(i));
    if (linker.linkInModule(emit_cpu_kernel(ctx, *tm, *p.kernels[i], names.back()))) {
      TL_UNREACHABLE("program: cannot link kernel " + names.back() + " into " + p.name);
    }
  }
  // Only the entry and its error function are visible: two programs link into one executable.
  std::vector<llvm::Function*> kernels;
  for (const std::string& name : names) {
    llvm::Function* f = m->getFunction(name);
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    kernels.push_back(f);
  }
  Driver(*m, p, kernels).emit();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*m, &os)) TL_UNREACHABLE("program: invalid driver for " + p.name + ": " + os.str());
  return optimize_and_emit(*m, *tm, llvm::PipelineTuningOptions(), false, llvm::CGFT_ObjectFile, kCpuPasses).object;
}

}  // namespace tl::codegen
