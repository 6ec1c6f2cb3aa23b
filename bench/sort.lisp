;;; SPDX-License-Identifier: Apache-2.0
;;; Sorting a list of 1,000,000 pseudo-random integers with a Lisp predicate.
(defun make-data (n)
  (let ((x 12345) (out nil))
    (dotimes (i n out)
      (setq x (mod (+ (* x 1103515245) 12345) 2147483648))
      (push x out))))
(let ((sorted (sort (make-data 1000000) #'<)))
  (print (list (car sorted) (car (last sorted)) (length sorted))))
