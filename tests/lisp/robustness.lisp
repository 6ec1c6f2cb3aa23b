;;; SPDX-License-Identifier: Apache-2.0
;;; Regression tests for issue 19 ("impossible to crash"): bad input, circular structure, huge
;;; sizes and deep nesting end in a condition that handler-case catches, never a hang or abort.

(defun message-of (thunk)
  "(message-of THUNK) is \"TYPE: MESSAGE\" of the condition THUNK signals, or :no-error."
  (handler-case (progn (funcall thunk) :no-error)
    (condition (c) (format nil "~a: ~a" (condition-type c) (condition-message c)))))

(defmacro show (form)
  `(format t "~s~%  => ~a~%" ',form (message-of (lambda () ,form))))

;; Issue 19: a NUL byte inside a list made the reader loop until memory ran out.
(show (read-from-string (concat "(1 " (code-char 0) " 2)")))
(show (read-from-string (concat "(a" (code-char 0) ")")))
