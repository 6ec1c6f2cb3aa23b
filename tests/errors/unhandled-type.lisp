;;; SPDX-License-Identifier: Apache-2.0
;;; A handler-case for another type lets the error through with its original location.
;; expect: unhandled-type.lisp:8:5: eval error: car: argument 1 must be a list, got 5 (integer)
;; expect: in head called at unhandled-type.lisp:10:15

(defun head (x)
  (list
    (car x)))

(handler-case (head 5)
  (division-by-zero () 'not-this-one))
