;;; SPDX-License-Identifier: Apache-2.0
;;; DIV-REC (Gabriel): divide a 200-element list by two by taking every other element,
;;; recursively (cons onto the recursive result). Consing and non-tail recursion.
(defun create-n (n)
  (do ((n n (1- n))
       (a () (cons () a)))
      ((= n 0) a)))

(defun recursive-div2 (l)
  (cond ((null l) ())
        (t (cons (car l) (recursive-div2 (cddr l))))))

(defun main (iterations)
  (let ((ll (create-n 200)) (sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (length (recursive-div2 ll))))
      (recursive-div2 ll)
      (recursive-div2 ll)
      (recursive-div2 ll))
    (format t "~a~%" sum)))

(main 20000)
