;;; SPDX-License-Identifier: Apache-2.0
;;; An if with no test or branches.
;; expect: malformed-if.lisp:7:5: eval error: if: expected (if TEST THEN [ELSE]), got 0 forms

(defun check (x)
  (when x
    (if)))
