;;; SPDX-License-Identifier: Apache-2.0
;;; A string that is never closed: the error points at its opening quote.
;; expect: read-unterminated-string.lisp:7:1: read error: string starting here is never closed
;; expect: "this docstring-like text

(print 'before)
"this docstring-like text
never ends
