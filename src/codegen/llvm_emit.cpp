// SPDX-License-Identifier: Apache-2.0
// What every target's code generator shares once its module is emitted (emitter.h): the host
// target machine, LLVM's O3 pipeline, emission as an object file or assembly; and
// make_codegen, which picks the target. The targets themselves are target_*.cpp.
#include "codegen/llvm_emit.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "codegen/emitter.h"
#include "codegen/math_lib.h"
#include "codegen/target.h"
#include "support/check.h"

namespace tl::codegen {

namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// PASSES (LLVM's text form), or the standard O3 pipeline for TM's target (inlining,
// vectorization, and the target's own passes: NVPTX's address spaces), tuned by PTO.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, const llvm::PipelineTuningOptions& pto, const char* passes) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (passes == nullptr) {
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  } else if (llvm::Error e = pb.parsePassPipeline(mpm, passes)) {
    TL_UNREACHABLE("llvm emit: the pass pipeline \"" + std::string(passes) +
                   "\" does not parse: " + llvm::toString(std::move(e)));
  }
  mpm.run(m, mam);
}

// M as machine code: an object file or assembly text (PTX), per TYPE.
std::string emit_file(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type)) {
    throw std::runtime_error("LLVM cannot emit " + std::string(type == llvm::CGFT_ObjectFile ? "object files" : "assembly") +
                             " for " + tm.getTargetTriple().str());
  }
  pm.run(m);
  return std::string(out.begin(), out.end());
}

}  // namespace

CompileOutput optimize_and_emit(llvm::Module& m, llvm::TargetMachine& tm, const llvm::PipelineTuningOptions& pto,
                                bool want_ir, llvm::CodeGenFileType type, const char* passes,
                                const std::function<void(llvm::Module&)>& finish) {
  optimize(m, tm, pto, passes);
  if (finish) finish(m);
  CompileOutput out;
  if (want_ir) {
    llvm::raw_string_ostream os(out.ir);
    m.print(os, nullptr);
  }
  out.object = emit_file(m, tm, type);
  return out;
}

std::string emitter_build(const char* target_stamp) {
  // "Mmm dd yyyy hh:mm:ss" as (year, month, day, time) to compare.
  auto when = [](const char* stamp) {
    const char* months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char* month = std::strstr(months, std::string(stamp, 3).c_str());
    return std::make_tuple(std::atoi(stamp + 7), month == nullptr ? 0 : month - months, std::atoi(stamp + 4),
                           std::string(stamp + 12));
  };
  const char* latest = target_stamp;
  for (const char* stamp : {__DATE__ " " __TIME__, emitter_build_stamp(), math::build_stamp()}) {
    if (when(stamp) > when(latest)) latest = stamp;
  }
  return latest;
}

llvm::Value* dot4_bytes(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* a, llvm::Value* s) {
  llvm::Type* t = a->getType();
  auto c = [&](std::uint64_t v) { return llvm::ConstantInt::get(t, v); };
  for (unsigned byte = 0; byte < 4; ++byte) {
    llvm::Value* u = b.CreateAnd(b.CreateLShr(a, c(8 * byte)), c(255));
    llvm::Value* v = b.CreateAShr(b.CreateShl(s, c(24 - 8 * byte)), c(24));
    acc = b.CreateAdd(acc, b.CreateMul(u, v));
  }
  return acc;
}

Dot4Operands dot4_operands(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* s, std::int64_t a_max, std::int32_t flags,
                           const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>& sign) {
  if (flags == 0) return {a, s, a_max};
  llvm::Type* t = a->getType();
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
  auto* bytes = llvm::FixedVectorType::get(b.getInt8Ty(), 4 * (vt == nullptr ? 1 : vt->getNumElements()));
  auto splat = [&](std::int64_t v) { return llvm::ConstantInt::get(bytes, static_cast<std::uint64_t>(v), true); };
  llvm::Value* sb = b.CreateBitCast(s, bytes);
  if (flags & kDot4ClampB) sb = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sb, splat(-127));
  if (flags & kDot4SignedA) {
    llvm::Value* ab = b.CreateBitCast(a, bytes);
    sb = sign ? sign(b, sb, ab) : b.CreateSelect(b.CreateICmpSLT(ab, splat(0)), b.CreateNeg(sb), sb);
    // |-128| is 128: the same byte, read as unsigned.
    a = b.CreateBitCast(b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, ab, b.getFalse()), t);
    a_max = 128;
  }
  return {a, b.CreateBitCast(sb, t), a_max};
}

llvm::Value* EmitTarget::dot4(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* a, llvm::Value* s,
                              std::int64_t a_max, std::int32_t flags) const {
  const Dot4Operands o = dot4_operands(b, a, s, a_max, flags);
  return dot4_bytes(b, acc, o.a, o.s);
}

std::unique_ptr<llvm::TargetMachine> host_target_machine(const std::string& cpu) {
  init_llvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw std::runtime_error("LLVM has no target for this host: " + llvm::toString(jtmb.takeError()));
  // Another CPU than this one (TENSORLISP_CPU=x86-64-v3: an AVX2 machine's kernels and
  // results, reproduced on an AVX-512 one).
  if (!cpu.empty() && cpu != "native") {
    std::string error;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(jtmb->getTargetTriple().str(), error);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        t == nullptr ? nullptr : t->createMCSubtargetInfo(jtmb->getTargetTriple().str(), "", ""));
    if (!sti || !sti->isCPUStringValid(cpu)) {
      throw std::runtime_error(
          "unknown CPU \"" + cpu + "\" for " + jtmb->getTargetTriple().str() +
          " (try native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or a name such as skylake-avx512)");
    }
    jtmb->setCPU(cpu);
    jtmb->getFeatures() = llvm::SubtargetFeatures();
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw std::runtime_error("cannot create an LLVM target machine: " + llvm::toString(tm.takeError()));
  return std::move(*tm);
}

std::unique_ptr<Codegen> make_codegen(const std::string& target, const Toolchain& toolchain) {
  if (target.empty() || target == "host") return std::make_unique<CpuCodegen>();
  const auto colon = target.find(':');
  const std::string kind = target.substr(0, colon);
  const std::string arch = colon == std::string::npos ? "" : target.substr(colon + 1);
  if (kind == "host") return std::make_unique<CpuCodegen>(arch);
  if (kind == "nvptx") return std::make_unique<PtxCodegen>(arch.empty() ? "sm_80" : arch, toolchain.libdevice);
  if (kind == "amdgcn") return std::make_unique<AmdgpuCodegen>(arch.empty() ? "gfx90a" : arch, toolchain.link_code_object);
  if (kind == "sim") return std::make_unique<SimCodegen>(arch.empty() ? "nvptx" : arch);
  throw std::runtime_error("no code generator for target \"" + target +
                           "\" (known: host, host:CPU, nvptx:sm_XX, amdgcn:gfxNNN, sim:nvptx, sim:amdgcn)");
}

}  // namespace tl::codegen
