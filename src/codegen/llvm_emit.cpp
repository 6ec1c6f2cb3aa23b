// SPDX-License-Identifier: Apache-2.0
// Loop IR to LLVM IR to an object file. Values live in registers of a compute type (f16 and
// bf16 as float, bool as i1) and are converted on load and store; f16 and bf16 results round
// to their type after every op, so fused kernels compute what the reference executor does.
#include "codegen/llvm_emit.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

namespace tl::codegen {

namespace {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;
using tensor::DCat;

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

bool is_signed_int(DType t) { return tensor::dtype_category(t) == DCat::Signed; }
bool is_fp(DType t) { return tensor::is_float(t); }

// What the kernel is compiled for. The Sim targets are the host CPU running GPU kernels
// under the CPU backend's SIMT simulator (cpu backend option sim=): the kernel has the CPU
// entry, and asks the simulator for its block and thread indices, shared memory, barriers and
// warp shuffles; SimNvptx combines a group's accumulators as the NVPTX code does (warp
// shuffles, then shared memory), SimAmdgpu as the AMDGPU code does (a tree in shared memory).
enum class Gpu { None, Nvptx, Amdgpu, SimNvptx, SimAmdgpu };
constexpr std::int64_t kAmdgpuBlock = kAmdgpuBlockSize;

class Emitter {
 public:
  // `gpu`: the kernel is a GPU entry point (see CpuCodegen and PtxCodegen in llvm_emit.h).
  Emitter(llvm::LLVMContext& ctx, llvm::Module& m, const Kernel& k, bool prefer_512, Gpu gpu = Gpu::None)
      : ctx_(ctx), m_(m), k_(k), b_(ctx), prefer_512_(prefer_512), gpu_(gpu != Gpu::None), gpu_kind_(gpu),
        sim_(gpu == Gpu::SimNvptx || gpu == Gpu::SimAmdgpu),
        shuffles_(gpu == Gpu::Nvptx || gpu == Gpu::SimNvptx) {}

  void emit(const std::string& entry) {
    if (gpu_ && !sim_) {
      emit_gpu_entry(entry);
    } else {
      emit_cpu_entry(entry);
    }
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    if (prefer_512_) fn_->addFnAttr("prefer-vector-width", "512");
    fn_->addFnAttr(llvm::Attribute::NoFree);
    if (k_.group == 0) fn_->addFnAttr(llvm::Attribute::NoSync);  // groups meet at barriers
    if (gpu_) {
      // Threads past the end (the last block's) do nothing. With thread groups, an iteration
      // is a block, so its threads all run it or all skip it.
      auto* run = llvm::BasicBlock::Create(ctx_, "run", fn_);
      auto* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
      if (k_.group > 0) {
        thread_ = b_.CreateAdd(begin_, block_index(), "iteration");
        lane_ = thread_in_block();
      } else {
        thread_ = b_.CreateAdd(begin_, global_thread_index(), "thread");
      }
      b_.CreateCondBr(b_.CreateICmpSLT(thread_, end_), run, done);
      b_.SetInsertPoint(done);
      b_.CreateRetVoid();
      b_.SetInsertPoint(run);
    }
    for (std::int32_t a = 0; a < k_.acc_count(); ++a) accs_.push_back(nullptr);
    acc_group_.assign(static_cast<std::size_t>(k_.acc_count()), -1);
    acc_lane_.assign(static_cast<std::size_t>(k_.acc_count()), 0);
    plan_vector_groups(k_.body);
    memo_.assign(k_.expr_count(), nullptr);
    frames_.emplace_back();
    loop_vars_.assign(static_cast<std::size_t>(k_.loop_count()), nullptr);
    body(k_.body);
    b_.CreateRetVoid();
  }

  // The CPU entry: void entry(void** buffers, const int64_t* vars, int64_t begin, int64_t end).
  void emit_cpu_entry(const std::string& entry) {
    Type* i8pp = llvm::PointerType::getUnqual(llvm::Type::getInt8PtrTy(ctx_));
    Type* i64p = llvm::PointerType::getUnqual(b_.getInt64Ty());
    auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {i8pp, i64p, b_.getInt64Ty(), b_.getInt64Ty()}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, entry, m_);
    auto args = fn_->arg_begin();
    llvm::Argument* bufs = &*args++;
    llvm::Argument* vars = &*args++;
    begin_ = &*args++;
    end_ = &*args++;
    bufs->setName("buffers");
    vars->setName("vars");
    begin_->setName("begin");
    end_->setName("end");
    for (unsigned i = 0; i < 2; ++i) {
      fn_->addParamAttr(i, llvm::Attribute::NoAlias);
      fn_->addParamAttr(i, llvm::Attribute::ReadOnly);
      fn_->addParamAttr(i, llvm::Attribute::NoCapture);
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    // Buffer pointers and symbolic sizes, loaded once.
    for (std::size_t i = 0; i < k_.buffers.size(); ++i) {
      Type* st = storage_type(k_.buffers[i].dtype);
      if (k_.buffers[i].local_elems > 0) {
        buffers_.push_back(scratch(i));
        continue;
      }
      Value* slot = b_.CreateConstInBoundsGEP1_64(llvm::Type::getInt8PtrTy(ctx_), bufs, i);
      Value* raw = b_.CreateLoad(llvm::Type::getInt8PtrTy(ctx_), slot);
      buffers_.push_back(b_.CreateBitCast(raw, llvm::PointerType::getUnqual(st), "b" + std::to_string(i)));
    }
    for (std::size_t i = 0; i < k_.vars.size(); ++i) {
      Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), vars, i);
      var_values_.push_back(b_.CreateLoad(b_.getInt64Ty(), slot, k_.vars[i]));
    }
  }

