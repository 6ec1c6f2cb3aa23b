;;; SPDX-License-Identifier: Apache-2.0
;;; A macro that rejects its arguments during expansion: the message says which macro.
;; expect: eval error: only-symbols: expected a symbol, got 42 (while expanding macro only-symbols)

(defmacro only-symbols (x)
  (unless (symbolp x)
    (error "only-symbols: expected a symbol, got ~s" x))
  `(quote ,x))

(print (only-symbols a))

(defun user ()
  (only-symbols 42))
