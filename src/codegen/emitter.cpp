// SPDX-License-Identifier: Apache-2.0
// The LLVM IR emitter shared by every target (emitter.h). Values live in registers of a
// compute type (f16 and bf16 as float, bool as i1) and are converted on load and store; f16
// and bf16 results round to their type after every op, so fused kernels compute what the
// reference executor does. What differs between targets is asked of the EmitTarget.
// (Over 800 lines: one Emitter class, whose value cache, loop stack, accumulators and lane
// vectors every statement and expression kind reads and writes; the targets and the math
// library are already files of their own.)
#include "codegen/emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <vector>

#include "codegen/math_lib.h"
#include "support/check.h"
#include "tensor/semantics.h"

namespace tl::codegen {

namespace {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;
using tensor::DCat;

bool is_signed_int(DType t) { return tensor::dtype_category(t) == DCat::Signed; }
bool is_fp(DType t) { return tensor::is_float(t); }

// Emits one kernel as one function of a module: its entry, then its statements in order
// (loops, stores, accumulators), memoizing each expression's value within its loop.
class Emitter {
 public:
  Emitter(llvm::LLVMContext& ctx, llvm::Module& m, const Kernel& k, const EmitTarget& target)
      : ctx_(ctx), m_(m), k_(k), b_(ctx), target_(target), prefer_512_(target.prefers_512_bit_vectors()),
        gpu_(target.runs_threads()) {}