  // A GPU entry takes its arguments one by one, as kernel parameters:
  //   entry(T0* b0, ..., Tn* bn, int64_t v0, ..., int64_t vm, int64_t begin, int64_t end)
  // with one pointer per buffer slot (a scratch slot's is unused).
  void emit_gpu_entry(const std::string& entry) {
    std::vector<Type*> params;
    for (const BufferParam& bp : k_.buffers) params.push_back(llvm::PointerType::getUnqual(storage_type(bp.dtype)));
    for (std::size_t i = 0; i < k_.vars.size() + 2; ++i) params.push_back(b_.getInt64Ty());
    fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false), llvm::Function::ExternalLinkage,
                                 entry, m_);
    if (gpu_kind_ == Gpu::Nvptx) {
      // A kernel entry point (__global__), as NVVM marks them; a group kernel runs in blocks
      // of exactly its group.
      auto annotate = [&](const char* what, int value) {
        llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(ctx_, what),
                                llvm::ValueAsMetadata::get(b_.getInt32(static_cast<std::uint32_t>(value)))};
        m_.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, md));
      };
      annotate("kernel", 1);
      if (k_.group > 0) annotate("maxntidx", k_.group);
    } else {
      fn_->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
      const std::int64_t block = k_.group > 0 ? k_.group : kAmdgpuBlock;
      fn_->addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(block));
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    auto arg = fn_->arg_begin();
    for (std::size_t i = 0; i < k_.buffers.size(); ++i, ++arg) {
      arg->setName("b" + std::to_string(i));
      if (k_.buffers[i].local_elems > 0) {
        buffers_.push_back(scratch(i));
        continue;
      }
      fn_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
      buffers_.push_back(&*arg);
    }
    for (std::size_t i = 0; i < k_.vars.size(); ++i, ++arg) {
      arg->setName(k_.vars[i]);
      var_values_.push_back(&*arg);
    }
    begin_ = &*arg++;
    end_ = &*arg++;
    begin_->setName("begin");
    end_->setName("end");
  }

  Value* scratch(std::size_t slot) {
    auto* a = b_.CreateAlloca(storage_type(k_.buffers[slot].dtype),
                              b_.getInt64(static_cast<std::uint64_t>(k_.buffers[slot].local_elems)), "b" + std::to_string(slot));
    a->setAlignment(llvm::Align(64));
    return a;
  }

  // blockIdx.x * blockDim.x + threadIdx.x, as i64.
  Value* global_thread_index() {
    Value* dim = gpu_kind_ == Gpu::Nvptx ? reg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)
                 : sim_                  ? sim_call("tl_sim_block_dim")
                                         : b_.getInt64(kAmdgpuBlock);  // AMDGPU: see AmdgpuCodegen
    return b_.CreateAdd(b_.CreateMul(block_index(), dim), thread_in_block());
  }

  // blockIdx.x and threadIdx.x, as i64.
  Value* block_index() {
    if (sim_) return sim_call("tl_sim_block");
    if (gpu_kind_ == Gpu::Nvptx) return reg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    return reg(llvm::Intrinsic::amdgcn_workgroup_id_x);
  }
  Value* thread_in_block() {
    if (sim_) return sim_call("tl_sim_thread");
    if (gpu_kind_ == Gpu::Nvptx) return reg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    return reg(llvm::Intrinsic::amdgcn_workitem_id_x);
  }
  Value* reg(llvm::Intrinsic::ID id) {
    return b_.CreateZExt(b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, id)), b_.getInt64Ty());
  }
  // A function of the CPU backend's SIMT simulator (cpu_backend.cpp), returning i64.
  Value* sim_call(const char* name) {
    return b_.CreateCall(m_.getOrInsertFunction(name, llvm::FunctionType::get(b_.getInt64Ty(), false)));
  }

  // All the threads of the block wait here until every one has arrived; shared-memory writes
  // made before are then visible to all.
  void barrier() {
    if (sim_) {
      b_.CreateCall(m_.getOrInsertFunction("tl_sim_barrier", llvm::FunctionType::get(b_.getVoidTy(), false)));
    } else if (gpu_kind_ == Gpu::Nvptx) {
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::nvvm_barrier0));
    } else {
      // As HIP's __syncthreads: release the workgroup's memory, meet, acquire it.
      const auto scope = ctx_.getOrInsertSyncScopeID("workgroup");
      b_.CreateFence(llvm::AtomicOrdering::Release, scope);
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::amdgcn_s_barrier));
      b_.CreateFence(llvm::AtomicOrdering::Acquire, scope);
    }
  }

  // Lane (this ^ mask)'s 32-bit value within the warp: every lane of the warp must take part.
  Value* shuffle_xor32(Value* v, int mask) {
    if (sim_) {
      auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt32Ty(), b_.getInt32Ty()}, false);
      return b_.CreateCall(m_.getOrInsertFunction("tl_sim_shfl_xor", fty), {v, b_.getInt32(static_cast<std::uint32_t>(mask))});
    }
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32),
                         {b_.getInt32(0xffffffffu), v, b_.getInt32(static_cast<std::uint32_t>(mask)), b_.getInt32(31)});
  }

  // shuffle_xor32 of a value of any accumulator type (f32, f64, i64), 64-bit ones in halves.
  Value* shuffle_xor(Value* v, int mask) {
    Type* t = v->getType();
    const unsigned bits = t->getPrimitiveSizeInBits();
    Value* x = b_.CreateBitCast(v, b_.getIntNTy(bits));
    if (bits == 32) return b_.CreateBitCast(shuffle_xor32(x, mask), t);
    Value* lo = shuffle_xor32(b_.CreateTrunc(x, b_.getInt32Ty()), mask);
    Value* hi = shuffle_xor32(b_.CreateTrunc(b_.CreateLShr(x, 32), b_.getInt32Ty()), mask);
    Value* joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return b_.CreateBitCast(joined, t);
  }

  // The block's shared memory as an array of `t`: one array per kernel, big enough for any
  // combine (shared_bytes()).
  Value* shared_array(Type* t) {
    if (sim_) {
      if (shared_ == nullptr) {
        llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        auto* fty = llvm::FunctionType::get(b_.getInt8PtrTy(), false);
        shared_ = eb.CreateCall(m_.getOrInsertFunction("tl_sim_shared", fty), {}, "shared");
      }
      return b_.CreateBitCast(shared_, llvm::PointerType::getUnqual(t));
    }
    if (shared_ == nullptr) {
      auto* at = llvm::ArrayType::get(b_.getInt8Ty(), static_cast<std::uint64_t>(shared_bytes()));
      auto* g = new llvm::GlobalVariable(m_, at, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(at),
                                         "shared", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      g->setAlignment(llvm::Align(16));
      shared_ = g;
    }
    return b_.CreateBitCast(shared_, llvm::PointerType::get(t, 3));
  }
  // Bytes of shared memory a group kernel uses: a slot of 8 bytes per warp (shuffles), or per
  // thread (a tree).
  std::int64_t shared_bytes() const { return 8 * (shuffles_ ? 32 : k_.group); }

 private:
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  const Kernel& k_;
  IRBuilder<> b_;
  bool prefer_512_;
  bool gpu_;
  Gpu gpu_kind_;
  bool sim_;       // running under the CPU backend's SIMT simulator
  bool shuffles_;  // groups combine with warp shuffles (else a tree in shared memory)
  Value* thread_ = nullptr;  // on a GPU: this thread's iteration of the flattened thread loops (its group's, with groups)
  Value* lane_ = nullptr;    // with thread groups: this thread's index in its group (i64)
  int group_loops_ = 0;      // group loops open around the statement being emitted
  Value* shared_ = nullptr;  // the shared-memory array, once made
  llvm::Function* fn_ = nullptr;
  Value* begin_ = nullptr;
  Value* end_ = nullptr;
  std::vector<Value*> buffers_;
  std::vector<Value*> var_values_;
  std::vector<Value*> loop_vars_;
  std::vector<llvm::AllocaInst*> accs_;
  std::vector<Value*> memo_;
  std::vector<std::vector<ExprId>> frames_;  // memo entries made in each open loop

  // Register tiles: runs of f32 sum accumulators updated with (same scalar) x (consecutive
  // elements) become one vector accumulator, so a tile's multiply-adds are vector FMAs by
  // construction (the SLP vectorizer, left to find them, spills).
  struct VecGroup {
    std::vector<std::int32_t> accs;
    ExprId scalar = -1;     // the operand shared by the run
    ExprId first_load = -1; // the load of lane 0's element
    llvm::AllocaInst* alloca = nullptr;
  };
  std::vector<VecGroup> groups_;
  std::vector<std::int32_t> acc_group_, acc_lane_;
  std::map<std::int32_t, ExprId> acc_init_;

  unsigned vector_width() const { return prefer_512_ ? 16 : 8; }

  void plan_vector_groups(const std::vector<Stmt>& stmts) {
    const unsigned vf = vector_width();
    for (std::size_t i = 0; i < stmts.size(); ++i) {
      const Stmt& st = stmts[i];
      if (st.kind == Stmt::Kind::Loop) plan_vector_groups(st.body);
      if (st.kind == Stmt::Kind::AccDef) acc_init_[st.acc] = st.value;
    }
    for (std::size_t i = 0; i + vf <= stmts.size();) {
      VecGroup g;
      bool ok = true;
      for (unsigned lane = 0; lane < vf && ok; ++lane) {
        const Stmt& st = stmts[i + lane];
        ok = st.kind == Stmt::Kind::AccUpdate && st.reduce == ReduceKind::Sum && st.dtype == DType::F32;
        if (!ok) break;
        const Expr m = k_.expr(st.value);
        ok = m.op == EOp::Mul && m.dtype == DType::F32;
        if (!ok) break;
        ExprId load = -1, other = -1;
        // Lane 0 picks the side whose operand is a load; later lanes must match its shape.
        if (lane == 0) {
          for (int side = 0; side < 2 && load < 0; ++side) {
            if (k_.expr(m.src[side]).op == EOp::Load) {
              load = m.src[side];
              other = m.src[1 - side];
            }
          }
          ok = load >= 0 && acc_init_.count(st.acc);
          g.first_load = load;
          g.scalar = other;
        } else {
          ok = false;
          for (int side = 0; side < 2 && !ok; ++side) {
            const Expr& e = k_.expr(m.src[side]);
            const Expr& first = k_.expr(g.first_load);
            ok = e.op == EOp::Load && e.arg == first.arg && m.src[1 - side] == g.scalar &&
                 k_.constant_difference(first.src[0], e.src[0]) == std::optional<std::int64_t>(lane);
          }
          ok = ok && acc_init_.count(st.acc) && acc_init_[st.acc] == acc_init_[stmts[i].acc];
        }
        if (ok) g.accs.push_back(st.acc);
      }
      if (ok && g.accs.size() == vf) {
        for (unsigned lane = 0; lane < vf; ++lane) {
          acc_group_[static_cast<std::size_t>(g.accs[lane])] = static_cast<std::int32_t>(groups_.size());
          acc_lane_[static_cast<std::size_t>(g.accs[lane])] = static_cast<std::int32_t>(lane);
        }
        groups_.push_back(std::move(g));
        i += vf;
      } else {
        ++i;
      }
    }
  }

  // --- types and conversions ---------------------------------------------------------------

  Type* compute_type(DType t) {
    switch (t) {
      case DType::F64: return b_.getDoubleTy();
      case DType::F32:
      case DType::F16:
      case DType::BF16: return b_.getFloatTy();
      case DType::Bool: return b_.getInt1Ty();
      default: return b_.getIntNTy(static_cast<unsigned>(tensor::dtype_size(t) * 8));
    }
  }

  Type* storage_type(DType t) {
    switch (t) {
      case DType::F64: return b_.getDoubleTy();
      case DType::F32: return b_.getFloatTy();
      case DType::F16:
      case DType::BF16: return b_.getInt16Ty();
      case DType::Bool: return b_.getInt8Ty();
      default: return b_.getIntNTy(static_cast<unsigned>(tensor::dtype_size(t) * 8));
    }
  }

  // bf16 bits (in an i32's high half) of a float, rounded to nearest even; NaN stays quiet.
  Value* bf16_bits32(Value* f) {
    Value* x = b_.CreateBitCast(f, b_.getInt32Ty());
    Value* mag = b_.CreateAnd(x, b_.getInt32(0x7fffffff));
    Value* nan = b_.CreateICmpUGT(mag, b_.getInt32(0x7f800000));
    Value* nan_bits = b_.CreateShl(b_.CreateOr(b_.CreateLShr(x, 16), b_.getInt32(0x40)), 16);
    Value* lsb = b_.CreateAnd(b_.CreateLShr(x, 16), b_.getInt32(1));
    Value* rounded = b_.CreateAnd(b_.CreateAdd(x, b_.CreateAdd(b_.getInt32(0x7fff), lsb)), b_.getInt32(0xffff0000u));
    return b_.CreateSelect(nan, nan_bits, rounded);
  }

  // A float value rounded to what dtype t can hold (a no-op for f32 and f64).
  Value* round_to(DType t, Value* v) {
    if (t == DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getFloatTy());
    if (t == DType::BF16) return b_.CreateBitCast(bf16_bits32(v), b_.getFloatTy());
    return v;
  }

  Value* from_storage(DType t, Value* s) {
    switch (t) {
      case DType::F16: return b_.CreateFPExt(b_.CreateBitCast(s, b_.getHalfTy()), b_.getFloatTy());
      case DType::BF16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(s, b_.getInt32Ty()), 16), b_.getFloatTy());
      case DType::Bool: return b_.CreateICmpNE(s, b_.getInt8(0));
      default: return s;
    }
  }

  Value* to_storage(DType t, Value* v) {
    switch (t) {
      case DType::F16: return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
      case DType::BF16: return b_.CreateTrunc(b_.CreateLShr(bf16_bits32(v), 16), b_.getInt16Ty());
      case DType::Bool: return b_.CreateZExt(v, b_.getInt8Ty());
      default: return v;
    }
  }

  Value* float_const(DType t, double v) { return llvm::ConstantFP::get(compute_type(t), v); }

  Value* cast(Value* v, DType from, DType to) {
    if (from == to) return v;
    Type* rt = compute_type(to);
    if (is_fp(from)) {
      if (is_fp(to)) {
        Value* w = v->getType() == rt ? v
                   : rt->isDoubleTy()  ? b_.CreateFPExt(v, rt)
                                       : b_.CreateFPTrunc(v, rt);
        return round_to(to, w);
      }
      if (to == DType::Bool) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
      // NaN and values beyond the i64 range give 0; the rest truncate toward 0 and wrap.
      Value* lim = llvm::ConstantFP::get(v->getType(), 9223372036854775808.0);
      Value* ok = b_.CreateAnd(b_.CreateFCmpOLT(v, lim), b_.CreateFCmpOGE(v, b_.CreateFNeg(lim)));
      Value* safe = b_.CreateSelect(ok, v, llvm::ConstantFP::get(v->getType(), 0.0));
      Value* i = b_.CreateFPToSI(safe, b_.getInt64Ty());
      return b_.CreateTrunc(i, rt);
    }
    const bool from_unsigned = !is_signed_int(from);  // unsigned types and bool
    if (is_fp(to)) {
      Value* f = from_unsigned ? b_.CreateUIToFP(v, rt) : b_.CreateSIToFP(v, rt);
      return round_to(to, f);
    }
    if (to == DType::Bool) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    return from_unsigned ? b_.CreateZExtOrTrunc(v, rt) : b_.CreateSExtOrTrunc(v, rt);
  }

  // The bits of a value of type t as an integer of its size.
  Value* bits_of(DType t, Value* v) {
    switch (t) {
      case DType::F32: return b_.CreateBitCast(v, b_.getInt32Ty());
      case DType::F64: return b_.CreateBitCast(v, b_.getInt64Ty());
      default: return to_storage(t, v);
    }
  }

  Value* from_bits(DType t, Value* bits) {
    switch (t) {
      case DType::F32: return b_.CreateBitCast(bits, b_.getFloatTy());
      case DType::F64: return b_.CreateBitCast(bits, b_.getDoubleTy());
      default: return from_storage(t, bits);
    }
  }

  // A function of NVIDIA's libdevice (linked in by PtxCodegen): the NVPTX target has no
  // instructions for sin, or for exp2 and log2 of doubles.
  Value* libdevice(const char* name, Value* v) {
    llvm::FunctionCallee f = m_.getOrInsertFunction(name, llvm::FunctionType::get(v->getType(), {v->getType()}, false));
    return b_.CreateCall(f, {v});
  }

  // AMDGPU has instructions for sin, exp2 and log2 of f32 only; those of f64 are computed
  // here (ROCm's device libraries are not linked).
  Value* amdgpu_f32_only(llvm::Intrinsic::ID id, const char* what, Value* v) {
    if (v->getType()->isFloatTy()) return intrinsic(id, v);
    if (id == llvm::Intrinsic::exp2) return exp2_f64(v);
    if (id == llvm::Intrinsic::log2) return log2_f64(v);
    if (id == llvm::Intrinsic::sin) return sin_f64(v);
    throw std::logic_error(std::string("llvm emit: no f64 ") + what + " for amdgcn");
  }

  // c[0] + x (c[1] + x (c[2] + ...)), in f64.
  Value* horner(Value* x, const std::vector<double>& c) {
    Value* acc = llvm::ConstantFP::get(b_.getDoubleTy(), c.back());
    llvm::Function* fma = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::fma, {b_.getDoubleTy()});
    for (std::size_t i = c.size() - 1; i-- > 0;) acc = b_.CreateCall(fma, {acc, x, llvm::ConstantFP::get(b_.getDoubleTy(), c[i])});
    return acc;
  }
  Value* f64(double v) { return llvm::ConstantFP::get(b_.getDoubleTy(), v); }

  // 2^x = 2^n e^(f ln 2), n = rint(x), |f| <= 1/2: e^t by its Taylor series to t^14 (|t| <=
  // 0.35: truncation below 1e-17), scaled by ldexp (which gives inf and 0 at the ends).
  Value* exp2_f64(Value* x) {
    Value* clamped = b_.CreateSelect(b_.CreateFCmpOGT(x, f64(1100)), f64(1100), b_.CreateSelect(b_.CreateFCmpOLT(x, f64(-1100)), f64(-1100), x));
    Value* n = intrinsic(llvm::Intrinsic::rint, clamped);
    Value* t = b_.CreateFMul(b_.CreateFSub(clamped, n), f64(0.69314718055994530942));
    std::vector<double> c{1.0};
    for (int k = 1; k <= 14; ++k) c.push_back(c.back() / k);
    Value* e = horner(t, c);
    Value* r = nullptr;
    if (gpu_kind_ == Gpu::Amdgpu) {
      llvm::Function* ldexp = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::amdgcn_ldexp, {b_.getDoubleTy()});
      r = b_.CreateCall(ldexp, {e, b_.CreateFPToSI(n, b_.getInt32Ty())});
    } else {
      // Elsewhere (the CPU: inline, so loops over it vectorize, where libm's exp2 is a scalar
      // call) 2^n as two normal powers of two, 2^(n>>1) 2^(n-(n>>1)), each from exponent
      // bits: the last product rounds into the subnormals or overflows to inf as it should.
      Value* ni = b_.CreateFPToSI(n, b_.getInt64Ty());
      Value* n1 = b_.CreateAShr(ni, 1);
      auto pow2 = [&](Value* k) {
        return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, b_.getInt64(1023)), 52), b_.getDoubleTy());
      };
      r = b_.CreateFMul(b_.CreateFMul(e, pow2(n1)), pow2(b_.CreateSub(ni, n1)));
    }
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, r);
  }

  // log2 x = e + ln(m) / ln 2 with x = m 2^e, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh s,
  // s = (m - 1) / (m + 1), |s| <= 0.172, by its series to s^25.
  Value* log2_f64(Value* x) {
    llvm::Function* mant = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::amdgcn_frexp_mant, {b_.getDoubleTy()});
    llvm::Function* expo = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::amdgcn_frexp_exp, {b_.getInt32Ty(), b_.getDoubleTy()});
    Value* m = b_.CreateCall(mant, {x});  // [0.5, 1)
    Value* e = b_.CreateSIToFP(b_.CreateCall(expo, {x}), b_.getDoubleTy());
    Value* small = b_.CreateFCmpOLT(m, f64(0.70710678118654752440));
    m = b_.CreateSelect(small, b_.CreateFMul(m, f64(2)), m);
    e = b_.CreateSelect(small, b_.CreateFSub(e, f64(1)), e);
    Value* s = b_.CreateFDiv(b_.CreateFSub(m, f64(1)), b_.CreateFAdd(m, f64(1)));
    std::vector<double> c;
    for (int k = 0; k <= 12; ++k) c.push_back(2.0 / (2 * k + 1));
    Value* ln = b_.CreateFMul(s, horner(b_.CreateFMul(s, s), c));
    Value* r = b_.CreateFAdd(e, b_.CreateFMul(ln, f64(1.44269504088896340736)));
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    r = b_.CreateSelect(b_.CreateFCmpOEQ(x, f64(inf)), f64(inf), r);
    r = b_.CreateSelect(b_.CreateFCmpOEQ(x, f64(0)), f64(-inf), r);
    return b_.CreateSelect(b_.CreateFCmpULT(x, f64(0)), f64(nan), r);  // negative or NaN
  }

  // sin x: x = k pi/2 + r (Cody-Waite with a three-part pi/2 and fma), |r| <= pi/4; then
  // +-sin r or +-cos r by k mod 4, each by its Taylor series (to r^23 and r^22). Accurate to
  // about 1 ulp for |x| below 1e9; NaN for inf and NaN.
  Value* sin_f64(Value* x) {
    llvm::Function* fma = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::fma, {b_.getDoubleTy()});
    Value* big = f64(4503599627370496.0);  // 2^52: beyond it k is meaningless anyway
    Value* kx = intrinsic(llvm::Intrinsic::rint, b_.CreateFMul(x, f64(0.63661977236758134308)));
    Value* k = b_.CreateSelect(b_.CreateFCmpOGT(intrinsic(llvm::Intrinsic::fabs, kx), big), f64(0), kx);
    Value* nk = b_.CreateFNeg(k);
    Value* r = b_.CreateCall(fma, {nk, f64(1.5707963267948966), x});
    r = b_.CreateCall(fma, {nk, f64(6.123233995736766e-17), r});
    r = b_.CreateCall(fma, {nk, f64(-1.4973849048591698e-33), r});
    Value* r2 = b_.CreateFMul(r, r);
    std::vector<double> cs, cc;
    double f = 1;
    for (int i = 1; i <= 23; ++i) {
      f /= i;
      const double sign = (i / 2) % 2 == 0 ? 1.0 : -1.0;
      if (i % 2 == 1) cs.push_back(sign * f);  // r, -r^3/3!, ...
    }
    f = 1;
    cc.push_back(1);
    for (int i = 1; i <= 22; ++i) {
      f /= i;
      if (i % 2 == 0) cc.push_back(((i / 2) % 2 == 0 ? 1.0 : -1.0) * f);
    }
    Value* sr = b_.CreateFMul(r, horner(r2, cs));
    Value* cr = horner(r2, cc);
    Value* q = b_.CreateAnd(b_.CreateFPToSI(k, b_.getInt64Ty()), b_.getInt64(3));
    Value* v = b_.CreateSelect(b_.CreateICmpEQ(b_.CreateAnd(q, b_.getInt64(1)), b_.getInt64(0)), sr, cr);
    v = b_.CreateSelect(b_.CreateICmpUGE(q, b_.getInt64(2)), b_.CreateFNeg(v), v);
    Value* finite = b_.CreateFCmpOLT(intrinsic(llvm::Intrinsic::fabs, x), f64(std::numeric_limits<double>::infinity()));
    return b_.CreateSelect(finite, v, f64(std::numeric_limits<double>::quiet_NaN()));
  }

  Value* intrinsic(llvm::Intrinsic::ID id, Value* v) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&m_, id, {v->getType()});
    return b_.CreateCall(f, {v});
  }

  // exp2 and log2 of floats, inline and branch-free so loops over them vectorize (libm's
  // are scalar calls). They compute in double and round once, so results match the
  // reference executor's double computation to within an ulp.
  Value* dconst(double v) { return llvm::ConstantFP::get(b_.getDoubleTy(), v); }

  Value* horner(Value* x, std::initializer_list<double> coeffs_high_to_low) {
    Value* acc = nullptr;
    for (double c : coeffs_high_to_low) {
      acc = acc == nullptr ? dconst(c) : b_.CreateFAdd(b_.CreateFMul(acc, x), dconst(c));
    }
    return acc;
  }

  Value* exp2_via_double(Value* xf) {
    Value* is_nan = b_.CreateFCmpUNO(xf, xf);
    Value* x = b_.CreateFPExt(xf, b_.getDoubleTy());
    // Beyond [-200, 200] a float result is 0 or inf anyway.
    x = b_.CreateSelect(b_.CreateFCmpOLT(x, dconst(-200)), dconst(-200), x);
    x = b_.CreateSelect(b_.CreateFCmpOGT(x, dconst(200)), dconst(200), x);
    x = b_.CreateSelect(is_nan, dconst(0), x);
    // Round to an integer n by adding 1.5 * 2^52: n lands in the low bits of the sum.
    Value* shifted = b_.CreateFAdd(x, dconst(6755399441055744.0));
    Value* n = b_.CreateFSub(shifted, dconst(6755399441055744.0));
    Value* f = b_.CreateFSub(x, n);  // in [-0.5, 0.5]
    // 2^f = e^(f ln 2): Taylor terms (ln 2)^k / k! up to k = 11 (error below 1e-13).
    std::vector<double> c;
    double term = 1;
    for (int k = 0; k <= 11; ++k) {
      c.push_back(term);
      term *= 0.69314718055994530942 / (k + 1);
    }
    Value* p = horner(f, {c[11], c[10], c[9], c[8], c[7], c[6], c[5], c[4], c[3], c[2], c[1], c[0]});
    // 2^n from the exponent bits (n is within the normal range of double).
    Value* ni = b_.CreateBitCast(shifted, b_.getInt64Ty());
    Value* bits = b_.CreateShl(b_.CreateAdd(ni, b_.getInt64(1023)), 52);
    Value* r = b_.CreateFMul(p, b_.CreateBitCast(bits, b_.getDoubleTy()));
    return b_.CreateSelect(is_nan, xf, b_.CreateFPTrunc(r, b_.getFloatTy()));
  }

  Value* log2_via_double(Value* xf) {
    Value* x = b_.CreateFPExt(xf, b_.getDoubleTy());  // every positive float is a normal double
    Value* bits = b_.CreateBitCast(x, b_.getInt64Ty());
    Value* e = b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, 52), b_.getInt64(0x7ff)), b_.getInt64(1023));
    Value* mbits = b_.CreateOr(b_.CreateAnd(bits, b_.getInt64(0xfffffffffffffLL)), b_.getInt64(0x3ff0000000000000LL));
    Value* m = b_.CreateBitCast(mbits, b_.getDoubleTy());  // in [1, 2)
    Value* big = b_.CreateFCmpOGT(m, dconst(1.4142135623730951));
    m = b_.CreateSelect(big, b_.CreateFMul(m, dconst(0.5)), m);
    e = b_.CreateSelect(big, b_.CreateAdd(e, b_.getInt64(1)), e);
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to s^15.
    Value* sv = b_.CreateFDiv(b_.CreateFSub(m, dconst(1)), b_.CreateFAdd(m, dconst(1)));
    Value* s2 = b_.CreateFMul(sv, sv);
    Value* series = horner(s2, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
    Value* ln_m = b_.CreateFMul(b_.CreateFMul(dconst(2), sv), series);
    Value* r = b_.CreateFAdd(b_.CreateSIToFP(e, b_.getDoubleTy()), b_.CreateFMul(ln_m, dconst(1.4426950408889634)));
    Value* rf = b_.CreateFPTrunc(r, b_.getFloatTy());
    // log2(0) = -inf, log2(x < 0) = NaN, log2(inf) = inf, NaN stays NaN.
    Value* inf = llvm::ConstantFP::getInfinity(b_.getFloatTy());
    Value* zero = llvm::ConstantFP::get(b_.getFloatTy(), 0.0);
    rf = b_.CreateSelect(b_.CreateFCmpOEQ(xf, zero), llvm::ConstantFP::getInfinity(b_.getFloatTy(), true), rf);
    rf = b_.CreateSelect(b_.CreateFCmpOLT(xf, zero), llvm::ConstantFP::getNaN(b_.getFloatTy()), rf);
    rf = b_.CreateSelect(b_.CreateFCmpOEQ(xf, inf), inf, rf);
    return b_.CreateSelect(b_.CreateFCmpUNO(xf, xf), xf, rf);
  }

  Value* nan_max(Value* a, Value* b) {
    Value* either_nan = b_.CreateFCmpUNO(a, b);
    Value* larger = b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
    return b_.CreateSelect(either_nan, llvm::ConstantFP::getNaN(a->getType()), larger);
  }

  // --- expressions ---------------------------------------------------------------------------

  Value* value(ExprId id) {
    if (Value* v = memo_[static_cast<std::size_t>(id)]) return v;
    const Expr& e = k_.expr(id);
    Value* v = compute(e);
    if (e.op != EOp::AccRead) {
      memo_[static_cast<std::size_t>(id)] = v;
      frames_.back().push_back(id);
    }
    return v;
  }

  Value* compute(const Expr& e) {
    const DType t = e.dtype;
    switch (e.op) {
      case EOp::Const:
        if (is_fp(t)) return float_const(t, e.fval);
        return llvm::ConstantInt::get(compute_type(t), static_cast<std::uint64_t>(e.ival), is_signed_int(t));
      case EOp::LoopVar: return loop_vars_[static_cast<std::size_t>(e.arg)];
      case EOp::SymVar: return var_values_[static_cast<std::size_t>(e.arg)];
      case EOp::AccRead: {
        if (std::int32_t g = acc_group_[static_cast<std::size_t>(e.arg)]; g >= 0) {
          llvm::AllocaInst* a = groups_[static_cast<std::size_t>(g)].alloca;
          return b_.CreateExtractElement(b_.CreateLoad(a->getAllocatedType(), a),
                                         static_cast<std::uint64_t>(acc_lane_[static_cast<std::size_t>(e.arg)]));
        }
        llvm::AllocaInst* a = accs_[static_cast<std::size_t>(e.arg)];
        return b_.CreateLoad(a->getAllocatedType(), a);
      }
      case EOp::Load: {
        Value* base = buffers_[static_cast<std::size_t>(e.arg)];
        Type* st = storage_type(k_.buffers[static_cast<std::size_t>(e.arg)].dtype);
        Value* p = b_.CreateInBoundsGEP(st, base, value(e.src[0]));
        return from_storage(t, b_.CreateLoad(st, p));
      }
      default: break;
    }
    Value* a = value(e.src[0]);
    const DType at = k_.expr(e.src[0]).dtype;  // operand dtype
    const bool fl = is_fp(at);
    const bool sgn = is_signed_int(at);
    switch (e.op) {
      case EOp::Neg: return fl ? b_.CreateFNeg(a) : b_.CreateNeg(a);
      case EOp::Recip: return round_to(t, b_.CreateFDiv(llvm::ConstantFP::get(a->getType(), 1.0), a));
      case EOp::Sqrt: return round_to(t, intrinsic(llvm::Intrinsic::sqrt, a));
      case EOp::Exp2:
        if (gpu_kind_ == Gpu::Amdgpu) return round_to(t, amdgpu_f32_only(llvm::Intrinsic::exp2, "exp2", a));
        if (a->getType()->isFloatTy()) return round_to(t, exp2_via_double(a));
        if (gpu_kind_ == Gpu::Nvptx) return round_to(t, libdevice("__nv_exp2", a));
        return round_to(t, a->getType()->isDoubleTy() ? exp2_f64(a) : intrinsic(llvm::Intrinsic::exp2, a));
      case EOp::Log2:
        if (gpu_kind_ == Gpu::Amdgpu) return round_to(t, amdgpu_f32_only(llvm::Intrinsic::log2, "log2", a));
        if (a->getType()->isFloatTy()) return round_to(t, log2_via_double(a));
        return round_to(t, gpu_kind_ == Gpu::Nvptx ? libdevice("__nv_log2", a) : intrinsic(llvm::Intrinsic::log2, a));
      case EOp::Sin:
        if (gpu_kind_ == Gpu::Amdgpu) return round_to(t, amdgpu_f32_only(llvm::Intrinsic::sin, "sin", a));
        if (gpu_kind_ == Gpu::Nvptx) return round_to(t, libdevice(a->getType()->isFloatTy() ? "__nv_sinf" : "__nv_sin", a));
        return round_to(t, intrinsic(llvm::Intrinsic::sin, a));
      case EOp::Cast: return cast(a, at, t);
      case EOp::Bitcast: return from_bits(t, bits_of(at, a));
      default: break;
    }
    if (e.op == EOp::Where) return b_.CreateSelect(a, value(e.src[1]), value(e.src[2]));
    Value* b = value(e.src[1]);
    switch (e.op) {
      case EOp::Add:
        if (fl) return round_to(t, b_.CreateFAdd(a, b));
        return at == DType::Bool ? b_.CreateOr(a, b) : b_.CreateAdd(a, b);
      case EOp::Mul:
        if (fl) return round_to(t, b_.CreateFMul(a, b));
        return at == DType::Bool ? b_.CreateAnd(a, b) : b_.CreateMul(a, b);
      case EOp::Idiv:
      case EOp::Mod: {
        // b = 0 gives 0 (idiv) or a (mod); b = -1 (signed) gives -a or 0, with no trap.
        Value* zero = llvm::ConstantInt::get(b->getType(), 0);
        Value* is_zero = b_.CreateICmpEQ(b, zero);
        if (!sgn) {
          Value* safe = b_.CreateSelect(is_zero, llvm::ConstantInt::get(b->getType(), 1), b);
          if (e.op == EOp::Idiv) return b_.CreateSelect(is_zero, zero, b_.CreateUDiv(a, safe));
          return b_.CreateSelect(is_zero, a, b_.CreateURem(a, safe));
        }
        Value* minus_one = b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(b->getType(), -1));
        Value* safe = b_.CreateSelect(b_.CreateOr(is_zero, minus_one), llvm::ConstantInt::get(b->getType(), 1), b);
        if (e.op == EOp::Idiv) {
          Value* q = b_.CreateSDiv(a, safe);
          return b_.CreateSelect(is_zero, zero, b_.CreateSelect(minus_one, b_.CreateNeg(a), q));
        }
        Value* r = b_.CreateSRem(a, safe);
        return b_.CreateSelect(is_zero, a, b_.CreateSelect(minus_one, zero, r));
      }
      case EOp::Max:
        if (fl) return nan_max(a, b);
        return b_.CreateSelect(sgn ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
      case EOp::Min: return b_.CreateSelect(sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
      case EOp::Cmplt:
        if (fl) return b_.CreateFCmpOLT(a, b);
        return sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case EOp::Cmpeq: return fl ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
      case EOp::And: return b_.CreateAnd(a, b);
      case EOp::Or: return b_.CreateOr(a, b);
      case EOp::Xor: return b_.CreateXor(a, b);
      default: break;
    }
    throw std::logic_error(std::string("llvm emit: unhandled op ") + eop_name(e.op));
  }

  // --- statements ----------------------------------------------------------------------------

  void body(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      switch (s.kind) {
        case Stmt::Kind::Loop: loop(s); break;
        case Stmt::Kind::Store: {
          DType t = k_.buffers[static_cast<std::size_t>(s.buffer)].dtype;
          Type* st = storage_type(t);
          Value* p = b_.CreateInBoundsGEP(st, buffers_[static_cast<std::size_t>(s.buffer)], value(s.index));
          Value* v = to_storage(t, value(s.value));
          if (k_.group > 0 && group_loops_ == 0) {
            // Outside the group's loops every thread has the value: thread 0 stores it.
            if_then(b_.CreateICmpEQ(lane_, b_.getInt64(0)), [&] { b_.CreateStore(v, p); });
          } else {
            b_.CreateStore(v, p);
          }
          break;
        }
        case Stmt::Kind::GroupCombine: group_combine(s); break;
        case Stmt::Kind::AccDef: {
          if (std::int32_t g = acc_group_[static_cast<std::size_t>(s.acc)]; g >= 0) {
            if (acc_lane_[static_cast<std::size_t>(s.acc)] != 0) break;
            llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
            auto* vt = llvm::FixedVectorType::get(b_.getFloatTy(), vector_width());
            VecGroup& vg = groups_[static_cast<std::size_t>(g)];
            vg.alloca = eb.CreateAlloca(vt, nullptr, "tile" + std::to_string(g));
            b_.CreateStore(b_.CreateVectorSplat(vector_width(), value(s.value)), vg.alloca);
            break;
          }
          llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
          auto* a = eb.CreateAlloca(compute_type(s.dtype), nullptr, "acc" + std::to_string(s.acc));
          accs_[static_cast<std::size_t>(s.acc)] = a;
          b_.CreateStore(value(s.value), a);
          break;
        }
        case Stmt::Kind::AccUpdate: {
          if (std::int32_t g = acc_group_[static_cast<std::size_t>(s.acc)]; g >= 0) {
            if (acc_lane_[static_cast<std::size_t>(s.acc)] != 0) break;
            VecGroup& vg = groups_[static_cast<std::size_t>(g)];
            auto* vt = llvm::FixedVectorType::get(b_.getFloatTy(), vector_width());
            Value* cur = b_.CreateLoad(vt, vg.alloca);
            Value* x = b_.CreateVectorSplat(vector_width(), value(vg.scalar));
            const Expr& ld = k_.expr(vg.first_load);
            Type* st = storage_type(k_.buffers[static_cast<std::size_t>(ld.arg)].dtype);
            Value* p = b_.CreateInBoundsGEP(st, buffers_[static_cast<std::size_t>(ld.arg)], value(ld.src[0]));
            Value* y = b_.CreateAlignedLoad(vt, b_.CreateBitCast(p, llvm::PointerType::getUnqual(vt)), llvm::Align(4));
            llvm::Function* f = llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::fmuladd, {vt});
            b_.CreateStore(b_.CreateCall(f, {x, y, cur}), vg.alloca);
            break;
          }
          llvm::AllocaInst* a = accs_[static_cast<std::size_t>(s.acc)];
          Value* cur = b_.CreateLoad(a->getAllocatedType(), a);
          b_.CreateStore(combine(s.reduce, s.dtype, cur, value(s.value)), a);
          break;
        }
      }
    }
  }

  // An accumulator's running value `cur` combined with `v`.
  Value* combine(ReduceKind kind, DType t, Value* cur, Value* v) {
    const bool fl = is_fp(t);
    switch (kind) {
      case ReduceKind::Sum:
        if (fl) {
          auto* add = llvm::cast<llvm::Instruction>(b_.CreateFAdd(cur, v));
          add->setHasAllowReassoc(true);  // lets the vectorizer split the sum
          return add;
        }
        return b_.CreateAdd(cur, v);
      case ReduceKind::Prod: return fl ? b_.CreateFMul(cur, v) : b_.CreateMul(cur, v);
      case ReduceKind::Max: return fl ? nan_max(cur, v) : b_.CreateSelect(b_.CreateICmpSGT(cur, v), cur, v);
    }
    throw std::logic_error("llvm emit: unknown reduce");
  }

  // The value that combines with any v to give v.
  Value* identity(ReduceKind kind, DType t) {
    Type* ty = compute_type(t);
    if (is_fp(t)) {
      switch (kind) {
        case ReduceKind::Sum: return llvm::ConstantFP::getNegativeZero(ty);
        case ReduceKind::Prod: return llvm::ConstantFP::get(ty, 1.0);
        case ReduceKind::Max: return llvm::ConstantFP::getInfinity(ty, true);
      }
    }
    switch (kind) {
      case ReduceKind::Sum: return llvm::ConstantInt::get(ty, 0);
      case ReduceKind::Prod: return llvm::ConstantInt::get(ty, 1);
      case ReduceKind::Max: return llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth()));
    }
    throw std::logic_error("llvm emit: unknown reduce");
  }

  // Runs then() where `cond` holds, then goes on.
  template <class F>
  void if_then(Value* cond, F&& then) {
    auto* yes = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto* next = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    b_.CreateCondBr(cond, yes, next);
    b_.SetInsertPoint(yes);
    then();
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
  }

  // Every thread of the group combines its part of the accumulator with the others'.
  void group_combine(const Stmt& s) {
    llvm::AllocaInst* a = accs_[static_cast<std::size_t>(s.acc)];
    Type* t = a->getAllocatedType();
    Value* v = b_.CreateLoad(t, a);
    const std::int64_t g = k_.group;
    if (shuffles_) {
      // Within each warp of 32 by butterfly shuffles (every lane gets its warp's total), then
      // across warps through one shared slot per warp, which every warp reads and combines
      // again, so every thread ends with the whole.
      auto butterfly = [&](Value* x) {
        for (int mask = 16; mask >= 1; mask /= 2) x = combine(s.reduce, s.dtype, x, shuffle_xor(x, mask));
        return x;
      };
      v = butterfly(v);
      if (g > 32) {
        Value* lane_in_warp = b_.CreateAnd(lane_, b_.getInt64(31));
        barrier();  // earlier readers of the slots are done
        Value* slots = shared_array(t);
        if_then(b_.CreateICmpEQ(lane_in_warp, b_.getInt64(0)),
                [&] { b_.CreateStore(v, b_.CreateInBoundsGEP(t, slots, b_.CreateLShr(lane_, 5))); });
        barrier();
        Value* part = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, slots, lane_in_warp));
        v = butterfly(b_.CreateSelect(b_.CreateICmpULT(lane_in_warp, b_.getInt64(static_cast<std::uint64_t>(g / 32))), part,
                                      identity(s.reduce, s.dtype)));
      }
    } else {
      // A tree in shared memory: at each step the lower half adds the upper half's slots.
      Value* slots = shared_array(t);
      barrier();
      b_.CreateStore(v, b_.CreateInBoundsGEP(t, slots, lane_));
      barrier();
      for (std::int64_t half = g / 2; half >= 1; half /= 2) {
        if_then(b_.CreateICmpULT(lane_, b_.getInt64(static_cast<std::uint64_t>(half))), [&] {
          Value* mine = b_.CreateInBoundsGEP(t, slots, lane_);
          Value* other = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, slots, b_.CreateAdd(lane_, b_.getInt64(static_cast<std::uint64_t>(half)))));
          b_.CreateStore(combine(s.reduce, s.dtype, b_.CreateLoad(t, mine), other), mine);
        });
        barrier();
      }
      v = b_.CreateLoad(t, slots);
    }
    b_.CreateStore(v, a);
  }

  // Loops are emitted rotated (a guard, then a body that tests at its end), the form LLVM's
  // loop passes expect; values that leave the loop then come from its last iteration.
  void loop(const Stmt& s) {
    if (gpu_ && s.parallel) {
      thread_iteration(s);
      return;
    }
    if (s.group) {
      group_loop(s);
      return;
    }
    Value* start = s.parallel ? begin_ : b_.getInt64(0);
    Value* stop = s.parallel ? end_ : value(s.extent);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* bodybb = llvm::BasicBlock::Create(ctx_, "body" + std::to_string(s.var), fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit" + std::to_string(s.var), fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(start, stop), bodybb, exit);
    b_.SetInsertPoint(bodybb);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i" + std::to_string(s.var));
    i->addIncoming(start, pre);
    loop_vars_[static_cast<std::size_t>(s.var)] = i;
    frames_.emplace_back();
    body(s.body);
    for (ExprId id : frames_.back()) memo_[static_cast<std::size_t>(id)] = nullptr;
    frames_.pop_back();
    Value* next = b_.CreateNSWAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, stop), bodybb, exit);
    b_.SetInsertPoint(exit);
  }

  // On a GPU, the thread loops (gpu_thread_loops) take their variables from the thread's
  // flattened iteration, the innermost varying fastest; their body runs once per thread.
  void thread_iteration(const Stmt& s) {
    std::vector<const Stmt*> chain = gpu_thread_loops(k_);
    if (chain.empty() || chain[0] != &s) throw std::logic_error("llvm emit: a parallel loop that is not the kernel's thread loop");
    unflatten(chain, thread_);
    frames_.emplace_back();
    body(chain.back()->body);
    for (ExprId id : frames_.back()) memo_[static_cast<std::size_t>(id)] = nullptr;
    frames_.pop_back();
  }

  // Sets the variables of a loop nest from one flat iteration, the innermost varying fastest.
  void unflatten(const std::vector<const Stmt*>& chain, Value* flat) {
    for (std::size_t j = chain.size(); j-- > 0;) {
      const Stmt& l = *chain[j];
      if (j == 0) {
        loop_vars_[static_cast<std::size_t>(l.var)] = flat;
      } else {
        Value* extent = value(l.extent);
        loop_vars_[static_cast<std::size_t>(l.var)] = b_.CreateURem(flat, extent, "i" + std::to_string(l.var));
        flat = b_.CreateUDiv(flat, extent);
      }
    }
  }

  // A group loop (Stmt::group): the nest's flattened iterations lane, lane + group, ...
  void group_loop(const Stmt& s) {
    std::vector<const Stmt*> chain = loop_nest(k_, s);
    Value* total = b_.getInt64(1);
    for (const Stmt* l : chain) total = b_.CreateMul(total, value(l->extent));
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* bodybb = llvm::BasicBlock::Create(ctx_, "group" + std::to_string(s.var), fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "groupexit" + std::to_string(s.var), fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lane_, total), bodybb, exit);
    b_.SetInsertPoint(bodybb);
    llvm::PHINode* f = b_.CreatePHI(b_.getInt64Ty(), 2, "f" + std::to_string(s.var));
    f->addIncoming(lane_, pre);
    frames_.emplace_back();
    unflatten(chain, f);
    ++group_loops_;
    body(chain.back()->body);
    --group_loops_;
    for (ExprId id : frames_.back()) memo_[static_cast<std::size_t>(id)] = nullptr;
    frames_.pop_back();
    Value* next = b_.CreateNSWAdd(f, b_.getInt64(k_.group));
    f->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, total), bodybb, exit);
    b_.SetInsertPoint(exit);
  }
};

