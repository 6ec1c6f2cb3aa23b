;;; SPDX-License-Identifier: Apache-2.0
;;; Special variables: dynamic binding seen by called functions and undone on every kind of exit.

(defun show (label value) (format t "~a: ~s~%" label value))

(defvar *depth* 0 "How deep we are.")
(defparameter *name* "global")
(defun current () (list *depth* *name*))

(show "global values" (current))
(let ((*depth* 1) (*name* "outer"))
  (show "bound by let, seen by a called function" (current))
  (let ((*depth* 2))
    (show "nested binding" (current)))
  (show "inner binding undone" (current)))
(show "outer binding undone" (current))

;; defvar does not overwrite, defparameter does.
(defvar *depth* 100)
(show "defvar keeps the value" *depth*)
(defparameter *name* "reset")
(show "defparameter sets it" *name*)
(setq *name* "global")
(show "documentation" (documentation '*depth*))

;; setq inside a dynamic binding changes the binding, not the global value.
(defun set-depth (n) (setq *depth* n))
(let ((*depth* 5))
  (set-depth 6)
  (show "setq in a called function changes the binding" *depth*))
(show "the global value is untouched" *depth*)
(set-depth 7)
(show "setq outside any binding changes the global" *depth*)
(setq *depth* 0)

;; The outer value comes back after an error...
(show "error inside a binding"
      (handler-case (let ((*depth* 99)) (error "failed at depth ~a" *depth*))
        (error (e) (list (condition-message e) (current)))))
(show "after the error" (current))
(defun fail-deep (n)
  (let ((*depth* n))
    (if (= n 3) (car 'boom) (fail-deep (+ n 1)))))
(show "error through several bindings" (handler-case (fail-deep 1) (type-error () (current))))

;; ... and after return-from, return and throw-like exits.
(show "return-from out of a binding" (block b (let ((*depth* 9)) (return-from b (current)))))
(show "after return-from" (current))
(show "return from dolist"
      (dolist (x '(1 2 3)) (let ((*depth* x)) (when (= x 2) (return (current))))))
(show "after return" (current))
(show "unwind-protect sees the binding"
      (let ((seen nil))
        (block b (let ((*depth* 4)) (unwind-protect (return-from b nil) (setq seen *depth*))))
        (list seen *depth*)))

;; Closures see the dynamic value at the time they are called, not when they were made.
(defun make-reader () (lambda () *depth*))
(let ((reader (make-reader)))
  (show "closure called outside" (funcall reader))
  (let ((*depth* 42))
    (show "closure called inside a binding" (funcall reader))))
(defun capture-inside () (let ((*depth* 7)) (lambda () *depth*)))
(show "closure made inside, called outside" (funcall (capture-inside)))
(show "binding seen by mapcar callbacks"
      (let ((*depth* 'dyn)) (mapcar (lambda (x) (list x *depth*)) '(1 2))))

;; A binding per iteration.
(show "dolist over a special" (let ((out nil)) (dolist (*depth* '(a b c) (reverse out)) (push (current) out))))
(show "after dolist" (current))

;; A typical use: indentation for nested output.
(defvar *indent* 0)
(defun emit (text) (format t "~a~a~%" (coerce (make-vector *indent* " ") 'string) text))
(defun emit-tree (tree)
  (if (consp tree)
      (progn (emit (car tree))
             (let ((*indent* (+ *indent* 2)))
               (dolist (child (cdr tree)) (emit-tree child))))
      (emit tree)))
(emit-tree '("root" ("branch" "leaf1" "leaf2") "leaf3"))
(show "indent restored" *indent*)

;; boundp, makunbound and symbol-value.
(defvar *maybe* 1)
(makunbound '*maybe*)
(show "after makunbound" (boundp '*maybe*))
(show "a binding of an unbound special" (let ((*maybe* 'temp)) (list (boundp '*maybe*) (symbol-value '*maybe*))))
(show "unbound again afterwards" (boundp '*maybe*))
(show "unbound special signals" (handler-case *maybe* (unbound-variable (e) (condition-message e))))
(set '*maybe* 'via-set)
(show "set" *maybe*)

;; Constants.
(defconstant +answer+ 42 "The answer.")
(show "constant" +answer+)
(defconstant +answer+ 42)
(show "redefining with the same value is fine" +answer+)
(show "redefining with another value"
      (handler-case (defconstant +answer+ 43) (program-error (e) (condition-message e))))
(show "binding a constant is rejected at analysis"
      (handler-case (eval '(let ((+answer+ 1)) +answer+)) (program-error (e) (condition-message e))))