  void emit(const std::string& entry) {
    if (target_.takes_kernel_params()) {
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
    acc_run_.assign(static_cast<std::size_t>(k_.acc_count()), -1);
    acc_run_lane_.assign(static_cast<std::size_t>(k_.acc_count()), 0);
    count_updates(k_.body);
    if (!gpu_) plan_lane_runs(k_.body);
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
    target_.mark_kernel(*fn_, k_.group);
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
    Value* dim = target_.block_dim(b_);
    return b_.CreateAdd(b_.CreateMul(block_index(), dim), thread_in_block());
  }

  Value* block_index() { return target_.block_index(b_); }
  Value* thread_in_block() { return target_.thread_in_block(b_); }
  void barrier() { target_.barrier(b_); }

  // shuffle_xor32 (target.h) of a value of any accumulator type (f32, f64, i64), 64-bit ones
  // in halves.
  Value* shuffle_xor(Value* v, int mask) {
    Type* t = v->getType();
    const unsigned bits = t->getPrimitiveSizeInBits();
    Value* x = b_.CreateBitCast(v, b_.getIntNTy(bits));
    if (bits == 32) return b_.CreateBitCast(target_.shuffle_xor32(b_, x, mask), t);
    Value* lo = target_.shuffle_xor32(b_, b_.CreateTrunc(x, b_.getInt32Ty()), mask);
    Value* hi = target_.shuffle_xor32(b_, b_.CreateTrunc(b_.CreateLShr(x, 32), b_.getInt32Ty()), mask);
    Value* joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return b_.CreateBitCast(joined, t);
  }

  // The block's shared memory as an array of `t`: one array per kernel, big enough for any
  // combine (shared_bytes()).
  Value* shared_array(Type* t) {
    if (shared_ == nullptr) shared_ = target_.shared_memory(b_, *fn_, shared_bytes());
    return b_.CreateBitCast(shared_, llvm::PointerType::get(t, target_.shared_address_space()));
  }
  // Bytes of shared memory a group kernel uses: a slot of 8 bytes per warp (shuffles), or per
  // thread (a tree).
  std::int64_t shared_bytes() const { return 8 * (target_.has_shuffles() ? 32 : k_.group); }

 private:
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  const Kernel& k_;
  IRBuilder<> b_;
  const EmitTarget& target_;
  bool prefer_512_;
  bool gpu_;  // the kernel runs one thread per iteration of its thread loops (runs_threads())
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

  // Accumulators updated by more than one statement (a lanes opt's lane 0, also updated by
  // its tail loop) stay scalar: a group's vector update stands for the run it was made from.
  std::set<std::int32_t> updated_once_, updated_more_;

  void count_updates(const std::vector<Stmt>& stmts) {
    for (const Stmt& st : stmts) {
      if (st.kind == Stmt::Kind::Loop) count_updates(st.body);
      if (st.kind == Stmt::Kind::AccDef) acc_init_[st.acc] = st.value;
      if (st.kind != Stmt::Kind::AccUpdate && st.kind != Stmt::Kind::AccSet) continue;
      if (!updated_once_.insert(st.acc).second || st.kind == Stmt::Kind::AccSet) updated_more_.insert(st.acc);
    }
  }

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
        ok = st.kind == Stmt::Kind::AccUpdate && st.reduce == ReduceKind::Sum && st.dtype == DType::F32 &&
             !updated_more_.count(st.acc) && acc_run_[static_cast<std::size_t>(st.acc)] < 0;
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
          ok = ok && acc_init_.count(st.acc);
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

  // Lane runs: the block loop of a lanes opt updates F accumulators per reduce, copy j of the
  // body adding into lane j. Each run of lanes (a chunk of one vector register's width) is
  // held as one vector: the lanes' values are built into a vector and combined with it by one
  // vector operation (a max's NaN and signed-zero selects included), so the accumulator chain
  // is vector code by construction. Left to itself, the SLP vectorizer paired the lanes two
  // by two (8 chains of 2 floats in a 512-bit machine's row max).
  struct LaneRun {
    std::vector<std::int32_t> accs;
    std::vector<const Stmt*> stmts;  // the updates, lane by lane
    ReduceKind reduce = ReduceKind::Sum;
    DType dtype = DType::F32;
    llvm::AllocaInst* alloca = nullptr;
  };
  std::vector<LaneRun> runs_;
  std::vector<std::int32_t> acc_run_, acc_run_lane_;
  std::map<const Stmt*, std::int32_t> run_first_;  // a run's lane 0 update: the vector update
  std::set<const Stmt*> run_rest_;                 // its other lanes' updates: emitted with it

  // How many lanes of dtype t fill one vector register.
  unsigned lanes_per_vector(DType t) {
    const unsigned bits = static_cast<unsigned>(compute_type(t)->getPrimitiveSizeInBits());
    return (prefer_512_ ? 512u : 256u) / (bits == 1 ? 8u : bits);
  }

  void plan_lane_runs(const std::vector<Stmt>& stmts) {
    for (const Stmt& st : stmts) {
      if (st.kind != Stmt::Kind::Loop) continue;
      plan_lane_runs(st.body);
      if (st.lanes) plan_lane_block(st.body);
    }
  }

  // A lanes block's body is copy 0 of the reduce loop's statements, then copy 1, ...: with n
  // statements per copy, statements i, i + n, i + 2n, ... update the lanes of one reduce.
  void plan_lane_block(const std::vector<Stmt>& body) {
    const std::size_t size = body.size();
    std::set<std::int32_t> in_block;
    for (const Stmt& st : body) {
      if (st.kind != Stmt::Kind::AccUpdate) return;
      if (!in_block.insert(st.acc).second) return;  // one update per accumulator
    }
    // No lane's value reads an accumulator the block updates.
    for (const Stmt& st : body) {
      bool reads = false;
      k_.visit({st.value}, [&](ExprId, const Expr& x) {
        if (x.op == EOp::AccRead && in_block.count(x.arg)) reads = true;
        return !reads;
      });
      if (reads) return;
    }
    auto fits = [&](const Stmt& a, const Stmt& b) {
      if (a.reduce != b.reduce || a.dtype != b.dtype) return false;
      // Not f16 and bf16: their conversions are scalar code.
      return a.dtype != DType::F16 && a.dtype != DType::BF16;
    };
    for (std::size_t n = 1; n * 2 <= size; ++n) {
      if (size % n != 0) continue;
      bool ok = true;
      for (std::size_t i = 0; i < size && ok; ++i) ok = fits(body[i % n], body[i]) && acc_init_.count(body[i].acc) > 0;
      if (!ok) continue;
      const std::size_t lanes = size / n;
      for (std::size_t r = 0; r < n; ++r) {
        const std::size_t width = std::min<std::size_t>(lanes, lanes_per_vector(body[r].dtype));
        if (width < 2 || lanes % width != 0) continue;
        for (std::size_t first = 0; first < lanes; first += width) {
          LaneRun run;
          run.reduce = body[r].reduce;
          run.dtype = body[r].dtype;
          for (std::size_t j = first; j < first + width; ++j) {
            const Stmt& st = body[r + j * n];
            acc_run_[static_cast<std::size_t>(st.acc)] = static_cast<std::int32_t>(runs_.size());
            acc_run_lane_[static_cast<std::size_t>(st.acc)] = static_cast<std::int32_t>(j - first);
            run.accs.push_back(st.acc);
            run.stmts.push_back(&st);
            if (j > first) run_rest_.insert(&st);
          }
          run_first_[run.stmts.front()] = static_cast<std::int32_t>(runs_.size());
          runs_.push_back(std::move(run));
        }
      }
      return;
    }
  }

  llvm::FixedVectorType* run_type(const LaneRun& run) {
    return llvm::FixedVectorType::get(compute_type(run.dtype), static_cast<unsigned>(run.accs.size()));
  }

  // A lane run's vector update: its lanes' values, built into a vector, combined with it.
  void update_run(const LaneRun& run) {
    std::vector<ExprId> values;
    bool dot = false;
    for (const Stmt* st : run.stmts) {
      values.push_back(st->value);
      k_.visit({st->value}, [&](ExprId, const Expr& x) {
        dot = dot || x.op == EOp::Dot4;
        return !dot;
      });
    }
    Value* x = nullptr;
    std::optional<llvm::IRBuilder<>::FastMathFlagGuard> guard;  // restores the flags on return
    if (dot) {
      // Integer dot products (the qdot pass) are vector instructions only when emitted as such.
      // The block's scale times its sum, added to the lane sums, may be one fused multiply-add.
      guard.emplace(b_);
      llvm::FastMathFlags fmf = b_.getFastMathFlags();
      fmf.setAllowContract(true);
      b_.setFastMathFlags(fmf);
      x = lanes_vector(values);
    } else {
      x = llvm::UndefValue::get(run_type(run));
      for (std::size_t j = 0; j < run.stmts.size(); ++j)
        x = b_.CreateInsertElement(x, value(run.stmts[j]->value), std::uint64_t{j});
    }
    Value* cur = b_.CreateLoad(run.alloca->getAllocatedType(), run.alloca);
    const unsigned saved = splat_;
    splat_ = static_cast<unsigned>(run.accs.size());
    Value* next = combine(run.reduce, run.dtype, cur, x);
    splat_ = saved;
    b_.CreateStore(next, run.alloca);
  }

  // The values of expressions `ids` as one vector, built op by op in vector instructions where
  // the lanes compute alike: equal lanes are one value broadcast; loads of consecutive
  // addresses one vector load; the same operation on every lane that operation on vectors of
  // its operands (integer dot products: the target's vector instructions). Lanes that differ
  // split in halves, each built so and joined; a lone lane is its scalar value.
  Value* lanes_vector(const std::vector<ExprId>& ids) {
    const std::size_t n = ids.size();
    const Expr& e = k_.expr(ids[0]);
    if (std::all_of(ids.begin(), ids.end(), [&](ExprId id) { return id == ids[0]; })) {
      return b_.CreateVectorSplat(static_cast<unsigned>(n), value(ids[0]));
    }
    auto alike = [&](ExprId id) {
      const Expr& x = k_.expr(id);
      // (A cast's operands must be of one dtype too.)
      return x.op == e.op && x.dtype == e.dtype && x.arg == e.arg && x.ival == e.ival &&
             (x.op != EOp::Cast || k_.expr(x.src[0]).dtype == k_.expr(e.src[0]).dtype);
    };
    if (std::all_of(ids.begin(), ids.end(), alike)) {
      if (Value* v = vector_op(ids)) return v;
    }
    if (Value* v = shifted_lanes(ids)) return v;
    if (n >= 2 && n % 2 == 0) {
      std::vector<ExprId> lo(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n / 2));
      std::vector<ExprId> hi(ids.begin() + static_cast<std::ptrdiff_t>(n / 2), ids.end());
      Value* a = lanes_vector(lo);
      Value* c = lanes_vector(hi);
      std::vector<int> mask(n);
      for (std::size_t i = 0; i < n; ++i) mask[i] = static_cast<int>(i);
      return b_.CreateShuffleVector(a, c, mask);
    }
    Value* x = llvm::UndefValue::get(llvm::FixedVectorType::get(value(ids[0])->getType(), static_cast<unsigned>(n)));
    for (std::size_t j = 0; j < n; ++j) x = b_.CreateInsertElement(x, value(ids[j]), std::uint64_t{j});
    return x;
  }

