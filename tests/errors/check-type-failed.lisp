;;; SPDX-License-Identifier: Apache-2.0
;;; check-type names the place, the expected type and the value with its type.
;; expect: check-type-failed.lisp:7:3: eval error: name must be of type string, got 42 (integer)
;; expect: in set-name called at check-type-failed.lisp:10:14

(defun set-name (name)
  (check-type name string)
  name)

(print (list (set-name 42)))
