// SPDX-License-Identifier: Apache-2.0
// The loop IR: one kernel as loops, accumulators, loads, stores and scalar arithmetic.
//
// Expressions live in the kernel's arena, hash-consed (equal expressions are one id) and
// simplified as they are built: constants fold, and integer index arithmetic is kept as
// linear forms over loop variables whose ranges are known, so that e.g. (i*4 + j) / 4 becomes
// i when 0 <= j < 4. Statements form a tree of loops. A kernel prints as text (str()) and that
// text, with the target, is its identity in the kernel caches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/dim.h"
#include "tensor/dtype.h"
#include "tensor/graph.h"

namespace tl::codegen {

using tensor::DType;
using tensor::ReduceKind;

enum class EOp : std::uint8_t {
  Const,    // ival (integers, bool) or fval (floats) in dtype
  LoopVar,  // arg: loop id; i64
  SymVar,   // arg: slot in Kernel::vars; i64
  Load,     // src[0]: element index (i64); arg: buffer slot; dtype: the buffer's (or, from a
            // quantized buffer, the type its bytes are read as: Kernel::load_as); ival 1: a
            // load_bytes, src[0] a byte offset (any alignment)
  AccRead,  // arg: accumulator id
// The elementwise primitives of ops.def (unary, binary, ternary), in its order, with the
// semantics of tensor/semantics.h. Operands of f16 and bf16 compute in f32 and round to
// their dtype after each op.
#define OP(e, name, arity, group, work, dtypes, doc) TL_IF_ELEMENTWISE_##group(e, )
#include "tensor/ops.def"
#undef OP
  Min,  // integer minimum: index arithmetic only (a pad's clamped index), not a primitive
  // i32: src[2] + the sum over the four bytes t of src[0] (u32) as unsigned times byte t of
  // src[1] (u32) as signed: one lane of x86's vpdpbusd, PTX's dp4a.u32.s32; ival: the largest
  // value src[0]'s bytes take (255 when nothing smaller is known), which lets a target without
  // such an instruction use one that saturates on larger products (x86's vpmaddubsw). arg:
  // Dot4Flags, which read src[0]'s bytes as signed too, or src[1]'s as max(byte, -127). Made by
  // the qdot pass (integer dot products of quantized blocks), not a primitive.
  Dot4,
};

const char* eop_name(EOp op);
// The primitive an elementwise EOp computes (none for Const, LoopVar, SymVar, Load, AccRead
// and Min), and the EOp of an elementwise primitive (none for the other ops).
std::optional<tensor::Op> primitive_of(EOp op);
std::optional<EOp> eop_of(tensor::Op op);

using ExprId = std::int32_t;

// How a Dot4 reads its words' bytes (Expr::arg, bits):
//  kDot4ClampB   src[1]'s bytes as max(byte, -127) (a quantized activation: never -128);
//  kDot4SignedA  src[0]'s bytes as signed (with kDot4ClampB only: a target moves a's sign onto
//                b's clamped bytes, whose negation is then a byte, and multiplies |a| as
//                unsigned bytes at most 128).
enum Dot4Flags : std::int32_t { kDot4ClampB = 1, kDot4SignedA = 2 };

struct Expr {
  EOp op;
  DType dtype;
  std::int32_t arg = 0;
  ExprId src[3] = {-1, -1, -1};
  std::int64_t ival = 0;
  double fval = 0;
};

struct Stmt {
  enum class Kind : std::uint8_t { Loop, Store, AccDef, AccUpdate, AccSet, GroupCombine };
  explicit Stmt(Kind k) : kind(k) {}
  Kind kind;
  // Loop: for var in [0, extent); `parallel` loops are split across threads (the outermost
  // only); body runs in order.
  std::int32_t var = 0;
  ExprId extent = -1;
  bool parallel = false;
  // In a kernel with thread groups (Kernel::group): this loop and the loops perfectly nested
  // in it (loop_nest) are one flattened range whose iterations are dealt out to the group's
  // threads, thread t taking t, t + group, ... Accumulators updated in it hold that thread's
  // part until a GroupCombine.
  bool group = false;
  // The body already works on several elements side by side (the block loop of a lanes opt,
  // printed "lanes"): the emitter keeps LLVM's loop vectorizer off the loop, which would
  // otherwise vectorize across its iterations with strided loads.
  bool lanes = false;
  std::vector<Stmt> body;
  // Store: buffers[buffer][index] = value; with a mask (a bool expression), only where it is
  // true (the rows of a ragged tile past the end of its loop).
  std::int32_t buffer = 0;
  ExprId index = -1;
  ExprId mask = -1;
  // Store value; AccDef initial value; AccUpdate operand; AccSet the accumulator's new value
  // (any expression, its own reads included: an online softmax's rescaled running sum).
  ExprId value = -1;
  // AccDef / AccUpdate / AccSet / GroupCombine: accumulator id, its dtype, and how it
  // combines (AccSet: not at all, it replaces the value; passes that split or reorder a
  // reduce's updates leave a kernel with an AccSet alone).
  // GroupCombine (kernels with thread groups): every thread of the group combines its part of
  // the accumulator with the others'; afterwards each holds the whole. All of the group's
  // threads reach it together (it is never inside a loop).
  std::int32_t acc = 0;
  DType dtype = DType::F32;
  ReduceKind reduce = ReduceKind::Sum;
};

struct BufferParam {
  DType dtype;
  bool output = false;
  // > 0: scratch memory of this many elements that the kernel allocates itself (per call,
  // so per thread); not passed at launch.
  std::int64_t local_elems = 0;
};

struct Range {
  std::int64_t lo = 0;
  std::optional<std::int64_t> hi;  // inclusive; none when unbounded
};

class Kernel {
 public:
  std::string name = "kernel";
  std::vector<BufferParam> buffers;   // slot 0 is the output
  std::vector<std::string> vars;      // symbolic dimensions, passed as i64 at launch
  std::vector<Stmt> body;
  // GPU: 0 when each iteration of the thread loops is one thread; else each is a group of this
  // many threads (a power of two from 32 to 1024: one block) that split its reduce loops
  // (Stmt::group) and combine their accumulators (GroupCombine). Stores outside group loops
  // are made by the group's thread 0.
  int group = 0;

