;;; SPDX-License-Identifier: Apache-2.0
;;; A defun called with too few arguments: the error points at the call.
;; expect: arity-too-few.lisp:10:9: eval error: add3: expected 3 arguments, got 2
;; expect: in go called at arity-too-few.lisp:12:1

(defun add3 (a b c)
  (+ a b c))

(defun go ()
  (list (add3 1 2)))

(go)
