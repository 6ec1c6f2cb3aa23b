// SPDX-License-Identifier: Apache-2.0
// The host CPU target (x86 and whatever else LLVM's ORC JIT detects): kernels with the CPU
// entry point, no threads of their own (the backend splits the parallel loop), math inline
// where libm would be a scalar call; and CpuCodegen, which compiles them to object files.
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

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
// VNNI), and on 256- and 128-bit ones (with AVX-512 VL, or AVX-VNNI's VEX form); without them,
// vpmaddubsw (the products of unsigned and signed bytes, added in pairs into 16 bits with
// saturation) on 512 (AVX-512 BW), 256 (AVX2) and 128 bits (SSSE3).
struct DotInstructions {
  bool zmm = false;
  bool ymm = false;
  bool pairs_zmm = false;
  bool pairs_ymm = false;
  bool pairs_xmm = false;
  bool any() const { return zmm || ymm || pairs_ymm; }
};
DotInstructions dot_instructions(const llvm::TargetMachine& tm) {
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  DotInstructions d;
  if (sti == nullptr) return d;
  d.zmm = sti->checkFeatures("+avx512vnni");
  d.ymm = (d.zmm && sti->checkFeatures("+avx512vl")) || sti->checkFeatures("+avxvnni");
  d.pairs_zmm = sti->checkFeatures("+avx512bw");
  d.pairs_ymm = sti->checkFeatures("+avx2");
  d.pairs_xmm = sti->checkFeatures("+ssse3");
  return d;
}

