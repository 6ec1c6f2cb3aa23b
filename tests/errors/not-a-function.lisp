;;; SPDX-License-Identifier: Apache-2.0
;;; funcall of something that is not a function.
;; expect: not-a-function.lisp:7:20: eval error: cannot call 42: it is not a function
;; expect: in apply-twice called at not-a-function.lisp:9:1

(defun apply-twice (f x)
  (list (funcall f (funcall f x))))

(apply-twice 42 1)