  // Expression builders: they fold constants and simplify integer arithmetic.
  ExprId constant_int(std::int64_t v, DType t = DType::I64);
  ExprId constant_float(double v, DType t);
  ExprId constant_bool(bool v) { return constant_int(v ? 1 : 0, DType::Bool); }
  ExprId sym_var(const std::string& name);
  ExprId dim(const tensor::Dim& d);  // a Dim as an i64 expression over sym vars
  ExprId load(std::int32_t buffer, ExprId index);
  // A load of dtype T from a buffer of a quantized dtype (its bytes read as an array of T:
  // INDEX counts T's elements from the buffer's start), printed "load:T". Lowering builds a
  // quantized element's value from such loads of its block's scale and packed values.
  ExprId load_as(std::int32_t buffer, ExprId index, DType t);
  // A load of dtype T (an integer type) from the bytes of `buffer` at byte offset BYTE (of any
  // alignment: a word of packed values inside a quantized block), printed "load:T@byte".
  ExprId load_bytes(std::int32_t buffer, ExprId byte, DType t);
  // EOp::Dot4 of u32 words a and b, added to i32 c; a's bytes are at most A_MAX (1..255) as
  // unsigned; FLAGS: Dot4Flags (a signed needs b clamped; its bound is then 128, |a|'s).
  ExprId dot4(ExprId a, ExprId b, ExprId c, std::int64_t a_max = 255, std::int32_t flags = 0);
  ExprId acc_read(std::int32_t acc, DType t);
  ExprId unary(EOp op, ExprId a, DType result);  // Cast and Bitcast use `result`
  ExprId binary(EOp op, ExprId a, ExprId b);
  ExprId where(ExprId c, ExprId a, ExprId b);

  // A new loop over [0, extent): returns the statement (to fill and append) and its
  // variable as an expression.
  std::pair<Stmt, ExprId> make_loop(ExprId extent);
  // The expression of loop `loop`'s variable.
  ExprId loop_var(std::int32_t loop) const;
  std::int32_t new_acc() { return accs_++; }
  std::int32_t loop_count() const { return loops_; }
  std::int32_t acc_count() const { return accs_; }

