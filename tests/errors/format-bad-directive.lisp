;;; SPDX-License-Identifier: Apache-2.0
;;; An unknown format directive.
;; expect: format-bad-directive.lisp:7:3: eval error: format: unknown directive ~q in "total: ~q~%"
;; expect: in report called at format-bad-directive.lisp:9:1

(defun report (n)
  (format t "total: ~q~%" n))

(report 5)
