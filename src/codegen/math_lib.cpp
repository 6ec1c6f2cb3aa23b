// SPDX-License-Identifier: Apache-2.0
// The math library of generated code (math_lib.h): exp2, log2 and sin as inline LLVM IR.
#include "codegen/math_lib.h"

#include <llvm/IR/Module.h>

#include <limits>
#include <vector>

namespace tl::codegen::math {

namespace {

using llvm::Value;

llvm::Module* module_of(llvm::IRBuilder<>& b) { return b.GetInsertBlock()->getModule(); }

Value* f64(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getDoubleTy(), v); }

// c[0] + x (c[1] + x (c[2] + ...)), in f64, by fused multiply-adds.
Value* horner_fma(llvm::IRBuilder<>& b, Value* x, const std::vector<double>& c) {
  Value* acc = llvm::ConstantFP::get(b.getDoubleTy(), c.back());
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(module_of(b), llvm::Intrinsic::fma, {b.getDoubleTy()});
  for (std::size_t i = c.size() - 1; i-- > 0;) acc = b.CreateCall(fma, {acc, x, llvm::ConstantFP::get(b.getDoubleTy(), c[i])});
  return acc;
}

// The polynomial with these coefficients (highest power first) at x, in f64, by multiplies
// and adds.
Value* horner(llvm::IRBuilder<>& b, Value* x, std::initializer_list<double> coeffs_high_to_low) {
  Value* acc = nullptr;
  for (double c : coeffs_high_to_low) {
    acc = acc == nullptr ? f64(b, c) : b.CreateFAdd(b.CreateFMul(acc, x), f64(b, c));
  }
  return acc;
}

}  // namespace

Value* call_intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, Value* v) {
  llvm::Function* f = llvm::Intrinsic::getDeclaration(module_of(b), id, {v->getType()});
  return b.CreateCall(f, {v});
}

Value* call_external(llvm::IRBuilder<>& b, const char* name, Value* v) {
  llvm::FunctionCallee f = module_of(b)->getOrInsertFunction(name, llvm::FunctionType::get(v->getType(), {v->getType()}, false));
  return b.CreateCall(f, {v});
}

// 2^(c x) = 2^n 2^f: the product as ph + pl (ph = fl(c_hi x), pl its rounding error by an fma
// plus c_lo x), n = rint(ph), f = (ph - n) + pl in [-1/2, 1/2]. 2^f = 1 + f g(f), g of degree 5
// interpolating (2^f - 1)/f at the Chebyshev points of [-1/2, 1/2] (relative error 4e-9; each
// coefficient rounded to f32). 2^n is two normal powers of two, 2^(n>>1) 2^(n-(n>>1)), so the
// last product rounds once into the subnormals or overflows to inf. Beyond |ph| = 160 the result
// is 0 or inf anyway. Checked against a long-double exp2 on every 7th float below 200 in
// magnitude, for c = 1, log2 e, 2 log2 e and -log2 e: at most 1 ulp, 99.5% correctly rounded.
Value* exp2_product_f32(llvm::IRBuilder<>& b, Value* x, double c) {
  llvm::Type* t = x->getType();
  auto k = [&](double v) -> Value* { return llvm::ConstantFP::get(t, v); };
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(module_of(b), llvm::Intrinsic::fma, {t});
  const float c_hi = static_cast<float>(c);
  const float c_lo = static_cast<float>(c - static_cast<double>(c_hi));
  Value* ph = c_hi == 1.0f ? x : b.CreateFMul(x, k(c_hi));
  Value* pl = k(0);
  if (c_hi != 1.0f || c_lo != 0.0f) {
    pl = b.CreateCall(fma, {x, k(c_lo), b.CreateCall(fma, {x, k(c_hi), b.CreateFNeg(ph)})});
  }
  // Out of range (or NaN, whose result is chosen at the end): clamp to +-160, drop pl.
  Value* in_range = b.CreateFCmpOLT(call_intrinsic(b, llvm::Intrinsic::fabs, ph), k(160));
  Value* signed_160 = b.CreateSelect(b.CreateFCmpOGT(ph, k(0)), k(160), k(-160));
  ph = b.CreateSelect(in_range, ph, signed_160);
  pl = b.CreateSelect(in_range, pl, k(0));
  Value* n = call_intrinsic(b, llvm::Intrinsic::rint, ph);
  Value* f = b.CreateFAdd(b.CreateFSub(ph, n), pl);
  static const float g[] = {0.693147182f, 0.240226507f, 0.0555035695f, 0.00961808302f, 0.00133908633f, 0.000154531634f};
  Value* q = k(g[5]);
  for (int i = 4; i >= 0; --i) q = b.CreateCall(fma, {q, f, k(g[i])});
  Value* p = b.CreateCall(fma, {q, f, k(1)});
  llvm::Type* it = b.getInt32Ty();
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(t)) it = llvm::VectorType::get(it, vt->getElementCount());
  Value* ni = b.CreateFPToSI(n, it);
  Value* n1 = b.CreateAShr(ni, llvm::ConstantInt::get(it, 1));
  auto pow2 = [&](Value* e) {
    Value* biased = b.CreateAdd(e, llvm::ConstantInt::get(it, 127));
    return b.CreateBitCast(b.CreateShl(biased, llvm::ConstantInt::get(it, 23)), t);
  };
  Value* r = b.CreateFMul(b.CreateFMul(p, pow2(n1)), pow2(b.CreateSub(ni, n1)));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
}