  // Lanes of an unsigned integer type, some x / 2^s (a 4-bit block's high nibbles) and the
  // rest plain x (its low ones): one vector shift by a vector of amounts (x / 1 for the plain
  // lanes), so the words are loaded and masked once for both halves of the block. Null for
  // other lanes.
  Value* shifted_lanes(const std::vector<ExprId>& ids) {
    const DType t = k_.expr(ids[0]).dtype;
    if (t != DType::U32) return nullptr;
    std::vector<ExprId> nums;
    std::vector<llvm::Constant*> divisors;
    bool any = false;
    for (ExprId id : ids) {
      const Expr& x = k_.expr(id);
      if (x.dtype != t) return nullptr;
      auto c = x.op == EOp::Idiv ? k_.as_const(x.src[1]) : std::nullopt;
      if (x.op == EOp::Idiv && (!c || *c <= 0 || (*c & (*c - 1)) != 0)) return nullptr;
      any = any || c.has_value();
      nums.push_back(c ? x.src[0] : id);
      divisors.push_back(llvm::ConstantInt::get(b_.getInt32Ty(), static_cast<std::uint64_t>(c ? *c : 1)));
    }
    if (!any || std::all_of(ids.begin(), ids.end(), [&](ExprId id) { return k_.expr(id).op == EOp::Idiv; })) {
      return nullptr;
    }
    return b_.CreateUDiv(lanes_vector(nums), llvm::ConstantVector::get(divisors));
  }

