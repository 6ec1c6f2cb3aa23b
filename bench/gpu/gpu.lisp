;;; SPDX-License-Identifier: Apache-2.0
;;; GPU benchmarks on the current device (run with tlisp --device cuda, or hip). Each line:
;;;   NAME  best-ms  GFLOP/s  GB/s
;;; where best-ms is the least device time of several runs after one warm-up (which compiles):
;;; the kernels' :run-seconds in (jit-stats), from the first launch until the device is done,
;;; without the copies of inputs to the device (made once) or of results back to the host.
;;; bench/gpu/run.sh runs this next to PyTorch on the same GPU and prints the ratios. With
;;; --small the sizes are tiny (a check that the script runs, e.g. on the cpu backend's
;;; simulated GPU: TENSORLISP_DEVICE_OPTIONS=sim=nvptx).

(defvar *small* (member "--small" *argv* :test #'equal))
(defvar *n* (if *small* (expt 2 12) (expt 2 26)))       ; elementwise length
(defvar *m* (if *small* 256 4096))                     ; matrix side
(defvar *tag-n* (if *small* "2^12" "2^26"))

(defun run-seconds () (getf (jit-stats) :run-seconds))

(defun best-ms (thunk reps)
  (funcall thunk)  ; warm-up: compiles the kernels, uploads the inputs
  (let ((best nil))
    (dotimes (i reps)
      (gc)  ; the last run's result goes, so the same expression is computed again, not reused
      (let ((t0 (run-seconds)))
        (funcall thunk)
        (let ((dt (* 1e3 (- (run-seconds) t0))))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(defun bench (name thunk &key (flops 0) (bytes 0) (reps 10))
  (let ((ms (best-ms thunk reps)))
    (format t "~a ~,4f ~,2f ~,2f~%" name ms (/ flops (max ms 1e-6) 1e6) (/ bytes (max ms 1e-6) 1e6))))

(manual-seed 0)

;; Elementwise on 2^26 floats: bytes are what must cross memory (inputs and output).
(let* ((n *n*)
       (a (to-device (randn (list n))))
       (b (to-device (randn (list n))))
       (c (to-device (randn (list n)))))
  (bench (format nil "add-~a" *tag-n*) (lambda () (realize (+ a b))) :flops n :bytes (* 12.0 n))
  (bench (format nil "6-op-chain-~a" *tag-n*) (lambda () (realize (* (+ (* (- a b) c) 1.5) (maximum a 0.0))))
         :flops (* 6.0 n) :bytes (* 16.0 n)))

;; Softmax over the last axis of 4096x4096: one read and one write of each element at least.
(let ((x (to-device (randn (list *m* *m*)))))
  (bench (format nil "softmax-~ax~a" *m* *m*) (lambda () (realize (softmax x :axis 1)))
         :flops (* 5.0 *m* *m*) :bytes (* 8.0 *m* *m*)))

;; A row sum and a full sum (thread groups), and a column sum (a thread per output).
(let ((x (to-device (randn (list *m* *m*))))
      (size (* 1.0 *m* *m*)))
  (bench (format nil "row-sum-~ax~a" *m* *m*) (lambda () (realize (sum x :axis 1))) :flops size :bytes (* 4 size))
  (bench (format nil "col-sum-~ax~a" *m* *m*) (lambda () (realize (sum x :axis 0))) :flops size :bytes (* 4 size))
  (bench (format nil "sum-~ax~a" *m* *m*) (lambda () (realize (sum x))) :flops size :bytes (* 4 size)))

;; fp32 matmul: 2 N^3 flops.
(let ((a (to-device (randn (list *m* *m*))))
      (b (to-device (randn (list *m* *m*)))))
  (bench (format nil "matmul-~a" *m*) (lambda () (realize (matmul a b)))
         :flops (* 2.0 *m* *m* *m*) :bytes (* 12.0 *m* *m*) :reps 3))
