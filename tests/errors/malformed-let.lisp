;;; SPDX-License-Identifier: Apache-2.0
;;; A let binding that is not a variable: the error points at the binding.
;; expect: malformed-let.lisp:7:9: eval error: let: cannot bind 1, not a variable name

(print 'before)
(defun f ()
  (let (1)
    'body))
