;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 25: (defun block ...) was accepted, and later calls still parsed as the special form.
;; expect: defun-special-form.lisp:5:1: eval error: defun: block is a special form; it cannot be redefined

(defun block (x) (* x 2))
(print (block 3))