  // lanes_vector of expressions with one operation: null when it has no vector form here.
  Value* vector_op(const std::vector<ExprId>& ids) {
    const std::size_t n = ids.size();
    const Expr e = k_.expr(ids[0]);
    // A commutative op's operands in the order of lane 0's (operands are interned in id order,
    // so lanes alike may hold theirs in either order): swapped where that makes them alike.
    const bool commutes =
        e.op == EOp::Add || e.op == EOp::Mul || e.op == EOp::And || e.op == EOp::Or || e.op == EOp::Xor;
    auto kind_of = [&](ExprId a, ExprId b) {
      const Expr& x = k_.expr(a);
      const Expr& y = k_.expr(b);
      return x.op == y.op && x.dtype == y.dtype && x.arg == y.arg && x.ival == y.ival;
    };
    // A constant operand goes second in every lane, lane 0's too.
    auto is_const = [&](ExprId a) { return k_.expr(a).op == EOp::Const; };
    auto ordered = [&](const Expr& x) {
      std::pair<ExprId, ExprId> o{x.src[0], x.src[1]};
      if (commutes && is_const(o.first) && !is_const(o.second)) std::swap(o.first, o.second);
      return o;
    };
    const auto first = ordered(e);
    auto sources = [&](int i) {
      std::vector<ExprId> s;
      for (ExprId id : ids) {
        const Expr& x = k_.expr(id);
        if (i >= 2 || !commutes) {
          s.push_back(x.src[i]);
          continue;
        }
        auto o = ordered(x);
        if (!(kind_of(o.first, first.first) && kind_of(o.second, first.second)) && kind_of(o.second, first.first) &&
            kind_of(o.first, first.second)) {
          std::swap(o.first, o.second);
        }
        s.push_back(i == 0 ? o.first : o.second);
      }
      return s;
    };
    if (e.op == EOp::Load) {
      // Consecutive elements (bytes for load_bytes, whose elements are 4 bytes apart).
      const std::int64_t step = e.ival == 1 ? static_cast<std::int64_t>(tensor::dtype_size(e.dtype)) : 1;
      for (std::size_t j = 1; j < n; ++j) {
        auto d = k_.constant_difference(e.src[0], k_.expr(ids[j]).src[0]);
        if (!d || *d != step * static_cast<std::int64_t>(j)) return nullptr;
      }
      const DType t = e.dtype;
      const bool plain = t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::U32 || t == DType::I8 ||
                         t == DType::U8 || t == DType::I64;
      if (!plain) return nullptr;
      Type* st = storage_type(t);
      auto* vt = llvm::FixedVectorType::get(st, static_cast<unsigned>(n));
      Value* p = nullptr;
      if (e.ival == 1) {
        p = b_.CreateInBoundsGEP(b_.getInt8Ty(), byte_base(e.arg), value(e.src[0]));
      } else {
        Value* base = buffers_[static_cast<std::size_t>(e.arg)];
        if (t != k_.buffers[static_cast<std::size_t>(e.arg)].dtype)
          base = b_.CreateBitCast(base, llvm::PointerType::get(st, base->getType()->getPointerAddressSpace()));
        p = b_.CreateInBoundsGEP(st, base, value(e.src[0]));
      }
      p = b_.CreateBitCast(p, llvm::PointerType::get(vt, p->getType()->getPointerAddressSpace()));
      return b_.CreateAlignedLoad(vt, p, llvm::Align(e.ival == 1 ? 1 : tensor::dtype_size(t)));
    }
    if (e.op == EOp::Dot4) {
      Value* a = lanes_vector(sources(0));
      Value* s = lanes_vector(sources(1));
      Value* c = lanes_vector(sources(2));
      std::int64_t a_max = 0;
      for (ExprId id : ids) a_max = std::max(a_max, k_.expr(id).ival);
      return target_.dot4(b_, c, a, s, a_max, e.arg);
    }
    auto op = primitive_of(e.op);
    const bool vectorizable = e.op == EOp::Add || e.op == EOp::Mul || e.op == EOp::Neg || e.op == EOp::And ||
                              e.op == EOp::Or || e.op == EOp::Xor || e.op == EOp::Cast ||
                              (e.op == EOp::Idiv && !is_signed_int(e.dtype));
    if (!op || !vectorizable) return nullptr;
    const DType operand = k_.expr(e.src[0]).dtype;
    if (e.op == EOp::Cast && (operand == DType::F16 || operand == DType::BF16 || e.dtype == DType::F16 ||
                              e.dtype == DType::BF16 || operand == DType::Bool || e.dtype == DType::Bool)) {
      return nullptr;
    }
    const int arity = tensor::op_info(*op).arity;
    Value* x[3] = {};
    for (int i = 0; i < arity; ++i) x[i] = lanes_vector(sources(i));
    const unsigned saved = splat_;
    splat_ = static_cast<unsigned>(n);
    Value* v = elementwise(*op, operand, e.dtype, std::span<Value* const>(x, static_cast<std::size_t>(arity)));
    splat_ = saved;
    return v;
  }

  // Buffer `slot` as bytes.
  Value* byte_base(std::int32_t slot) {
    Value* base = buffers_[static_cast<std::size_t>(slot)];
    return b_.CreateBitCast(base, llvm::PointerType::get(b_.getInt8Ty(), base->getType()->getPointerAddressSpace()));
  }

  // A load_bytes: the value of type `t` at byte offset `byte` of the buffer, of any alignment.
  Value* load_bytes(const Expr& e, Value* byte, Type* t) {
    Value* p = b_.CreateInBoundsGEP(b_.getInt8Ty(), byte_base(e.arg), byte);
    p = b_.CreateBitCast(p, llvm::PointerType::get(t, p->getType()->getPointerAddressSpace()));
    llvm::LoadInst* load = b_.CreateAlignedLoad(t, p, llvm::Align(1));
    const BufferParam& bp = k_.buffers[static_cast<std::size_t>(e.arg)];
    if (!bp.output && bp.local_elems == 0)
      load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
    return load;
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
      case DType::Bool:
      case DType::Q8_0:
      case DType::Q4_0: return b_.getInt8Ty();  // a quantized buffer: bytes, read through load_as
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
      // The freeze keeps LLVM 14 from miscompiling a vectorized loop's strided f16 loads
      // beside a masked read-modify-write (a scatter-add reading its values through a
      // permuted view took the wrong lanes: the op fuzzer's seed 2072); it costs nothing.
      case DType::F16: return b_.CreateFPExt(b_.CreateBitCast(b_.CreateFreeze(s), b_.getHalfTy()), b_.getFloatTy());
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

  // While a lane run's vector is combined (splat_ lanes), the machine's constants are vectors.
  unsigned splat_ = 0;
  Value* splat(llvm::Constant* c) {
    return splat_ == 0 ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(splat_), c);
  }

