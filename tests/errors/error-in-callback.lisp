;;; SPDX-License-Identifier: Apache-2.0
;;; An error inside a lambda called by mapcar: the lambda appears in the backtrace.
;; expect: error-in-callback.lisp:7:23: eval error: *: argument 1 must be a number, got a (symbol)
;; expect: in scale called at error-in-callback.lisp:10:8

(defun scale (items)
  (mapcar (lambda (x) (* x 2))
          items))

(print (scale '(1 2 a)))
