;;; SPDX-License-Identifier: Apache-2.0
;;; An if with two else forms (a progn was forgotten).
;; expect: malformed-if-too-many.lisp:6:3: eval error: if: expected (if TEST THEN [ELSE]), got 4 forms

(defun check (x)
  (if (> x 0)
      'positive
      (print "not positive")
      'non-positive))
