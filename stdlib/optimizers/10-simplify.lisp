;;; SPDX-License-Identifier: Apache-2.0
;;; Algebraic simplification: rewrites that give bit-identical results for every input,
;;; NaN, infinities and signed zeros included. (Those exact only for ordinary inputs are in
;;; unsafe-math, off by default.)

(defoptimizer-set simplify "Algebraic simplification, exact for every input.")

(defoptimizer mul-one "x * 1 = x (exact, NaN and -0 included)."
  (mul ?x (const 1)) :set simplify => ?x)

(defoptimizer add-zero "x + 0 = x for integers; for floats only x + (-0) = x (since -0 + 0 = +0)."
  (add ?x (const ?c)) :set simplify
  :when (and (zerop ?c) (or (not (dtype-float-p (dtype ?x))) (sign-bit-p ?c)))
  => ?x)

(defoptimizer mul-zero "x * 0 = 0 for integers and bools (for floats NaN * 0 is NaN and -1 * 0 is -0)."
  (mul ?x (const 0)) :set simplify :when (not (dtype-float-p (dtype ?x)))
  => (const 0))

(defoptimizer double-neg "-(-x) = x (integers wrap both ways)."
  (neg (neg ?x)) :set simplify => ?x)

(defoptimizer double-not "Two exclusive ors with the same value cancel: (x ^ y) ^ y = x."
  (xor (xor ?x ?y) ?y) :set simplify => ?x)

(defoptimizer max-self "max(x, x) = x." (max ?x ?x) :set simplify => ?x)
(defoptimizer and-self "x & x = x." (and ?x ?x) :set simplify => ?x)
(defoptimizer or-self "x | x = x." (or ?x ?x) :set simplify => ?x)

(defoptimizer where-same "where(c, x, x) = x." (where _ ?x ?x) :set simplify => ?x)

(defoptimizer where-const "where on a constant condition picks a side."
  (where (const ?c) ?a ?b) :set simplify => (if (and ?c (not (eql ?c 0))) ?a ?b))

(defoptimizer-set unsafe-math
  "Rewrites exact only for ordinary inputs, off by default: 1/(1/x) is not x for denormals
or after rounding, 2^(log2 x) is not x for negative x or after rounding.")

(defoptimizer double-recip "1/(1/x) = x (not exact: rounding, denormals, infinities)."
  (recip (recip ?x)) :set unsafe-math => ?x)

(defoptimizer exp2-log2 "2^(log2 x) = x (not exact: rounding; NaN for x < 0 becomes x)."
  (exp2 (log2 ?x)) :set unsafe-math => ?x)

(defoptimizer log2-exp2 "log2(2^x) = x (not exact: overflow and rounding)."
  (log2 (exp2 ?x)) :set unsafe-math => ?x)

(optimizer-disable 'unsafe-math)
