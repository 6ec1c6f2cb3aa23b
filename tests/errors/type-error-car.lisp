;;; SPDX-License-Identifier: Apache-2.0
;;; car of a number: the message names the function, the argument and its type.
;; expect: type-error-car.lisp:8:11: eval error: car: argument 1 must be a list, got 42 (integer)
;; expect: in first-name called at type-error-car.lisp:11:11
;; expect: in greet called at type-error-car.lisp:13:1

(defun first-name (person)
  (string (car person)))

(defun greet (person)
  (concat (first-name person) "!"))

(greet 42)