// A module holding kernel K as ENTRY for target machine TM, verified.
std::unique_ptr<llvm::Module> emit_module(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                          const std::string& entry, bool prefer_512, Gpu gpu) {
  auto m = std::make_unique<llvm::Module>(entry, ctx);
  m->setDataLayout(tm.createDataLayout());
  m->setTargetTriple(tm.getTargetTriple().str());
  Emitter(ctx, *m, k, prefer_512, gpu).emit(entry);
  std::string verify_errors;
  llvm::raw_string_ostream verify_os(verify_errors);
  if (llvm::verifyModule(*m, &verify_os)) {
    throw std::logic_error("llvm emit produced invalid IR for " + entry + ": " + verify_os.str());
  }
  return m;
}

// The standard O3 pipeline for TM's target (inlining, vectorization, ...), tuned by PTO.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, const llvm::PipelineTuningOptions& pto) {
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
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
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

// The ld.lld to link AMDGPU code objects with: TENSORLISP_LD_LLD, else the first of ld.lld,
// ld.lld-14 found on PATH (or in LLVM's own folder).
// Optimizes m, keeps its IR in the output when asked, and emits it as `type`.
CompileOutput optimize_and_emit(llvm::Module& m, llvm::TargetMachine& tm, const llvm::PipelineTuningOptions& pto,
                                bool want_ir, llvm::CodeGenFileType type) {
  optimize(m, tm, pto);
  CompileOutput out;
  if (want_ir) {
    llvm::raw_string_ostream os(out.ir);
    m.print(os, nullptr);
  }
  out.object = emit_file(m, tm, type);
  return out;
}

