;;; SPDX-License-Identifier: Apache-2.0
;;; Integer functions of Common Lisp written in Lisp: gcd and lcm.

(defun %check-integer (fn x)
  (unless (integerp x) (error 'type-error "~a: the arguments must be integers, got ~s" fn x))
  x)

(defun gcd (&rest integers)
  "(gcd INTEGER...) is the greatest common divisor of the INTEGERs (0 for none), never negative.
  (gcd 12 18)  ; => 6"
  (let ((g 0))
    (dolist (n integers g)
      (let ((a (abs g)) (b (abs (%check-integer 'gcd n))))
        (while (/= b 0) (psetq a b b (mod a b)))
        (setq g a)))))

(defun lcm (&rest integers)
  "(lcm INTEGER...) is the least common multiple of the INTEGERs (1 for none), never negative.
  (lcm 4 6)  ; => 12"
  (let ((l 1))
    (dolist (n integers l)
      (%check-integer 'lcm n)
      (setq l (if (or (= l 0) (= n 0)) 0 (abs (* (truncate l (gcd l n)) n)))))))

;;; Bits and float rounding.

(defun lognot (integer) "(lognot INTEGER) is the bitwise complement of INTEGER.
  (lognot 0)  ; => -1" (- -1 integer))
(defun logtest (a b) "(logtest A B) is true when the integers A and B share a 1 bit.
  (list (logtest 6 4) (logtest 8 7))  ; => (t nil)" (/= 0 (logand a b)))
(defun logbitp (index integer)
  "(logbitp INDEX INTEGER) is true when bit INDEX (0 the lowest) of INTEGER is 1.
  (logbitp 1 6)  ; => t"
  (/= 0 (logand 1 (ash integer (- index)))))
(defun integer-length (integer)
  "(integer-length INTEGER) is the number of bits INTEGER needs in two's complement, sign bit
excluded.
  (integer-length 255)  ; => 8"
  (let ((n (if (minusp integer) (lognot integer) integer)) (bits 0))
    (while (> n 0) (setq n (ash n -1) bits (+ bits 1)))
    bits))

(defun ffloor (number &optional (divisor 1))
  "(ffloor NUMBER [DIVISOR]) is floor's quotient as a float, and the remainder.
  (multiple-value-list (ffloor 7 2))  ; => (3.0 1)
  (ffloor -2.5)  ; => -3.0"
  (multiple-value-bind (q r) (floor number divisor) (values (float q) r)))
(defun fceiling (number &optional (divisor 1))
  "(fceiling NUMBER [DIVISOR]) is ceiling's quotient as a float, and the remainder.
  (multiple-value-list (fceiling 7 2))  ; => (4.0 -1)
  (fceiling 2.5)  ; => 3.0"
  (multiple-value-bind (q r) (ceiling number divisor) (values (float q) r)))
(defun fround (number &optional (divisor 1))
  "(fround NUMBER [DIVISOR]) is round's quotient as a float, and the remainder.
  (multiple-value-list (fround 7 2))  ; => (4.0 -1)
  (fround 2.5)  ; => 2.0"
  (multiple-value-bind (q r) (round number divisor) (values (float q) r)))
(defun ftruncate (number &optional (divisor 1))
  "(ftruncate NUMBER [DIVISOR]) is truncate's quotient as a float, and the remainder.
  (multiple-value-list (ftruncate -7 2))  ; => (-3.0 -1)"
  (multiple-value-bind (q r) (truncate number divisor) (values (float q) r)))