  const Expr& expr(ExprId id) const { return exprs_[static_cast<std::size_t>(id)]; }
  std::size_t expr_count() const { return exprs_.size(); }
  // The range of an integer expression, from the loop extents.
  Range range(ExprId id) const;
  std::optional<std::int64_t> as_const(ExprId id) const;
  // The coefficient of loop variable `var` in integer expression `index` (0 when absent), or
  // none when var occurs other than linearly (inside a division, say).
  std::optional<std::int64_t> coefficient(ExprId index, ExprId var) const;
  // b - a when it is a constant (both integer index expressions).
  std::optional<std::int64_t> constant_difference(ExprId a, ExprId b) const;

  // Calls fn(id, expr) once for each expression reachable from roots (negative ids are
  // skipped); fn returns whether to go on into that expression's sources.
  template <class F>
  void visit(std::vector<ExprId> roots, F&& fn) const {
    std::vector<char> seen(exprs_.size(), 0);
    while (!roots.empty()) {
      ExprId e = roots.back();
      roots.pop_back();
      if (e < 0 || seen[static_cast<std::size_t>(e)]) continue;
      seen[static_cast<std::size_t>(e)] = 1;
      const Expr& x = expr(e);
      if (fn(e, x)) roots.insert(roots.end(), std::begin(x.src), std::end(x.src));
    }
  }

  std::string expr_str(ExprId id) const;
  // ":T" for a load_as of T, "" for a plain load.
  std::string load_suffix(const Expr& e) const;
  // "; bytes <= N" for a Dot4 with a bound, "; signed" and "; b >= -127" for its flags.
  static std::string dot4_bound(const Expr& e);
  std::string str() const;  // the whole kernel, as text (also its cache identity)

 private:
  std::vector<Expr> exprs_;
  struct ExprHash {
    std::size_t operator()(const Expr& e) const;
  };
  struct ExprEq {
    bool operator()(const Expr& a, const Expr& b) const;
  };
  std::unordered_map<Expr, ExprId, ExprHash, ExprEq> intern_;
  std::vector<ExprId> loop_extents_;  // per loop id
  std::vector<Range> ranges_;         // per expression, computed when built
  std::int32_t loops_ = 0;
  std::int32_t accs_ = 0;

  ExprId intern(const Expr& e);
  Range compute_range(const Expr& e) const;
  // Integer index arithmetic as a linear form: constant + sum of coeff * term.
  struct Linear {
    std::int64_t c = 0;
    std::vector<std::pair<ExprId, std::int64_t>> terms;  // sorted by id, no zero coefficients
  };
  Linear linear(ExprId id) const;
  ExprId from_linear(const Linear& l);
  ExprId raw_binary(EOp op, ExprId a, ExprId b, DType t);
  ExprId simplify_index_div_mod(EOp op, ExprId a, std::int64_t d);
  std::optional<ExprId> simplify_symbolic_div_mod(EOp op, ExprId a, ExprId d);
  Range linear_range(const Linear& l) const;
};

// How a kernel maps onto GPU threads: the outermost parallel loop and the loops nested
// perfectly inside it (each the only statement of its parent, with an extent that no loop
// variable changes) are flattened into one index, one thread per combined iteration, the
// innermost loop varying fastest. Empty when the kernel has no parallel loop (it then runs
// as one thread). An internal error (support/check.h) when a parallel loop shares the top
// level with other statements (CPU-only shapes, such as a packing loop before a tiled matmul).
std::vector<const Stmt*> gpu_thread_loops(const Kernel& k);
// The number of threads those loops make, as a shape dimension (1 when there are none);
// with thread groups, the number of groups.
tensor::Dim gpu_thread_count(const Kernel& k);
// Loop `top` and the loops perfectly nested in it: each the only statement of its parent,
// with an extent that no loop variable changes. The last one's body is the nest's body.
std::vector<const Stmt*> loop_nest(const Kernel& k, const Stmt& top);
// The product of loop extents as a shape dimension; an internal error when one is not
// a shape dimension.
tensor::Dim loop_extent(const Kernel& k, const std::vector<const Stmt*>& loops);

}  // namespace tl::codegen
