;;; SPDX-License-Identifier: Apache-2.0
;;; DERIV (Gabriel): symbolic derivative of (+ (* 3 x x) (* a x x) (* b x) 5),
;;; five times per iteration. Consing, mapcar, symbol dispatch with cond/eq.
(defun deriv-aux (a)
  (list '/ (deriv a) a))

(defun deriv (a)
  (cond ((atom a) (if (eq a 'x) 1 0))
        ((eq (car a) '+) (cons '+ (mapcar #'deriv (cdr a))))
        ((eq (car a) '-) (cons '- (mapcar #'deriv (cdr a))))
        ((eq (car a) '*) (list '* a (cons '+ (mapcar #'deriv-aux (cdr a)))))
        ((eq (car a) '/)
         (list '-
               (list '/ (deriv (cadr a)) (caddr a))
               (list '/ (cadr a) (list '* (caddr a) (caddr a) (deriv (caddr a))))))
        (t 'error)))

(defun main (iterations)
  (let ((expr '(+ (* 3 x x) (* a x x) (* b x) 5))
        (result nil))
    (dotimes (i iterations)
      (setq result (deriv expr))
      (deriv expr)
      (deriv expr)
      (deriv expr)
      (deriv expr))
    (format t "~a~%" result)))

(main 60000)