std::string find_ld_lld() {
  if (const char* env = std::getenv("TENSORLISP_LD_LLD"); env != nullptr && *env != 0) return env;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    for (std::size_t i = 0; i <= p.size();) {
      std::size_t j = p.find(':', i);
      if (j == std::string::npos) j = p.size();
      if (j > i) dirs.push_back(p.substr(i, j - i));
      i = j + 1;
    }
  }
  dirs.push_back("/usr/lib/llvm-" + std::to_string(LLVM_VERSION_MAJOR) + "/bin");
  for (const auto& d : dirs) {
    for (const char* name : {"ld.lld", "ld.lld-" LLVM_VERSION_STRING}) {
      std::string f = d + "/" + name;
      if (::access(f.c_str(), X_OK) == 0) return f;
    }
  }
  return "";
}

// An AMDGPU object file linked into a shared code object (what the HIP runtime loads).
std::string link_code_object(const std::string& object, const std::string& entry) {
  static const std::string ld = find_ld_lld();
  if (ld.empty()) throw std::runtime_error("kernel " + entry + ": linking an AMDGPU code object needs ld.lld (install lld, or set TENSORLISP_LD_LLD)");
  char dir_template[] = "/tmp/tensorlisp-amdgpu-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) throw std::runtime_error("kernel " + entry + ": cannot make a temporary folder to link in");
  const std::string in = std::string(dir) + "/k.o", out = std::string(dir) + "/k.hsaco", log = std::string(dir) + "/log";
  std::ofstream(in, std::ios::binary) << object;
  const std::string cmd = "'" + ld + "' -shared --no-undefined -o '" + out + "' '" + in + "' 2>'" + log + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream result(out, std::ios::binary), messages(log);
  std::string code((std::istreambuf_iterator<char>(result)), std::istreambuf_iterator<char>());
  std::string text((std::istreambuf_iterator<char>(messages)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  if (rc != 0 || code.empty()) throw std::runtime_error("kernel " + entry + ": ld.lld failed to link the code object: " + text);
  return code;
}

}  // namespace

struct CpuCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string id;
  bool avx512 = false;  // use 512-bit vectors (LLVM prefers 256 bits by default)
};

