;;; SPDX-License-Identifier: Apache-2.0
;;; Integer functions of Common Lisp written in Lisp: gcd and lcm.

(defun %check-integer (fn x)
  (unless (integerp x) (error 'type-error "~a: the arguments must be integers, got ~s" fn x))
  x)

(defun gcd (&rest integers)
  "(gcd INTEGER...) is the greatest common divisor of the INTEGERs (0 for none), never negative."
  (let ((g 0))
    (dolist (n integers g)
      (let ((a (abs g)) (b (abs (%check-integer 'gcd n))))
        (while (/= b 0) (psetq a b b (mod a b)))
        (setq g a)))))

(defun lcm (&rest integers)
  "(lcm INTEGER...) is the least common multiple of the INTEGERs (1 for none), never negative."
  (let ((l 1))
    (dolist (n integers l)
      (%check-integer 'lcm n)
      (setq l (if (or (= l 0) (= n 0)) 0 (abs (* (truncate l (gcd l n)) n)))))))
