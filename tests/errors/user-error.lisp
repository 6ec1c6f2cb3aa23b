;;; SPDX-License-Identifier: Apache-2.0
;;; An error signalled by user code with format arguments.
;; expect: user-error.lisp:9:7: eval error: invalid age: -5 (must be between 0 and 150)
;; expect: in check-age called at user-error.lisp:13:14
;; expect: in make-person called at user-error.lisp:15:1

(defun check-age (age)
  (if (or (< age 0) (> age 150))
      (error "invalid age: ~a (must be between ~a and ~a)" age 0 150)
      age))

(defun make-person (name age)
  (list name (check-age age)))

(make-person "ann" -5)
