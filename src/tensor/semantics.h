// SPDX-License-Identifier: Apache-2.0
// What each elementwise primitive computes, written once. ops.def names the ops; this file
// says what they do to one element, in terms of a small set of machine operations. The same
// definition runs in three places: the reference executor and constant folding evaluate it on
// numbers (tensor::evaluate, below), and the code generator instantiates it with a machine whose
// values are LLVM IR. A new elementwise primitive is a line in ops.def and a case here.
//
// A machine M has a value type M::V and these operations. `t` is the operands' dtype; integer
// results wrap to t, float results are exact in t's computation type (f16 and bf16 compute in
// f32) until round(); comparisons give bool.
//   V int_const(std::int64_t v, DType t)    V float_const(double v, DType t)
//   V neg(V a, DType t)                     V add(V a, V b, DType t)      V mul(V a, V b, DType t)
//   V div(V a, V b, DType t)                V rem(V a, V b, DType t)
//       integers: truncating quotient and remainder (sign of a); never called with b = 0, nor with
//       b = -1 for a signed t; floats: div only, IEEE
//   V bit_and(V a, V b, DType t)            V bit_or(...)                 V bit_xor(...)
//   V lt(V a, V b, DType t)                 V eq(V a, V b, DType t)
//       signed or unsigned by t; floats: ordered (false when either is NaN)
//   V unordered(V a, V b, DType t)          true when a or b is NaN (floats only)
//   V select(V c, V a, V b)                 c ? a : b, c a bool
//   V sqrt(V a, DType t)   V exp2(V a, DType t)   V log2(V a, DType t)   V sin(V a, DType t)
//   V cos(V a, DType t)
//   V round(V a, DType t)                   a float rounded to t (f16, bf16: to their precision)
//   V cast(V a, DType from, DType to)       the conversion ops.def gives for cast
//   V bitcast(V a, DType from, DType to)    the same bits read as `to` (equal sizes)
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "support/check.h"
#include "tensor/dtype.h"
#include "tensor/graph.h"

