;;; SPDX-License-Identifier: Apache-2.0
;;; Probes found while writing the manual's examples (issues 25, 26): each line printed here
;;; was wrong before, and now says what SBCL says (or, for TensorLisp's own names, what the
;;; docstring says).

(defun show (label value) (format t "~a: ~s~%" label value))
(defmacro fails (form)
  `(handler-case (progn ,form "no error")
     (error (e) (format nil "~a" (condition-message e)))))

;; Strings index characters, not bytes; case folding is Unicode's.
(show "string-contains" (string-contains "héllo" "l"))
(show "string< mismatch index" (string< "é1" "é2"))
(show "string-lessp folds é/É" (string-lessp "ábc" "ÁBD"))
(show "string-equal" (string-equal "É" "é"))
(show "string-trim a bag of é" (string-trim "é" "ééaé"))
(show "string-trim keeps è" (string-trim "é" "èa"))
(show "string-trim with a list bag" (string-trim '(#\é #\Space) " éaé "))
(show "make-string of a one-character string" (make-string 2 :initial-element "é"))

;; Printer limits.
(show "*print-length* 3" (let ((*print-length* 3)) (prin1-to-string '(1 2 3 4 5))))
(show "*print-length* on a vector" (let ((*print-length* 2)) (prin1-to-string (vector 1 2 3))))
(show "*print-length* 0" (let ((*print-length* 0)) (prin1-to-string '(1))))
(show "*print-level* 2" (let ((*print-level* 2)) (prin1-to-string '(1 (2 (3 (4)))))))
(show "*print-level* 0" (let ((*print-level* 0)) (prin1-to-string '(1))))
(show "no limits" (prin1-to-string '(1 (2 (3 (4 5 6 7 8 9 10 11 12 13))))))

;; Conditions: a builtin's type error carries its datum; value-error is an error.
(show "type-error-datum" (handler-case (car 5) (type-error (e) (type-error-datum e))))
(show "type-error-expected-type" (handler-case (car 5) (type-error (e) (type-error-expected-type e))))
(show "value-error caught as error" (handler-case (error 'value-error "bad value") (error (e) (condition-message e))))
(show "restart-name" (restart-case (restart-name (first (compute-restarts))) (retry () nil)))

;; Hash tables take Common Lisp's keywords.
(show "make-hash-table :test :size" (hash-table-count (make-hash-table :test #'eq :size 10)))
(show "make-hash-table :sise" (fails (make-hash-table :sise 3)))
(show "make-hash-table :size -1" (fails (make-hash-table :size -1)))

;; Characters and streams.
(show "digit-char radix 1" (fails (digit-char 0 1)))
(show "make-keyword nil" (make-keyword nil))
(show "unread-char of another character"
      (fails (with-input-from-string (s "ab") (read-char s) (unread-char #\z s))))
(show "unread-char" (with-input-from-string (s "ab") (let ((c (read-char s))) (unread-char c s) (read-char s))))

;; (require 'data) leaves the builtin range alone.
(require 'data)
(show "range after (require 'data)" (range 1 10 3))

;; Scheme habits: named let (a loop in constant stack) and define.
(show "named let" (let loop ((i 0) (acc nil)) (if (< i 3) (loop (+ i 1) (cons i acc)) acc)))
(show "named let, a million steps" (let count ((i 0)) (if (< i 1000000) (count (+ i 1)) i)))
(show "named let inits see the outer name"
      (let ((n 5)) (let n ((k n)) (if (numberp n) (list 'outer n) (list 'inner k)))))
(show "named let with no bindings" (let again () 'done))
(show "named let, a bad binding" (fails (eval '(let lp ((1 2)) 3))))
(define (probe-square x) (* x x))
(define probe-global 10)
(show "define a function" (probe-square 7))
(show "define a variable" probe-global)
(show "define's variable binds lexically"
      (let ((f (let ((probe-global 1)) (lambda () probe-global)))) (funcall f)))
(show "define, bad form" (fails (eval '(define 3 4))))
