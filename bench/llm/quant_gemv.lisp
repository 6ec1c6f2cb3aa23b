;;; SPDX-License-Identifier: Apache-2.0
;;; Matrix-vector products with quantized weights (issue 27): one row x (1 K) times a weight
;;; W (N K) transposed, W f32, q8_0 and q4_0, at GPT-2 124M's decode shapes, each the best of
;;; RUNS calls after a warm-up. Prints per shape and format the time, the weight bytes read
;;; per second, and the ratio of time to f32's; then the memory bandwidth a plain sum of a
;;; 256 MiB f32 tensor reaches (the hardware's limit, measured in the same run).
;;;   build/tlisp bench/llm/quant_gemv.lisp [--runs 20]
;;; (SHAPES="((2304 768))" in the environment times only those shapes, without the sum.)

(defvar *runs* (command-line-option "--runs" 20))

(defun best-seconds (thunk &optional (setup (lambda () nil)))
  ;; The least time of THUNK over the runs, each called with a fresh value of SETUP (a new
  ;; input each time: a realized result is kept, and asking for it again computes nothing).
  (funcall thunk (funcall setup))
  (let ((best nil))
    (dotimes (i *runs* best)
      (let* ((arg (funcall setup)) (t0 (get-internal-real-time)))
        (funcall thunk arg)
        (let ((s (/ (- (get-internal-real-time) t0) internal-time-units-per-second)))
          (when (or (null best) (< s best)) (setq best s)))))))

(defun bytes-of (fmt n k)
  (* n k (case fmt (f32 4) (q8_0 1.0625) (q4_0 0.5625))))

(manual-seed 0)
(format t "~18a ~6a ~10a ~10a ~8a~%" "shape (N K)" "format" "us" "GB/s" "vs f32")
(dolist (nk (or (and (getenv "SHAPES") (read-from-string (getenv "SHAPES"))) '((2304 768) (768 768) (3072 768) (768 3072) (50257 768))))
  (destructuring-bind (n k) nk
    (let* ((w (realize (mul (randn (list n k)) 0.02)))
           (f32-time nil))
      (dolist (fmt '(f32 q8_0 q4_0))
        (let* ((wq (if (eq fmt 'f32) w (quantize w fmt)))
               (s (best-seconds (lambda (x) (realize (matmul x (transpose wq))))
                                (lambda () (realize (randn (list 1 k)))))))
          (when (eq fmt 'f32) (setq f32-time s))
          (format t "~18a ~6a ~10,1f ~10,2f ~8,2f~%" (format nil "~a" nk) fmt (* 1e6 s)
                  (/ (bytes-of fmt n k) s 1e9) (/ s f32-time)))))))
(unless (getenv "SHAPES") (let ((s (best-seconds (lambda (big) (item (sum big))) (lambda () (realize (randn (list (* 64 1024 1024))))))))
  (format t "memory bandwidth (sum of 256 MiB f32): ~,2f GB/s~%" (/ (* 4 64 1024 1024) s 1e9))))
