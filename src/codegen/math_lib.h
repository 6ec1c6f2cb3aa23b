// SPDX-License-Identifier: Apache-2.0
// The math library of generated code: exp2, log2 and sin built as inline LLVM IR at a
// builder's insertion point, for targets whose own instructions or libraries lack them. They
// are branch-free, so loops over them vectorize, and accurate to about an ulp.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <utility>

namespace tl::codegen::math {

// A call of the overloaded intrinsic `id` on v (its type picks the overload).
llvm::Value* call_intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::Value* v);

// A call of the external function `name`, of v's type to v's type (declared as needed).
llvm::Value* call_external(llvm::IRBuilder<>& b, const char* name, llvm::Value* v);

// 2^(c x) of a float x (scalar or vector) and a double constant c, in f32 arithmetic: the
// product c x is carried as two floats (by fused multiply-adds), so the result is within an ulp
// of 2^(c x) computed exactly and rounded once, over the whole f32 range (subnormal results,
// overflow to inf, inf and NaN included). With c = log2 e this is exp: what the composite exp
// computes in f64 for floats, at twice the vector width.
llvm::Value* exp2_product_f32(llvm::IRBuilder<>& b, llvm::Value* x, double c);
// 2^x of a float: exp2_product_f32 with c = 1.
llvm::Value* exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
// log2 x of a float, computed in double and rounded once, so it matches the reference
// executor's double computation to within an ulp.
llvm::Value* log2_f32(llvm::IRBuilder<>& b, llvm::Value* x);

// e 2^n, for a double e and an integral double n (|n| <= 1100).
using ScaleByPow2 = llvm::function_ref<llvm::Value*(llvm::Value* e, llvm::Value* n)>;
// e 2^n from exponent bits, in plain IR: what exp2_f64 uses where the target has no ldexp.
llvm::Value* scale_by_exponent_bits(llvm::IRBuilder<>& b, llvm::Value* e, llvm::Value* n);

// 2^x of a double; `scale` makes the final e 2^n.
llvm::Value* exp2_f64(llvm::IRBuilder<>& b, llvm::Value* x, ScaleByPow2 scale);

// A double x split as m 2^e, m in [0.5, 1): {m, e as i32}.
using SplitF64 = llvm::function_ref<std::pair<llvm::Value*, llvm::Value*>(llvm::Value* x)>;

// log2 x of a double; `split` takes x apart.
llvm::Value* log2_f64(llvm::IRBuilder<>& b, llvm::Value* x, SplitF64 split);

// sin x of a double, to about 1 ulp for |x| below 1e9; NaN for inf and NaN. With quadrant 1
// it is cos x (sin(x + pi/2), the shift exact).
llvm::Value* sin_f64(llvm::IRBuilder<>& b, llvm::Value* x, int quadrant = 0);

// sin x, or cos x, of a float (scalar or vector), within an ulp of the correctly rounded result
// over the whole f32 range (almost always correctly rounded): the reduction x mod pi/2 by the
// bits of 2/pi that matter for x's exponent (Payne-Hanek), products and polynomials in f64,
// branch-free and without memory, so loops over it vectorize.
llvm::Value* sin_cos_f32(llvm::IRBuilder<>& b, llvm::Value* x, bool cos);

// When math_lib.cpp was compiled (__DATE__ " " __TIME__), for emitter_build (target.h).
const char* build_stamp();

}  // namespace tl::codegen::math
