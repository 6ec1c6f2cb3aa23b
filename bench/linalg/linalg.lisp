;;; SPDX-License-Identifier: Apache-2.0
;;; Linear-algebra benchmarks (the linalg module) on the current device. Each line:
;;;   NAME  best-ms
;;; the best of several runs after a warm-up. bench/linalg/run.sh runs this next to NumPy and
;;; PyTorch on the same matrices' sizes and prints the ratios.

(require 'linalg)
(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun best-ms (thunk reps)
  (funcall thunk)
  (let ((best nil))
    (dotimes (i reps)
      (gc)
      (let ((t0 (now-ms)))
        (funcall thunk)
        (let ((dt (- (now-ms) t0)))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(manual-seed 0)
(dolist (dt '(f64 f32))
  (dolist (n '(256 1024))
    (let* ((x (realize (randn (list n n) :dtype dt)))
           (spd (realize (add (matmul x (transpose x)) (mul (eye n :dtype dt) (float n)))))
           (b (realize (randn (list n 1) :dtype dt)))
           (reps (if (> n 512) 3 10)))
      (flet ((bench (name thunk) (format t "~a-~a-~a ~,3f~%" name dt n (best-ms thunk reps))))
        (bench "solve" (lambda () (realize (linalg:solve x b))))
        (bench "inv" (lambda () (realize (linalg:inv x))))
        (bench "det" (lambda () (realize (linalg:det x))))
        (bench "cholesky" (lambda () (realize (linalg:cholesky spd))))
        (bench "qr" (lambda () (realize-all (linalg:qr x))))
        (bench "eigh" (lambda () (realize-all (linalg:eigh spd))))
        (bench "svd" (lambda () (realize-all (linalg:svd x :full-matrices nil))))))))
