;;; SPDX-License-Identifier: Apache-2.0
;;; Elementwise tensor functions against hand-computed values and against Lisp's scalar
;;; functions (a closed-form oracle), across dtypes; NaN and inf behaviour pinned down.

(defun tl (x) (to-list x))
(defvar *xs* '(-3.5 -1.0 -0.25 0.0 0.5 1.0 2.0 7.25))
(defvar *pos* '(0.001 0.25 0.5 1.0 2.0 10.0 1000.0))
(defvar *unit* '(-0.99 -0.5 -0.1 0.0 0.3 0.75 0.99))

(defun matches-scalar (tensor-fn scalar-fn xs &optional (rtol 1e-12) (atol 1e-12))
  "TENSOR-FN on an f64 tensor of XS agrees with SCALAR-FN on each element."
  (allclose (funcall tensor-fn (tensor xs :dtype 'f64)) (mapcar scalar-fn xs) :rtol rtol :atol atol))

(deftest arithmetic-broadcasting
  (is (tensor-equal (+ (tensor '((1 2 3) (4 5 6))) (tensor '(10 20 30))) '((11 22 33) (14 25 36))))
  (is (tensor-equal (+ (tensor '((1) (2))) (tensor '(10 20 30))) '((11 21 31) (12 22 32))))
  (is (tensor-equal (- (tensor '(5 6)) 1) '(4 5)))
  (is (tensor-equal (- 10 (tensor '(1 2))) '(9 8)))
  (is (tensor-equal (- (tensor '(1 -2))) '(-1 2)))
  (is (tensor-equal (* (tensor '(1 2)) (tensor '(3 4)) 2) '(6 16)))
  (is (allclose (/ (tensor '(1.0 3.0)) 2) '(0.5 1.5)))
  (is (allclose (/ 1 (tensor '(2.0 4.0))) '(0.5 0.25)))
  (is (equal (shape (+ (zeros '(3 1 2)) (zeros '(4 1)))) '(3 4 2)))
  (is (equal (shape (+ (zeros '()) (zeros '(2 3)))) '(2 3)))
  (is (tensor-equal (1+ (tensor '(1 2))) '(2 3)))
  (is (tensor-equal (1- (tensor '(1 2))) '(0 1)))
  (is (tensor-equal (+ (tensor '(1 2))) '(1 2)))
  (is-error shape-error (+ (zeros '(2 3)) (zeros '(3 2)))))

(deftest integer-division-and-remainders
  (is (equal (tl (/ (tensor '(1 2 3)) 2)) '(0.5 1.0 1.5)))          ; true division -> f32
  (is (eq (dtype (/ (tensor '(1 2)) 2)) 'f32))
  (is (equal (tl (floor (tensor '(7 -7)) 2)) '(3 -4)))              ; floor division
  (is (equal (tl (floor-divide (tensor '(7 -7 7 -7)) (tensor '(2 2 -2 -2)))) '(3 -4 -4 3)))
  (is (equal (tl (mod (tensor '(7 -7 7 -7)) (tensor '(3 3 -3 -3)))) '(1 2 -2 -1)))   ; sign of divisor
  (is (equal (tl (rem (tensor '(7 -7 7 -7)) (tensor '(3 3 -3 -3)))) '(1 -1 1 -1)))   ; sign of dividend
  (is (allclose (mod (tensor '(-7.5 7.5)) 2) '(0.5 1.5)))
  (is (allclose (fmod (tensor '(-7.5 7.5)) 2) '(-1.5 1.5)))
  ;; prim:idiv and prim:mod never trap: x/0 = 0 and x mod 0 = x.
  (is (equal (tl (prim:idiv (tensor '(5 -5)) (tensor '(0 0)))) '(0 0)))
  (is (equal (tl (prim:mod (tensor '(5 -5)) (tensor '(0 0)))) '(5 -5))))

(deftest nan-and-inf
  ;; Pinned IEEE 754 behaviour of log, sqrt and /.
  (is (equal (tl (log (tensor '(1.0 0.0)))) (list 0.0 (- inf))))
  (is (isnan (log (tensor -1.0))))
  (is (equal (tl (sqrt (tensor '(4.0 0.0)))) '(2.0 0.0)))
  (is (isnan (sqrt (tensor -1.0))))
  (is (equal (tl (/ (tensor '(1.0 -1.0)) 0)) (list inf (- inf))))
  (is (isnan (/ (tensor 0.0) 0)))
  (is (isnan (/ (tensor inf) inf)))
  (is (equal (tl (/ (tensor '(1.0 -1.0)) inf)) '(0.0 -0.0)))
  (is (equal (tl (isnan (tensor (list 1.0 nan inf)))) '(nil t nil)))
  (is (equal (tl (isinf (tensor (list 1.0 nan (- inf))))) '(nil nil t)))
  (is (isnan (maximum (tensor nan) 1.0)))
  (is (isnan (minimum (tensor 1.0) nan)))
  (is (isnan (+ (tensor nan) 1)))
  (is (equal (tl (< (tensor nan) 1.0)) nil))
  (is (equal (tl (= (tensor nan) nan)) nil))
  (is (equal (tl (/= (tensor nan) nan)) t))
  (is (equal (tl (exp (tensor (list (- inf) inf)))) (list 0.0 inf)))
  (is (equal (tl (sigmoid (tensor (list (- inf) inf)))) '(0.0 1.0)))
  (is (equal (tl (tanh (tensor '(-100.0 100.0)))) '(-1.0 1.0))))

(deftest transcendental-vs-scalar
  (is (matches-scalar #'exp #'exp *xs*))
  (is (matches-scalar #'log #'log *pos*))
  (is (matches-scalar (lambda (x) (log x 10)) (lambda (x) (log x 10)) *pos*))
  (is (matches-scalar #'sqrt #'sqrt *pos*))
  (is (matches-scalar #'rsqrt (lambda (x) (/ 1 (sqrt x))) *pos*))
  (is (matches-scalar #'sin #'sin *xs*))
  (is (matches-scalar #'cos #'cos *xs*))
  (is (matches-scalar #'tan #'tan *xs* 1e-10))
  (is (matches-scalar #'asin #'asin *unit* 1e-10))
  (is (matches-scalar #'acos #'acos *unit* 1e-10))
  (is (matches-scalar #'atan #'atan (append *xs* '(-1000.0 1e8))))
  (is (matches-scalar #'sinh #'sinh *xs*))
  (is (matches-scalar #'cosh #'cosh *xs*))
  (is (matches-scalar #'tanh #'tanh *xs* 1e-10 1e-15))
  (is (matches-scalar #'asinh (lambda (x) (log (+ x (sqrt (+ (* x x) 1))))) *xs* 1e-10))
  (is (matches-scalar #'acosh (lambda (x) (log (+ x (sqrt (- (* x x) 1))))) '(1.0 1.5 2.0 10.0) 1e-10))
  (is (matches-scalar #'atanh (lambda (x) (* 0.5 (log (/ (+ 1 x) (- 1 x))))) *unit* 1e-10))
  (is (matches-scalar #'exp2 (lambda (x) (expt 2.0 x)) *xs*))
  (is (matches-scalar #'log2 (lambda (x) (log x 2)) *pos*))
  (is (allclose (atan (tensor '(1.0 -1.0 0.0 -1.0)) (tensor '(-1.0 -1.0 1.0 0.0)))
                (list (* 0.75 pi) (* -0.75 pi) 0.0 (* -0.5 pi))))
  (is (allclose (erf (tensor '(0.0 0.5 1.0 -2.0))) '(0.0 0.5204998778 0.8427007929 -0.9953222650) :atol 2e-7)))

(deftest powers
  (is (tensor-equal (expt (tensor '(1 2 3)) 2) '(1 4 9)))
  (is (eq (dtype (expt (tensor '(1 2 3)) 2)) 'i32))
  (is (allclose (pow (tensor '(2.0 -2.0 0.0 4.0)) (tensor '(3.0 2.0 0.0 0.5))) '(8.0 4.0 1.0 2.0)))
  (is (allclose (pow (tensor '(-2.0)) 3) '(-8.0)))
  (is (allclose (pow (tensor '(-8.0)) (tensor '(3.0))) '(-512.0)))
  (is (isnan (pow (tensor -8.0) 0.5)))
  (is (allclose (pow (tensor '(2.0 4.0)) -1) '(0.5 0.25)))
  (is (allclose (pow 2 (tensor '(0.0 10.0))) '(1.0 1024.0)))
  (is (allclose (square (tensor '(3 -4))) '(9 16))))

(deftest abs-sign-rounding
  (is (tensor-equal (abs (tensor '(-3 0 4))) '(3 0 4)))
  (is (allclose (abs (tensor '(-1.5 2.5))) '(1.5 2.5)))
  (is (equal (tl (sign (tensor '(-2.0 0.0 3.0)))) '(-1.0 0.0 1.0)))
  (is (equal (tl (sign (tensor '(-2 0 3)))) '(-1 0 1)))
  (is (isnan (sign (tensor nan))))
  (is (equal (tl (floor (tensor '(1.5 -1.5 2.0 -0.5)))) '(1.0 -2.0 2.0 -1.0)))
  (is (equal (tl (ceiling (tensor '(1.5 -1.5 2.0)))) '(2.0 -1.0 2.0)))
  (is (equal (tl (truncate (tensor '(1.7 -1.7)))) '(1.0 -1.0)))
  (is (allclose (round (tensor '(0.5 1.5 2.5 -0.5 -1.7 3.2))) '(0.0 2.0 2.0 0.0 -2.0 3.0)))   ; halves to even
  (let ((big (tensor '(1e30 -1e30 16777217.0)))) (is (tensor-equal (floor big) big)))   ; beyond 2^23: unchanged
  (is (isnan (floor (tensor nan)))))

(deftest comparisons-and-logic
  (is (equal (tl (< (tensor '(1 2 3)) 2)) '(t nil nil)))
  (is (equal (tl (<= (tensor '(1 2 3)) 2)) '(t t nil)))
  (is (equal (tl (> (tensor '(1 2 3)) 2)) '(nil nil t)))
  (is (equal (tl (>= (tensor '(1 2 3)) 2)) '(nil t t)))
  (is (equal (tl (= (tensor '(1 2 3)) (tensor '(1 0 3)))) '(t nil t)))
  (is (equal (tl (/= (tensor '(1 2 3)) 2)) '(t nil t)))
  (is (equal (tl (< 0 (tensor '(-1 1 2)) 2)) '(nil t nil)))             ; chained
  (is (equal (tl (logical-and (tensor '(t t nil)) (tensor '(t nil nil)))) '(t nil nil)))
  (is (equal (tl (logical-or (tensor '(t t nil)) (tensor '(t nil nil)))) '(t t nil)))
  (is (equal (tl (logical-xor (tensor '(t t nil)) (tensor '(t nil nil)))) '(nil t nil)))
  (is (equal (tl (logical-not (tensor '(1 0 2)))) '(nil t nil)))
  (is (equal (tl (bitwise-and (tensor '(12 10)) 6)) '(4 2)))
  (is (equal (tl (bitwise-or (tensor '(12 10)) 1)) '(13 11)))
  (is (equal (tl (bitwise-xor (tensor '(12 10)) 15)) '(3 5)))
  (is (equal (tl (where (tensor '(t nil t)) (tensor '(1 2 3)) 0)) '(1 0 3)))
  (is (equal (tl (where (tensor '((t) (nil))) (tensor '(1 2)) (tensor '(10 20)))) '((1 2) (10 20))))
  (is (equal (tl (where (tensor '(1 0)) 1.5 (tensor '(7 8)))) '(1.5 8.0))))

(deftest min-max-clip
  (is (equal (tl (maximum (tensor '(1 5 3)) (tensor '(4 2 3)))) '(4 5 3)))
  (is (equal (tl (minimum (tensor '(1 5 3)) (tensor '(4 2 3)))) '(1 2 3)))
  (is (equal (tl (max (tensor '(1 5)) (tensor '(4 2)) 3)) '(4 5)))       ; elementwise with several
  (is (equal (tl (min (tensor '(1 5)) 3)) '(1 3)))
  (is (equal (tl (minimum (tensor '(0 200) :dtype 'u8) (tensor '(100 50) :dtype 'u8))) '(0 50)))
  (is (equal (tl (clip (tensor '(-5 0 5 10)) 0 6)) '(0 0 5 6)))
  (is (equal (tl (clip (tensor '(-5 10)) nil 6)) '(-5 6))))

(deftest dtypes-of-elementwise
  (dolist (dt '(f32 f64 f16 bf16))
    (is (eq (dtype (+ (tensor '(1.5) :dtype dt) 1)) dt))
    (is (equal (tl (* (tensor '(1.5 -2.0) :dtype dt) 2)) '(3.0 -4.0)))
    (is (allclose (exp (tensor '(0.0 1.0) :dtype dt)) (list 1.0 (exp 1.0)) :rtol 1e-2)))
  (dolist (dt '(i8 i16 i32 i64 u8 u32))
    (is (eq (dtype (+ (tensor '(1) :dtype dt) 1)) dt))
    (is (equal (tl (* (tensor '(3 4) :dtype dt) 2)) '(6 8))))
  ;; Integer arithmetic wraps.
  (is (equal (tl (+ (tensor '(127) :dtype 'i8) 1)) '(-128)))
  (is (equal (tl (+ (tensor '(255) :dtype 'u8) 1)) '(0)))
  (is (equal (tl (- (tensor '(0) :dtype 'u32) 1)) '(4294967295)))
  (is (equal (tl (* (tensor '(65536) :dtype 'i32) 65536)) '(0)))
  (is (equal (tl (+ (tensor '(9223372036854775807) :dtype 'i64) 1)) '(-9223372036854775808)))
  ;; f16 and bf16 round.
  (is (equal (tl (tensor '(1.0009765625 65504.0 70000.0) :dtype 'f16)) (list 1.0009765625 65504.0 inf)))
  (is (equal (tl (tensor '(1.00390625 3.0e38) :dtype 'bf16)) '(1.0 3.00405527047391e38)))
  ;; Bool arithmetic: + is or, * is and.
  (is (equal (tl (prim:add (tensor '(t t nil)) (tensor '(t nil nil)))) '(t t nil)))
  (is (equal (tl (prim:mul (tensor '(t t nil)) (tensor '(t nil nil)))) '(t nil nil))))

(deftest casts
  (is (equal (tl (cast (tensor '(1.7 -1.7 0.0)) 'i32)) '(1 -1 0)))
  (is (equal (tl (cast (tensor '(300 -1)) 'u8)) '(44 255)))
  ;; Floats to integers of 32 bits or fewer: truncated toward 0, wrapped as through i64 (NaN,
  ;; infinities and magnitudes from 2^63 on give 0), computed in a kernel (the CPU's in 32-bit
  ;; lanes, with the wrap from the mantissa and exponent). 16 values: whole vectors.
  (let* ((big (realize (tensor '(2147483520.0 2147483648.0 -2147483648.0 3e9 -3e9 4294967296.0 1.5e10 -1.5e10
                                 1e12 9.2233725e18 1e30 -1e30 255.9 -128.5 300.7 -1.5))))
         (x (mul big (realize (ones '(16)))))
         (odd (div (mul (realize (tensor '(1.0 -1.0 0.0))) (realize (ones '(3)))) 0.0)))
    (is (equal (tl (cast x 'i32))
               '(2147483520 -2147483648 -2147483648 -1294967296 1294967296 0 2115098624 -2115098624
                 -727384064 0 0 0 255 -128 300 -1)))
    (is (equal (tl (cast x 'u8)) '(128 0 0 0 0 0 0 0 0 0 0 0 255 128 44 255)))
    (is (equal (tl (cast x 'i16)) '(-128 0 0 24064 -24064 0 -10240 10240 0 0 0 0 255 -128 300 -1)))
    (is (equal (tl (cast odd 'i32)) '(0 0 0)))
    (is (equal (tl (cast (cast x 'f16) 'u32)) (tl (cast (cast (cast x 'f16) 'f64) 'u32)))))
  (is (equal (tl (cast (tensor '(0.0 0.5 -2.0)) 'bool)) '(nil t t)))
  (is (equal (tl (cast (tensor '(t nil)) 'f32)) '(1.0 0.0)))
  (is (equal (tl (cast (tensor '(2 3)) 'f64)) '(2.0 3.0)))
  (is (equal (tl (prim:bitcast (tensor '(1.0 -2.0)) 'u32)) '(1065353216 3221225472)))
  (is (equal (tl (prim:bitcast (tensor '(1065353216) :dtype 'u32) 'f32)) '(1.0)))
  (is-error dtype-error (prim:bitcast (tensor '(1.0)) 'f64))
  (is-error dtype-error (cast (tensor '(1)) 'f128)))

(deftest promotion
  ;; The rules of dtype.h, spot-checked from Lisp (the full table is in the C++ unit tests).
  (is (eq (promote-types 'i32 'f16) 'f16))
  (is (eq (promote-types 'u8 'i8) 'i16))
  (is (eq (promote-types 'u32 'i32) 'i64))
  (is (eq (promote-types 'f16 'bf16) 'f32))
  (is (eq (promote-types 'bool 'u8) 'u8))
  (is (eq (promote-types 'f32 'f64) 'f64))
  (is (eq (result-dtype (tensor '(1 2)) 1.5) 'f32))       ; a float scalar makes ints f32
  (is (eq (result-dtype (tensor '(1.0) :dtype 'f16) 2.5) 'f16))   ; weak scalars keep the type
  (is (eq (result-dtype (tensor '(1) :dtype 'u8) 1000) 'u8))
  (is (eq (result-dtype (tensor '(t)) 1) 'i32))
  (is (eq (dtype (+ (tensor '(1) :dtype 'i8) (tensor '(1) :dtype 'u8))) 'i16))
  (is (eq (dtype (+ (tensor '(1) :dtype 'i64) (tensor '(1.0) :dtype 'f16))) 'f16)))

(deftest activations
  (let ((x (tensor '(-2.0 -0.5 0.0 0.5 2.0) :dtype 'f64)))
    (is (allclose (relu x) '(0.0 0.0 0.0 0.5 2.0)))
    (is (allclose (leaky-relu x) '(-0.02 -0.005 0.0 0.5 2.0)))
    (is (allclose (leaky-relu x 0.2) '(-0.4 -0.1 0.0 0.5 2.0)))
    (is (allclose (elu x) (mapcar (lambda (v) (if (> v 0) v (- (exp v) 1))) '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (selu x) (mapcar (lambda (v) (* 1.0507009873554805 (if (> v 0) v (* 1.6732632423543772 (- (exp v) 1)))))
                                   '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (sigmoid x) (mapcar (lambda (v) (/ 1 (+ 1 (exp (- v))))) '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (silu x) (mapcar (lambda (v) (/ v (+ 1 (exp (- v))))) '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (softplus x) (mapcar (lambda (v) (log (+ 1 (exp v)))) '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (mish x) (mapcar (lambda (v) (* v (tanh (log (+ 1 (exp v)))))) '(-2.0 -0.5 0.0 0.5 2.0))))
    (is (allclose (hardswish x) '(-0.3333333333 -0.2083333333 0.0 0.2916666667 1.6666666667)))
    (is (allclose (hardsigmoid x) '(0.1666666667 0.4166666667 0.5 0.5833333333 0.8333333333)))
    ;; gelu: exact (erf) and tanh forms; PyTorch gives these values.
    (is (allclose (gelu x) '(-0.04550026 -0.15426877 0.0 0.34573123 1.95449974) :atol 1e-6))
    (is (allclose (gelu x :approximate :tanh) '(-0.04540231 -0.15428599 0.0 0.34571401 1.95459769) :atol 1e-6))))

(run-tests)
