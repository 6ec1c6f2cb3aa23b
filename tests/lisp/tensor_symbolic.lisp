;;; SPDX-License-Identifier: Apache-2.0
;;; Symbolic dimensions: a variable batch size and a growing sequence length flow through
;;; shape rules, views and the reference executor, bound when the graph is realized.

(defun tl (x) (to-list x))

(deftest variable-batch
  (dolist (n '(1 3 5))
    (let* ((x (symbolic-shape (reshape (arange (* n 4) :dtype 'f32) (list n 4)) '(batch 4)))
           (y (relu (- (matmul x (ones '(4 2))) 10.0))))
      (is (equal (shape x) '(batch 4)))
      (is (equal (shape y) '(batch 2)))
      (is (equal (shape (reshape x -1)) '((* 4 batch))))
      (is (equal (shape (transpose x)) '(4 batch)))
      (is (equal (shape (sum x :axis 0)) '(4)))
      (is (allclose (mean x :axis 0) (mean (reshape (arange (* n 4) :dtype 'f32) (list n 4)) :axis 0)))
      (is (equal (length (tl y)) n)))))

(deftest growing-sequence
  ;; A KV-cache-like pattern: concatenate along a symbolic axis, slice, pad.
  (dolist (len '(2 3 6))
    (let* ((k (symbolic-shape (reshape (arange (* len 2) :dtype 'f32) (list len 2)) '(seq 2)))
           (q (tensor '((1.0 0.0))))
           (scores (matmul q (transpose k))))
      (is (equal (shape scores) '(1 seq)))
      (is (allclose (tl (softmax scores)) (softmax (matmul q (transpose (reshape (arange (* len 2) :dtype 'f32) (list len 2)))))))
      (is (equal (shape (cat (list k k))) '((* 2 seq) 2)))
      (is (equal (length (tl (cat (list k k)))) (* 2 len)))
      (is (equal (shape (pad k '((1 0) (0 0)))) '((+ 1 seq) 2)))
      (is (equal (first (tl (pad k '((1 0) (0 0))))) '(0.0 0.0))))))

(deftest binding-at-realize
  (let ((z (zeros '(n 2))))
    (is (equal (shape z) '(n 2)))
    (is (equal (tl (realize (+ z 1) :bind '((n . 2)))) '((1.0 1.0) (1.0 1.0))))
    (is-error shape-error (to-list (+ z 1))))
  ;; One lazy tensor realized for two values of n gives each its own result.
  (let* ((z (zeros '(n 2))) (y (+ z 1)))
    (is (equal (tl (realize (+ z 1) :bind '((n . 1)))) '((1.0 1.0))))
    (is (equal (tl (realize (+ z 1) :bind '((n . 3)))) '((1.0 1.0) (1.0 1.0) (1.0 1.0))))
    (is (equal (shape y) '(n 2)))))

(deftest dimension-arithmetic
  (is (equal (dim* 'a 3) '(* 3 a)))
  (is (equal (dim+ 'a 1 2) '(+ 3 a)))
  (is (equal (dim/ '(* 6 a b) '(* 2 a)) '(* 3 b)))
  (is (null (dim/ '(+ 1 a) 2)))
  (is (dim= '(* a b) '(* b a)))
  (is-error shape-error (symbolic-shape (zeros '(2 3)) '(n n)))
  (is-error shape-error (symbolic-shape (zeros '(2 3)) '(n 4))))

(run-tests)
