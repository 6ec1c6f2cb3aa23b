;;; SPDX-License-Identifier: Apache-2.0
;;; Recursive Fibonacci: function calls and integer arithmetic.
(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(print (fib 30))
