;;; SPDX-License-Identifier: Apache-2.0
;;; External kernels: sgemm, a float matmul from the BLAS library (OpenBLAS), and the rule
;;; that sends matmuls to it. The rule is off by default, since the JIT's own matmul kernels
;;; fuse with their neighbors (a bias, an activation); (optimizer-enable 'blas) turns it on.

(defun %sgemm-result (a b)
  ;; A (... M K 1) and B (... 1 K N) give f32 (... M 1 N).
  (let ((sa (shape a)) (sb (shape b)))
    (list 'f32 (append (butlast sa 2) (list 1 (car (last sb)))))))

(setq *extern-kernels* (cons (cons "sgemm" #'%sgemm-result) *extern-kernels*))

(defun matmul-shaped-p (a b axes)
  "(matmul-shaped-p A B AXES) In a guard: true when (reduce :sum (mul (expand A) (expand B))
AXES) is a float matmul as the matmul composite builds it, A (... M K 1) times B (... 1 K N)
summed over the K axis, with equal batch axes: what the sgemm external kernel computes.
  (matmul-shaped-p (zeros '(2 3 1)) (zeros '(1 3 4)) '(1))  ; => t
  (matmul-shaped-p (zeros '(2 3 1)) (zeros '(1 3 4) :dtype 'f64) '(1))  ; => nil"
  (let* ((sa (shape a)) (sb (shape b)) (r (length sa)))
    (and (eq (dtype a) 'f32) (eq (dtype b) 'f32)
         (>= r 3) (= (length sb) r)
         (equal axes (list (- r 2)))
         (eql (nth (- r 1) sa) 1) (eql (nth (- r 3) sb) 1)
         (equal (nth (- r 2) sa) (nth (- r 2) sb))
         (equal (butlast sa 3) (butlast sb 3)))))

(defoptimizer-set blas "Matmul through the BLAS library's sgemm (off by default).")

(defoptimizer use-blas-for-matmul "A float matmul runs as one call of BLAS sgemm.
(An operand with a size-1 axis, a vector, needs no expand: unexpanded covers both cases.)"
  (reduce :sum (mul ?x ?y) ?axes)
  :when (matmul-shaped-p (unexpanded ?x) (unexpanded ?y) ?axes) :backend :cpu :set blas
  => (extern "sgemm" (unexpanded ?x) (unexpanded ?y)))

(optimizer-disable 'blas)
