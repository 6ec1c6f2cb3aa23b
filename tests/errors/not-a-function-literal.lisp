;;; SPDX-License-Identifier: Apache-2.0
;;; A list whose head is a number is not a call: a common slip for a quoted list.
;; expect: not-a-function-literal.lisp:6:16: eval error: cannot call 1: it is not a function

(defun numbers ()
  (mapcar #'1+ (1 2 3)))