  Value* cast(Value* v, DType from, DType to) {
    if (from == to) return v;
    Type* rt = like(v, compute_type(to));  // a vector's conversion is one of vectors
    if (is_fp(from)) {
      if (is_fp(to)) {
        Value* w = v->getType() == rt                  ? v
                   : rt->getScalarType()->isDoubleTy() ? b_.CreateFPExt(v, rt)
                                                       : b_.CreateFPTrunc(v, rt);
        return round_to(to, w);
      }
      if (to == DType::Bool) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
      if (v->getType()->getScalarType()->isFloatTy() && tensor::dtype_size(to) <= 4) return float_to_int32(v, rt);
      // NaN and values beyond the i64 range give 0; the rest truncate toward 0 and wrap.
      Value* lim = llvm::ConstantFP::get(v->getType(), 9223372036854775808.0);
      Value* ok = b_.CreateAnd(b_.CreateFCmpOLT(v, lim), b_.CreateFCmpOGE(v, b_.CreateFNeg(lim)));
      Value* safe = b_.CreateSelect(ok, v, llvm::ConstantFP::get(v->getType(), 0.0));
      // The freeze keeps LLVM 14's vectorizers from narrowing the conversion by the bits the
      // truncation keeps: they turned fptosi + trunc to i8 into an invalid `trunc <N x float>`
      // that aborted the process in instruction selection (the op fuzzer's seed 507). It costs
      // nothing: the conversion still vectorizes.
      Value* i = b_.CreateFreeze(b_.CreateFPToSI(safe, like(v, b_.getInt64Ty())));
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

  // A float's (or vector of floats') conversion to an integer type of at most 32 bits, rt, with
  // the semantics of the one through i64 (truncated toward 0, wrapped; 0 for NaN and beyond
  // i64's range) computed in 32-bit lanes, so that it vectorizes where a conversion to i64 does
  // not (AVX2 has vcvttps2dq, but no vcvttps2qq: LLVM 14 converted lane by lane). Below 2^31
  // in magnitude the i32 conversion is exact. Above, the float is its 24-bit mantissa M times
  // 2^s (s = exponent - 23, from 8 on), whose low 32 bits are M << s (0 once s passes 31,
  // which covers 2^63 and beyond, infinities and NaN), negated in 32 bits for a negative one.
  Value* float_to_int32(Value* v, Type* rt) {
    Type* i32 = like(v, b_.getInt32Ty());
    auto c32 = [&](std::uint32_t x) { return llvm::ConstantInt::get(i32, x); };
    Value* magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    Value* small = b_.CreateFCmpOLT(magnitude, llvm::ConstantFP::get(v->getType(), 2147483648.0));
    Value* safe = b_.CreateSelect(small, v, llvm::ConstantFP::get(v->getType(), 0.0));
    Value* exact = b_.CreateFPToSI(safe, i32);
    Value* bits = b_.CreateBitCast(v, i32);
    Value* mantissa = b_.CreateOr(b_.CreateAnd(bits, c32(0x7fffff)), c32(0x800000));
    Value* shift = b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, c32(23)), c32(0xff)), c32(150));
    Value* low =
        b_.CreateSelect(b_.CreateICmpULT(shift, c32(32)), b_.CreateShl(mantissa, b_.CreateAnd(shift, c32(31))), c32(0));
    Value* negative = b_.CreateICmpSLT(bits, c32(0));
    Value* wrapped = b_.CreateSelect(negative, b_.CreateNeg(low), low);
    // The freeze: see cast (LLVM 14's vectorizers narrowed a conversion by a later truncation).
    Value* i = b_.CreateFreeze(b_.CreateSelect(small, exact, wrapped));
    return b_.CreateTrunc(i, rt);
  }

  // The bits of a value of type t as an integer of its size (f32 and f64 also as vectors).
  Value* bits_of(DType t, Value* v) {
    switch (t) {
      case DType::F32: return b_.CreateBitCast(v, like(v, b_.getInt32Ty()));
      case DType::F64: return b_.CreateBitCast(v, like(v, b_.getInt64Ty()));
      default: return to_storage(t, v);
    }
  }

  Value* from_bits(DType t, Value* bits) {
    switch (t) {
      case DType::F32: return b_.CreateBitCast(bits, like(bits, b_.getFloatTy()));
      case DType::F64: return b_.CreateBitCast(bits, like(bits, b_.getDoubleTy()));
      default: return from_storage(t, bits);
    }
  }

  // Scalar type `t`, or a vector of t as long as v's when v is a vector.
  static Type* like(Value* v, Type* t) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
      return llvm::FixedVectorType::get(t, vt->getNumElements());
    return t;
  }

  // The machine of tensor/semantics.h whose values are LLVM IR: the elementwise ops are
  // emitted from their one definition there. Float values are in compute_type (f16 and bf16
  // in f32; round() brings them back to their precision).
  struct Machine {
    Emitter& e;
    using V = Value*;
    llvm::IRBuilder<>& b() { return e.b_; }
    V int_const(std::int64_t v, DType t) {
      return e.splat(llvm::ConstantInt::get(e.compute_type(t), static_cast<std::uint64_t>(v), is_signed_int(t)));
    }
    V float_const(double v, DType t) { return e.splat(llvm::ConstantFP::get(e.compute_type(t), v)); }
    V neg(V a, DType t) { return is_fp(t) ? b().CreateFNeg(a) : b().CreateNeg(a); }
    V add(V a, V c, DType t) { return is_fp(t) ? b().CreateFAdd(a, c) : b().CreateAdd(a, c); }
    V mul(V a, V c, DType t) { return is_fp(t) ? b().CreateFMul(a, c) : b().CreateMul(a, c); }
    V div(V a, V c, DType t) {
      if (is_fp(t)) return b().CreateFDiv(a, c);
      return is_signed_int(t) ? b().CreateSDiv(a, c) : b().CreateUDiv(a, c);
    }
    V rem(V a, V c, DType t) { return is_signed_int(t) ? b().CreateSRem(a, c) : b().CreateURem(a, c); }
    V bit_and(V a, V c, DType) { return b().CreateAnd(a, c); }
    V bit_or(V a, V c, DType) { return b().CreateOr(a, c); }
    V bit_xor(V a, V c, DType) { return b().CreateXor(a, c); }
    V lt(V a, V c, DType t) {
      if (is_fp(t)) return b().CreateFCmpOLT(a, c);
      return is_signed_int(t) ? b().CreateICmpSLT(a, c) : b().CreateICmpULT(a, c);
    }
    V eq(V a, V c, DType t) { return is_fp(t) ? b().CreateFCmpOEQ(a, c) : b().CreateICmpEQ(a, c); }
    V unordered(V a, V c, DType) { return b().CreateFCmpUNO(a, c); }
    V select(V cond, V a, V c) { return b().CreateSelect(cond, a, c); }
    V sqrt(V a, DType) { return math::call_intrinsic(b(), llvm::Intrinsic::sqrt, a); }
    V exp2(V a, DType) { return e.target_.math(b(), MathFn::Exp2, a); }
    V log2(V a, DType) { return e.target_.math(b(), MathFn::Log2, a); }
    V sin(V a, DType) { return e.target_.math(b(), MathFn::Sin, a); }
    V cos(V a, DType) { return e.target_.math(b(), MathFn::Cos, a); }
    V round(V a, DType t) { return e.round_to(t, a); }
    V cast(V a, DType from, DType to) { return e.cast(a, from, to); }
    V bitcast(V a, DType from, DType to) { return e.from_bits(to, e.bits_of(from, a)); }
  };

