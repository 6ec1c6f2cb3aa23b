;;; SPDX-License-Identifier: Apache-2.0
;;; FIB: doubly recursive Fibonacci, (fib 25) repeated; the same program as fib.lisp.
(define (fib n)
  (if (< n 2)
      n
      (+ (fib (- n 1)) (fib (- n 2)))))

(define (main iterations)
  (let loop ((i 0) (sum 0))
    (if (< i iterations)
        (loop (+ i 1) (+ sum (fib 25)))
        (begin (display sum) (newline)))))

(main 80)
