;;; SPDX-License-Identifier: Apache-2.0
;;; TAKL (Gabriel): TAK with the numbers replaced by lists of those lengths; the
;;; comparison walks both lists (shorterp). Recursion, car/cdr, null tests.
(defun listn (n)
  (if (not (= 0 n))
      (cons n (listn (1- n)))))

(defun shorterp (x y)
  (and y (or (null x)
             (shorterp (cdr x) (cdr y)))))

(defun mas (x y z)
  (if (not (shorterp y x))
      z
      (mas (mas (cdr x) y z)
           (mas (cdr y) z x)
           (mas (cdr z) x y))))

(defun main (iterations)
  (let ((l18 (listn 18)) (l12 (listn 12)) (l6 (listn 6)) (sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (length (mas l18 l12 l6)))))
    (format t "~a~%" sum)))

(main 25)
