;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: numbers people can trust. Gradients stay finite wherever the true gradient is
;;; (no intermediate overflows), subgradients follow PyTorch's conventions, f32 results are
;;; within 2 ulp of the correctly rounded value over dense samples, and f32 sums do not
;;; saturate. Known values are PyTorch's (float64) on the same inputs.

(defun tl (x) (to-list x))
(load "data/grad_check.lisp")

(defun grad-of (f xs &optional (dtype 'f32))
  ;; d/dx sum(f(x)) at the points XS.
  (let ((x (requires-grad! (tensor xs :dtype dtype))))
    (backward (sum (funcall f x)))
    (tl (grad x))))

(defun finite-list-p (l) (every (lambda (v) (and (= v v) (< (abs v) 1e300))) l))

(defun near (a b &optional (rtol 1e-5) (atol 1e-30))
  (and (= (length a) (length b))
       (every #'identity (mapcar (lambda (x y) (<= (abs (- x y)) (+ atol (* rtol (abs y))))) a b))))

(deftest gradients-at-extremes
  ;; sigmoid'(x) = s(1 - s): finite (and tiny) far out on both sides.
  (is (near (grad-of #'sigmoid '(-200.0 -89.0 0.0 89.0 200.0) 'f64)
            '(1.3838965267367376e-87 2.2273657648821e-39 0.25 2.2273657648821e-39 1.3838965267367376e-87)))
  (is (finite-list-p (grad-of #'sigmoid '(-1e30 -200.0 -89.0 0.0 89.0 1e30))))
  ;; tanh'(x) = 1 - tanh^2
  (is (near (grad-of #'tanh '(-100.0 -44.0 0.0 44.0) 'f64)
            '(5.536784306216169e-87 2.4210071473580233e-38 1.0 2.4210071473580233e-38)))
  (is (finite-list-p (grad-of #'tanh '(-1e30 -100.0 -44.0 44.0 1e30))))
  ;; elu and selu for large positive x: 1 (scale for selu); exp(x) for very negative x
  (is (equal (grad-of #'elu '(100.0 1000.0 1e30)) '(1.0 1.0 1.0)))
  (is (near (grad-of #'selu '(100.0 1e30 -1.0) 'f64)
            '(1.0507009873554805 1.0507009873554805 0.6467686709528838)))
  ;; softplus: sigmoid(x), 1 for huge x
  (is (near (grad-of #'softplus '(-100.0 0.0 1e30 1e300) 'f64) '(3.720075976020836e-44 0.5 1.0 1.0)))
  ;; gelu with the tanh form, far below -10.6 and above
  (is (near (grad-of (lambda (x) (gelu x :approximate :tanh)) '(-11.0 -100.0 -1e20 3.0 1e20) 'f64)
            '(0.0 0.0 0.0 1.0115842157701063 1.0) 1e-6 1e-40))
  ;; prod with zeros: the product of the other elements
  (is (equal (grad-of (lambda (x) (prod x :axis 1)) '((1.0 0.0 3.0) (2.0 2.0 1.0) (0.0 0.0 1.0)))
             '((0.0 3.0 0.0) (2.0 2.0 4.0) (0.0 0.0 0.0))))
  (is (equal (grad-of #'prod '(2.0 0.0 5.0)) '(0.0 10.0 0.0)))
  ;; binary cross-entropy at p = 0 and 1: logs clamped at -100, gradient (p - t)/max(p(1-p), 1e-12)
  (require 'nn)
  (let ((p (requires-grad! (tensor '(0.0 1.0 0.5 1.0) :dtype 'f64)))
        (tg (tensor '(1.0 0.0 1.0 1.0) :dtype 'f64)))
    (is (near (tl (nn:binary-cross-entropy p tg :reduction :none)) '(100.0 100.0 0.6931471805599453 0.0)))
    (backward (nn:binary-cross-entropy p tg :reduction :sum))
    (is (near (tl (grad p)) '(-1e12 1e12 -2.0 0.0))))
  ;; bce with logits at 0: sigmoid(0) - t
  (is (near (grad-of (lambda (x) (nn:binary-cross-entropy-with-logits x (tensor '(1.0 0.0) :dtype 'f64) :reduction :sum))
                     '(0.0 0.0) 'f64)
            '(-0.5 0.5))))

(deftest subgradients
  ;; relu'(0) = 0; NaN stays NaN
  (is (equal (grad-of #'relu '(-1.0 0.0 -0.0 2.0)) '(0.0 0.0 0.0 1.0)))
  (is (isnan (item (relu (tensor (list +nan+))))))
  ;; clamp passes gradient 1 at its bounds
  (is (equal (grad-of (lambda (x) (clip x 0 1)) '(-1.0 0.0 0.5 1.0 2.0)) '(0.0 1.0 1.0 1.0 0.0)))
  (is (isnan (item (clip (tensor (list +nan+)) 0 1))))
  ;; max along an axis and max over everything: a tie sends it all to the first
  (is (equal (grad-of (lambda (x) (max x :axis 1)) '((1.0 3.0 3.0) (2.0 2.0 1.0)))
             '((0.0 1.0 0.0) (1.0 0.0 0.0))))
  (is (equal (grad-of #'max '((1.0 3.0) (3.0 3.0))) '((0.0 1.0) (0.0 0.0))))
  (is (equal (grad-of (lambda (x) (max x :axis '(0 1))) '((1.0 3.0) (3.0 3.0))) '((0.0 1.0) (0.0 0.0))))
  ;; of -0 and +0 the max is +0 in either order (IEEE maximum), so a max reduce of zeros is +0
  ;; whatever its order of combining; -0 only when every element is
  (dolist (dt '(f32 f16 bf16 f64))
    (let ((a (tensor '(-0.0 0.0 -0.0 -0.0) :dtype dt))
          (b (tensor '(0.0 -0.0 -0.0 0.0) :dtype dt)))
      (is (equal (tl (div 1.0 (maximum a b))) (list inf inf (- inf) inf)))
      (is (equal (tl (div 1.0 (maximum b a))) (list inf inf (- inf) inf))))
    (let ((rows (tensor (list (append (make-list 37 :initial-element -0.0) '(0.0))
                              (append '(0.0) (make-list 37 :initial-element -0.0))
                              (make-list 38 :initial-element -0.0))
                        :dtype dt)))
      (is (equal (tl (div 1.0 (max rows :axis 1))) (list inf inf (- inf))))
      (is (equal (tl (div 1.0 (max (transpose rows) :axis 0))) (list inf inf (- inf))))))
  ;; a NaN is the max, and gets the gradient
  (is (equal (grad-of (lambda (x) (max x :axis 0)) (list 1.0 +nan+ 3.0)) '(0.0 1.0 0.0)))
  ;; max-pool: each window's first maximum
  (is (equal (grad-of (lambda (x) (max-pool2d x 2)) '((((1.0 3.0 2.0 2.0) (3.0 1.0 2.0 2.0)))))
             '((((0.0 1.0 1.0 0.0) (0.0 0.0 0.0 0.0))))))
  ;; abs: +0 for -0, gradient 0 at 0
  (is (equal (tl (div 1.0 (abs (tensor '(-0.0 0.0))))) (list inf inf)))
  (is (equal (grad-of #'abs '(-2.0 0.0 3.0)) '(-1.0 0.0 1.0))))

;;; f32 results against the same inputs in f64, in units in the last place of the f32 result.

(defun ulp-error (f32-result f64-result)
  ;; The largest |a - b| / ulp(b) (ulp of f32 at b, 2^-149 at least), elementwise.
  (let* ((b f64-result)
         (a (cast f32-result 'f64))
         (mag (maximum (abs b) 1.1754943508222875e-38))
         (ulp (exp2 (sub (floor (log2 mag)) 23)))
         (both-inf (logical-and (isinf a) (equals a b)))
         (both-nan (logical-and (isnan a) (isnan b)))
         (err (where (logical-or both-inf both-nan) 0 (div (abs (sub a b)) ulp))))
    (item (max err))))

(defun samples (lo hi n)
  ;; N f32 values evenly spread over [LO, HI], as f32
  (cast (add lo (mul (div (arange n :dtype 'f64) (- n 1)) (- hi lo))) 'f32))

(defun max-ulp (f xs) (ulp-error (funcall f xs) (funcall f (cast xs 'f64))))

(deftest f32-within-2-ulp
  (let ((wide (samples -80.0 80.0 20001))
        (small (mul (samples -1.0 1.0 20001) 1e-3))
        (tiny (mul (samples -1.0 1.0 2001) 1e-7)))
    (dolist (case (list (list "exp" #'exp wide) (list "expm1" #'expm1 wide) (list "expm1 small" #'expm1 small)
                        (list "tanh" #'tanh wide) (list "tanh small" #'tanh small) (list "tanh tiny" #'tanh tiny)
                        (list "sigmoid" #'sigmoid wide)
                        (list "log1p" (lambda (x) (log1p (abs x))) wide)
                        (list "log1p small" #'log1p small)
                        (list "log" (lambda (x) (log (abs x))) wide)
                        (list "sqrt" (lambda (x) (sqrt (abs x))) wide)
                        (list "sin" #'sin (samples -4096.0 4096.0 40001))
                        (list "cos" #'cos (samples -4096.0 4096.0 40001))
                        ;; the whole range up to 2^128, and the floats nearest k pi/2, where
                        ;; the reduction cancels most
                        (list "sin huge" #'sin (exp2 (samples -20.0 127.9 20001)))
                        (list "cos huge" #'cos (neg (exp2 (samples -20.0 127.9 20001))))
                        (list "sin near k pi/2" #'sin (cast (mul (arange 1 20001 :dtype 'f64) (/ pi 2)) 'f32))
                        (list "cos near k pi/2" #'cos (cast (mul (arange 1 20001 :dtype 'f64) (/ pi 2)) 'f32))))
      (let ((e (max-ulp (second case) (third case))))
        (unless (is (<= e 2.0)) (format t "~a: ~a ulp~%" (first case) e))))))

(deftest half-precision-matmul
  ;; f16 and bf16 products multiply and sum in f32 and round once, as PyTorch's: with x = 1 + u
  ;; (u the dtype's epsilon), x x - (1 + 2u) is u^2, which products rounded to the dtype lose
  ;; (x x rounds to 1 + 2u). The same for the gradients, batched products, a matrix-vector
  ;; product and einsum, on every device.
  (dolist (c '((bf16 7) (f16 10)))
    (let* ((dt (first c)) (u (expt 2.0 (- (second c)))) (x (+ 1 u)) (y (- (+ 1 (* 2 u))))
           (a (requires-grad! (tensor (list (list x 1.0)) :dtype dt)))
           (b (requires-grad! (tensor (list (list x) (list y)) :dtype dt)))
           (p (matmul a b)))
      (is (eq (dtype p) dt))
      (is (= (item p) (* u u)))
      (is (= (item (matmul (tensor (list x 1.0) :dtype dt) (tensor (list x y) :dtype dt))) (* u u)))
      (is (equal (tl (einsum "ij,jk->ik" a b)) (list (list (* u u)))))
      (is (eq (dtype (einsum "ij,jk->ik" a b)) dt))
      (is (equal (tl (matmul (tensor (list (list (list x 1.0))) :dtype dt) (tensor (list (list (list x) (list y))) :dtype dt)))
                 (list (list (list (* u u))))))
      ;; d/da of sum((a b) w) = w b^T: (x, 1) . (x, y) again; d/db = a^T w
      (let* ((a1 (requires-grad! (tensor '((1.0)) :dtype dt)))
             (b1 (requires-grad! (tensor (list (list x y)) :dtype dt))))
        (backward (sum (mul (matmul a1 b1) (tensor (list (list x 1.0)) :dtype dt))))
        (is (eq (dtype (grad a1)) dt))
        (is (equal (tl (grad a1)) (list (list (* u u)))))
        (is (equal (tl (grad b1)) (list (list x 1.0)))))
      ;; random operands: within one rounding of the f64 product of the same half inputs;
      ;; matrix-vector products (the CPU sums them in an f32 row of scratch, then adds the
      ;; bias), batched, and one whose f32 row would be too large for scratch
      (dolist (shapes '(((3 20 30) (3 30 20)) ((1 100) (100 64)) ((3 1 100) (3 100 64)) ((1 2) (2 66000))))
        (let* ((ra (realize (cast (randn (first shapes)) dt))) (rb (realize (cast (randn (second shapes)) dt)))
               (exact (matmul (cast ra 'f64) (cast rb 'f64)))
               (err (sub (cast (matmul ra rb) 'f64) exact)))
          (unless (is (<= (item (amax (div (abs err) (add (abs exact) 1e-3)))) (* 1.01 u)))
            (format t "~a ~a: off by ~a~%" dt shapes (item (amax (abs err)))))))
      (let* ((x (realize (cast (randn '(1 100)) dt))) (w (realize (cast (randn '(100 64)) dt)))
             (bias (realize (cast (randn '(64)) dt)))
             (y (add (matmul x w) bias))
             (exact (cast (add (cast (matmul x w) 'f64) (cast bias 'f64)) dt)))
        (is (eq (dtype y) dt))
        ;; the bias added to the rounded product, in the dtype: within one rounding of it
        (is (<= (item (amax (abs (sub (cast y 'f64) (cast exact 'f64))))) (* 2 u (+ 1 (item (amax (abs (cast exact 'f64))))))))))))

(deftest sums-do-not-saturate
  ;; 4e7 ones: one sequential f32 accumulator stops at 2^24
  (is (= (item (mean (ones '(4000 10000)))) 1.0))
  (is (= (item (sum (ones '(20000000)))) 20000000.0))
  (is (equal (tl (sum (ones '(3 8000000)) :axis 1)) '(8000000.0 8000000.0 8000000.0)))
  (is (equal (tl (sum (ones '(2 4000 5000)) :axis '(1 2))) '(20000000.0 20000000.0))))

(deftest integers-and-indices
  ;; integer sums and products accumulate in i64, as PyTorch's
  (let ((u (tensor '(200 100) :dtype 'u8)))
    (is (eq (dtype (sum u)) 'i64))
    (is (= (item (sum u)) 300))
    (is (= (item (prod u)) 20000))
    (is (eq (dtype (sum (tensor '(t t nil)))) 'i64))
    (is (equal (tl (cumsum u)) '(200 300))))
  ;; i8 and u8 index tensors pick the right rows
  (let ((x (tensor '(10.0 20.0 30.0))))
    (is (equal (tl (take x (tensor '(2 0) :dtype 'u8))) '(30.0 10.0)))
    (is (equal (tl (take x (tensor '(-1 0) :dtype 'i8))) '(30.0 10.0)))
    (is (equal (tl (one-hot (tensor '(2 0) :dtype 'u8) 3)) '((0 0 1) (1 0 0)))))
  ;; errors, not silent zeros or INT_MAX
  (is-error index-error (one-hot (tensor '(-1 2)) 3))
  (is-error index-error (one-hot (tensor '(0 3)) 3))
  (is-error index-error (argmax (zeros '(0))))
  (is-error index-error (argmin (zeros '(2 0)) :axis 1))
  (is (equal (tl (argmax (zeros '(0 2)) :axis 1)) nil))
  (is-error division-by-zero (floor-divide (tensor '(1 2)) 0))
  (is-error division-by-zero (fmod (tensor '(1 2)) 0))
  (is-error division-by-zero (mod (tensor '(1 2)) 0))
  ;; a zero in a divisor tensor: 0 (quotient) and the dividend (fmod), as documented
  (is (equal (tl (floor-divide (tensor '(7 -7)) (tensor '(0 0)))) '(0 0)))
  (is (equal (tl (fmod (tensor '(7 -7)) (tensor '(0 0)))) '(7 -7))))

(run-tests)