  // Elementwise primitive `op` on values `x` of dtype `operand`, giving dtype `result`.
  Value* elementwise(tensor::Op op, DType operand, DType result, std::span<Value* const> x) {
    Machine m{*this};
    return tensor::elementwise(m, op, operand, result, x);
  }

  // --- expressions ---------------------------------------------------------------------------

  // The composite exp (and sigmoid, softmax, ... through it) of a narrower float x computes
  // cast(exp2(c * cast(x, f64)), T) for accuracy (stdlib %tensor-exp). That is emitted as 2^(c x)
  // in f32 arithmetic with the product carried in two floats (math::exp2_product_f32), within
  // an ulp of the f64 form in f32, so the f64 chain is never built: twice the vector width and
  // a shorter polynomial. Null for any other expression.
  Value* narrow_exp(const Expr& e) {
    const bool narrow = e.dtype == DType::F32 || e.dtype == DType::F16 || e.dtype == DType::BF16;
    if (e.op != EOp::Cast || !narrow) return nullptr;
    const Expr& exp2 = k_.expr(e.src[0]);
    if (exp2.op != EOp::Exp2 || exp2.dtype != DType::F64) return nullptr;
    const Expr& mul = k_.expr(exp2.src[0]);
    if (mul.op != EOp::Mul) return nullptr;
    for (int side = 0; side < 2; ++side) {
      const Expr& c = k_.expr(mul.src[side]);
      const Expr& widen = k_.expr(mul.src[1 - side]);
      if (c.op != EOp::Const || widen.op != EOp::Cast || k_.expr(widen.src[0]).dtype != e.dtype) continue;
      Value* r = math::exp2_product_f32(b_, value(widen.src[0]), c.fval);
      return e.dtype == DType::F32 ? r : round_to(e.dtype, r);
    }
    return nullptr;
  }

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

  // Whether e is a lane run's accumulator, or a float sum of such: the tree that adds a lanes
  // block's lanes into its total. The accumulators it reads are appended to `leaves`.
  bool lane_sum(ExprId id, std::vector<std::int32_t>& leaves) const {
    const Expr& e = k_.expr(id);
    if (e.op == EOp::AccRead && acc_run_[static_cast<std::size_t>(e.arg)] >= 0) {
      leaves.push_back(e.arg);
      return true;
    }
    return e.op == EOp::Add && is_fp(e.dtype) && lane_sum(e.src[0], leaves) && lane_sum(e.src[1], leaves);
  }

