;;; SPDX-License-Identifier: Apache-2.0
;;; DIV-ITER (Gabriel): the same program as div-iter.lisp.
(define (create-n n)
  (do ((n n (- n 1))
       (a '() (cons '() a)))
      ((= n 0) a)))

(define (iterative-div2 l)
  (do ((l l (cddr l))
       (a '() (cons (car l) a)))
      ((null? l) a)))

(define (main iterations)
  (let ((ll (create-n 200)))
    (let loop ((i 0) (sum 0))
      (if (< i iterations)
          (let ((r (length (iterative-div2 ll))))
            (iterative-div2 ll)
            (iterative-div2 ll)
            (iterative-div2 ll)
            (loop (+ i 1) (+ sum r)))
          (begin (display sum) (newline))))))

(main 15000)
