;;; SPDX-License-Identifier: Apache-2.0
;;; Integer functions (issue 25): gcd and lcm as SBCL 2.2 computes them.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "gcd" (list (gcd) (gcd 12) (gcd -12) (gcd 12 18) (gcd -12 18 8) (gcd 0 5)))
(show "lcm" (list (lcm) (lcm 4 6) (lcm 4 -6 10) (lcm 0 5) (lcm 7)))
(show "gcd error" (handler-case (gcd 1.5 2) (type-error (e) (condition-message e))))
;; Exponent markers (d, f, s, l read as e: floats are doubles) and the clock's units.
(show "exponent markers" (list 1.5d0 2d-3 -1.0f2 3s1 4L0 1.0e1))
(show "exponent errors" (handler-case (read-from-string "1d") (error (e) (condition-message e))))
(show "internal-time-units-per-second" internal-time-units-per-second)
;; Integers in base 16, 2 and 8 (#x, #b, #o), and their errors.
(show "radix integers" (list #xff #XfF #x-10 #b101 #B-11 #o17 #x7fffffffffffffff #x-8000000000000000))
(show "radix errors" (mapcar (lambda (s) (handler-case (read-from-string s) (error (e) (condition-message e))))
                             '("#xfg" "#b102" "#x8000000000000000")))
