;;; SPDX-License-Identifier: Apache-2.0
;;; A program whose shapes keep changing compiles a kernel per shape; the device keeps the
;;; most recently used kernels and plans only (jit-kernel-cache, jit-plan-cache), and releases
;;; the code of those it lets go, so memory stays flat: 400 new shapes after warm-up grow the
;;; resident set by under 2 MB (kept without bound, about 47 KB each on the CPU: 19 MB). Not
;;; run under the sanitizers, whose allocator keeps freed memory on purpose.

(defun step-of (n)
  (let ((x (tensor (make-list n :initial-element 1.0))))
    (to-list (sum (mul (add x 1.0) 2.0)))))

(jit-plan-cache 4)
(jit-kernel-cache 8)
(loop for n from 1 to 100 do (step-of n))
(let ((start (getf (process-memory) :rss)))
  (loop for n from 101 to 500 do (step-of n))
  (let ((growth (- (getf (process-memory) :rss) start)))
    (format t "rss flat over 400 new shapes: ~a~%" (< growth (* 2 1048576)))
    (unless (< growth (* 2 1048576)) (format t "grew by ~a bytes~%" growth))
    (format t "kernels kept: ~a~%" (<= (getf (jit-stats) :kernels) 8))))
