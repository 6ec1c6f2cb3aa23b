;;; SPDX-License-Identifier: Apache-2.0
;;; TAK (Gabriel): (tak 18 12 6) repeated; the same program as tak.lisp.
(define (tak x y z)
  (if (not (< y x))
      z
      (tak (tak (- x 1) y z)
           (tak (- y 1) z x)
           (tak (- z 1) x y))))

(define (main iterations)
  (let loop ((i 0) (sum 0))
    (if (< i iterations)
        (loop (+ i 1) (+ sum (tak 18 12 6)))
        (begin (display sum) (newline)))))

(main 300)
