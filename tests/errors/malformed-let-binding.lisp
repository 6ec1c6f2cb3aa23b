;;; SPDX-License-Identifier: Apache-2.0
;;; A let binding with two value forms.
;; expect: malformed-let-binding.lisp:6:9: eval error: let: a binding is (VARIABLE VALUE), got (x 1 2)

(defun f ()
  (let ((x 1 2))
    x))