// A target machine for the host CPU with all its vector extensions.
std::unique_ptr<llvm::TargetMachine> host_target_machine() {
  init_llvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw std::runtime_error("LLVM has no target for this host: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw std::runtime_error("cannot create an LLVM target machine: " + llvm::toString(tm.takeError()));
  return std::move(*tm);
}

CpuCodegen::CpuCodegen() : impl_(std::make_unique<Impl>()) {
  impl_->tm = host_target_machine();
  impl_->avx512 = impl_->tm->getTargetFeatureString().contains("+avx512f");
  impl_->id = impl_->tm->getTargetTriple().str() + "/" + impl_->tm->getTargetCPU().str() + "/" +
              impl_->tm->getTargetFeatureString().str() + "/llvm" + LLVM_VERSION_STRING +
              // The emitter's build: code from an older emitter in the disk cache is stale.
              "/emitter " __DATE__ " " __TIME__;
}

CpuCodegen::~CpuCodegen() = default;

struct PtxCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string libdevice;  // path of libdevice.10.bc, or empty
  std::string id;
};

PtxCodegen::PtxCodegen(const std::string& arch) : impl_(std::make_unique<Impl>()) {
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
  impl_->id = "nvptx64/" + arch + "/llvm" LLVM_VERSION_STRING "/emitter " __DATE__ " " __TIME__;
  const char* dirs[] = {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"), "/usr/local/cuda", "/usr/lib/cuda"};
  for (const char* dir : dirs) {
    if (dir == nullptr || *dir == 0) continue;
    std::string path = std::string(dir) + "/nvvm/libdevice/libdevice.10.bc";
    if (std::ifstream(path).good()) {
      impl_->libdevice = path;
      break;
    }
  }
}

PtxCodegen::~PtxCodegen() = default;

const std::string& PtxCodegen::target_id() const { return impl_->id; }

CompileOutput PtxCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, false, Gpu::Nvptx);
  bool needs_libdevice = false;
  for (const llvm::Function& f : *m) needs_libdevice = needs_libdevice || (f.isDeclaration() && f.getName().startswith("__nv_"));
  if (needs_libdevice) {
    if (impl_->libdevice.empty()) {
      throw std::runtime_error("kernel " + entry + " needs NVIDIA's libdevice (nvvm/libdevice/libdevice.10.bc under CUDA_HOME or /usr/local/cuda) for sin, or exp2/log2 of f64");
    }
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(impl_->libdevice, diag, ctx);
    if (!lib) throw std::runtime_error("cannot read " + impl_->libdevice + ": " + diag.getMessage().str());
    lib->setDataLayout(m->getDataLayout());
    lib->setTargetTriple(m->getTargetTriple());
    if (llvm::Linker::linkModules(*m, std::move(lib), llvm::Linker::LinkOnlyNeeded)) {
      throw std::runtime_error("cannot link libdevice into " + entry);
    }
    // Only the kernel is visible: libdevice's functions inline and the rest goes.
    for (llvm::Function& f : *m) {
      if (!f.isDeclaration() && f.getName() != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
  return optimize_and_emit(*m, *impl_->tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_AssemblyFile);
}

struct AmdgpuCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string arch;
  std::string id;
};

AmdgpuCodegen::AmdgpuCodegen(const std::string& arch) : impl_(std::make_unique<Impl>()) {
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
  impl_->id = "amdgcn/" + arch + "/llvm" LLVM_VERSION_STRING "/emitter " __DATE__ " " __TIME__;
}

AmdgpuCodegen::~AmdgpuCodegen() = default;

const std::string& AmdgpuCodegen::target_id() const { return impl_->id; }

CompileOutput AmdgpuCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, false, Gpu::Amdgpu);
  CompileOutput out = optimize_and_emit(*m, *impl_->tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_ObjectFile);
  out.object = link_code_object(out.object, entry);
  return out;
}

