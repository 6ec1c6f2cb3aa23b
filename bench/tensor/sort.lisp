;;; SPDX-License-Identifier: Apache-2.0
;;; Sorting along an axis (a bitonic network of primitives, stdlib/tensor/55-sort.lisp): the
;;; first call (which compiles, or loads from the disk cache, one kernel per network step) and
;;; the best of a few warm calls, for 1-d sorts and topk on the current device.
;;;   tlisp --device cpu bench/tensor/sort.lisp
;;; Each line: NAME  first-ms  warm-ms  kernels-per-call

(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun kernels () (getf (jit-stats) :kernels-run))

(defun bench (name thunk &key (reps 3))
  (let* ((t0 (now-ms)) (k0 (kernels)))
    (funcall thunk)
    (let ((first (- (now-ms) t0)) (per-call (- (kernels) k0)) (best nil))
      (dotimes (i reps)
        (gc)  ; the last result goes, so the sort runs again instead of being reused
        (let ((t1 (now-ms)))
          (funcall thunk)
          (let ((dt (- (now-ms) t1))) (when (or (null best) (< dt best)) (setq best dt)))))
      (format t "~a ~,1f ~,1f ~a~%" name first best per-call))))

(manual-seed 0)
(dolist (n '(1000 10000 100000 1000000))
  (let ((x (realize (randn (list n)))))
    (bench (format nil "sort-f32-~a" n) (lambda () (realize (first (sort x)))))
    (bench (format nil "argsort-f32-~a" n) (lambda () (realize (argsort x :descending t))))))
(let ((x (realize (randint 0 1000 '(100000) :dtype 'i64))))
  (bench "sort-i64-100000" (lambda () (realize (first (sort x))))))
(let ((x (realize (randn '(64 4096)))))
  (bench "topk-10-of-64x4096" (lambda () (realize (first (topk x 10))))))
