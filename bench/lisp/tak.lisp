;;; SPDX-License-Identifier: Apache-2.0
;;; TAK (Gabriel): (tak 18 12 6), about 63,600 calls each. Deep non-tail recursion,
;;; fixnum compare and subtract.
(defun tak (x y z)
  (if (not (< y x))
      z
      (tak (tak (1- x) y z)
           (tak (1- y) z x)
           (tak (1- z) x y))))

(defun main (iterations)
  (let ((sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (tak 18 12 6))))
    (format t "~a~%" sum)))

(main 300)