struct SimCodegen::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  Gpu flavor = Gpu::SimNvptx;
  std::string id;
};

SimCodegen::SimCodegen(const std::string& flavor) : impl_(std::make_unique<Impl>()) {
  if (flavor != "nvptx" && flavor != "amdgcn") {
    throw std::runtime_error("no simulated GPU \"" + flavor + "\" (known: sim:nvptx, sim:amdgcn)");
  }
  impl_->tm = host_target_machine();
  impl_->flavor = flavor == "nvptx" ? Gpu::SimNvptx : Gpu::SimAmdgpu;
  impl_->id = "sim/" + flavor + "/" + impl_->tm->getTargetTriple().str() + "/llvm" LLVM_VERSION_STRING "/emitter " __DATE__ " " __TIME__;
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
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, false, impl_->flavor);
  llvm::PipelineTuningOptions pto;
  pto.LoopUnrolling = false;
  return optimize_and_emit(*m, *impl_->tm, pto, want_ir, llvm::CGFT_ObjectFile);
}

std::unique_ptr<Codegen> make_codegen(const std::string& target) {
  if (target.empty() || target == "host") return std::make_unique<CpuCodegen>();
  const auto colon = target.find(':');
  const std::string kind = target.substr(0, colon);
  const std::string arch = colon == std::string::npos ? "" : target.substr(colon + 1);
  if (kind == "nvptx") return std::make_unique<PtxCodegen>(arch.empty() ? "sm_80" : arch);
  if (kind == "amdgcn") return std::make_unique<AmdgpuCodegen>(arch.empty() ? "gfx90a" : arch);
  if (kind == "sim") return std::make_unique<SimCodegen>(arch.empty() ? "nvptx" : arch);
  throw std::runtime_error("no code generator for target \"" + target + "\" (known: host, nvptx:sm_XX, amdgcn:gfxNNN, sim:nvptx, sim:amdgcn)");
}

const std::string& CpuCodegen::target_id() const { return impl_->id; }

CompileOutput CpuCodegen::compile(const Kernel& k, const std::string& entry, bool want_ir) const {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_module(ctx, *impl_->tm, k, entry, impl_->avx512, Gpu::None);
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  // No unrolling: LLVM fully unrolls loops of small constant trip count, which multiplies
  // compile time (a 64x100 elementwise kernel: 110 ms instead of 10) for little gain; the
  // vectorizer still interleaves.
  pto.LoopUnrolling = false;
  return optimize_and_emit(*m, *impl_->tm, pto, want_ir, llvm::CGFT_ObjectFile);
}

}  // namespace tl::codegen
