;;; SPDX-License-Identifier: Apache-2.0
;;; DIV-REC (Gabriel): the same program as div-rec.lisp.
(define (create-n n)
  (do ((n n (- n 1))
       (a '() (cons '() a)))
      ((= n 0) a)))

(define (recursive-div2 l)
  (cond ((null? l) '())
        (else (cons (car l) (recursive-div2 (cddr l))))))

(define (main iterations)
  (let ((ll (create-n 200)))
    (let loop ((i 0) (sum 0))
      (if (< i iterations)
          (let ((r (length (recursive-div2 ll))))
            (recursive-div2 ll)
            (recursive-div2 ll)
            (recursive-div2 ll)
            (loop (+ i 1) (+ sum r)))
          (begin (display sum) (newline))))))

(main 20000)