  // A float sum of whole lane runs, each lane once (the lanes opt's and qdot's total), as the
  // runs' vectors added and one vector reduction (reassoc: the opts regroup the sum already).
  // AVX2: 16 lanes in 8 instructions, where extracting each lane took 30, once per output of
  // a matrix-vector product. Null for any other expression.
  Value* lane_total(const Expr& e) {
    std::vector<std::int32_t> leaves;
    if (gpu_ || e.op != EOp::Add || !is_fp(e.dtype) || !lane_sum(e.src[0], leaves) || !lane_sum(e.src[1], leaves))
      return nullptr;
    std::map<std::int32_t, std::set<std::int32_t>> lanes;  // run -> its lanes read
    for (std::int32_t a : leaves) {
      const auto i = static_cast<std::size_t>(a);
      if (!lanes[acc_run_[i]].insert(acc_run_lane_[i]).second) return nullptr;
    }
    Value* sum = nullptr;
    for (const auto& [r, read] : lanes) {
      llvm::AllocaInst* a = runs_[static_cast<std::size_t>(r)].alloca;
      auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getAllocatedType());
      if (vt == nullptr || read.size() != vt->getNumElements()) return nullptr;
      if (sum != nullptr && sum->getType() != vt) return nullptr;
      Value* v = b_.CreateLoad(vt, a);
      if (sum == nullptr) {
        sum = v;
      } else {
        sum = b_.CreateFAdd(sum, v);
        llvm::cast<llvm::Instruction>(sum)->setHasAllowReassoc(true);
      }
    }
    if (sum == nullptr) return nullptr;
    auto* total = b_.CreateFAddReduce(float_const(e.dtype, -0.0), sum);
    total->setHasAllowReassoc(true);
    return total;
  }

  Value* compute(const Expr& e) {
    const DType t = e.dtype;
    if (Value* v = narrow_exp(e)) return v;
    if (Value* v = lane_total(e)) return v;
    if (auto op = primitive_of(e.op)) {
      const int n = tensor::op_info(*op).arity;
      Value* x[3] = {};
      for (int i = 0; i < n; ++i) x[i] = value(e.src[i]);
      const DType operand = k_.expr(e.src[e.op == EOp::Where ? 1 : 0]).dtype;
      return elementwise(*op, operand, t, std::span<Value* const>(x, static_cast<std::size_t>(n)));
    }
    switch (e.op) {
      case EOp::Const:
        if (is_fp(t)) return float_const(t, e.fval);
        return llvm::ConstantInt::get(compute_type(t), static_cast<std::uint64_t>(e.ival), is_signed_int(t));
      case EOp::LoopVar: return loop_vars_[static_cast<std::size_t>(e.arg)];
      case EOp::SymVar: return var_values_[static_cast<std::size_t>(e.arg)];
      case EOp::AccRead: {
        if (std::int32_t r = acc_run_[static_cast<std::size_t>(e.arg)]; r >= 0) {
          llvm::AllocaInst* a = runs_[static_cast<std::size_t>(r)].alloca;
          return b_.CreateExtractElement(b_.CreateLoad(a->getAllocatedType(), a),
                                         static_cast<std::uint64_t>(acc_run_lane_[static_cast<std::size_t>(e.arg)]));
        }
        if (std::int32_t g = acc_group_[static_cast<std::size_t>(e.arg)]; g >= 0) {
          llvm::AllocaInst* a = groups_[static_cast<std::size_t>(g)].alloca;
          return b_.CreateExtractElement(b_.CreateLoad(a->getAllocatedType(), a),
                                         static_cast<std::uint64_t>(acc_lane_[static_cast<std::size_t>(e.arg)]));
        }
        llvm::AllocaInst* a = accs_[static_cast<std::size_t>(e.arg)];
        return b_.CreateLoad(a->getAllocatedType(), a);
      }
      case EOp::Load: {
        if (e.ival == 1) return load_bytes(e, value(e.src[0]), compute_type(t));
        const BufferParam& bp = k_.buffers[static_cast<std::size_t>(e.arg)];
        Value* base = buffers_[static_cast<std::size_t>(e.arg)];
        Type* st = storage_type(e.dtype);
        // A load_as reads a quantized buffer's bytes as an array of its dtype.
        if (e.dtype != bp.dtype)
          base = b_.CreateBitCast(base, llvm::PointerType::get(st, base->getType()->getPointerAddressSpace()));
        Value* p = b_.CreateInBoundsGEP(st, base, value(e.src[0]));
        llvm::LoadInst* load = b_.CreateLoad(st, p);
        // An input is never written while the kernel runs (the executors never pass a kernel's
        // output buffer as one of its inputs): its loads may move out of loops (a gather's
        // index out of the row it copies) and, on a GPU, go through the read-only cache.
        if (!bp.output && bp.local_elems == 0) load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
        return from_storage(t, load);
      }
      case EOp::Dot4: return target_.dot4(b_, value(e.src[2]), value(e.src[0]), value(e.src[1]), e.ival, e.arg);
      case EOp::Min: {
        Value* a = value(e.src[0]);
        Value* b = value(e.src[1]);
        const bool sgn = is_signed_int(k_.expr(e.src[0]).dtype);
        return b_.CreateSelect(sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
      }
#define OP(e, name, arity, group, work, dtypes, doc) TL_IF_ELEMENTWISE_##group(case EOp::e:)
#include "tensor/ops.def"
#undef OP
        break;  // computed above
    }
    TL_UNREACHABLE(std::string("llvm emit: unhandled op ") + eop_name(e.op));
  }

  // --- statements ----------------------------------------------------------------------------

  void body(const std::vector<Stmt>& stmts) {
    for (std::size_t i = 0; i < stmts.size(); ++i) {
      const Stmt& s = stmts[i];
      switch (s.kind) {
        case Stmt::Kind::Loop: loop(s); break;
        case Stmt::Kind::Store: {
          // A run of stores under one mask (a register tile's row) shares one branch.
          std::size_t end = i + 1;
          while (s.mask >= 0 && end < stmts.size() && stmts[end].kind == Stmt::Kind::Store &&
                 stmts[end].mask == s.mask) {
            ++end;
          }
          std::vector<std::pair<Value*, Value*>> stores;  // value, pointer
          for (std::size_t j = i; j < end; ++j) {
            const Stmt& st = stmts[j];
            DType t = k_.buffers[static_cast<std::size_t>(st.buffer)].dtype;
            Value* base = buffers_[static_cast<std::size_t>(st.buffer)];
            Value* p = b_.CreateInBoundsGEP(storage_type(t), base, value(st.index));
            stores.emplace_back(to_storage(t, value(st.value)), p);
          }
          Value* when = nullptr;
          if (s.mask >= 0) {
            Value* m = value(s.mask);
            when = b_.CreateICmpNE(m, llvm::ConstantInt::get(m->getType(), 0));
          }
          if (k_.group > 0 && group_loops_ == 0) {
            // Outside the group's loops every thread has the value: thread 0 stores it.
            Value* first = b_.CreateICmpEQ(lane_, b_.getInt64(0));
            when = when ? b_.CreateAnd(when, first) : first;
          }
          auto store_all = [&] {
            for (auto [v, p] : stores) b_.CreateStore(v, p);
          };
          if (when) {
            if_then(when, store_all);
          } else {
            store_all();
          }
          i = end - 1;
          break;
        }
        case Stmt::Kind::GroupCombine: group_combine(s); break;
        case Stmt::Kind::AccDef: {
          if (std::int32_t r = acc_run_[static_cast<std::size_t>(s.acc)]; r >= 0) {
            // The lanes are defined together, before their block: the vector at lane 0's.
            if (acc_run_lane_[static_cast<std::size_t>(s.acc)] != 0) break;
            LaneRun& run = runs_[static_cast<std::size_t>(r)];
            llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
            run.alloca = eb.CreateAlloca(run_type(run), nullptr, "lanes" + std::to_string(r));
            Value* init = b_.CreateVectorSplat(static_cast<unsigned>(run.accs.size()), value(s.value));
            for (std::size_t lane = 1; lane < run.accs.size(); ++lane) {
              const ExprId v = acc_init_.at(run.accs[lane]);
              if (v != s.value) init = b_.CreateInsertElement(init, value(v), std::uint64_t{lane});
            }
            b_.CreateStore(init, run.alloca);
            break;
          }
          if (std::int32_t g = acc_group_[static_cast<std::size_t>(s.acc)]; g >= 0) {
            if (acc_lane_[static_cast<std::size_t>(s.acc)] != 0) break;
            llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
            auto* vt = llvm::FixedVectorType::get(b_.getFloatTy(), vector_width());
            VecGroup& vg = groups_[static_cast<std::size_t>(g)];
            vg.alloca = eb.CreateAlloca(vt, nullptr, "tile" + std::to_string(g));
            // The lanes' initial values: one constant, or each its own (partial sums read back
            // from the output after a hoist).
            Value* init = b_.CreateVectorSplat(vector_width(), value(s.value));
            for (unsigned lane = 1; lane < vector_width(); ++lane) {
              const ExprId v = acc_init_.at(vg.accs[lane]);
              if (v != s.value) init = b_.CreateInsertElement(init, value(v), std::uint64_t{lane});
            }
            b_.CreateStore(init, vg.alloca);
            break;
          }
          llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
          auto* a = eb.CreateAlloca(compute_type(s.dtype), nullptr, "acc" + std::to_string(s.acc));
          accs_[static_cast<std::size_t>(s.acc)] = a;
          b_.CreateStore(value(s.value), a);
          break;
        }
        case Stmt::Kind::AccUpdate: {
          if (auto first = run_first_.find(&s); first != run_first_.end()) {
            update_run(runs_[static_cast<std::size_t>(first->second)]);
            break;
          }
          if (run_rest_.count(&s)) break;
          if (std::int32_t r = acc_run_[static_cast<std::size_t>(s.acc)]; r >= 0) {
            // One lane updated alone (the lanes block's tail loop adds into lane 0).
            llvm::AllocaInst* a = runs_[static_cast<std::size_t>(r)].alloca;
            const auto lane = static_cast<std::uint64_t>(acc_run_lane_[static_cast<std::size_t>(s.acc)]);
            Value* vec = b_.CreateLoad(a->getAllocatedType(), a);
            Value* cur = b_.CreateExtractElement(vec, lane);
            b_.CreateStore(b_.CreateInsertElement(vec, combine(s.reduce, s.dtype, cur, value(s.value)), lane), a);
            break;
          }
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
        case Stmt::Kind::AccSet: {
          // Never in a lane run or a register tile (those hold accumulators that only combine).
          llvm::AllocaInst* a = accs_[static_cast<std::size_t>(s.acc)];
          b_.CreateStore(value(s.value), a);
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
      case ReduceKind::Max: {
        Value* x[2] = {cur, v};
        return elementwise(tensor::Op::Max, t, t, x);
      }
    }
    TL_UNREACHABLE("llvm emit: unknown reduce");
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
    TL_UNREACHABLE("llvm emit: unknown reduce");
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
    if (target_.has_shuffles()) {
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
    llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, stop), bodybb, exit);
    if (s.lanes) latch->setMetadata(llvm::LLVMContext::MD_loop, no_vectorize_loop());
    b_.SetInsertPoint(exit);
  }

  // Loop metadata that keeps the loop vectorizer (and interleaving) off a loop; SLP still
  // vectorizes its body.
  llvm::MDNode* no_vectorize_loop() {
    auto flag = [&](const char* name, int v) {
      return llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name),
                                      llvm::ConstantAsMetadata::get(b_.getInt32(v))});
    };
    llvm::MDNode* md = llvm::MDNode::getDistinct(
        ctx_, {nullptr, flag("llvm.loop.vectorize.width", 1), flag("llvm.loop.interleave.count", 1)});
    md->replaceOperandWith(0, md);
    return md;
  }

  // On a GPU, the thread loops (gpu_thread_loops) take their variables from the thread's
  // flattened iteration, the innermost varying fastest; their body runs once per thread.
  void thread_iteration(const Stmt& s) {
    std::vector<const Stmt*> chain = gpu_thread_loops(k_);
    if (chain.empty() || chain[0] != &s) TL_UNREACHABLE("llvm emit: a parallel loop that is not the kernel's thread loop");
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

}  // namespace

std::unique_ptr<llvm::Module> emit_module(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                          const std::string& entry, const EmitTarget& target) {
  auto m = std::make_unique<llvm::Module>(entry, ctx);
  m->setDataLayout(tm.createDataLayout());
  m->setTargetTriple(tm.getTargetTriple().str());
  Emitter(ctx, *m, k, target).emit(entry);
  std::string verify_errors;
  llvm::raw_string_ostream verify_os(verify_errors);
  if (llvm::verifyModule(*m, &verify_os)) {
    TL_UNREACHABLE("llvm emit produced invalid IR for " + entry + ": " + verify_os.str());
  }
  return m;
}

const char* emitter_build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace tl::codegen
