;;; SPDX-License-Identifier: Apache-2.0
;;; NQUEENS (Gambit/Larceny benchmark set): count the solutions of 8 queens with lists
;;; (append, cons) and a recursive diagonal check.
(defun iota1 (n)
  (do ((i n (1- i))
       (l () (cons i l)))
      ((= i 0) l)))

(defun ok (row dist placed)
  (or (null placed)
      (and (not (= (car placed) (+ row dist)))
           (not (= (car placed) (- row dist)))
           (ok row (1+ dist) (cdr placed)))))

(defun try-queens (x y z)
  (if (null x)
      (if (null y) 1 0)
      (+ (if (ok (car x) 1 z)
             (try-queens (append (cdr x) y) () (cons (car x) z))
             0)
         (try-queens (cdr x) (cons (car x) y) z))))

(defun queens (n)
  (try-queens (iota1 n) () ()))

(defun main (iterations)
  (let ((sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (queens 8))))
    (format t "~a~%" sum)))

(main 200)
