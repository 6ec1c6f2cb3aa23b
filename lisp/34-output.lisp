;;; SPDX-License-Identifier: Apache-2.0
;;; Common Lisp's output and function-access conveniences over princ, prin1 and format, and
;;; with-output-to-string (the standard output redirected to a string). The streams are t (or
;;; nil: the standard output) and string output streams (make-string-output-stream).

(defvar *standard-output* t
  "Where printing with no stream (or the stream t) goes: t, the program's output, or a string
output stream that a let binds it to.
  (let ((s (make-string-output-stream)))
    (let ((*standard-output* s)) (princ \"hi\") (format t \"~a\" 1))
    (get-output-stream-string s))  ; => \"hi1\"")

(defvar *error-output* (%make-error-output-stream)
  "The process's standard error, as a stream: (format *error-output* ...) prints there.
  (%output-stream-p *error-output*)  ; => t")

(defun finish-output (&optional stream)
  "(finish-output [STREAM]) Waits until what was printed to STREAM has gone out; returns nil.
Output is written as it is printed, so there is nothing to wait for.
  (finish-output)  ; => nil"
  (unless (or (null stream) (eq stream t) (%output-stream-p stream))
    (error 'type-error "finish-output: argument 1 must be an output stream, got ~s" stream))
  nil)

(defun force-output (&optional stream)
  "(force-output [STREAM]) As finish-output, without waiting; returns nil.
  (force-output)  ; => nil"
  (finish-output stream))

(defun princ-to-string (object)
  "(princ-to-string OBJECT) is OBJECT as princ prints it, as a string.
  (princ-to-string '(a \"b\"))  ; => \"(a b)\""
  (format nil "~a" object))

(defun write-to-string (object)
  "(write-to-string OBJECT) is OBJECT as prin1 prints it (readably), as a string.
  (write-to-string 42)  ; => \"42\""
  (prin1-to-string object))

(defun write-string (string &optional stream)
  "(write-string STRING [STREAM]) prints STRING as it is; returns STRING.
  (with-output-to-string (s) (write-string \"abc\" s) (write-string \"def\" s))  ; => \"abcdef\""
  (princ string stream)
  string)

(defun write-line (string &optional stream)
  "(write-line STRING [STREAM]) prints STRING and a newline; returns STRING.
  (with-output-to-string (s) (write-line \"one\" s) (write-line \"two\" s))  ; => \"one\\ntwo\\n\""
  (princ string stream)
  (terpri stream)
  string)

(defun write-char (character &optional stream)
  "(write-char CHARACTER [STREAM]) prints CHARACTER; returns it.
  (with-output-to-string (s) (write-char #\\a s) (write-char #\\Space s) (write-char #\\b s))  ; => \"a b\""
  (unless (characterp character)
    (error 'type-error "write-char: argument 1 must be a character, got ~s" character))
  (princ character stream)
  character)

(defun fresh-line (&optional stream)
  "(fresh-line [STREAM]) starts a new line unless the output is at the start of one.
  (with-output-to-string (s) (princ \"a\" s) (fresh-line s) (fresh-line s) (princ \"b\" s))  ; => \"a\\nb\""
  (format (or stream t) "~&")
  nil)

(defmacro with-output-to-string ((var &optional string) &body body)
  "(with-output-to-string (VAR) BODY...) evaluates BODY with VAR bound to a string output
stream, and returns the string of what it printed: to VAR, and (unlike Common Lisp, where
that goes to the terminal) to the standard output (princ, print, format t, describe ...), in
the order printed.
  (with-output-to-string (s) (write-string \"hi\" s) (write-char #\\! s))  ; => \"hi!\"
  (with-output-to-string (s) (princ (streamp s)))  ; => \"t\""
  (when string
    (error 'program-error "with-output-to-string: an existing STRING to append to is not supported"))
  (let ((stream (gensym "stream")))
    `(let* ((,stream (make-string-output-stream)) (,var ,stream))
       ,var
       (,#'%with-output-to-string (lambda () ,@body) ,stream))))

(defun symbol-function (symbol)
  "(symbol-function SYMBOL) is the global function SYMBOL names; an error when it names none.
  (funcall (symbol-function 'car) '(1 2))  ; => 1
  (handler-case (symbol-function 'doc-ex-undefined) (undefined-function () 'none))  ; => none"
  (unless (symbolp symbol) (error 'type-error "symbol-function: argument 1 must be a symbol, got ~s" symbol))
  (unless (and (fboundp symbol) (functionp (symbol-value symbol)))
    (error 'undefined-function "symbol-function: ~s names no function" symbol))
  (symbol-value symbol))

(defun fdefinition (name)
  "(fdefinition NAME) is the global function NAME names (as symbol-function).
  (mapcar (fdefinition 'abs) '(-1 2 -3))  ; => (1 2 3)"
  (symbol-function name))

(defun compile (name &optional definition)
  "(compile NAME [DEFINITION]) compiles nothing (code is compiled when it is defined). With
NAME nil it returns DEFINITION; with NAME and DEFINITION it defines NAME as DEFINITION; it
returns NAME otherwise. The second and third values (warnings, failure) are nil.
  (funcall (compile nil (lambda (x) (* x 2))) 21)  ; => 42
  (progn (compile 'doc-ex-compile (lambda (x) (+ x 1))) (doc-ex-compile 1))  ; => 2"
  (cond ((null name) (values definition nil nil))
        (definition (%define-function name definition) (values name nil nil))
        (t (symbol-function name) (values name nil nil))))

(defun apropos (text)
  "(apropos TEXT) Prints the defined symbols whose names contain TEXT (case-insensitive), each
with what it is and the first line of its documentation; returns no value.
  (apropos \"cumsum\")"
  (dolist (s (apropos-list text))
    (let* ((d (%definition s))
           (doc (getf d :doc))
           (line (if doc (subseq doc 0 (or (position #\Newline doc) (length doc))) "")))
      (format t "~a (~a)~a~%" (symbol-name s)
              (if d (string-downcase (symbol-name (getf d :kind))) "special form")
              (if (> (length line) 0) (concat ": " (if (> (length line) 90) (concat (subseq line 0 87) "...") line)) ""))))
  (values))

(defun xml-escape (text)
  "(xml-escape TEXT) TEXT (a string, or anything as princ prints it) with <, >, & and the double
quote written as XML and HTML entities, for text and attribute values.
  (xml-escape \"a<b & \\\"c\\\"\")  ; => \"a&lt;b &amp; &quot;c&quot;\""
  (with-output-to-string (out)
    (loop for c across (princ-to-string text)
          do (case c
               (#\< (write-string "&lt;" out))
               (#\> (write-string "&gt;" out))
               (#\& (write-string "&amp;" out))
               (#\" (write-string "&quot;" out))
               (t (write-char c out))))))
