;;; SPDX-License-Identifier: Apache-2.0
;;; Calling a function that was never defined: the error points at its name.
;; expect: undefined-function.lisp:8:9: eval error: undefined function frobnicate
;; expect: in helper called at undefined-function.lisp:11:9
;; expect: in caller called at undefined-function.lisp:13:1

(defun helper (x)
  (+ 1 (frobnicate x)))

(defun caller ()
  (list (helper 1)))

(caller)
