;;; SPDX-License-Identifier: Apache-2.0
;;; Integer functions (issue 25): gcd and lcm as SBCL 2.2 computes them.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "gcd" (list (gcd) (gcd 12) (gcd -12) (gcd 12 18) (gcd -12 18 8) (gcd 0 5)))
(show "lcm" (list (lcm) (lcm 4 6) (lcm 4 -6 10) (lcm 0 5) (lcm 7)))
(show "gcd error" (handler-case (gcd 1.5 2) (type-error (e) (condition-message e))))
