;;; SPDX-License-Identifier: Apache-2.0
;;; Elementwise functions. Operands broadcast (NumPy rules) and promote (see dtype.h);
;;; Lisp numbers are weak scalars that take the tensor's dtype. + - * / and the numeric
;;; builtins (exp, sqrt, max, ...) call the %tensor methods here when given a tensor.

(defconstant +log2e+ 1.4426950408889634 "log2(e), the factor exp uses to become exp2.
  (round (* 1000 +log2e+))  ; => 1443")
(defconstant +ln2+ 0.6931471805599453 "ln(2), the factor log uses to become log2.
  (round (* 1000 +ln2+))  ; => 693")
(defconstant +half-pi+ 1.5707963267948966 "pi/2.
  (= +half-pi+ (/ pi 2))  ; => t")

(defun %args2 (fn a b &optional dt)
  (%elementwise-args fn (list a b) dt))

(defun %int-dtype-p (dt) (not (or (dtype-float-p dt) (eq dt 'bool))))

;;; --- arithmetic ----------------------------------------------------------------------

(defcomposite add (a b)
  "(add A B) A + B elementwise, broadcasting and promoting.
  (to-list (add (tensor '(1 2)) 10))  ; => (11 12)"
  (let ((xs (%args2 'add a b))) (prim:add (first xs) (second xs))))

(defcomposite sub (a b)
  "(sub A B) A - B elementwise, broadcasting and promoting.
  (to-list (sub (tensor '(5 7)) (tensor '(1 2))))  ; => (4 5)"
  (let ((xs (%args2 'sub a b))) (prim:add (first xs) (prim:neg (second xs)))))

(defcomposite mul (a b)
  "(mul A B) A * B elementwise, broadcasting and promoting.
  (to-list (mul (tensor '(1.0 2.0)) (tensor '(3.0 4.0))))  ; => (3.0 8.0)"
  (let ((xs (%args2 'mul a b))) (prim:mul (first xs) (second xs))))

(defcomposite div (a b)
  "(div A B) A / B elementwise (true division: integers give f32). x/0 is inf or -inf,
0/0 is NaN, as IEEE 754 says.
  (to-list (div (tensor '(1.0 3.0)) 2.0))  ; => (0.5 1.5)"
  (if (or (%complexp a) (%complexp b)) (%complex-div a b)
  (let* ((dt (result-dtype a b))
         (xs (%args2 'div a b (if (dtype-float-p dt) dt 'f32))))
    (prim:mul (first xs) (prim:recip (second xs))))))

(defcomposite neg (x)
  "(neg X) -X elementwise.
  (to-list (neg (tensor '(1.0 -2.0))))  ; => (-1.0 2.0)"
  (prim:neg (%as-tensor x)))

(defcomposite reciprocal (x)
  "(reciprocal X) 1/X elementwise (as a float).
  (to-list (reciprocal (tensor '(2 4))))  ; => (0.5 0.25)"
  (if (%complexp x) (%complex-recip x) (prim:recip (%float-tensor x))))

(defun %fold (f args)
  (let ((acc (car args)))
    (dolist (x (cdr args) acc) (setq acc (funcall f acc x)))))

(defun %tensor+ (&rest args) (if (cdr args) (%fold #'add args) (%as-tensor (car args))))
(defun %tensor* (&rest args) (if (cdr args) (%fold #'mul args) (%as-tensor (car args))))
(defun %tensor- (&rest args) (if (cdr args) (%fold #'sub args) (neg (car args))))
(defun %tensor/ (&rest args) (if (cdr args) (%fold #'div args) (reciprocal (car args))))
(defun %tensor-1+ (x) (add x 1))
(defun %tensor-1- (x) (sub x 1))

;;; --- comparisons (bool results; NaN compares false except with /=) -----------------------

(defcomposite lt (a b)
  "(lt A B) A < B elementwise, a bool tensor.
  (to-list (lt (tensor '(1 5)) 3))  ; => (t nil)"
  (let ((xs (%args2 'lt a b))) (prim:cmplt (first xs) (second xs))))

(defcomposite gt (a b)
  "(gt A B) A > B elementwise, a bool tensor.
  (to-list (gt (tensor '(1 5)) 3))  ; => (nil t)"
  (let ((xs (%args2 'gt a b))) (prim:cmplt (second xs) (first xs))))

(defcomposite equals (a b)
  "(equals A B) A == B elementwise, a bool tensor (also (= A B)).
  (to-list (equals (tensor '(1 2 3)) (tensor '(1 0 3))))  ; => (t nil t)"
  (let ((xs (%args2 'equals a b))) (prim:cmpeq (first xs) (second xs))))

(defcomposite ne (a b)
  "(ne A B) A /= B elementwise, a bool tensor (true where either is NaN).
  (to-list (ne (tensor '(1 2)) (tensor '(1 3))))  ; => (nil t)"
  (let ((xs (%args2 'ne a b))) (logical-not (prim:cmpeq (first xs) (second xs)))))

(defcomposite le (a b)
  "(le A B) A <= B elementwise, a bool tensor.
  (to-list (le (tensor '(1 3 5)) 3))  ; => (t t nil)"
  (let ((xs (%args2 'le a b)))
    (prim:or (prim:cmplt (first xs) (second xs)) (prim:cmpeq (first xs) (second xs)))))

(defcomposite ge (a b)
  "(ge A B) A >= B elementwise, a bool tensor.
  (to-list (ge (tensor '(1 3 5)) 3))  ; => (nil t t)"
  (le b a))

(defun %chain (f args)
  (if (cddr args)
      (logical-and (funcall f (first args) (second args)) (%chain f (cdr args)))
      (funcall f (first args) (second args))))

(defun %tensor< (&rest args) (%chain #'lt args))
(defun %tensor> (&rest args) (%chain #'gt args))
(defun %tensor<= (&rest args) (%chain #'le args))
(defun %tensor>= (&rest args) (%chain #'ge args))
(defun %tensor= (&rest args) (%chain #'equals args))
(defun %tensor/= (a b) (ne a b))

;;; --- logic and bits --------------------------------------------------------------------

(defun %bool (x) (let ((tx (%as-tensor x))) (if (eq (tensor-dtype tx) 'bool) tx (prim:cast tx 'bool))))

(defcomposite logical-not (x)
  "(logical-not X) True where X is zero or false.
  (to-list (logical-not (tensor '(0 2 0))))  ; => (t nil t)"
  (let ((b (%bool x))) (prim:xor b (%scalar-like t b))))

(defcomposite logical-and (a b)
  "(logical-and A B) True where both A and B are nonzero.
  (to-list (logical-and (tensor '(t t nil)) (tensor '(t nil nil))))  ; => (t nil nil)"
  (let ((xs (%args2 'logical-and (%bool a) (%bool b)))) (prim:and (first xs) (second xs))))

(defcomposite logical-or (a b)
  "(logical-or A B) True where A or B is nonzero.
  (to-list (logical-or (tensor '(1 0 0)) (tensor '(0 0 3))))  ; => (t nil t)"
  (let ((xs (%args2 'logical-or (%bool a) (%bool b)))) (prim:or (first xs) (second xs))))

(defcomposite logical-xor (a b)
  "(logical-xor A B) True where exactly one of A and B is nonzero.
  (to-list (logical-xor (tensor '(t t nil)) (tensor '(t nil nil))))  ; => (nil t nil)"
  (let ((xs (%args2 'logical-xor (%bool a) (%bool b)))) (prim:xor (first xs) (second xs))))

(defcomposite bitwise-and (a b)
  "(bitwise-and A B) Bitwise and of integer (or bool) tensors.
  (to-list (bitwise-and (tensor '(12 10)) (tensor '(10 6))))  ; => (8 2)"
  (let ((xs (%args2 'bitwise-and a b))) (prim:and (first xs) (second xs))))

(defcomposite bitwise-or (a b)
  "(bitwise-or A B) Bitwise or of integer (or bool) tensors.
  (to-list (bitwise-or (tensor '(12 1)) (tensor '(10 2))))  ; => (14 3)"
  (let ((xs (%args2 'bitwise-or a b))) (prim:or (first xs) (second xs))))

(defcomposite bitwise-xor (a b)
  "(bitwise-xor A B) Bitwise exclusive or of integer (or bool) tensors.
  (to-list (bitwise-xor (tensor '(12 7)) (tensor '(10 7))))  ; => (6 0)"
  (let ((xs (%args2 'bitwise-xor a b))) (prim:xor (first xs) (second xs))))

(defcomposite where (c a b)
  "(where COND A B) A where COND is true (nonzero), else B; all three broadcast.
  (to-list (where (tensor '(t nil t)) (tensor '(1 2 3)) (tensor '(10 20 30))))  ; => (1 20 3)"
  (let* ((xs (%args2 'where a b))
         (shp (broadcast-shapes (tensor-shape (first xs)) (shape (%as-tensor c)))))
    (prim:where (broadcast-to (%bool c) shp) (broadcast-to (first xs) shp) (broadcast-to (second xs) shp))))

(defcomposite cast (x dt)
  "(cast X DTYPE) X converted to DTYPE (floats to integers truncate toward zero).
  (to-list (cast (tensor '(1.5 -2.5)) 'i32))  ; => (1 -2)"
  (prim:cast (%as-tensor x) (%dtype-arg 'cast dt)))

(defcomposite isnan (x)
  "(isnan X) True where X is NaN.
  (to-list (isnan (div (tensor '(0.0 1.0)) 0.0)))  ; => (t nil)"
  (let ((tx (%as-tensor x)))
    (cond ((%complexp tx) (logical-or (isnan (%part tx 0)) (isnan (%part tx 1))))
          ((dtype-float-p (tensor-dtype tx)) (ne tx tx))
          (t (%scalar-like nil (prim:cast tx 'bool))))))

(defcomposite isinf (x)
  "(isinf X) True where X is +inf or -inf.
  (to-list (isinf (div (tensor '(1.0 -1.0 0.0)) 0.0)))  ; => (t t nil)"
  (let ((tx (%as-tensor x)))
    (cond ((%complexp tx) (logical-or (isinf (%part tx 0)) (isinf (%part tx 1))))
          ((dtype-float-p (tensor-dtype tx)) (equals (abs tx) (%scalar-like +inf+ tx)))
          (t (%scalar-like nil (prim:cast tx 'bool))))))

;;; --- min, max, clip --------------------------------------------------------------------

(defcomposite maximum (a b)
  "(maximum A B) The larger of A and B elementwise (NaN if either is NaN).
  (to-list (maximum (tensor '(1 5)) (tensor '(4 2))))  ; => (4 5)"
  (let ((xs (%args2 'maximum a b))) (prim:max (first xs) (second xs))))

(defcomposite minimum (a b)
  "(minimum A B) The smaller of A and B elementwise (NaN if either is NaN).
  (to-list (minimum (tensor '(1 5)) (tensor '(4 2))))  ; => (1 2)
  (to-list (minimum (tensor '(1.0 5.0)) 3.0))  ; => (1.0 3.0)"
  (let* ((xs (%args2 'minimum a b)) (x (first xs)) (y (second xs)))
    (if (dtype-float-p (tensor-dtype x))
        (prim:neg (prim:max (prim:neg x) (prim:neg y)))
        (prim:where (prim:cmplt y x) y x))))

(defcomposite clip (x lo hi)
  "(clip X LO HI) X limited to [LO, HI] (either bound may be nil for none; HI wins when
LO > HI). NaN stays NaN. The gradient reaches X where LO <= X <= HI, bounds included, as
PyTorch's clamp does; a tensor bound gets it where X is beyond it.
  (to-list (clip (tensor '(-2.0 0.5 3.0)) -1.0 1.0))  ; => (-1.0 0.5 1.0)"
  ;; where, not maximum/minimum: those split the gradient of a tie at a bound (issue 19).
  (let ((r (%as-tensor x)))
    (when lo (setq r (where (lt r lo) lo r)))
    (when hi (setq r (where (gt r hi) hi r)))
    r))

;;; --- powers, exponentials, logarithms ---------------------------------------------------

(defcomposite %tensor-exp (x)
  "(exp X) e^X elementwise."
  ;; 2^(X log2 e), with the product in f64 for narrower floats: rounded to f32 it moves the
  ;; exponent by up to |X| 2^-24, 60 ulp of the result near X = 80 (issue 19).
  (let* ((f (%inexact-tensor x)) (dt (tensor-dtype f)))
    (cond ((%complexp f) (%complex-exp f))
          ((eq dt 'f64)
         (prim:exp2 (prim:mul f (%scalar-like +log2e+ f))))
          (t (prim:cast (prim:exp2 (prim:mul (prim:cast f 'f64) (prim:const +log2e+ 'f64 (tensor-shape f)))) dt)))))

(defcomposite exp2 (x)
  "(exp2 X) 2^X elementwise.
  (to-list (exp2 (tensor '(0.0 3.0 -1.0))))  ; => (1.0 8.0 0.5)"
  (prim:exp2 (%float-tensor x)))

(defcomposite %tensor-log (x &optional base)
  "(log X [BASE]) Natural logarithm (or in BASE) elementwise: log 0 = -inf, log of a
negative number is NaN."
  (let* ((f (%inexact-tensor x))
         (l (if (%complexp f) (%complex-log f) (prim:mul (prim:log2 f) (%scalar-like +ln2+ f)))))
    (if base (div l (log (if (%complexp f) base (%as-tensor base (tensor-dtype f))))) l)))

(defun %neg-abs (f)
  ;; -|F| as where(F < 0, F, -F): never positive, so exp of it never overflows, and its
  ;; gradient at 0 is -1 (abs's subgradient there is 0, which would lose the derivative).
  (prim:where (prim:cmplt f (%scalar-like 0 f)) f (prim:neg f)))

(defun %in-f64 (f fn)
  ;; FN of the float tensor F computed in f64 and rounded once to F's dtype: for composites
  ;; of several rounding steps, which in f32 would add up to more than 2 ulp.
  (let ((dt (tensor-dtype f)))
    (if (eq dt 'f64) (funcall fn f) (prim:cast (funcall fn (prim:cast f 'f64)) dt))))

(defun %series-terms (f f64-terms other-terms)
  (if (eq (tensor-dtype f) 'f64) f64-terms other-terms))

(defcomposite expm1 (x)
  "(expm1 X) exp(X) - 1 elementwise, accurate for small X (where exp(X) - 1 would cancel).
  (item (expm1 (tensor 1e-10 :dtype 'f64)))  ; => 1.00000000005e-10
  (item (sub (exp (tensor 1e-10 :dtype 'f64)) 1))  ; => 1.000000082740371e-10"
  ;; |X| < 1: the Taylor series by Horner's rule, X (1 + X/2 (1 + X/3 (1 + ...))), to X^12
  ;; (X^19 for f64): the next term is under half an ulp. Elsewhere exp(X) - 1 loses nothing.
  ;; Each branch sees a harmless input where it is not taken, so gradients stay finite.
  (let* ((f (%float-tensor x))
         (zero (%scalar-like 0 f)) (one (%scalar-like 1 f))
         (small (prim:cmplt (abs f) one))
         (u (prim:where small f zero))
         (acc one))
    (loop for k from (%series-terms f 19 12) downto 2
          do (setq acc (prim:add one (prim:mul (prim:mul u (%scalar-like (/ 1.0 k) f)) acc))))
    (prim:where small (prim:mul u acc) (prim:add (exp (prim:where small zero f)) (prim:neg one)))))

(defcomposite log1p (x)
  "(log1p X) log(1 + X) elementwise, accurate for small X (where 1 + X would round).
  (item (log1p (tensor 1e-10 :dtype 'f64)))  ; => 9.999999999500001e-11
  (item (log (add 1 (tensor 1e-10 :dtype 'f64))))  ; => 1.000000082690371e-10"
  ;; For -1/2 <= X <= 1: log(1 + X) = 2 atanh(s), s = X / (2 + X), |s| <= 1/3, by its series
  ;; s + s^3/3 + ... to s^17 (s^35 for f64). Elsewhere 1 + X rounds by under an ulp of the log.
  (%in-f64 (%float-tensor x) #'%log1p))

(defun %log1p (f)
  (let* ((zero (%scalar-like 0 f)) (one (%scalar-like 1 f))
         (near (logical-and (ge f -0.5) (le f 1)))
         (u (prim:where near f zero))
         (s (prim:mul u (prim:recip (prim:add (%scalar-like 2 f) u))))
         (s2 (prim:mul s s))
         (acc (%scalar-like 0 f)))
    (loop for k from (%series-terms f 35 17) downto 1 by 2
          do (setq acc (prim:add (%scalar-like (/ 1.0 k) f) (prim:mul s2 acc))))
    (prim:where near
                (prim:mul (%scalar-like 2 f) (prim:mul s acc))
                (log (prim:add one (prim:where near zero f))))))

(defcomposite log2 (x)
  "(log2 X) Base-2 logarithm elementwise.
  (to-list (log2 (tensor '(1.0 8.0 0.5))))  ; => (0.0 3.0 -1.0)"
  (prim:log2 (%float-tensor x)))

(defcomposite %tensor-sqrt (x)
  "(sqrt X) Square root elementwise: NaN for negative X, as IEEE 754 says (the principal root
for a complex X)."
  (if (%complexp x) (%complex-sqrt x) (prim:sqrt (%float-tensor x))))

(defcomposite rsqrt (x)
  "(rsqrt X) 1/sqrt(X) elementwise.
  (to-list (rsqrt (tensor '(4.0 16.0))))  ; => (0.5 0.25)"
  (if (%complexp x) (%complex-recip (%complex-sqrt x)) (prim:recip (prim:sqrt (%float-tensor x)))))

(defcomposite square (x)
  "(square X) X*X elementwise.
  (to-list (square (tensor '(3 -2))))  ; => (9 4)"
  (let ((tx (%as-tensor x))) (prim:mul tx tx)))

(defun %ipow (x n)
  "X to the non-negative integer power N by repeated squaring."
  (cond ((= n 0) (ones-like x))
        ((= n 1) x)
        ((evenp n) (let ((h (%ipow x (/ n 2)))) (prim:mul h h)))
        (t (prim:mul x (%ipow x (- n 1))))))

(defcomposite pow (x y)
  "(pow X Y) X to the power Y elementwise. A negative X with an integral Y keeps its sign;
with a fractional Y it gives NaN. 0^0 = 1.
  (to-list (pow (tensor '(2.0 3.0)) 2.0))  ; => (4.0 9.0)"
  (cond ((and (%complexp x) (integerp y) (< y 0) (>= y -64)) (%complex-recip (%ipow x (- y))))
        ((and (integerp y) (>= y 0) (<= y 64)) (%ipow (%as-tensor x) y))
        ((or (%complexp x) (%complexp y)) (%complex-pow x y))
        ((and (integerp y) (< y 0) (>= y -64)) (prim:recip (%ipow (%float-tensor x) (- y))))
        ((and (floatp y) (= y 0.5)) (sqrt x))
        (t
         (let* ((dt (result-dtype x y))
                (xs (%args2 'pow x y (if (dtype-float-p dt) dt 'f32)))
                (b (first xs)) (e (second xs))
                (mag (prim:exp2 (prim:mul e (prim:log2 (abs b)))))
                (odd (equals (fmod (abs e) 2) 1))
                (integral (equals (floor e) e))
                (r (where (lt b 0) (where integral (where odd (neg mag) mag) +nan+) mag)))
           (let ((out (where (equals e 0) 1 r)))
             (if (dtype-float-p dt) out (prim:cast (round out) dt)))))))

(defun %tensor-expt (x y) (pow x y))
(defun %tensor-float (x) (cast x 'f32))

;;; --- absolute value, sign, rounding -------------------------------------------------------

(defcomposite %tensor-abs (x)
  "(abs X) |X| elementwise."
  (let ((tx (%as-tensor x)))
    (cond ((%complexp tx) (%complex-abs tx))
          ((eq (tensor-dtype tx) 'bool) tx)
          ;; + 0 makes max(0, -0) = -0 a +0; the max gives gradient 0 at 0, as sign(0).
          ((dtype-float-p (tensor-dtype tx)) (prim:add (prim:max tx (prim:neg tx)) (%scalar-like 0 tx)))
          (t (prim:where (prim:cmplt tx (%scalar-like 0 tx)) (prim:neg tx) tx)))))

(defcomposite sign (x)
  "(sign X) -1, 0 or 1 by the sign of X (NaN stays NaN).
  (to-list (sign (tensor '(-3.0 0.0 2.0))))  ; => (-1.0 0.0 1.0)"
  (if (%complexp x) (%complex-sign x)
  (let* ((tx (%as-tensor x)) (dt (tensor-dtype tx))
         (s (prim:add (prim:cast (prim:cmplt (%scalar-like 0 tx) tx) dt)
                      (prim:neg (prim:cast (prim:cmplt tx (%scalar-like 0 tx)) dt)))))
    (if (dtype-float-p dt) (prim:where (prim:cmpeq tx tx) s tx) s))))

(defun %int-limit (dt)
  ;; Floats at or beyond this magnitude are already integers.
  (cond ((eq dt 'f64) 4503599627370496.0) ((eq dt 'f32) 8388608.0) ((eq dt 'bf16) 128.0) (t 1024.0)))

(defcomposite trunc (x)
  "(trunc X) X rounded toward zero elementwise.
  (to-list (trunc (tensor '(1.7 -1.7))))  ; => (1.0 -1.0)"
  (%refuse-complex 'trunc x)
  (let* ((tx (%as-tensor x)) (dt (tensor-dtype tx)))
    (if (not (dtype-float-p dt))
        tx
        ;; Through i32 for the 32-bit floats and narrower (their integers start at 2^23, well
        ;; inside it): vector code on AVX2, which converts floats to i64 one by one.
        (let ((tr (prim:cast (prim:cast tx (if (eq dt 'f64) 'i64 'i32)) dt)))
          (prim:where (prim:cmplt (abs tx) (%scalar-like (%int-limit dt) tx)) tr tx)))))

(defcomposite %tensor-floor (x &optional divisor)
  "(floor X [DIVISOR]) The largest integer not above X (or X/DIVISOR) elementwise; for
integer tensors with a divisor, floor division."
  (%refuse-complex 'floor x)
  (if divisor
      (floor-divide x divisor)
      (let* ((tx (%as-tensor x)) (tr (trunc tx)))
        (if (dtype-float-p (tensor-dtype tx))
            (prim:add tr (prim:neg (prim:cast (prim:cmplt tx tr) (tensor-dtype tx))))
            tx))))

(defcomposite ceil (x)
  "(ceil X) The smallest integer not below X elementwise.
  (to-list (ceil (tensor '(1.2 -1.2 3.0))))  ; => (2.0 -1.0 3.0)"
  (%refuse-complex 'ceil x)
  (let* ((tx (%as-tensor x)) (tr (trunc tx)))
    (if (dtype-float-p (tensor-dtype tx))
        (prim:add tr (prim:cast (prim:cmplt tr tx) (tensor-dtype tx)))
        tx)))

(defcomposite %round-tensor (x)
  "(round X) X rounded to the nearest integer elementwise; halves go to the even one."
  (%refuse-complex 'round x)
  (let ((tx (%as-tensor x)))
    (if (not (dtype-float-p (tensor-dtype tx)))
        tx
        (let* ((f (floor tx))
               (d (prim:add tx (prim:neg f)))
               (f1 (prim:add f (%scalar-like 1 f)))
               (f-even (equals (fmod f 2) 0)))
          (where (gt d 0.5) f1 (where (lt d 0.5) f (where f-even f f1)))))))

(defun %check-int-divisor (fn x b)
  ;; An integer division by a literal 0 is an error, as in PyTorch; a tensor divisor's zeros
  ;; are only known when the kernel runs, which has nowhere to signal: there x/0 gives 0 and
  ;; x mod 0 gives x (the primitives' definition, as NumPy's integer division).
  (when (and (numberp b) (zerop b) (%int-dtype-p (tensor-dtype x)))
    (error 'division-by-zero "~a: integer division by zero" fn)))

(defcomposite fmod (a b)
  "(fmod A B) Remainder of A/B truncated toward zero (sign of A), elementwise. For integer
tensors, a literal 0 divisor is a division-by-zero error and a 0 in a divisor tensor gives A.
  (to-list (fmod (tensor '(7 -7)) 3))  ; => (1 -1)
  (to-list (fmod (tensor '(5.5 -5.5)) 2.0))  ; => (1.5 -1.5)"
  (let* ((xs (%args2 'fmod a b)) (x (first xs)) (y (second xs)))
    (%check-int-divisor 'fmod x b)
    (if (dtype-float-p (tensor-dtype x))
        (prim:add x (prim:neg (prim:mul y (trunc (prim:mul x (prim:recip y))))))
        (prim:mod x y))))

(defcomposite floor-divide (a b)
  "(floor-divide A B) floor(A/B) elementwise (integer tensors stay integers). For integer
tensors, a literal 0 divisor is a division-by-zero error and a 0 in a divisor tensor gives 0
(NumPy's convention; PyTorch raises).
  (to-list (floor-divide (tensor '(7 -7)) 2))  ; => (3 -4)"
  (let* ((xs (%args2 'floor-divide a b)) (x (first xs)) (y (second xs)))
    (%check-int-divisor 'floor-divide x b)
    (if (dtype-float-p (tensor-dtype x))
        (floor (prim:mul x (prim:recip y)))
        (let* ((q (prim:idiv x y)) (r (prim:mod x y))
               (adjust (logical-and (logical-and (ne r 0) (ne y 0)) (ne (lt r 0) (lt y 0)))))
          (prim:add q (prim:neg (prim:cast adjust (tensor-dtype q))))))))

(defcomposite remainder (a b)
  "(remainder A B) A mod B with the sign of B (Lisp mod, Python %), elementwise.
  (to-list (remainder (tensor '(7 -7)) 3))  ; => (1 2)"
  (let* ((xs (%args2 'remainder a b)) (x (first xs)) (y (second xs)))
    (%check-int-divisor 'remainder x b)
    (sub x (mul y (floor-divide x y)))))

(defun %tensor-round (x &optional d) (if d (round (div x d)) (%round-tensor x)))
(defun %tensor-ceiling (x &optional d) (if d (ceil (div x d)) (ceil x)))
(defun %tensor-truncate (x &optional d) (if d (trunc (div x d)) (trunc x)))
(defun %tensor-mod (a b) (remainder a b))
(defun %tensor-rem (a b) (fmod a b))

;;; --- trigonometry ----------------------------------------------------------------------

(defcomposite %tensor-sin (x)
  "(sin X) Sine of X radians elementwise."
  (if (%complexp x) (%complex-sin x) (prim:sin (%float-tensor x))))

(defcomposite %tensor-cos (x)
  "(cos X) Cosine of X radians elementwise."
  (if (%complexp x) (%complex-cos x) (prim:cos (%float-tensor x))))

(defcomposite %tensor-tan (x)
  "(tan X) Tangent of X radians elementwise."
  (div (sin x) (cos x)))

(defun %atan-small (x)
  ;; Taylor series of atan for |x| <= tan(pi/16): atan x = x * sum_n (-1)^n x^2n / (2n+1),
  ;; with terms to x^23 (the rest is below 1e-17), evaluated by Horner's rule in x^2.
  (let* ((x2 (prim:mul x x)) (acc (%scalar-like (/ -1.0 23) x)))
    (dolist (k '(21 19 17 15 13 11 9 7 5 3 1))
      (setq acc (prim:add (prim:mul acc x2)
                          (%scalar-like (* (if (evenp (/ (- k 1) 2)) 1.0 -1.0) (/ 1.0 k)) x))))
    (prim:mul x acc)))

(defcomposite %tensor-atan (y &optional x)
  "(atan Y [X]) Arc tangent of Y elementwise, or of Y/X using both signs (atan2)."
  (if x
      (atan2 y x)
      (let* ((f (%float-tensor y))
             (a (abs f))
             (big (prim:cmplt (%scalar-like 1.0 f) a))
             (r (prim:where big (prim:recip a) a))
             (half (lambda (v) (prim:mul v (prim:recip (prim:add (%scalar-like 1.0 v)
                                                                  (prim:sqrt (prim:add (%scalar-like 1.0 v) (prim:mul v v))))))))
             (s (funcall half (funcall half r)))
             (at (prim:mul (%atan-small s) (%scalar-like 4.0 s)))
             (res (prim:where big (prim:add (%scalar-like +half-pi+ at) (prim:neg at)) at)))
        (prim:mul (sign f) res))))

(defcomposite atan2 (y x)
  "(atan2 Y X) The angle of point (X, Y) in (-pi, pi], elementwise.
  (let ((y (tensor '(1.0 1.0 -1.0 0.0))) (x (tensor '(1.0 -1.0 -1.0 -1.0))))
    (to-list (round (div (atan2 y x) (/ pi 4)))))  ; => (1.0 3.0 -3.0 4.0)"
  (let* ((dt (result-dtype y x))
         (xs (%args2 'atan2 y x (if (dtype-float-p dt) dt 'f32)))
         (yy (first xs)) (xx (second xs))
         (base (atan (div yy xx)))
         (neg-x (lt xx 0))
         ;; A -0 counts as negative, as C's atan2 (and PyTorch's) has it: atan2(-0, -1) = -pi,
         ;; atan2(0, -0) = pi (the complex branch cut's lower side in angle and log).
         (neg-y (logical-or (lt yy 0) (logical-and (equals yy 0) (lt (reciprocal yy) 0))))
         (zero-x (equals xx 0))
         (minus-zero-x (logical-and zero-x (lt (reciprocal xx) 0))))
    (where zero-x
           (where (logical-and (equals yy 0) minus-zero-x)
                  (where neg-y (- pi) pi)
                  (mul (sign yy) +half-pi+))
           (where neg-x (where neg-y (sub base pi) (add base pi)) base))))

(defcomposite %tensor-asin (x)
  "(asin X) Arc sine elementwise (NaN outside [-1, 1])."
  (let ((f (%float-tensor x))) (atan (div f (sqrt (sub 1 (mul f f)))))))

(defcomposite %tensor-acos (x)
  "(acos X) Arc cosine elementwise (NaN outside [-1, 1])."
  (sub +half-pi+ (asin x)))

(defcomposite %tensor-sinh (x)
  "(sinh X) Hyperbolic sine elementwise."
  (let ((f (%inexact-tensor x))) (mul 0.5 (sub (exp f) (exp (neg f))))))

(defcomposite %tensor-cosh (x)
  "(cosh X) Hyperbolic cosine elementwise."
  (let ((f (%inexact-tensor x))) (mul 0.5 (add (exp f) (exp (neg f))))))

(defcomposite %tensor-tanh (x)
  "(tanh X) Hyperbolic tangent elementwise."
  ;; tanh |X| = -m / (2 + m) with m = expm1(-2|X|) in (-1, 0]: no exp overflows and, unlike
  ;; 1 - 2/(1 + exp(2X)), nothing cancels for small X (issue 19).
  ;; Narrower floats: the same in f64, where 1 - exp(-2|X|) loses nothing an f32 result shows
  ;; for |X| >= 1e-3, and below that X (1 - X^2/3 + 2X^4/15): a third of the cost.
  (if (%complexp x) (%complex-tanh x)
  (let ((f (%float-tensor x)))
    (if (eq (tensor-dtype f) 'f64)
        (let* ((m (expm1 (prim:mul (%neg-abs f) (%scalar-like 2 f))))
               (r (prim:mul (prim:neg m) (prim:recip (prim:add (%scalar-like 2 f) m)))))
          (prim:where (prim:cmplt f (%scalar-like 0 f)) (prim:neg r) r))
        (%in-f64 f #'%tanh-narrow)))))

(defun %tanh-narrow (f)
  ;; F in f64, for a result rounded to f32 or narrower.
  (let* ((small (prim:cmplt (abs f) (%scalar-like 1e-3 f)))
         (s (prim:where small f (%scalar-like 0 f)))
         (s2 (prim:mul s s))
         (series (prim:mul s (prim:add (%scalar-like 1 f)
                                       (prim:mul s2 (prim:add (%scalar-like (/ -1.0 3) f)
                                                              (prim:mul s2 (%scalar-like (/ 2.0 15) f)))))))
         (e (prim:exp2 (prim:mul (%neg-abs f) (%scalar-like (* 2 +log2e+) f))))
         (r (prim:mul (prim:add (%scalar-like 1 f) (prim:neg e)) (prim:recip (prim:add (%scalar-like 1 f) e))))
         (signed (prim:where (prim:cmplt f (%scalar-like 0 f)) (prim:neg r) r)))
    (prim:where small series signed)))

(defcomposite asinh (x)
  "(asinh X) Inverse hyperbolic sine elementwise.
  (to-list (round (mul (asinh (tensor '(-1.0 0.0 1.0))) 1000)))  ; => (-881.0 0.0 881.0)"
  (let* ((f (%float-tensor x)) (a (abs f)))
    (mul (sign f) (log (add a (sqrt (add (mul a a) 1)))))))

(defcomposite acosh (x)
  "(acosh X) Inverse hyperbolic cosine elementwise (NaN below 1).
  (to-list (acosh (tensor '(1.0 0.5))))  ; => (0.0 nan)"
  (let ((f (%float-tensor x))) (log (add f (sqrt (sub (mul f f) 1))))))

(defcomposite atanh (x)
  "(atanh X) Inverse hyperbolic tangent elementwise (inf at 1, NaN beyond).
  (to-list (atanh (tensor '(0.0 1.0))))  ; => (0.0 inf)"
  (let ((f (%float-tensor x))) (mul 0.5 (log (div (add 1 f) (sub 1 f))))))

(defun %lgamma-positive (z)
  ;; log Gamma(Z) for Z >= 0.5: Lanczos' approximation with g = 7 and nine coefficients
  ;; (relative error about 1e-15), its sum grouped so f32 keeps its precision too.
  (let* ((x (sub z 1.0))
         (coefficients '(676.5203681218851 -1259.1392167224028 771.3234287776531 -176.6150291621406
                         12.507343278686905 -0.13857109526572012 9.984369578019572e-6 1.5056327351493116e-7))
         (a (add 0.9999999999998099
                 (let ((acc nil) (i 1))
                   (dolist (c coefficients acc)
                     (let ((term (div c (add x (float i)))))
                       (setq acc (if acc (add acc term) term)))
                     (incf i)))))
         (tt (add x 7.5)))
    (add (add 0.9189385332046727 (mul (add x 0.5) (log tt))) (sub (log a) tt))))

(defcomposite lgamma (x)
  "(lgamma X) The logarithm of the absolute value of the gamma function, elementwise (as
torch.lgamma: inf at 0 and the negative integers). Lanczos' approximation, with the
reflection formula below 0.5; its gradient is digamma's.
  (to-list (round (mul (lgamma (tensor '(1.0 2.0 5.0 0.5))) 10000)))  ; => (0.0 0.0 31781.0 5724.0)
  (item (lgamma (tensor 0.0)))  ; => inf"
  (let* ((f (%float-tensor x))
         (small (lt f 0.5))
         ;; Reflection: log Gamma(x) = log(pi / |sin(pi x)|) - log Gamma(1 - x).
         (safe (where small (sub 1.0 f) f))
         (big (%lgamma-positive safe))
         (reflected (sub (log (div 3.141592653589793 (abs (sin (mul f 3.141592653589793))))) big))
         (pole (logical-and (le f 0.0) (equals f (floor f)))))
    (where pole (%scalar-like inf f) (where small reflected big))))

(defcomposite digamma (x)
  "(digamma X) The logarithmic derivative of the gamma function, elementwise (as
torch.digamma): the recurrence up to X + 6 and the asymptotic series there (error about
1e-12), with the reflection formula at and below 0; nan at 0 and the negative integers.
  (to-list (round (mul (digamma (tensor '(1.0 2.0 0.5 10.0))) 10000)))  ; => (-5772.0 4228.0 -19635.0 22518.0)"
  (let* ((f (%float-tensor x))
         (negative (le f 0.0))
         (z (where negative (sub 1.0 f) f))
         (shift (let ((acc nil))
                  (dotimes (i 6 acc)
                    (let ((term (reciprocal (add z (float i)))))
                      (setq acc (if acc (add acc term) term))))))
         (y (add z 6.0))
         (y2 (reciprocal (mul y y)))
         (series (sub (sub (log y) (div 0.5 y))
                      (mul y2 (sub 0.08333333333333333
                                   (mul y2 (sub 0.008333333333333333
                                                (mul y2 (sub 0.003968253968253968 (mul y2 0.004166666666666667)))))))))
         (positive (sub series shift))
         ;; Reflection: psi(x) = psi(1 - x) - pi / tan(pi x).
         (reflected (sub positive (div 3.141592653589793 (tan (mul f 3.141592653589793)))))
         (pole (logical-and negative (equals f (floor f)))))
    (where pole (%scalar-like nan f) (where negative reflected positive))))

(defcomposite erf (x)
  "(erf X) The error function elementwise (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7).
  (to-list (round (mul (erf (tensor '(-1.0 0.0 1.0 3.0))) 1000)))  ; => (-843.0 0.0 843.0 1000.0)"
  (let* ((f (%float-tensor x)) (a (abs f))
         (k (reciprocal (add 1 (mul 0.3275911 a))))
         (poly (mul k (add 0.254829592 (mul k (add -0.284496736 (mul k (add 1.421413741 (mul k (add -1.453152027 (mul k 1.061405429))))))))))
         (r (sub 1 (mul poly (exp (neg (mul a a)))))))
    (mul (sign f) r)))

