;;; SPDX-License-Identifier: Apache-2.0
;;; matmul, dot, outer, einsum against hand-computed products; the Threefry generator
;;; against its published known-answer vectors, reproducibility and distribution moments.

(defun tl (x) (to-list x))
(defvar a (tensor '((1 2) (3 4) (5 6))))      ; 3x2
(defvar b (tensor '((1 0 2) (0 1 3))))        ; 2x3

(deftest matmul-cases
  (is (equal (tl (matmul a b)) '((1 2 8) (3 4 18) (5 6 28))))
  (is (equal (tl (matmul b a)) '((11 14) (18 22))))
  (is (equal (tl (matmul (tensor '(1 1)) b)) '(1 1 5)))            ; vector @ matrix
  (is (equal (tl (matmul a (tensor '(1 -1)))) '(-1 -1 -1)))         ; matrix @ vector
  (is (equal (tl (matmul (tensor '(1 2 3)) (tensor '(4 5 6)))) 32)) ; vector @ vector
  ;; Batched, with the batch axes broadcasting: (2 1 3 2) @ (4 2 3) -> (2 4 3 3)
  (let ((x (reshape (arange 12 :dtype 'f32) '(2 1 3 2)))
        (y (reshape (arange 24 :dtype 'f32) '(4 2 3))))
    (is (equal (shape (matmul x y)) '(2 4 3 3)))
    (is (allclose (slice (matmul x y) 1 2) (matmul (slice x 1 0) (slice y 2)))))
  (is (allclose (matmul (tensor '((1.5 2.0))) (tensor '((2.0) (0.25)))) '((3.5))))
  (is-error shape-error (matmul a a))
  (is-error shape-error (matmul (tensor 1) a)))

(deftest matmul-tiles-agree-with-reference
  ;; Shapes that take each of the CPU JIT's matmul paths (register tiles of 16 columns, 8, or
  ;; one narrow tile; rows by 4, 3, 2 or 1; a right operand packed whole, in panels, or read
  ;; transposed; long sums in chunks) agree with the reference executor.
  (manual-seed 4)
  (let ((was (getf (tensor-stats) :device)))
    (dolist (dims '((128 256 10) (9 300 3) (6 7 16) (130 33 24) (5 64 40) (64 512 64) (288 3000 64) (31 17 1)))
      (destructuring-bind (n k m) dims
        (let* ((x (realize (randn (list n k)))) (y (realize (randn (list k m)))) (yt (realize (randn (list m k))))
               (ref (progn (use-backend 'ref) (list (to-list (matmul x y)) (to-list (matmul x (transpose yt))))))
               (cpu (progn (use-backend 'cpu) (list (matmul x y) (matmul x (transpose yt))))))
          (is (allclose (first cpu) (tensor (first ref)) :atol 1e-3 :rtol 1e-4))
          (is (allclose (second cpu) (tensor (second ref)) :atol 1e-3 :rtol 1e-4)))))
    (use-backend (intern was))))

(deftest products
  (is (equal (tl (dot (tensor '(1 2 3)) (tensor '(4 5 6)))) 32))
  (is-error shape-error (dot (tensor '(1 2)) (tensor '(1 2 3))))
  (is (equal (tl (outer (tensor '(1 2)) (tensor '(3 4 5)))) '((3 4 5) (6 8 10))))
  (is (equal (tl (einsum "ij,jk->ik" a b)) (tl (matmul a b))))
  (is (equal (tl (einsum "ij,jk" a b)) (tl (matmul a b))))        ; implicit output
  (is (equal (tl (einsum "ij->ji" a)) (tl (transpose a))))
  (is (equal (tl (einsum "ij->" a)) 21))
  (is (equal (tl (einsum "ij->j" a)) '(9 12)))
  (is (equal (tl (einsum "i,i->" (tensor '(1 2 3)) (tensor '(4 5 6)))) 32))
  (is (equal (tl (einsum "i,j->ij" (tensor '(1 2)) (tensor '(3 4)))) '((3 4) (6 8))))
  (is (equal (tl (einsum "bij,bjk->bik" (stack (list a a)) (stack (list b b)))) (list (tl (matmul a b)) (tl (matmul a b)))))
  (is (equal (tl (einsum "ij,ij->i" a a)) '(5 25 61)))
  (is-error shape-error (einsum "ii->i" (eye 2)))
  (is-error shape-error (einsum "ij,jk->ik" a a))
  (is-error shape-error (einsum "ij->k" a)))

(deftest threefry-known-answers
  ;; Random123's known-answer tests for threefry2x32_20 (kat_vectors: counter, key, result).
  (let ((r (threefry2x32 0 0 (tensor '(0) :dtype 'u32) (tensor '(0) :dtype 'u32))))
    (is (equal (list (tl (first r)) (tl (second r))) '((1797259609) (2579123966)))))
  (let ((r (threefry2x32 4294967295 4294967295 (tensor '(4294967295) :dtype 'u32) (tensor '(4294967295) :dtype 'u32))))
    (is (equal (list (tl (first r)) (tl (second r))) '((481924860) (3137350631)))))
  (let ((r (threefry2x32 320440878 57701188 (tensor '(608135816) :dtype 'u32) (tensor '(2242054355) :dtype 'u32))))
    (is (equal (list (tl (first r)) (tl (second r))) '((3297917596) (1212020640)))))
  ;; Counters of another dtype or shape than the key's are refused, naming the argument.
  (is-error type-error (threefry2x32 0 0 (tensor '(0.0)) (tensor '(0.0))))
  (is-error type-error (%threefry2x32 (tensor '(0) :dtype 'u32) (tensor '(0) :dtype 'u32)
                                      (tensor '(0 1) :dtype 'u32) (tensor '(0 1) :dtype 'u32))))

(deftest reproducible-draws
  (manual-seed 42)
  (let ((x1 (tl (rand '(5)))) (y1 (tl (randn '(3)))))
    (manual-seed 42)
    (is (equal (tl (rand '(5))) x1))
    (is (equal (tl (randn '(3))) y1))
    (is (not (equal (tl (rand '(5))) x1))))                ; the next draw differs
  (manual-seed 7)
  (let ((x (tl (rand '(4)))))
    (manual-seed 8)
    (is (not (equal (tl (rand '(4))) x)))))

(deftest distributions
  (manual-seed 1)
  (let ((u (rand '(20000))))
    (is (>= (item (amin u)) 0.0))
    (is (< (item (amax u)) 1.0))
    (is (approx= (item (mean u)) 0.5 0.01))
    (is (approx= (item (var u)) (/ 1.0 12) 0.01)))
  (let ((z (randn '(20000))))
    (is (approx= (item (mean z)) 0.0 0.02))
    (is (approx= (item (std z)) 1.0 0.02)))
  (let ((z (normal '(20000) :mean 3.0 :std 2.0)))
    (is (approx= (item (mean z)) 3.0 0.05))
    (is (approx= (item (std z)) 2.0 0.05)))
  (let ((u (uniform '(20000) :low -2.0 :high 2.0)))
    (is (>= (item (amin u)) -2.0))
    (is (< (item (amax u)) 2.0))
    (is (approx= (item (mean u)) 0.0 0.05)))
  (let ((k (randint 3 7 '(20000))))
    (is (eq (dtype k) 'i32))
    (is (= (item (amin k)) 3))
    (is (= (item (amax k)) 6))
    (is (approx= (item (mean k)) 4.5 0.05)))
  (let ((b (bernoulli 0.25 :shp '(20000))))
    (is (approx= (item (mean b)) 0.25 0.02)))
  (let ((b (bernoulli (tensor '(0.0 1.0 0.0 1.0)))))
    (is (equal (tl b) '(0.0 1.0 0.0 1.0))))
  (is (eq (dtype (rand '(2) :dtype 'f64)) 'f64))
  (is (equal (shape (randn-like (zeros '(2 3)))) '(2 3))))

(run-tests)
