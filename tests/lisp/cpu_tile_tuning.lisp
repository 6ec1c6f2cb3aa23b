;;; SPDX-License-Identifier: Apache-2.0
;;; The CPU's tuner (backends/cpu/cpu.lisp :search :tile-rows and :tile-cols): with :tune t the
;;; first run of a matmul-like kernel times a register tile of each size that fits, every one a
;;; list of opts, and keeps the fastest; the choice goes into the kernel disk cache, so a new
;;; device (or process) compiles only it. Which tile wins depends on timing, so this checks the
;;; results against the reference executor and the counts.
(manual-seed 3)
(defvar a (realize (randn '(48 96))))
(defvar b (realize (randn '(96 64))))
(defvar bias (realize (randn '(64))))
;; A right operand too large to pack whole (144 KiB): each tile is also timed in cache blocks,
;; the reduce's 384 terms in two blocks of 192 (codegen blocked_plan, the (hoist L P) opt).
(defvar a2 (realize (randn '(50 384))))
(defvar b2 (realize (randn '(384 96))))
(defun work ()
  (list (matmul a b) (relu (+ (matmul a (* b 2.0)) bias)) (matmul (transpose b) (transpose a)) (matmul a2 b2)))
(use-backend 'ref)
(defvar want (mapcar #'realize (work)))

;; (f32 sums of up to 384 products of normals, in another order than the reference's f64:
;; absolute errors to ~6e-5 where the results reach 80.)
(use-backend 'cpu :tune t)
(print (mapcar (lambda (x y) (allclose x y :rtol 1e-5 :atol 2e-4)) want (mapcar #'realize (work))))
;; Each of the four kerne was tuned here or chosen by an earlier run's tuner.
(defvar stats (jit-stats))
(print (= 4 (+ (getf stats :kernels-tuned) (getf stats :kernels-tuned-from-cache))))
;; A new device reads every choice from the disk cache and times nothing. (The collection
;; drops the results, whose nodes would otherwise be found computed.)
(gc)
(use-backend 'cpu :tune t)
(print (mapcar (lambda (x y) (allclose x y :rtol 1e-5 :atol 2e-4)) want (mapcar #'realize (work))))
(setq stats (jit-stats))
(print (list (getf stats :kernels-tuned) (getf stats :kernels-tuned-from-cache)))
;; The plain nest and an untuned device are unaffected.
(gc)
(use-backend 'cpu)
(print (allclose (first want) (realize (matmul a b)) :rtol 1e-5 :atol 1e-5))
(print (getf (jit-stats) :kernels-tuned))
