;;; SPDX-License-Identifier: Apache-2.0
;;; A builtin called with the wrong number of arguments.
;; expect: arity-builtin.lisp:7:9: eval error: cons: expected 2 arguments, got 3
;; expect: in pair-up called at arity-builtin.lisp:9:1

(defun pair-up (a b)
  (list (cons a b nil)))

(pair-up 1 2)
