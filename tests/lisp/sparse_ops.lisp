;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, sparse COO tensors (the sparse module): construction and its errors, to-dense
;;; and from-dense, coalesce, transpose, add, sums, the sparse-dense product against the dense
;;; one, gradients against finite differences in f64, and a two-layer graph convolutional
;;; network that learns to tell two communities of a graph apart.

(load "data/grad_check.lisp")
(require 'sparse)
(require 'optim)
(require 'nn)
(defun tl (x) (to-list x))
(manual-seed 27)

(defun random-sparse (m n nnz &key (dtype 'f64))
  ;; NNZ random positions (repeats possible) with random values.
  (sparse:coo (stack (list (randint 0 m (list nnz)) (randint 0 n (list nnz))))
              (randn (list nnz) :dtype dtype) (list m n)))

(deftest construction
  (let ((s (sparse:coo '((0 1 1) (2 0 2)) '(3.0 4.0 5.0) '(2 3))))
    (is (sparse:sparse-p s))
    (is (not (sparse:sparse-p (zeros '(2 3)))))
    (is (= (sparse:nnz s) 3))
    (is (equal (sparse:shape s) '(2 3)))
    (is (eq (dtype (sparse:indices s)) 'i64))
    (is (equal (tl (sparse:to-dense s)) '((0.0 0.0 3.0) (4.0 0.0 5.0)))))
  ;; No stored elements; a rank-3 tensor.
  (is (equal (tl (sparse:to-dense (sparse:coo (zeros '(2 0) :dtype 'i64) (zeros '(0)) '(2 2)))) '((0.0 0.0) (0.0 0.0))))
  (is (equal (tl (sparse:to-dense (sparse:coo '((1) (0) (1)) '(7.0) '(2 1 2)))) '(((0.0 0.0)) ((0.0 7.0)))))
  (is-error index-error (sparse:coo '((0 2) (0 0)) '(1.0 1.0) '(2 2)))
  (is-error index-error (sparse:coo '((0 -1) (0 0)) '(1.0 1.0) '(2 2)))
  (is-error shape-error (sparse:coo '((0 1)) '(1.0 1.0) '(2 2)))
  (is-error shape-error (sparse:coo '((0 1) (0 1)) '(1.0) '(2 2)))
  (is-error type-error (sparse:to-dense (zeros '(2 2)))))

(deftest dense-round-trips
  (let* ((x (tensor '((0.0 2.0 0.0) (3.0 0.0 -1.0))))
         (s (sparse:from-dense x)))
    (is (= (sparse:nnz s) 3))
    (is (equal (tl (sparse:indices s)) '((0 1 1) (1 0 2))))
    (is (allclose (sparse:to-dense s) x)))
  ;; Repeated positions add up, before and after coalescing.
  (let* ((s (sparse:coo '((1 0 1 1) (0 1 0 0)) '(1.0 2.0 3.0 4.0) '(2 2)))
         (c (sparse:coalesce s)))
    (is (= (sparse:nnz c) 2))
    (is (equal (tl (sparse:indices c)) '((0 1) (1 0))))
    (is (equal (tl (sparse:values c)) '(2.0 8.0)))
    (is (allclose (sparse:to-dense c) (sparse:to-dense s))))
  (let ((s (random-sparse 4 5 12)))
    (is (allclose (sparse:to-dense (sparse:transpose s)) (transpose (sparse:to-dense s))))
    (is (allclose (sparse:to-dense (sparse:add s (sparse:scale s 2.0))) (mul (sparse:to-dense s) 3.0)))
    (is (allclose (sparse:sum s) (sum (sparse:to-dense s))))
    (is (allclose (sparse:sum s :axis 0) (sum (sparse:to-dense s) :axis 0)))
    (is (allclose (sparse:sum s :axis -1) (sum (sparse:to-dense s) :axis 1)))))

(deftest sparse-dense-products
  (is (equal (tl (sparse:matmul (sparse:coo '((0 1) (1 0)) '(2.0 3.0) '(2 2)) (tensor '((1.0 10.0) (2.0 20.0)))))
             '((4.0 40.0) (3.0 30.0))))
  (dolist (dt '(f32 f64))
    (let* ((s (random-sparse 6 5 14 :dtype dt))
           (d (randn '(5 3) :dtype dt)))
      (is (allclose (sparse:matmul s d) (matmul (sparse:to-dense s) d) :atol 1e-5))
      (is (allclose (sparse:matmul s (slice d t 0)) (matmul (sparse:to-dense s) (slice d t 0)) :atol 1e-5))))
  (is-error shape-error (sparse:matmul (random-sparse 3 4 2) (zeros '(3 2))))
  (is-error shape-error (sparse:matmul (sparse:coo '((0) (0) (0)) '(1.0) '(1 1 1)) (zeros '(1 1)))))

(deftest gradients
  (let ((s (random-sparse 5 4 9)))
    ;; Through the values and the dense operand.
    (is (grad-check (lambda (v d) (sparse:matmul (sparse:coo (sparse:indices s) v '(5 4)) d))
                    (sparse:values s) (randn '(4 3))))
    (is (grad-check (lambda (v) (sparse:to-dense (sparse:coo (sparse:indices s) v '(5 4)))) (sparse:values s)))
    (is (grad-check (lambda (v) (sparse:values (sparse:coalesce (sparse:coo (sparse:indices s) v '(5 4)))))
                    (sparse:values s)))
    ;; (Every element nonzero: a finite difference at a zero would change which are stored.)
    (is (grad-check (lambda (x) (sparse:values (sparse:from-dense x))) (tensor '((0.5 1.5) (-2.0 1.0)))))))

(deftest graph-convolution
  ;; Two communities of 10 nodes, each a chain of neighbors up to 3 apart, one edge between; node features are noise
  ;; except a weak hint on two nodes. A two-layer GCN (H' = A H W with A the normalized
  ;; adjacency with self-loops) labels every node from those two.
  (let* ((n 20)
         (edges (let ((e nil))
                  (dotimes (i n)
                    (dotimes (j n)
                      (when (and (/= i j) (eq (< i 10) (< j 10)) (< (abs (- i j)) 4))
                        (push (list i j) e))))
                  (append '((0 10) (10 0)) e)))
         (edges (append edges (loop for i from 0 below n collect (list i i))))
         (degree (make-list n :initial-element 0)))
    (dolist (e edges) (incf (nth (first e) degree)))
    (let* ((a (sparse:coo (list (mapcar #'first edges) (mapcar #'second edges))
                          (mapcar (lambda (e) (/ 1.0 (sqrt (* (nth (first e) degree) (nth (second e) degree))))) edges)
                          (list n n)))
           (labels (tensor (loop for i from 0 below n collect (if (< i 10) 0 1)) :dtype 'i64))
           (x (randn (list n 4)))
           (w1 (requires-grad! (mul (randn '(4 8)) 0.5)))
           (w2 (requires-grad! (mul (randn '(8 2)) 0.5)))
           (known '(3 15))
           (opt (optim:adam (list w1 w2) :lr 0.05)))
      ;; The hint: the known nodes' first feature is their class.
      (setq x (add x (mul (reshape (cast (tensor (loop for i from 0 below n collect
                                                         (cond ((= i 3) -3.0) ((= i 15) 3.0) (t 0.0))))
                                         'f32)
                                   (list n 1))
                          (tensor '((1.0 0.0 0.0 0.0))))))
      (flet ((logits () (sparse:matmul a (matmul (relu (sparse:matmul a (matmul x w1))) w2))))
        (dotimes (step 60)
          (zero-grad! (list w1 w2))
          (backward (nn:cross-entropy (index-select (logits) (tensor known :dtype 'i64))
                                   (index-select labels (tensor known :dtype 'i64))))
          (step! opt))
        (let ((right (item (sum (cast (equals (argmax (logits) :axis 1) labels) 'i32)))))
          (unless (>= right 18) (format t "graph-convolution: ~a of 20 nodes right~%" right))
          (is (>= right 18)))))))

(run-tests)
