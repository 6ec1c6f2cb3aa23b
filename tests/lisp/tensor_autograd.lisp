;;; SPDX-License-Identifier: Apache-2.0
;;; Autograd: gradients of every differentiable primitive, through composites, checked against
;;; central finite differences in f64; broadcasting, views and reductions over several axes;
;;; and the API (requires-grad!, backward, grad, zero-grad!, detach, no-grad, value-and-grad).

(defun tl (x) (to-list x))

(load "data/grad_check.lisp")

(manual-seed 3)
(defvar a (add (randn '(2 3)) 0.1))
(defvar b (add (randn '(2 3)) -0.2))
(defvar pos (add (rand '(2 3)) 0.5))           ; positive, for sqrt, log, pow
(defvar v3 (randn '(3)))
(defvar m34 (randn '(3 4)))
(defvar t234 (randn '(2 3 4)))

(deftest elementwise-gradients
  (is (grad-check #'add a b))
  (is (grad-check #'sub a b))
  (is (grad-check #'mul a b))
  (is (grad-check #'div a pos))
  (is (grad-check #'neg a))
  (is (grad-check #'reciprocal pos))
  (is (grad-check #'sqrt pos))
  (is (grad-check #'exp a))
  (is (grad-check #'log pos))
  (is (grad-check #'exp2 a))
  (is (grad-check #'log2 pos))
  (is (grad-check #'sin a))
  (is (grad-check #'cos a))
  (is (grad-check #'tanh a))
  (is (grad-check #'sigmoid a))
  (is (grad-check #'relu a))
  (is (grad-check #'gelu a))
  (is (grad-check #'silu a))
  (is (grad-check #'softplus a))
  (is (grad-check (lambda (x) (pow x 3)) pos))
  (is (grad-check #'square a))
  (is (grad-check #'abs a))
  (is (grad-check #'maximum a b))
  (is (grad-check #'minimum a b))
  (is (grad-check (lambda (x y) (where (lt x y) (mul x x) (sin y))) a b))
  ;; Through a cast (to f32 and back: finite differences would see f32 rounding).
  (let ((r (funcall (value-and-grad (lambda (x) (sum (cast (mul (cast x 'f32) 3.0) 'f64)))) (cast a 'f64))))
    (is (equal (to-list (first (second r))) (list (make-list 3 3.0) (make-list 3 3.0))))))

(deftest broadcasting-and-views
  (is (grad-check #'add m34 (reshape v3 '(3 1))))          ; broadcast over columns
  (is (grad-check #'mul t234 (randn '(4))))                  ; over leading axes
  (is (grad-check (lambda (x) (transpose x 0 1)) m34))
  (is (grad-check (lambda (x) (permute x '(2 0 1))) t234))
  (is (grad-check (lambda (x) (reshape x '(4 6))) t234))
  (is (grad-check (lambda (x) (expand (reshape x '(3 1)) '(3 5))) v3))
  (is (grad-check (lambda (x) (pad x '((1 2) (0 1)))) m34))
  (is (grad-check (lambda (x) (slice x '(1 3) '(0 4 2))) m34))
  (is (grad-check (lambda (x) (flip x '(0 1))) m34))
  (is (grad-check (lambda (x y) (cat (list x y) :axis 0)) m34 (randn '(2 4))))
  (is (grad-check (lambda (x y) (stack (list x y))) a b)))

(deftest reductions
  (is (grad-check #'sum t234))
  (is (grad-check (lambda (x) (sum x :axis 1)) t234))
  (is (grad-check (lambda (x) (sum x :axis '(0 2))) t234))
  (is (grad-check (lambda (x) (mean x :axis '(1 2) :keepdim t)) t234))
  (is (grad-check (lambda (x) (amax x :axis 1)) t234))
  (is (grad-check (lambda (x) (var x :axis 0)) m34))
  (is (grad-check (lambda (x) (prod x :axis 1)) pos))
  (is (grad-check (lambda (x) (softmax x :axis 1)) m34))
  (is (grad-check (lambda (x) (log-softmax x :axis -1)) t234))
  (is (grad-check (lambda (x) (logsumexp x :axis 1)) m34))
  (is (grad-check (lambda (x) (layer-norm x)) m34))
  ;; A tie in max sends the whole gradient to the first maximum, as PyTorch's max along a
  ;; dimension does (issue 19; it used to be split evenly).
  (let ((x (requires-grad! (tensor '(1.0 3.0 3.0 2.0)))))
    (backward (amax x))
    (is (equal (tl (grad x)) '(0.0 1.0 0.0 0.0)))))

(deftest softmax-gradients-at-masked-and-extreme-logits
  ;; Their own rules (p (g - sum g p), g - p sum g): entries masked with -inf get 0, a row of
  ;; one live entry gets 0, and logits far apart stay finite (known values, as PyTorch's).
  (let* ((ninf (- inf))
         (w (tensor '((1.0 2.0 3.0) (4.0 5.0 6.0))))
         (x (requires-grad! (tensor (list (list 1.0 ninf 2.0) (list ninf 0.5 ninf))))))
    (backward (sum (mul (softmax x :axis 1) w)))
    (is (allclose (grad x) '((-0.39322385 0.0 0.39322385) (0.0 0.0 0.0)) :atol 1e-6))
    (let ((x2 (requires-grad! (tensor (list (list 1.0 ninf 2.0) (list ninf 0.5 ninf))))))
      (backward (sum (mul (let ((y (log-softmax x2 :axis 1))) (where (isinf y) 0.0 y)) w)))
      (is (allclose (grad x2) '((-0.07576571 0.0 0.07576571) (0.0 0.0 0.0)) :atol 1e-5))))
  (let ((x (requires-grad! (tensor '((1e30 -1e30 0.0) (88.0 89.0 90.0)) :dtype 'f64))))
    (backward (sum (mul (softmax x :axis 1) (tensor '((1.0 2.0 3.0) (4.0 5.0 6.0)) :dtype 'f64))))
    (is (allclose (grad x) '((0.0 0.0 0.0) (-0.14181709 -0.14077028 0.28258737)) :atol 1e-6))))

(deftest linear-algebra
  (is (grad-check #'matmul m34 (randn '(4 2))))
  (is (grad-check #'matmul t234 (randn '(2 4 3))))           ; batched
  (is (grad-check #'matmul v3 m34))                          ; vector @ matrix
  (is (grad-check #'matmul t234 (randn '(4 2))))             ; batch broadcast to B
  (is (grad-check #'matmul (randn '(3 2)) (randn '(4 2 5))))  ; and to A
  (is (grad-check (lambda (x w bias) (relu (add (matmul x w) bias))) m34 (randn '(4 5)) (randn '(5)))))

(deftest api
  (let ((w (requires-grad! (tensor '(1.0 2.0 3.0))))
        (c (tensor '(4.0 5.0 6.0))))
    (is (requires-grad-p w))
    (is (not (requires-grad-p c)))
    (is (requires-grad-p (mul w c)))
    ;; backward accumulates until zero-grad!.
    (backward (sum (mul w c)))
    (is (equal (tl (grad w)) '(4.0 5.0 6.0)))
    (backward (sum (mul w c)))
    (is (equal (tl (grad w)) '(8.0 10.0 12.0)))
    (zero-grad! (list w))
    (is (null (grad w)))
    ;; Printing (realizing) the loss does not cut the graph.
    (let ((loss (sum (mul w w))))
      (is (= (item loss) 14.0))
      (backward loss)
      (is (equal (tl (grad w)) '(2.0 4.0 6.0))))
    (zero-grad! w)
    ;; detach and no-grad stop gradients.
    (backward (sum (add (mul w (detach w)) (no-grad (mul w w)))))
    (is (equal (tl (grad w)) '(1.0 2.0 3.0)))
    (is (not (requires-grad-p (no-grad (mul w c)))))
    (is (grad-enabled-p))
    (zero-grad! w)
    ;; A gradient for a loss of several elements.
    (backward (mul w w) (tensor '(1.0 0.0 2.0)))
    (is (equal (tl (grad w)) '(2.0 0.0 12.0)))
    (is-error shape-error (backward (mul w w)))
    (is-error type-error (backward (sum c)))
    (is-error dtype-error (requires-grad! (tensor '(1 2)))))
  ;; value-and-grad gives the value and one gradient per tensor argument.
  (let ((r (funcall (value-and-grad (lambda (x k) (sum (mul x (mul x k))))) (tensor '(1.0 -2.0)) 3.0)))
    (is (= (item (first r)) 15.0))
    (is (equal (tl (first (second r))) '(6.0 -12.0)))
    (is (null (second (second r))))))

(deftest shared-subexpressions
  ;; A node used twice gets both contributions.
  (let ((x (requires-grad! (tensor '(0.5 -1.5)))))
    (let ((y (mul x x)))
      (backward (sum (add (mul y y) y))))
    ;; d/dx (x^4 + x^2) = 4x^3 + 2x
    (is (allclose (grad x) (tensor '(1.5 -16.5))))))

;; A training loop: the same graph every step (hash-consed nodes), weights updated in place.
;; Each step must see the new weights: w_k = t + (w_0 - t)(1 - 2 lr)^k.
(deftest training-loop-sees-updates
  (let* ((target (tensor '(1.0 -2.0 0.5)))
         (w (requires-grad! (tensor '(0.0 0.0 0.0))))
         (losses nil))
    (dotimes (k 5)
      (let ((loss (sum (square (sub w target)))))
        (setq losses (cons (item loss) losses))
        (zero-grad! w)
        (backward loss)
        (no-grad (realize (prim:assign w (sub w (mul (grad w) 0.1)))))))
    (is (allclose w (tensor (mapcar (lambda (ti) (* ti (- 1 (expt 0.8 5)))) '(1.0 -2.0 0.5))) :atol 1e-6))
    (is (apply #'> (reverse losses)))))


;; Two tensors realized from equal computations (one hash-consed node) own their data: an
;; assign into one, as an optimizer or batch-norm does to its state, leaves the other alone.
(deftest realized-tensors-do-not-alias
  (let* ((weight (requires-grad! (realize (ones '(2)))))
         (state (realize (ones '(2))))
         (other (realize (ones '(2)))))
    (no-grad (realize (prim:assign state (tensor '(5.0 6.0)))))
    (is (equal (tl state) '(5.0 6.0)))
    (is (equal (tl weight) '(1.0 1.0)))
    (is (equal (tl other) '(1.0 1.0)))
    (is (equal (tl (realize (ones '(2)))) '(1.0 1.0)))))

;; A long matmul sum runs in chunks; its value and gradients match einsum's.
(deftest long-matmul-sums
  (let* ((a (randn '(3 20480))) (b (randn '(20480 5))) (w (randn '(3 5)))
         (vg (funcall (value-and-grad (lambda (a b) (sum (mul (matmul a b) w)))) a b)))
    (is (allclose (matmul a b) (einsum "ik,kj->ij" a b) :atol 1e-3))
    (is (allclose (first (second vg)) (einsum "ij,kj->ik" w b) :atol 1e-4))
    (is (allclose (second (second vg)) (einsum "ik,ij->kj" a w) :atol 1e-4))))

;; A custom gradient replaces the derivative of the ops it wraps; rules of dead nodes go.
(deftest custom-gradients
  (flet ((square-with-rule (x)
           ;; The true derivative is 2x; the rule says 3 so we can see it is used.
           (with-custom-grad ((x x)) (mul x x) (g) (list (mul g 3.0)))))
    (let ((x (requires-grad! (tensor '(1.0 2.0)))))
      (backward (sum (mul (square-with-rule x) (tensor '(1.0 10.0)))))
      (is (equal (tl (grad x)) '(3.0 30.0)))
      (is (equal (tl (square-with-rule x)) '(1.0 4.0))))
    ;; Without gradients flowing, nothing is registered.
    (is (not (custom-grad-p (square-with-rule (tensor '(1.0))))))
    (let ((x (requires-grad! (tensor '(1.0 2.0 3.0)))))
      (dotimes (i 50) (backward (sum (square-with-rule (mul x (+ i 1.0))))))
      (gc)
      (square-with-rule x)
      (is (< (hash-table-count *custom-grads*) 10)))))

(run-tests)
