;;; SPDX-License-Identifier: Apache-2.0
;;; A closure-heavy loop: make an adder per iteration and call it through mapcar and funcall.
(defun make-adder (n) (lambda (x) (+ x n)))
(let ((total 0))
  (dotimes (i 1000000)
    (let ((add (make-adder i)))
      (setq total (funcall add total))))
  (print total))
(print (length (mapcar (lambda (x) (* x 2)) (range 1000000))))
