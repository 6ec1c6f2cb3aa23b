;;; SPDX-License-Identifier: Apache-2.0
;;; A misspelled variable in a function: the error points at it; the backtrace gives each call site.
;; expect: unbound-variable.lisp:9:18: eval error: unbound variable totl
;; expect:   (list total (/ totl count)))
;; expect: in average called at unbound-variable.lisp:12:10
;; expect: in report called at unbound-variable.lisp:14:1

(defun average (total count)
  (list total (/ totl count)))

(defun report (numbers)
  (print (average (apply #'+ numbers) (length numbers))))

(report '(1 2 3))