Value* exp2_f32(llvm::IRBuilder<>& b, Value* x) { return exp2_product_f32(b, x, 1.0); }

Value* log2_f32(llvm::IRBuilder<>& b, Value* xf) {
  Value* x = b.CreateFPExt(xf, b.getDoubleTy());  // every positive float is a normal double
  Value* bits = b.CreateBitCast(x, b.getInt64Ty());
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), b.getInt64(0x7ff)), b.getInt64(1023));
  Value* mbits = b.CreateOr(b.CreateAnd(bits, b.getInt64(0xfffffffffffffLL)), b.getInt64(0x3ff0000000000000LL));
  Value* m = b.CreateBitCast(mbits, b.getDoubleTy());  // in [1, 2)
  Value* big = b.CreateFCmpOGT(m, f64(b, 1.4142135623730951));
  m = b.CreateSelect(big, b.CreateFMul(m, f64(b, 0.5)), m);
  e = b.CreateSelect(big, b.CreateAdd(e, b.getInt64(1)), e);
  // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to s^15.
  Value* sv = b.CreateFDiv(b.CreateFSub(m, f64(b, 1)), b.CreateFAdd(m, f64(b, 1)));
  Value* s2 = b.CreateFMul(sv, sv);
  Value* series = horner(b, s2, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
  Value* ln_m = b.CreateFMul(b.CreateFMul(f64(b, 2), sv), series);
  Value* r = b.CreateFAdd(b.CreateSIToFP(e, b.getDoubleTy()), b.CreateFMul(ln_m, f64(b, 1.4426950408889634)));
  Value* rf = b.CreateFPTrunc(r, b.getFloatTy());
  // log2(0) = -inf, log2(x < 0) = NaN, log2(inf) = inf, NaN stays NaN.
  Value* inf = llvm::ConstantFP::getInfinity(b.getFloatTy());
  Value* zero = llvm::ConstantFP::get(b.getFloatTy(), 0.0);
  rf = b.CreateSelect(b.CreateFCmpOEQ(xf, zero), llvm::ConstantFP::getInfinity(b.getFloatTy(), true), rf);
  rf = b.CreateSelect(b.CreateFCmpOLT(xf, zero), llvm::ConstantFP::getNaN(b.getFloatTy()), rf);
  rf = b.CreateSelect(b.CreateFCmpOEQ(xf, inf), inf, rf);
  return b.CreateSelect(b.CreateFCmpUNO(xf, xf), xf, rf);
}

// 2^n as two normal powers of two, 2^(n>>1) 2^(n-(n>>1)), each from exponent bits: the last
// product rounds into the subnormals or overflows to inf as it should.
Value* scale_by_exponent_bits(llvm::IRBuilder<>& b, Value* e, Value* n) {
  Value* ni = b.CreateFPToSI(n, b.getInt64Ty());
  Value* n1 = b.CreateAShr(ni, 1);
  auto pow2 = [&](Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, b.getInt64(1023)), 52), b.getDoubleTy());
  };
  return b.CreateFMul(b.CreateFMul(e, pow2(n1)), pow2(b.CreateSub(ni, n1)));
}

