;;; SPDX-License-Identifier: Apache-2.0
;;; Matrix-vector products with quantized weights (issue 27): one row x (1 K) times a weight
;;; W (N K) transposed, W f32, q8_0 and q4_0, at GPT-2 124M's decode shapes, each the best of
;;; RUNS calls after a warm-up. Prints per shape and format the time, the weight bytes read
;;; per second, and the ratio of time to f32's; then the memory bandwidth a plain sum of a
;;; 256 MiB f32 tensor reaches (the hardware's limit, measured in the same run).
;;; q8_0 and q4_0 are what a model runs: on a CPU with integer dot products (AVX-512 VNNI,
;;; AVX-VNNI, AVX2) the activation is quantized to int8 and the kernel multiplies bytes (the
;;; quantized-dot rule); "+f32" rows are the same weights with the activation kept in f32
;;; (the rule off: each weight converted to a float), for comparison.
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
(format t "~a~%" (if (%cpu-int8-dot-p) "integer dot products: yes (q8_0, q4_0: int8 activations)"
                    "integer dot products: no (q8_0, q4_0 convert each weight to f32)"))
(format t "~18a ~9a ~10a ~10a ~8a~%" "shape (N K)" "format" "us" "GB/s" "vs f32")
(dolist (nk (or (and (getenv "SHAPES") (read-from-string (getenv "SHAPES"))) '((2304 768) (768 768) (3072 768) (768 3072) (50257 768))))
  (destructuring-bind (n k) nk
    (let* ((w (realize (mul (randn (list n k)) 0.02)))
           (f32-time nil))
      (dolist (variant '((f32) (q8_0) (q4_0) (q8_0 f32-act) (q4_0 f32-act)))
        (let* ((fmt (car variant))
               (wq (if (eq fmt 'f32) w (quantize w fmt)))
               (run (lambda (x) (realize (matmul x (transpose wq)))))
               (s (if (cdr variant)
                      (with-optimizers-disabled (quantized-dot)
                        (best-seconds run (lambda () (realize (randn (list 1 k))))))
                      (best-seconds run (lambda () (realize (randn (list 1 k))))))))
          (when (eq fmt 'f32) (setq f32-time s))
          (format t "~18a ~9a ~10,1f ~10,2f ~8,2f~%" (format nil "~a" nk) (if (cdr variant) (format nil "~a+f32" fmt) fmt)
                  (* 1e6 s) (/ (bytes-of fmt n k) s 1e9) (/ s f32-time)))))))
(unless (getenv "SHAPES") (let ((s (best-seconds (lambda (big) (item (sum big))) (lambda () (realize (randn (list (* 64 1024 1024))))))))
  (format t "memory bandwidth (sum of 256 MiB f32): ~,2f GB/s~%" (/ (* 4 64 1024 1024) s 1e9))))
