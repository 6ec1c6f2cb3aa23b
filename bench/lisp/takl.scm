;;; SPDX-License-Identifier: Apache-2.0
;;; TAKL (Gabriel): the same program as takl.lisp.
(define (listn n)
  (if (not (= 0 n))
      (cons n (listn (- n 1)))
      '()))

(define (shorterp x y)
  (and (not (null? y))
       (or (null? x)
           (shorterp (cdr x) (cdr y)))))

(define (mas x y z)
  (if (not (shorterp y x))
      z
      (mas (mas (cdr x) y z)
           (mas (cdr y) z x)
           (mas (cdr z) x y))))

(define (main iterations)
  (let ((l18 (listn 18)) (l12 (listn 12)) (l6 (listn 6)))
    (let loop ((i 0) (sum 0))
      (if (< i iterations)
          (loop (+ i 1) (+ sum (length (mas l18 l12 l6))))
          (begin (display sum) (newline))))))

(main 25)