// 2^x = 2^n e^(f ln 2), n = rint(x), |f| <= 1/2: e^t by its Taylor series to t^14 (|t| <=
// 0.35: truncation below 1e-17), scaled by 2^n (which gives inf and 0 at the ends).
Value* exp2_f64(llvm::IRBuilder<>& b, Value* x, ScaleByPow2 scale) {
  Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, f64(b, 1100)), f64(b, 1100), b.CreateSelect(b.CreateFCmpOLT(x, f64(b, -1100)), f64(b, -1100), x));
  Value* n = call_intrinsic(b, llvm::Intrinsic::rint, clamped);
  Value* t = b.CreateFMul(b.CreateFSub(clamped, n), f64(b, 0.69314718055994530942));
  std::vector<double> c{1.0};
  for (int k = 1; k <= 14; ++k) c.push_back(c.back() / k);
  Value* e = horner_fma(b, t, c);
  Value* r = scale(e, n);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
}

// log2 x = e + ln(m) / ln 2 with x = m 2^e, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh s,
// s = (m - 1) / (m + 1), |s| <= 0.172, by its series to s^25.
Value* log2_f64(llvm::IRBuilder<>& b, Value* x, SplitF64 split) {
  auto [m, e_int] = split(x);  // m in [0.5, 1)
  Value* e = b.CreateSIToFP(e_int, b.getDoubleTy());
  Value* small = b.CreateFCmpOLT(m, f64(b, 0.70710678118654752440));
  m = b.CreateSelect(small, b.CreateFMul(m, f64(b, 2)), m);
  e = b.CreateSelect(small, b.CreateFSub(e, f64(b, 1)), e);
  Value* s = b.CreateFDiv(b.CreateFSub(m, f64(b, 1)), b.CreateFAdd(m, f64(b, 1)));
  std::vector<double> c;
  for (int k = 0; k <= 12; ++k) c.push_back(2.0 / (2 * k + 1));
  Value* ln = b.CreateFMul(s, horner_fma(b, b.CreateFMul(s, s), c));
  Value* r = b.CreateFAdd(e, b.CreateFMul(ln, f64(b, 1.44269504088896340736)));
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  r = b.CreateSelect(b.CreateFCmpOEQ(x, f64(b, inf)), f64(b, inf), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, f64(b, 0)), f64(b, -inf), r);
  return b.CreateSelect(b.CreateFCmpULT(x, f64(b, 0)), f64(b, nan), r);  // negative or NaN
}

// x = k pi/2 + r (Cody-Waite with a three-part pi/2 and fma), |r| <= pi/4; then +-sin r or
// +-cos r by k mod 4, each by its Taylor series (to r^23 and r^22).
Value* sin_f64(llvm::IRBuilder<>& b, Value* x) {
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(module_of(b), llvm::Intrinsic::fma, {b.getDoubleTy()});
  Value* big = f64(b, 4503599627370496.0);  // 2^52: beyond it k is meaningless anyway
  Value* kx = call_intrinsic(b, llvm::Intrinsic::rint, b.CreateFMul(x, f64(b, 0.63661977236758134308)));
  Value* k = b.CreateSelect(b.CreateFCmpOGT(call_intrinsic(b, llvm::Intrinsic::fabs, kx), big), f64(b, 0), kx);
  Value* nk = b.CreateFNeg(k);
  Value* r = b.CreateCall(fma, {nk, f64(b, 1.5707963267948966), x});
  r = b.CreateCall(fma, {nk, f64(b, 6.123233995736766e-17), r});
  r = b.CreateCall(fma, {nk, f64(b, -1.4973849048591698e-33), r});
  Value* r2 = b.CreateFMul(r, r);
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
  Value* sr = b.CreateFMul(r, horner_fma(b, r2, cs));
  Value* cr = horner_fma(b, r2, cc);
  // Frozen so that LLVM 14's vectorizers cannot narrow the conversion to the two bits kept
  // (they make an invalid float truncation of such a chain; see the emitter's casts).
  Value* q = b.CreateAnd(b.CreateFreeze(b.CreateFPToSI(k, b.getInt64Ty())), b.getInt64(3));
  Value* v = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(q, b.getInt64(1)), b.getInt64(0)), sr, cr);
  v = b.CreateSelect(b.CreateICmpUGE(q, b.getInt64(2)), b.CreateFNeg(v), v);
  Value* finite = b.CreateFCmpOLT(call_intrinsic(b, llvm::Intrinsic::fabs, x), f64(b, std::numeric_limits<double>::infinity()));
  return b.CreateSelect(finite, v, f64(b, std::numeric_limits<double>::quiet_NaN()));
}

const char* build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace tl::codegen::math