// acc + Dot4 of vectors of i32 lanes a (unsigned bytes, none above a_max) and s (signed bytes)
// by vpmaddubsw and vpmaddwd, for a CPU without vpdpbusd (AVX2: Zen 3, Haswell to Alder Lake's
// cores without AVX-VNNI), or nullptr when it has no such instructions for vectors of N lanes.
// vpmaddubsw adds the products of two byte pairs into 16 bits, saturating: exact when a's bytes
// are at most 128 (each pair's sum in [2 * 128 * -128, 2 * 128 * 127], within i16), as nibbles,
// the splats of a correction and the unsigned side of most quantized formats are. Then
// vpmaddwd with ones adds the two pairs of each lane into 32 bits. Larger bytes are split into
// their nibbles, whose pair sums (16 * hi + lo, each at most 15) are added by vpmaddwd with 16
// and 1: twice the instructions, still exact.
Value* dot4_by_pairs(llvm::IRBuilder<>& b, Value* acc, Value* a, Value* s, std::int64_t a_max,
                     const DotInstructions& dot) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
  if (vt == nullptr) return nullptr;
  const unsigned n = vt->getNumElements();
  llvm::Module* m = b.GetInsertBlock()->getModule();
  llvm::Intrinsic::ID pairs = llvm::Intrinsic::not_intrinsic, words = llvm::Intrinsic::not_intrinsic;
  if (n == 16 && dot.pairs_zmm) {
    pairs = llvm::Intrinsic::x86_avx512_pmaddubs_w_512;
    words = llvm::Intrinsic::x86_avx512_pmaddw_d_512;
  } else if (n == 8 && dot.pairs_ymm) {
    pairs = llvm::Intrinsic::x86_avx2_pmadd_ub_sw;
    words = llvm::Intrinsic::x86_avx2_pmadd_wd;
  } else if (n == 4 && dot.pairs_xmm) {
    pairs = llvm::Intrinsic::x86_ssse3_pmadd_ub_sw_128;
    words = llvm::Intrinsic::x86_sse2_pmadd_wd;
  } else {
    return nullptr;
  }
  auto* bytes = llvm::FixedVectorType::get(b.getInt8Ty(), 4 * n);
  auto* shorts = llvm::FixedVectorType::get(b.getInt16Ty(), 2 * n);
  llvm::Function* pair_fn = llvm::Intrinsic::getDeclaration(m, pairs);
  llvm::Function* word_fn = llvm::Intrinsic::getDeclaration(m, words);
  Value* sb = b.CreateBitCast(s, bytes);
  auto pair_sums = [&](Value* u) { return b.CreateCall(pair_fn, {b.CreateBitCast(u, bytes), sb}); };
  auto widen = [&](Value* p, std::uint64_t times) {
    return b.CreateCall(word_fn, {p, llvm::ConstantInt::get(shorts, times)});
  };
  if (a_max <= 128) return b.CreateAdd(acc, widen(pair_sums(a), 1));
  Value* nibbles = llvm::ConstantInt::get(vt, 0x0f0f0f0f);
  Value* low = widen(pair_sums(b.CreateAnd(a, nibbles)), 1);
  Value* high = widen(pair_sums(b.CreateAnd(b.CreateLShr(a, llvm::ConstantInt::get(vt, 4)), nibbles)), 16);
  return b.CreateAdd(acc, b.CreateAdd(high, low));
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

  Value* dot4(llvm::IRBuilder<>& b, Value* acc, Value* a, Value* s, std::int64_t a_max,
              std::int32_t flags) const override {
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
    const unsigned n = vt == nullptr ? 0 : vt->getNumElements();
    if (n == 16 && !dot_.zmm && !dot_.pairs_zmm && (dot_.ymm || dot_.pairs_ymm)) {
      // Two 256-bit halves (AVX2 lowers a 512-bit vector into them anyway, but not intrinsics).
      auto half = [&](Value* v, unsigned h) {
        llvm::SmallVector<int, 8> idx;
        for (unsigned i = 0; i < 8; ++i) idx.push_back(static_cast<int>(8 * h + i));
        return b.CreateShuffleVector(v, idx);
      };
      Value* lo = dot4(b, half(acc, 0), half(a, 0), half(s, 0), a_max, flags);
      Value* hi = dot4(b, half(acc, 1), half(a, 1), half(s, 1), a_max, flags);
      llvm::SmallVector<int, 16> idx;
      for (unsigned i = 0; i < 16; ++i) idx.push_back(static_cast<int>(i));
      return b.CreateShuffleVector(lo, hi, idx);
    }
    // a's sign onto s by vpsignb where there is one (AVX2, SSSE3; not in AVX-512).
    auto sign = [&](llvm::IRBuilder<>& ib, Value* sb, Value* ab) -> Value* {
      const unsigned width = llvm::cast<llvm::FixedVectorType>(sb->getType())->getNumElements();
      llvm::Intrinsic::ID psign = llvm::Intrinsic::not_intrinsic;
      if (width == 32 && dot_.pairs_ymm) psign = llvm::Intrinsic::x86_avx2_psign_b;
      if (width == 16 && dot_.pairs_xmm) psign = llvm::Intrinsic::x86_ssse3_psign_b_128;
      if (psign == llvm::Intrinsic::not_intrinsic) {
        auto* bt = llvm::cast<llvm::FixedVectorType>(sb->getType());
        return ib.CreateSelect(ib.CreateICmpSLT(ab, llvm::ConstantInt::get(bt, 0)), ib.CreateNeg(sb), sb);
      }
      return ib.CreateCall(llvm::Intrinsic::getDeclaration(ib.GetInsertBlock()->getModule(), psign), {sb, ab});
    };
    const Dot4Operands o = dot4_operands(b, a, s, a_max, flags, sign);
    a = o.a;
    s = o.s;
    a_max = o.a_max;
    llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
    if (n == 16 && dot_.zmm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    if (n == 8 && dot_.ymm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    if (n == 4 && dot_.ymm) id = llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    if (id == llvm::Intrinsic::not_intrinsic) {
      if (Value* v = dot4_by_pairs(b, acc, a, s, a_max, dot_)) return v;
      return dot4_bytes(b, acc, a, s);
    }
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
    it = known.emplace(cpu, d.any()).first;
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
// and CSE to clean up after them (and alignment-from-assumptions, for the stores of streaming
// kernels: see below; nothing in other kernels assumes an alignment). Measured on bench/tensor/jit.lisp's 46 kernels
// (one AVX-512 thread): 2.5x less optimizer time than O3 (a 6 x 64 matmul tile kernel 190-340 ms -> 52-56 ms), code
// generation time unchanged, every kernel as fast or faster.
const char* const kCpuPasses =
    "function(sroa,early-cse<memssa>,simplifycfg,loop-mssa(loop-rotate,licm),loop-simplify,lcssa,loop-vectorize,"
    "slp-vectorizer,instcombine,alignment-from-assumptions,early-cse,simplifycfg)";

namespace {

// --- streaming stores --------------------------------------------------------------------------
//
// A kernel that writes a large output (kStreamBytes or more: past the caches, which it would
// only fill with data read again from memory anyway) stores its vectors with non-temporal
// stores: they go to memory without the read of each cache line that an ordinary store makes
// first, so a pass that reads 64 MB and writes 64 MB moves 128 MB instead of 192 (one AVX-512
// thread: 12.3 -> 7.5 ms). Such stores need vectors aligned to their size, and a kernel's range
// [begin, end) of iterations starts anywhere (the backend's chunks), so the entry is versioned:
//   entry(buffers, vars, begin, end):
//     if the output's base is not 64-byte aligned: entry.body(begin, end)
//     a = the first iteration >= begin whose element is 64-byte aligned
//     entry.body(begin, min(a, end)); if a < end: entry.aligned(a, end), sfence
// entry.aligned is entry.body with two assumptions, both true by construction: the output's
// base is 64-byte aligned, and so is its element `a`, a multiple of 64 / element size. After
// optimization, the vector stores of entry.aligned into the output that the assumptions prove
// aligned become non-temporal (a flattened elementwise kernel's, whose element is its
// iteration; a row kernel's, when a row's bytes are a multiple of 64). Nothing else changes:
// the versions compute the same.
constexpr std::int64_t kStreamBytes = std::int64_t{16} << 20;

// Elements that the stores under `body` write to buffer `slot`: the most iterations of the
// loops around one, their constant extents multiplied (`outer` those of the loops around
// body); -1 when an extent is not constant.
std::int64_t stored_elements(const Kernel& k, const std::vector<Stmt>& body, int slot, std::int64_t outer) {
  std::int64_t most = 0;
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::Store && s.buffer == slot) most = std::max(most, outer);
    if (s.kind != Stmt::Kind::Loop) continue;
    const std::optional<std::int64_t> n = k.as_const(s.extent);
    if (!n || *n <= 0 || outer > (std::int64_t{1} << 50) / *n) return -1;
    const std::int64_t inner = stored_elements(k, s.body, slot, outer * *n);
    if (inner < 0) return -1;
    most = std::max(most, inner);
  }
  return most;
}

// The output slot whose stores write kStreamBytes or more (elements of 2, 4 or 8 bytes) and
// that the kernel does not read, or -1.
int streamed_output(const Kernel& k) {
  for (std::size_t slot = 0; slot < k.buffers.size(); ++slot) {
    const BufferParam& b = k.buffers[slot];
    const std::size_t size = tensor::dtype_size(b.dtype);
    if (!b.output || b.local_elems > 0 || tensor::dtype_block(b.dtype) != 1 || (size != 2 && size != 4 && size != 8)) {
      continue;
    }
    // Not an output the kernel reads back (partial sums kept in it): streaming would send
    // each to memory just before it is read again.
    bool read = false;
    for (std::size_t e = 0; e < k.expr_count(); ++e) {
      const Expr& x = k.expr(static_cast<ExprId>(e));
      read = read || (x.op == EOp::Load && x.arg == static_cast<std::int32_t>(slot));
    }
    if (read) continue;
    const std::int64_t elements = stored_elements(k, k.body, static_cast<int>(slot), 1);
    if (elements > 0 && elements * static_cast<std::int64_t>(size) >= kStreamBytes) return static_cast<int>(slot);
  }
  return -1;
}

// The pointer to buffer `slot`, loaded from the entry's buffers argument at b's insertion point.
llvm::Value* buffer_base(llvm::IRBuilder<>& b, llvm::Function& f, int slot) {
  llvm::Type* i8p = b.getInt8PtrTy();
  Value* at = b.CreateConstInBoundsGEP1_64(i8p, f.getArg(0), static_cast<std::uint64_t>(slot));
  return b.CreateLoad(i8p, at);
}

// Versions `entry` as the comment above says, for output `slot` of `size`-byte elements.
void version_for_streaming(llvm::Module& m, const std::string& entry, int slot, std::size_t size) {
  llvm::Function* body = m.getFunction(entry);
  body->setName(entry + ".body");
  body->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::ValueToValueMapTy map;
  llvm::Function* aligned = llvm::CloneFunction(body, map);
  aligned->setName(entry + ".aligned");
  const llvm::DataLayout& dl = m.getDataLayout();
  {
    llvm::IRBuilder<> b(&*aligned->getEntryBlock().getFirstInsertionPt());
    b.CreateAlignmentAssumption(dl, buffer_base(b, *aligned, slot), 64);
    // `begin` is a multiple of 64 / size there: said by masking it (which SCEV understands).
    llvm::Argument* begin = aligned->getArg(2);
    auto* masked = llvm::cast<llvm::Instruction>(b.CreateAnd(begin, b.getInt64(-static_cast<std::int64_t>(64 / size))));
    begin->replaceUsesWithIf(masked, [&](llvm::Use& u) { return u.getUser() != masked; });
  }
  llvm::Function* f = llvm::Function::Create(body->getFunctionType(), llvm::GlobalValue::ExternalLinkage, entry, m);
  for (unsigned i = 0; i < f->arg_size(); ++i) f->getArg(i)->setName(body->getArg(i)->getName());
  f->setAttributes(body->getAttributes());
  llvm::LLVMContext& ctx = m.getContext();
  auto* start = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* plain = llvm::BasicBlock::Create(ctx, "unaligned", f);
  auto* split = llvm::BasicBlock::Create(ctx, "split", f);
  llvm::IRBuilder<> b(start);
  std::vector<Value*> args;
  for (llvm::Argument& a : f->args()) args.push_back(&a);
  Value* begin = f->getArg(2);
  Value* end = f->getArg(3);
  Value* address = b.CreatePtrToInt(buffer_base(b, *f, slot), b.getInt64Ty());
  b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(address, b.getInt64(63)), b.getInt64(0)), split, plain);
  b.SetInsertPoint(plain);
  b.CreateCall(body, args);
  b.CreateRetVoid();
  b.SetInsertPoint(split);
  // The element at `begin` is `gap` bytes short of the next 64-byte boundary: the iterations
  // before it go to the plain body.
  Value* first = b.CreateAdd(address, b.CreateMul(begin, b.getInt64(size)));
  Value* gap = b.CreateAnd(b.CreateNeg(first), b.getInt64(63));
  Value* a = b.CreateAdd(begin, b.CreateUDiv(gap, b.getInt64(size)));
  auto* rest = llvm::BasicBlock::Create(ctx, "aligned", f);
  auto* done = llvm::BasicBlock::Create(ctx, "done", f);
  Value* some_aligned = b.CreateICmpSLT(a, end);
  args[3] = b.CreateSelect(some_aligned, a, end);
  b.CreateCall(body, args);
  // Only a nonempty range: entry.aligned's begin is rounded down to its multiple.
  b.CreateCondBr(some_aligned, rest, done);
  b.SetInsertPoint(rest);
  args[2] = a;
  args[3] = end;
  b.CreateCall(aligned, args);
  // Non-temporal stores are weakly ordered: fenced before the launch's end makes the output
  // another thread's to read.
  b.CreateCall(llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::x86_sse_sfence));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

