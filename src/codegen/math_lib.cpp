// SPDX-License-Identifier: Apache-2.0
// The math library of generated code (math_lib.h): exp2, log2 and sin as inline LLVM IR.
#include "codegen/math_lib.h"

#include <llvm/IR/Module.h>

#include <cmath>
#include <cstdint>
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
// +-cos r by (k + quadrant) mod 4, each by its Taylor series (to r^23 and r^22).
Value* sin_f64(llvm::IRBuilder<>& b, Value* x, int quadrant) {
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
  Value* q =
      b.CreateAnd(b.CreateAdd(b.CreateFreeze(b.CreateFPToSI(k, b.getInt64Ty())), b.getInt64(quadrant)), b.getInt64(3));
  Value* v = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(q, b.getInt64(1)), b.getInt64(0)), sr, cr);
  v = b.CreateSelect(b.CreateICmpUGE(q, b.getInt64(2)), b.CreateFNeg(v), v);
  Value* finite = b.CreateFCmpOLT(call_intrinsic(b, llvm::Intrinsic::fabs, x), f64(b, std::numeric_limits<double>::infinity()));
  return b.CreateSelect(finite, v, f64(b, std::numeric_limits<double>::quiet_NaN()));
}

namespace {

// The first 256 bits of the binary fraction of 2/pi, most significant first.
constexpr std::uint64_t kTwoOverPi[4] = {0xA2F9836E4E441529, 0xFC2757D1F534DDC0, 0xDB6295993C439041,
                                         0xFE5163ABDEBBC561};

// Rows of sin_cos_f32's reduction: row i is for floats x = M 2^E (M < 2^24 an integer) with
// E - 2 = i, or E <= 2 for row 0; the largest float has E = 104.
constexpr int kReductionRows = 103;

}  // namespace

