;;; SPDX-License-Identifier: Apache-2.0
;;; FIB: doubly recursive Fibonacci, (fib 25) repeated. Calls and fixnum arithmetic.
(defun fib (n)
  (if (< n 2)
      n
      (+ (fib (- n 1)) (fib (- n 2)))))

(defun main (iterations)
  (let ((sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (fib 25))))
    (format t "~a~%" sum)))

(main 80)
