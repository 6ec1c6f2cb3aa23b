;;; SPDX-License-Identifier: Apache-2.0
;;; A defun with &optional called with too many arguments.
;; expect: arity-too-many.lisp:10:9: eval error: greet: expected 1 to 2 arguments, got 3
;; expect: in go called at arity-too-many.lisp:12:1

(defun greet (name &optional (greeting "hello"))
  (format nil "~a, ~a" greeting name))

(defun go ()
  (list (greet "ann" "hi" "extra")))

(go)