// |x| = M 2^E exactly in f64. y = |x| 2/pi mod 4 from the bits of 2/pi for E (the row's four
// chunks): p_c = |x| chunk_c (exact); n0 = rint(p0) and n1 = rint((p0 - n0) + p1) are the
// quadrant's integer part, the rest u = ((p0 - n0) + p1 - n1) + p2 + p3 in [-1/2, 1/2] its
// fraction (relative error ~2^-52: the bits past the chunks' are worth < 2^-86, and the first
// additions are exact wherever the later ones could cancel). r = u pi/2; sin r (to r^11) or
// cos r (to r^12) by (n0 + n1 + [cos]) mod 4, each within 2^-36 on |r| <= pi/4, rounded to f32
// once; sin takes x's sign. Inf and NaN give NaN (inf - inf on the way).
Value* sin_cos_f32(llvm::IRBuilder<>& b, Value* x, bool cos) {
  llvm::Type* ft = x->getType();
  auto like = [&](llvm::Type* scalar) -> llvm::Type* {
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(ft)) return llvm::VectorType::get(scalar, vt->getElementCount());
    return scalar;
  };
  llvm::Type* dt = like(b.getDoubleTy());
  llvm::Type* it = like(b.getInt32Ty());
  auto kd = [&](double v) -> Value* { return llvm::ConstantFP::get(dt, v); };
  auto ki = [&](std::int64_t v) -> Value* { return llvm::ConstantInt::get(it, static_cast<std::uint64_t>(v), true); };
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(module_of(b), llvm::Intrinsic::fma, {dt});
  Value* bits = b.CreateBitCast(x, it);
  Value* ax = b.CreateFPExt(call_intrinsic(b, llvm::Intrinsic::fabs, x), dt);
  // The row: the biased exponent less 152 (E - 2; subnormals have E = -149), within the table.
  Value* row = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, ki(23)), ki(0xff)), ki(152));
  row = b.CreateSelect(b.CreateICmpSLT(row, ki(0)), ki(0), row);
  row = b.CreateSelect(b.CreateICmpSGT(row, ki(kReductionRows - 1)), ki(kReductionRows - 1), row);
  // The row's chunks: 2/pi's bits row + 28c + 1 .. row + 28c + 28 (c = 0..3) as the numbers
  // they are worth, cut from the 64-bit words of kTwoOverPi in registers (a table in memory
  // would stop the loop vectorizer: it cannot tell that the kernel's stores miss it). Two
  // 64-bit windows of the bits, from the row's first bit and 56 bits on, hold two chunks each.
  llvm::Type* lt = like(b.getInt64Ty());
  auto kl = [&](std::uint64_t v) -> Value* { return llvm::ConstantInt::get(lt, v); };
  Value* row64 = b.CreateZExt(row, lt);
  auto window = [&](int from) -> Value* {  // the 64 bits from offset row + from (0-based)
    Value* at = b.CreateAdd(row64, kl(static_cast<std::uint64_t>(from)));
    Value* word = b.CreateLShr(at, kl(6));  // 0, 1 or 2 (at <= 158)
    Value* shift = b.CreateAnd(at, kl(63));
    auto pick = [&](int k) {  // kTwoOverPi[word + k]
      Value* v = b.CreateSelect(b.CreateICmpEQ(word, kl(0)), kl(kTwoOverPi[k]), kl(kTwoOverPi[k + 1]));
      return b.CreateSelect(b.CreateICmpEQ(word, kl(2)), kl(kTwoOverPi[k + 2]), v);
    };
    // The word's bits shifted up, the next word's top bits below them (shifted in two
    // steps, so a shift of 0 never shifts by 64).
    Value* low = b.CreateLShr(b.CreateLShr(pick(1), kl(1)), b.CreateSub(kl(63), shift));
    return b.CreateOr(b.CreateShl(pick(0), shift), low);
  };
  Value* windows[2] = {window(0), window(56)};
  auto chunk = [&](int c) -> Value* {
    // Bits 36..63 of the window for an even chunk, 8..35 for an odd one.
    Value* bits28 = b.CreateAnd(b.CreateLShr(windows[c / 2], kl(c % 2 == 0 ? 36 : 8)), kl(0xfffffff));
    // 2^-(row + 28 (c + 1)) from its exponent bits (at most 2^-214: a normal double).
    Value* scale = b.CreateBitCast(b.CreateShl(b.CreateSub(kl(1023 - 28 * (c + 1)), row64), kl(52)), dt);
    return b.CreateFMul(b.CreateSIToFP(b.CreateTrunc(bits28, it), dt), scale);
  };
  Value* p0 = b.CreateFMul(ax, chunk(0));
  Value* n0 = call_intrinsic(b, llvm::Intrinsic::rint, p0);
  Value* t = b.CreateFAdd(b.CreateFSub(p0, n0), b.CreateFMul(ax, chunk(1)));
  Value* n1 = call_intrinsic(b, llvm::Intrinsic::rint, t);
  t = b.CreateFSub(t, n1);
  Value* u = b.CreateFAdd(b.CreateFAdd(t, b.CreateFMul(ax, chunk(2))), b.CreateFMul(ax, chunk(3)));
  Value* r = b.CreateFMul(u, kd(1.5707963267948966));
  Value* r2 = b.CreateFMul(r, r);
  auto series = [&](std::initializer_list<double> c) {  // c0 + r2 (c1 + r2 (...)), by fmas
    std::vector<double> cs(c);
    Value* acc = kd(cs.back());
    for (std::size_t i = cs.size() - 1; i-- > 0;) acc = b.CreateCall(fma, {acc, r2, kd(cs[i])});
    return acc;
  };
  Value* sr = b.CreateCall(fma, {b.CreateFMul(r, r2),
                                 series({-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800}), r});
  Value* cr = series({1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600});
  // The quadrant, frozen: for inf and NaN the conversion is poison (the value is NaN anyway),
  // and LLVM 14's vectorizers must not narrow it (see sin_f64).
  Value* q = b.CreateFreeze(b.CreateFPToSI(b.CreateFAdd(n0, n1), it));
  if (cos) q = b.CreateAdd(q, ki(1));
  Value* v = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(q, ki(1)), ki(0)), sr, cr);
  v = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(q, ki(2)), ki(0)), v, b.CreateFNeg(v));
  Value* rounded = b.CreateFPTrunc(v, ft);
  if (cos) return rounded;
  Value* sign = b.CreateAnd(bits, ki(std::numeric_limits<std::int32_t>::min()));
  return b.CreateBitCast(b.CreateXor(b.CreateBitCast(rounded, it), sign), ft);
}

const char* build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace tl::codegen::math
