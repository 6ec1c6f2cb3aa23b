;;; SPDX-License-Identifier: Apache-2.0
;;; Integer division by zero shows the operands.
;; expect: division-by-zero.lisp:8:3: eval error: /: division by zero (10 / 0)
;; expect: in ratio called at division-by-zero.lisp:11:9
;; expect: in report called at division-by-zero.lisp:13:1

(defun ratio (a b)
  (/ a b))

(defun report ()
  (list (ratio 10 0)))

(report)
