;;; SPDX-License-Identifier: Apache-2.0
;;; Assigning to a constant is rejected where the assignment is written.
;; expect: setq-constant.lisp:8:9: eval error: setq: cannot assign to the constant +limit+

(defconstant +limit+ 10)

(defun raise-limit ()
  (setq +limit+ 11))
