;;; SPDX-License-Identifier: Apache-2.0
;;; Compile latency: the first softmax on a shape this process has not seen, including
;;; scheduling, compiling (or loading from the disk cache) and running. bench/tensor/run.sh
;;; runs it twice with a fresh cache directory: cold, then warm.
(defvar x (realize (reshape (arange 100000 :dtype 'f32) '(100 1000))))  ; LLVM starts up here
(let ((t0 (get-internal-real-time)))
  (realize (softmax x :axis 1))
  (format t "softmax-first-call ~,1f ms (~a kernels)~%" (/ (- (get-internal-real-time) t0) 1e6)
          (getf (jit-stats) :kernels-run)))
