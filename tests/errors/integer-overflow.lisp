;;; SPDX-License-Identifier: Apache-2.0
;;; Integer arithmetic that overflows 64 bits is an error, not a wrap-around.
;; expect: integer-overflow.lisp:8:17: eval error: *: integer overflow (result does not fit in 64 bits)
;; expect: in fact called at integer-overflow.lisp:8:22 (4 times)
;; expect: in fact called at integer-overflow.lisp:10:1

(defun fact (n)
  (if (= n 0) 1 (* n (fact (- n 1)))))

(fact 25)
