;;; SPDX-License-Identifier: Apache-2.0
;;; Sorting along an axis (stdlib/tensor/55-sort.lisp: a bitonic network of primitives, or
;;; counting for axes up to *sort-rank-limit*): the first call (which compiles, or loads from
;;; the disk cache, a kernel per network step) and the best of a few warm calls, on the
;;; current device. The -network rows force the network on a short axis.
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
(let ((x (realize (randn '(1000)))))
  (let ((*sort-rank-limit* 0))
    (bench "sort-f32-1000-network" (lambda () (realize (first (sort x)))))))
(let ((x (realize (randn '(4096 16)))))
  (bench "sort-4096x16" (lambda () (realize (first (sort x)))))
  (let ((*sort-rank-limit* 0))
    (bench "sort-4096x16-network" (lambda () (realize (first (sort x)))))))
(dolist (n '(1000 10000 100000 1000000))
  (let ((x (realize (randn (list n)))))
    (bench (format nil "sort-f32-~a" n) (lambda () (realize (first (sort x)))))
    (bench (format nil "argsort-f32-~a" n) (lambda () (realize (argsort x :descending t))))))
(let ((x (realize (randint 0 1000 '(100000) :dtype 'i64))))
  (bench "sort-i64-100000" (lambda () (realize (first (sort x))))))
(let ((x (realize (randn '(64 4096)))))
  (bench "topk-10-of-64x4096" (lambda () (realize (first (topk x 10))))))
