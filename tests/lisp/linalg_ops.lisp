;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, linear algebra: the linalg module (LAPACK through external kernels) on cpu, ref
;;; and the simulated GPU (tests/CMakeLists.txt runs it on each): known values, the defining
;;; identities (A X = B, Q R = A, A V = V L, U S VH = A) in f32 and f64, batches and
;;; broadcasting, the errors, and every gradient against finite differences in f64.

(load "data/grad_check.lisp")
(require 'linalg)
(defun tl (x) (to-list x))
(manual-seed 27)

(defun spd (n &key (dtype 'f64) batch)
  ;; A well-conditioned symmetric positive-definite matrix (or batch of them).
  (let ((x (randn (append batch (list n n)) :dtype dtype)))
    (add (matmul x (transpose x)) (mul (eye n :dtype dtype) (float n)))))

(defun sym (x) (mul (add x (transpose x)) 0.5))

(deftest solve-and-inverse
  (is (allclose (linalg:solve (tensor '((2.0 0.0) (0.0 4.0))) (tensor '(2.0 2.0))) '(1.0 0.5)))
  (is (allclose (linalg:inv (tensor '((1.0 2.0) (3.0 4.0)))) '((-2.0 1.0) (1.5 -0.5)) :rtol 1e-6))
  (dolist (dt '(f32 f64))
    (let* ((a (add (randn '(5 5) :dtype dt) (mul (eye 5 :dtype dt) 4.0)))
           (b (randn '(5 3) :dtype dt))
           (x (linalg:solve a b))
           (tol (if (eq dt 'f64) 1e-10 1e-4)))
      (is (eq (dtype x) dt))
      (is (equal (shape x) '(5 3)))
      (is (allclose (matmul a x) b :atol tol))
      (is (allclose (matmul a (linalg:inv a)) (eye 5 :dtype dt) :atol tol))))
  ;; Batches, and B's batch axes broadcasting against A's.
  (let* ((a (add (randn '(4 3 3) :dtype 'f64) (mul (eye 3 :dtype 'f64) 3.0)))
         (b (randn '(3 2) :dtype 'f64))
         (x (linalg:solve a (unsqueeze b 0))))
    (is (equal (shape x) '(4 3 2)))
    (is (allclose (matmul a x) (expand (unsqueeze b 0) 4 3 2) :atol 1e-10))
    (is (allclose (slice (linalg:inv a) 2) (linalg:inv (slice a 2)) :atol 1e-12)))
  ;; A vector right-hand side gives a vector; empty matrices give empty results.
  (is (equal (shape (linalg:solve (spd 3) (randn '(3) :dtype 'f64))) '(3)))
  (is (equal (shape (linalg:inv (zeros '(0 0) :dtype 'f64))) '(0 0)))
  (is (equal (shape (linalg:solve (zeros '(2 0 0)) (zeros '(2 0 4)))) '(2 0 4))))

(deftest determinants
  (is (allclose (linalg:det (tensor '((1.0 2.0) (3.0 4.0)) :dtype 'f64)) -2.0 :rtol 1e-12))
  (is (allclose (linalg:det (tensor '((0.0 1.0) (1.0 0.0)))) -1.0))   ; a row swap
  (is (allclose (linalg:det (tensor '((2.0 4.0) (1.0 2.0)))) 0.0))    ; singular: 0, no error
  (let ((s (linalg:slogdet (tensor '((2.0 4.0) (1.0 2.0))))))
    (is (= (item (first s)) 0.0))
    (is (= (item (second s)) (- 1e400))))
  (let ((s (linalg:slogdet (tensor '((-2.0 0.0) (0.0 3.0)) :dtype 'f64))))
    (is (= (item (first s)) -1.0))
    (is (allclose (second s) (log 6.0) :rtol 1e-12)))
  ;; The determinant of a product is the product of the determinants; batches.
  (let* ((a (randn '(3 4 4) :dtype 'f64)) (b (randn '(3 4 4) :dtype 'f64)))
    (is (allclose (linalg:det (matmul a b)) (mul (linalg:det a) (linalg:det b)) :rtol 1e-9))
    (is (equal (shape (linalg:det a)) '(3)))
    (is (allclose (exp (second (linalg:slogdet a))) (abs (linalg:det a)) :rtol 1e-9)))
  ;; log|det| of a large matrix where det itself overflows f32.
  (let ((big (mul (eye 40) 10.0)))
    (is (= (item (linalg:det big)) 1e400))
    (is (allclose (second (linalg:slogdet big)) (* 40 (log 10.0)) :rtol 1e-5)))
  (is (= (item (linalg:det (zeros '(0 0)))) 1.0)))

(deftest cholesky
  (is (allclose (linalg:cholesky (tensor '((4.0 2.0) (2.0 5.0)))) '((2.0 0.0) (1.0 2.0))))
  (let* ((a (spd 6 :batch '(2)))
         (l (linalg:cholesky a)))
    (is (allclose (matmul l (transpose l)) a :atol 1e-10))
    (is (allclose l (tril l)))
    (is (allclose (linalg:cholesky a :upper t) (transpose l))))
  ;; Only the lower triangle is read (as PyTorch).
  (let ((a (spd 4)))
    (is (allclose (linalg:cholesky (tril a)) (linalg:cholesky a) :atol 1e-12))))

(deftest qr
  (dolist (dims '((5 3) (3 5) (4 4)))
    (let* ((a (randn dims :dtype 'f64))
           (qr (linalg:qr a))
           (q (first qr)) (r (second qr))
           (k (apply #'min dims)))
      (is (equal (shape q) (list (first dims) k)))
      (is (equal (shape r) (list k (second dims))))
      (is (allclose (matmul q r) a :atol 1e-12))
      (is (allclose (matmul (transpose q) q) (eye k :dtype 'f64) :atol 1e-12))
      (is (allclose r (triu r)))))
  (is (null (first (linalg:qr (randn '(3 2)) :mode 'r))))
  (is (equal (shape (first (linalg:qr (randn '(2 6 3))))) '(2 6 3))))

(deftest symmetric-eigenvalues
  (let ((e (linalg:eigh (tensor '((2.0 1.0) (1.0 2.0)) :dtype 'f64))))
    (is (allclose (first e) '(1.0 3.0) :rtol 1e-12))
    (is (allclose (abs (second e)) (mul (ones '(2 2) :dtype 'f64) (sqrt 0.5)) :rtol 1e-12)))
  (dolist (dt '(f32 f64))
    (let* ((a (sym (randn '(3 5 5) :dtype dt)))
           (e (linalg:eigh a))
           (l (first e)) (v (second e))
           (tol (if (eq dt 'f64) 1e-10 1e-4)))
      (is (allclose (matmul a v) (mul v (unsqueeze l -2)) :atol tol))
      (is (allclose (matmul (transpose v) v) (expand (eye 5 :dtype dt) 3 5 5) :atol tol))
      (is (allclose l (first (sort l :axis -1))))      ; ascending
      (is (allclose (linalg:eigvalsh a) l)))))

(deftest singular-values
  (is (allclose (linalg:svdvals (tensor '((3.0 0.0) (0.0 -4.0)))) '(4.0 3.0)))
  (dolist (dims '((5 3) (3 5) (2 4 4)))
    (let* ((a (randn dims :dtype 'f64))
           (svd (linalg:svd a :full-matrices nil))
           (u (first svd)) (s (second svd)) (vh (third svd))
           (k (min (car (last dims)) (car (last dims 2)))))
      (is (allclose (matmul (mul u (unsqueeze s -2)) vh) a :atol 1e-12))
      (is (allclose (matmul (transpose u) u) (eye k :dtype 'f64) :atol 1e-12))
      (is (allclose s (first (sort s :axis -1 :descending t))))))
  ;; Full matrices: square orthogonal U and VH.
  (let* ((svd (linalg:svd (randn '(5 3) :dtype 'f64))))
    (is (equal (mapcar #'shape svd) '((5 5) (3) (3 3))))
    (is (allclose (matmul (transpose (first svd)) (first svd)) (eye 5 :dtype 'f64) :atol 1e-12))))

(deftest built-on-them
  ;; pinv: A A+ A = A, also for a rank-deficient A; lstsq against the normal equations.
  (let* ((a (matmul (randn '(5 2) :dtype 'f64) (randn '(2 4) :dtype 'f64)))
         (p (linalg:pinv a)))
    (is (equal (shape p) '(4 5)))
    (is (allclose (matmul a (matmul p a)) a :atol 1e-10)))
  (let* ((a (randn '(6 3) :dtype 'f64)) (b (randn '(6 2) :dtype 'f64))
         (x (linalg:lstsq a b)))
    (is (allclose (matmul (matmul (transpose a) a) x) (matmul (transpose a) b) :atol 1e-10)))
  ;; Underdetermined: the minimum-norm solution, which is pinv(A) B.
  (let* ((a (randn '(2 4) :dtype 'f64)) (b (randn '(2) :dtype 'f64)))
    (is (allclose (linalg:lstsq a b) (matmul (linalg:pinv a) b) :atol 1e-10)))
  (let ((m (tensor '((1.0 -2.0) (3.0 4.0)) :dtype 'f64)))
    (is (allclose (linalg:matrix-norm m) (sqrt 30.0)))
    (is (allclose (linalg:matrix-norm m :ord 1) 6.0))
    (is (allclose (linalg:matrix-norm m :ord -1) 4.0))
    (is (allclose (linalg:matrix-norm m :ord 'inf) 7.0))
    (is (allclose (linalg:matrix-norm m :ord '-inf) 3.0))
    (is (allclose (linalg:matrix-norm m :ord 'nuc) (sum (linalg:svdvals m))))
    (is (allclose (linalg:matrix-norm m :ord 2) (amax (linalg:svdvals m))))
    (is (equal (shape (linalg:matrix-norm m :keepdim t)) '(1 1)))))

(deftest norms-rank-condition-powers
  (let ((v (tensor '((3.0 -4.0 0.0) (1.0 2.0 -2.0)) :dtype 'f64)))
    (is (allclose (linalg:vector-norm v) (sqrt 34.0)))
    (is (allclose (linalg:vector-norm v :axis 1) '(5.0 3.0)))
    (is (allclose (linalg:vector-norm v :ord 1 :axis 1 :keepdim t) '((7.0) (5.0))))
    (is (allclose (linalg:vector-norm v :ord 3 :axis 1) (list (expt 91.0 (/ 1.0 3)) (expt 17.0 (/ 1.0 3)))))
    (is (allclose (linalg:vector-norm v :ord 0) 5.0))
    (is (allclose (linalg:vector-norm v :ord '-inf :axis 1) '(0.0 1.0))))
  (is-error value-error (linalg:vector-norm (ones '(2)) :ord -1))
  (is (= (item (linalg:matrix-rank (matmul (randn '(5 2) :dtype 'f64) (randn '(2 4) :dtype 'f64)))) 2))
  (is (equal (tl (linalg:matrix-rank (stack (list (eye 3) (zeros '(3 3)))))) '(3 0)))
  (let* ((a (spd 4)) (s (linalg:svdvals a)))
    (is (allclose (linalg:cond a) (div (amax s) (amin s)) :rtol 1e-10))
    (is (allclose (linalg:cond a :ord 'fro)
                  (mul (linalg:matrix-norm a) (linalg:matrix-norm (linalg:inv a))) :rtol 1e-10)))
  (let ((a (randn '(2 3 3) :dtype 'f64)))
    (is (allclose (linalg:matrix-power a 5) (matmul a (matmul (matmul a a) (matmul a a))) :atol 1e-10))
    (is (allclose (linalg:matrix-power a 1) a))
    (is (allclose (linalg:matrix-power a 0) (expand (eye 3 :dtype 'f64) 2 3 3)))
    (is (allclose (matmul (linalg:matrix-power a -2) (matmul a a)) (expand (eye 3 :dtype 'f64) 2 3 3) :atol 1e-8)))
  (is (grad-check (lambda (x) (linalg:vector-norm x :ord 3 :axis 0)) (randn '(4 2))))
  (is (grad-check (lambda (a) (linalg:matrix-power a 3)) (randn '(3 3))))
  (is (grad-check #'linalg:cond (randn '(3 3)))))

(deftest errors
  (is-error value-error (realize (linalg:inv (tensor '((1.0 2.0) (2.0 4.0))))))
  (is-error value-error (realize (linalg:solve (zeros '(3 3)) (ones '(3)))))
  (is-error value-error (realize (linalg:cholesky (tensor '((1.0 2.0) (2.0 1.0))))))
  (is-error shape-error (linalg:inv (zeros '(2 3))))
  (is-error shape-error (linalg:det (zeros '(3))))
  (is-error shape-error (linalg:solve (eye 3) (ones '(4 2))))
  (is-error dtype-error (linalg:inv (tensor '((1 2) (3 4)))))
  (is-error dtype-error (linalg:solve (eye 2) (ones '(2) :dtype 'f64)))
  (is-error value-error (linalg:matrix-norm (eye 2) :ord 3))
  ;; The message names the function and, in a batch, the matrix.
  (let ((msg (handler-case (progn (realize (linalg:inv (stack (list (eye 2) (zeros '(2 2)))))) "no error")
               (error (e) (condition-message e)))))
    (is (search "linalg:inv: the matrix is singular" msg))
    (is (search "batch element 1" msg))))

(deftest gradients
  (is (grad-check (lambda (a b) (linalg:solve a b)) (spd 3) (randn '(3 2))))
  (is (grad-check (lambda (a b) (linalg:solve a b)) (spd 3 :batch '(2)) (randn '(3))))
  (is (grad-check #'linalg:inv (spd 3)))
  (is (grad-check #'linalg:det (randn '(2 3 3))))
  (is (grad-check (lambda (a) (second (linalg:slogdet a))) (randn '(3 3))))
  (is (grad-check (lambda (a) (linalg:cholesky (sym a))) (spd 4)))
  (is (grad-check (lambda (a) (apply #'add (mapcar #'sum (linalg:qr a)))) (randn '(4 3))))
  (is (grad-check (lambda (a) (first (linalg:qr a))) (randn '(3 3))))
  (is (grad-check (lambda (a) (second (linalg:qr a))) (randn '(5 3))))
  (is (grad-check (lambda (a) (first (linalg:eigh (sym a)))) (randn '(4 4))))
  ;; Eigenvectors are defined up to sign: a sign-free function of them.
  (is (grad-check (lambda (a) (let ((v (second (linalg:eigh (sym a))))) (mul v v))) (randn '(4 4))))
  (is (grad-check #'linalg:svdvals (randn '(4 3))))
  ;; Singular vectors up to sign, too: squares of their entries.
  (dolist (dims '((3 5) (5 3)))
    (is (grad-check (lambda (a) (let ((u (first (linalg:svd a :full-matrices nil)))) (mul u u))) (randn dims)))
    (is (grad-check (lambda (a) (let ((vh (third (linalg:svd a :full-matrices nil)))) (mul vh vh))) (randn dims))))
  (is (grad-check #'linalg:pinv (randn '(4 3))))
  (is (grad-check (lambda (a b) (linalg:lstsq a b)) (randn '(5 3)) (randn '(5 2))))
  (is (grad-check (lambda (a) (linalg:matrix-norm a :ord 'nuc)) (randn '(3 4)))))

(run-tests)
