// SPDX-License-Identifier: Apache-2.0
// What the shared LLVM IR emitter (emitter.h) asks of the target it emits for: the entry
// point's form, thread and block indices, barriers, shared memory, warp shuffles and math
// functions. One implementation per target: target_x86.cpp (the host CPU), target_nvptx.cpp,
// target_amdgpu.cpp and target_sim.cpp (GPU kernels on the CPU backend's SIMT simulator).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "codegen/llvm_emit.h"

namespace tl::codegen {

// The math functions whose code differs between targets.
enum class MathFn { Exp2, Log2, Sin, Cos };

class EmitTarget {
 public:
  virtual ~EmitTarget() = default;

  // --- the entry point -------------------------------------------------------------------

  // True: the kernel is lowered for a GPU: each thread runs one iteration of its thread loops
  // (gpu_thread_loops), and thread groups combine through shared memory. False: the CPU's
  // loops, the parallel one over [begin, end).
  virtual bool runs_threads() const = 0;
  // True: the entry takes buffers and sizes one by one as kernel parameters (a GPU kernel);
  // false: the CPU entry, void entry(void** buffers, const int64_t* vars, begin, end).
  virtual bool takes_kernel_params() const = 0;
  // Marks `fn` as a kernel entry point (its calling convention or metadata), for blocks of
  // `group` threads when group > 0. Called for targets that take kernel parameters.
  virtual void mark_kernel(llvm::Function& fn, std::int64_t group) const = 0;
  // True: the kernel prefers 512-bit vectors (register tiles of 16 floats, not 8).
  virtual bool prefers_512_bit_vectors() const { return false; }

  // --- threads: called only when runs_threads() ------------------------------------------

  // blockDim.x, blockIdx.x and threadIdx.x, as i64.
  virtual llvm::Value* block_dim(llvm::IRBuilder<>& b) const = 0;
  virtual llvm::Value* block_index(llvm::IRBuilder<>& b) const = 0;
  virtual llvm::Value* thread_in_block(llvm::IRBuilder<>& b) const = 0;
  // All the threads of the block wait here until every one has arrived; shared-memory writes
  // made before are then visible to all.
  virtual void barrier(llvm::IRBuilder<>& b) const = 0;
  // True: thread groups combine within warps of 32 by shuffles (shuffle_xor32), then across
  // warps in shared memory; false: by a tree in shared memory.
  virtual bool has_shuffles() const = 0;
  // Lane (this ^ mask)'s 32-bit value within the warp: every lane of the warp must take part.
  virtual llvm::Value* shuffle_xor32(llvm::IRBuilder<>& b, llvm::Value* v, int mask) const = 0;
  // The block's shared memory, `bytes` of it, for kernel `fn`: made once per kernel.
  virtual llvm::Value* shared_memory(llvm::IRBuilder<>& b, llvm::Function& fn, std::int64_t bytes) const = 0;
  // The address space of pointers into shared memory.
  virtual unsigned shared_address_space() const = 0;

  // --- math --------------------------------------------------------------------------------

  // fn of x (a float or double), as this target computes it.
  virtual llvm::Value* math(llvm::IRBuilder<>& b, MathFn fn, llvm::Value* x) const = 0;
  // EOp::Dot4 (loop_ir.h) of i32 values or vectors of them: acc + the four products of a's bytes
  // (unsigned, none above a_max) and s's (signed) in each lane, the bytes read as `flags`
  // (codegen::Dot4Flags) say (dot4_operands). By default portable arithmetic (dot4_bytes); a
  // target with integer dot-product instructions uses them.
  virtual llvm::Value* dot4(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* a, llvm::Value* s, std::int64_t a_max,
                            std::int32_t flags) const;
};

// A Dot4's operands with its flags applied: s's bytes clamped at -127 (kDot4ClampB), and with
// kDot4SignedA a's sign moved onto them and a replaced by |a| (bytes at most 128, as unsigned),
// so that what is left is the plain Dot4 of unsigned a and signed s. `sign` (may be null)
// computes s with a's sign as a target's instruction does (x86's vpsignb): s * sign(a).
struct Dot4Operands {
  llvm::Value* a;
  llvm::Value* s;
  std::int64_t a_max;
};
Dot4Operands dot4_operands(
    llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* s, std::int64_t a_max, std::int32_t flags,
    const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>& sign = {});

// Dot4 by shifts, multiplies and adds: any target, scalars or vectors (no flags: apply
// dot4_operands first).
llvm::Value* dot4_bytes(llvm::IRBuilder<>& b, llvm::Value* acc, llvm::Value* a, llvm::Value* s);

// A special register read by intrinsic `id` (a thread or block index), as i64.
inline llvm::Value* read_register(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  return b.CreateZExt(b.CreateCall(llvm::Intrinsic::getDeclaration(m, id)), b.getInt64Ty());
}

// A kernel's block-shared array of `bytes` bytes in address space `space` (16-byte aligned),
// as a GPU target's shared_memory makes it.
inline llvm::Value* shared_array(llvm::IRBuilder<>& b, llvm::Function& fn, std::int64_t bytes, unsigned space) {
  auto* at = llvm::ArrayType::get(b.getInt8Ty(), static_cast<std::uint64_t>(bytes));
  auto* g = new llvm::GlobalVariable(*fn.getParent(), at, false, llvm::GlobalValue::InternalLinkage,
                                     llvm::UndefValue::get(at), "shared", nullptr, llvm::GlobalValue::NotThreadLocal,
                                     space);
  g->setAlignment(llvm::Align(16));
  return g;
}

// The math functions as the host CPU computes them (target_x86.cpp), which the simulated GPUs
// share.
llvm::Value* host_math(llvm::IRBuilder<>& b, MathFn fn, llvm::Value* x);

// Kernel K as a module for the host CPU target's entry point (target_x86.cpp), for TM (which
// may be for another x86 CPU than this one: tlisp compile).
std::unique_ptr<llvm::Module> emit_cpu_kernel(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                              const std::string& entry);

// --- the compile steps every target shares (llvm_emit.cpp) --------------------------------

// A target machine for the host CPU with all its vector extensions, or for the LLVM CPU named
// CPU ("x86-64-v3", "skylake-avx512"; "" or "native": this one). Throws std::runtime_error
// when LLVM has no target for the host or does not know CPU.
std::unique_ptr<llvm::TargetMachine> host_target_machine(const std::string& cpu = "");

// Optimizes m with the pass pipeline PASSES (LLVM's text form; null: the O3 pipeline for tm's
// target, tuned by pto), keeps its IR in the output when asked, and emits it as `type` (an
// object file or assembly text).
// FINISH, when given, changes the optimized module before it is emitted.
CompileOutput optimize_and_emit(llvm::Module& m, llvm::TargetMachine& tm, const llvm::PipelineTuningOptions& pto,
                                bool want_ir, llvm::CodeGenFileType type, const char* passes = nullptr,
                                const std::function<void(llvm::Module&)>& finish = {});
// The passes kernels that run on the host CPU (the CPU's, the simulated GPU's) are optimized
// with: the few of O3's that their code needs (target_x86.cpp says which and why).
extern const char* const kCpuPasses;

}  // namespace tl::codegen
