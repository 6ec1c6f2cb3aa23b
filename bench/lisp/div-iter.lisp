;;; SPDX-License-Identifier: Apache-2.0
;;; DIV-ITER (Gabriel): divide a 200-element list by two by taking every other element,
;;; iteratively (do loop with cddr and push). Consing and list walking.
(defun create-n (n)
  (do ((n n (1- n))
       (a () (cons () a)))
      ((= n 0) a)))

(defun iterative-div2 (l)
  (do ((l l (cddr l))
       (a () (cons (car l) a)))
      ((null l) a)))

(defun main (iterations)
  (let ((ll (create-n 200)) (sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (length (iterative-div2 ll))))
      (iterative-div2 ll)
      (iterative-div2 ll)
      (iterative-div2 ll))
    (format t "~a~%" sum)))

(main 15000)
