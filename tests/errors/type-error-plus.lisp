;;; SPDX-License-Identifier: Apache-2.0
;;; + of a string.
;; expect: type-error-plus.lisp:9:5: eval error: +: argument 1 must be a number, got "3" (string)
;; expect: in total called at type-error-plus.lisp:9:20 (2 times)
;; expect: in total called at type-error-plus.lisp:11:8

(defun total (items)
  (if (null items) 0
    (+ (car items) (total (cdr items)))))

(print (total '(1 2 "3")))
