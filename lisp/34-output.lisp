;;; SPDX-License-Identifier: Apache-2.0
;;; Common Lisp's output and function-access conveniences over princ, prin1 and format.

(defun princ-to-string (object)
  "(princ-to-string OBJECT) is OBJECT as princ prints it, as a string."
  (format nil "~a" object))

(defun write-to-string (object)
  "(write-to-string OBJECT) is OBJECT as prin1 prints it (readably), as a string."
  (prin1-to-string object))

(defun write-string (string)
  "(write-string STRING) prints STRING as it is; returns STRING."
  (princ string)
  string)

(defun write-line (string)
  "(write-line STRING) prints STRING and a newline; returns STRING."
  (princ string)
  (terpri)
  string)

(defun write-char (character)
  "(write-char CHARACTER) prints CHARACTER; returns it."
  (unless (characterp character)
    (error 'type-error "write-char: argument 1 must be a character, got ~s" character))
  (princ character)
  character)

(defun fresh-line ()
  "(fresh-line) starts a new line unless the output is at the start of one."
  (format t "~&")
  nil)

(defun symbol-function (symbol)
  "(symbol-function SYMBOL) is the global function SYMBOL names; an error when it names none."
  (unless (symbolp symbol) (error 'type-error "symbol-function: argument 1 must be a symbol, got ~s" symbol))
  (unless (and (fboundp symbol) (functionp (symbol-value symbol)))
    (error 'undefined-function "symbol-function: ~s names no function" symbol))
  (symbol-value symbol))

(defun fdefinition (name)
  "(fdefinition NAME) is the global function NAME names (as symbol-function)."
  (symbol-function name))

(defun compile (name &optional definition)
  "(compile NAME [DEFINITION]) compiles nothing (code is compiled when it is defined). With
NAME nil it returns DEFINITION; with NAME and DEFINITION it defines NAME as DEFINITION; it
returns NAME otherwise. The second and third values (warnings, failure) are nil."
  (cond ((null name) (values definition nil nil))
        (definition (%define-function name definition) (values name nil nil))
        (t (symbol-function name) (values name nil nil))))
