;;; SPDX-License-Identifier: Apache-2.0
;;; The functions tests/aot compiles ahead of time (tlisp compile) and checks from C against
;;; what the interpreter computes (run_aot_test.cmake, check.c).

(manual-seed 7)

;; A two-layer MLP classifier, weights defined lazily (compiled as their values).
(defvar *w1* (mul (randn '(784 64)) 0.05))
(defvar *b1* (mul (randn '(64)) 0.1))
(defvar *w2* (mul (randn '(64 10)) 0.2))
(defvar *b2* (mul (randn '(10)) 0.1))

(defun mlp-forward (x)
  "Class probabilities of the rows of X (batch 784)."
  (softmax (add (matmul (relu (add (matmul x *w1*) *b1*)) *w2*) *b2*) :axis -1))

;; Two results, one of them an argument and one a weight: the entry copies those.
(defun logits-and-more (x)
  (list (add (matmul (relu (add (matmul x *w1*) *b1*)) *w2*) *b2*) x *b2*))

;; A training step of a linear regression, updating *w* in place: the weights are written.
(defvar *w* (zeros '(8 1)))
(defun linreg-step (x y)
  "One SGD step on the mean squared error of X *w* against Y; returns the loss before it."
  (let* ((r (funcall (value-and-grad (lambda (w) (mean (square (sub (matmul x w) y))))) *w*))
         (loss (first r)) (g (first (second r))))
    (realize (prim:assign *w* (sub *w* (mul g 0.1))))
    loss))

;; An embedding lookup: an index out of range fails the guard the trace recorded.
(defvar *table* (mul (randn '(16 4)) 1.0))
(defun embed-sum (ids)
  (sum (index-select *table* ids :axis 0) :axis 0))

;; f64 and integer dtypes through the header's C types.
(defun f64-poly (x) (add (mul x x) (mul 3.0 x)))
(defun int-ops (a) (add (mul a 2) (tensor 1 :dtype 'i32)))

;; What cannot be compiled: each is an error saying why (run_aot_test.cmake).
(defun noisy (x) (add x (randn (shape x))))
(defun reads-data (x) (if (> (item (sum x)) 0) x (neg x)))