namespace tl::tensor {

// Whether `op` is elementwise (unary, binary or ternary): the ops defined here.
constexpr bool is_elementwise(OpGroup g) { return g == OpGroup::Unary || g == OpGroup::Binary || g == OpGroup::Ternary; }

// The value of elementwise `op` on `x` (as many as its arity) whose dtype is `operand` (for
// where: the dtype of x[1] and x[2]; x[0] is the bool condition); `result` is the node's dtype
// (bool for comparisons, the target for casts).
template <class M>
typename M::V elementwise(M& m, Op op, DType operand, DType result, std::span<const typename M::V> x) {
  const DType t = operand;
  const bool fl = is_float(t);
  switch (op) {
    case Op::Neg: return m.neg(x[0], t);  // exact in every dtype
    case Op::Recip: return m.round(m.div(m.float_const(1.0, t), x[0], t), t);
    case Op::Sqrt: return m.round(m.sqrt(x[0], t), t);
    case Op::Exp2: return m.round(m.exp2(x[0], t), t);
    case Op::Log2: return m.round(m.log2(x[0], t), t);
    case Op::Sin: return m.round(m.sin(x[0], t), t);
    case Op::Cos: return m.round(m.cos(x[0], t), t);
    case Op::Cast: return m.cast(x[0], t, result);
    case Op::Bitcast: return m.bitcast(x[0], t, result);
    case Op::Add:
      if (t == DType::Bool) return m.bit_or(x[0], x[1], t);
      return fl ? m.round(m.add(x[0], x[1], t), t) : m.add(x[0], x[1], t);
    case Op::Mul:
      if (t == DType::Bool) return m.bit_and(x[0], x[1], t);
      return fl ? m.round(m.mul(x[0], x[1], t), t) : m.mul(x[0], x[1], t);
    case Op::Idiv:
    case Op::Mod: {
      // b = 0 gives 0 (idiv) or a (mod); b = -1 (signed) gives -a (wrapping) or 0: defined for
      // every input, so kernels never trap. The divisor the machine sees is never 0 or -1.
      const auto a = x[0], b = x[1];
      const auto zero = m.int_const(0, t);
      const auto one = m.int_const(1, t);
      const auto is_zero = m.eq(b, zero, t);
      const bool is_signed = dtype_category(t) == DCat::Signed;
      if (!is_signed) {
        const auto safe = m.select(is_zero, one, b);
        if (op == Op::Idiv) return m.select(is_zero, zero, m.div(a, safe, t));
        return m.select(is_zero, a, m.rem(a, safe, t));
      }
      const auto is_minus_one = m.eq(b, m.int_const(-1, t), t);
      const auto safe = m.select(m.bit_or(is_zero, is_minus_one, DType::Bool), one, b);
      if (op == Op::Idiv) {
        const auto q = m.div(a, safe, t);
        return m.select(is_zero, zero, m.select(is_minus_one, m.neg(a, t), q));
      }
      const auto r = m.rem(a, safe, t);
      return m.select(is_zero, a, m.select(is_minus_one, zero, r));
    }
    case Op::Max: {
      // Integers: the larger. Floats: IEEE 754-2019 maximum, NaN when either is NaN and +0 of
      // -0 and +0 in either order, so max is commutative and associative and a max reduce
      // gives one answer whatever its order of combining (threads, lanes, a GPU's group split).
      // The larger taken both ways round has the same bits both times except on a tie of
      // zeros, where their AND clears the sign unless both are -0 (two vector maxes and an
      // and on x86; f16 and bf16 values are exact in f32, their compute type).
      const auto larger = m.select(m.lt(x[1], x[0], t), x[0], x[1]);
      if (!fl) return larger;
      const auto other = m.select(m.lt(x[0], x[1], t), x[1], x[0]);
      const DType ft = t == DType::F64 ? DType::F64 : DType::F32;
      const DType it = t == DType::F64 ? DType::I64 : DType::I32;
      const auto both = m.bitcast(m.bit_and(m.bitcast(larger, ft, it), m.bitcast(other, ft, it), it), it, ft);
      return m.select(m.unordered(x[0], x[1], t), m.float_const(std::numeric_limits<double>::quiet_NaN(), t), both);
    }
    case Op::Cmplt: return m.lt(x[0], x[1], t);
    case Op::Cmpeq: return m.eq(x[0], x[1], t);
    case Op::And: return m.bit_and(x[0], x[1], t);
    case Op::Or: return m.bit_or(x[0], x[1], t);
    case Op::Xor: return m.bit_xor(x[0], x[1], t);
    case Op::Where: return m.select(x[0], x[1], x[2]);
    // Not elementwise: no value of their own per element.
    case Op::Const:
    case Op::Buffer:
    case Op::Iota:
    case Op::Reduce:
    case Op::Reshape:
    case Op::Permute:
    case Op::Expand:
    case Op::Pad:
    case Op::Shrink:
    case Op::Flip:
    case Op::Gather:
    case Op::ScatterAdd:
    case Op::Copy:
    case Op::Assign:
    case Op::Extern: break;
  }
  TL_UNREACHABLE(std::string("elementwise: ") + op_name(op) + " is not elementwise");
}

// A number as the evaluating machine holds it: `i` for bool and integer dtypes (wrapped to the
// dtype: unsigned values are zero-extended), `f` for floats (the dtype's value, in a double).
struct Scalar {
  std::int64_t i = 0;
  double f = 0;
};

// elementwise() on numbers: what the reference executor and constant folding compute.
Scalar evaluate(Op op, DType operand, DType result, std::span<const Scalar> x);

// The cast semantics on numbers (ops.def): float -> int truncates toward 0 and wraps (NaN, or
// beyond the i64 range, gives 0), -> bool is x != 0, int -> narrower int wraps.
Scalar cast_scalar(Scalar a, DType from, DType to);

// What a reduce of `kind` gives over no elements, and starts from: sum 0, product 1, max -inf
// for floats and the lowest value of an integer type (0 for bool and unsigned types).
Scalar reduce_identity(ReduceKind kind, DType t);

}  // namespace tl::tensor
