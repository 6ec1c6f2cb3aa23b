;;; SPDX-License-Identifier: Apache-2.0
;;; NQUEENS: the same program as nqueens.lisp (the Gambit/Larceny nqueens).
(define (iota1 n)
  (do ((i n (- i 1))
       (l '() (cons i l)))
      ((= i 0) l)))

(define (ok? row dist placed)
  (or (null? placed)
      (and (not (= (car placed) (+ row dist)))
           (not (= (car placed) (- row dist)))
           (ok? row (+ dist 1) (cdr placed)))))

(define (try-queens x y z)
  (if (null? x)
      (if (null? y) 1 0)
      (+ (if (ok? (car x) 1 z)
             (try-queens (append (cdr x) y) '() (cons (car x) z))
             0)
         (try-queens (cdr x) (cons (car x) y) z))))

(define (queens n)
  (try-queens (iota1 n) '() '()))

(define (main iterations)
  (let loop ((i 0) (sum 0))
    (if (< i iterations)
        (loop (+ i 1) (+ sum (queens 8)))
        (begin (display sum) (newline)))))

(main 200)