// After optimization: entry.aligned's vector stores into output `slot` that are aligned to
// their size become non-temporal.
void mark_streaming_stores(llvm::Module& m, const std::string& entry, int slot) {
  llvm::Function* aligned = m.getFunction(entry + ".aligned");
  if (aligned == nullptr) return;
  const llvm::DataLayout& dl = m.getDataLayout();
  llvm::MDNode* nontemporal =
      llvm::MDNode::get(m.getContext(), llvm::ConstantAsMetadata::get(
                                            llvm::ConstantInt::get(llvm::Type::getInt32Ty(m.getContext()), 1)));
  for (llvm::BasicBlock& block : *aligned) {
    for (llvm::Instruction& inst : block) {
      auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
      if (store == nullptr || !store->getValueOperand()->getType()->isVectorTy()) continue;
      const std::uint64_t bytes = dl.getTypeStoreSize(store->getValueOperand()->getType()).getFixedSize();
      if (store->getAlign().value() < bytes) continue;
      // Into the output: the pointer is based on the load of buffers[slot].
      auto* load = llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(store->getPointerOperand(), 16));
      if (load == nullptr) continue;
      Value* from = load->getPointerOperand()->stripPointerCasts();
      std::int64_t at = 0;
      if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(from)) {
        auto* index = gep->getNumIndices() == 1 ? llvm::dyn_cast<llvm::ConstantInt>(gep->getOperand(1)) : nullptr;
        if (index == nullptr) continue;
        at = index->getSExtValue();
        from = gep->getPointerOperand()->stripPointerCasts();
      }
      if (from != aligned->getArg(0) || at != slot) continue;
      store->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
    }
  }
}

}  // namespace

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
  const int stream = tm->getTargetTriple().isX86() ? streamed_output(k) : -1;
  if (stream >= 0) {
    version_for_streaming(*m, entry, stream, tensor::dtype_size(k.buffers[static_cast<std::size_t>(stream)].dtype));
  }
  return optimize_and_emit(*m, *tm, llvm::PipelineTuningOptions(), want_ir, llvm::CGFT_ObjectFile, kCpuPasses,
                           [&](llvm::Module& done) {
                             if (stream >= 0) mark_streaming_stores(done, entry, stream);
                           });
}

}  // namespace tl::codegen
