;;; SPDX-License-Identifier: Apache-2.0
;;; One closing parenthesis too many: the error points at the extra one.
;; expect: read-extra-paren.lisp:6:17: read error: unbalanced parenthesis: unexpected ')'
;; expect: (defun sq (x) x))

(defun sq (x) x))
(print (sq 2))
