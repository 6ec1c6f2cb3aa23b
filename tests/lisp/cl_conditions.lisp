;;; SPDX-License-Identifier: Apache-2.0
;;; The condition system (issue 25): define-condition, signal, warn, handler-bind, restarts.
;;; Each line matches SBCL 2.2 (with *print-case* :downcase).

(defun show (label value) (format t "~a: ~s~%" label value))

;; define-condition with slots, readers, accessors, :report and inheritance.
(define-condition app-error (error)
  ((code :initarg :code :reader app-error-code)
   (detail :initarg :detail :initform "none" :accessor app-error-detail))
  (:report (lambda (c stream)
             (format stream "app failed with code ~a (~a)" (app-error-code c) (app-error-detail c)))))
(define-condition db-error (app-error)
  ((table :initarg :table :initform 'users :reader db-error-table)))
(define-condition quiet-error (app-error) () (:report "quiet"))
(define-condition my-note () ((text :initarg :text :reader note-text)))

(let ((c (make-condition 'db-error :code 42)))
  (show "reader" (app-error-code c))
  (show "initform" (app-error-detail c))
  (show "inherited report" (format nil "~a" c))
  (show "own slot" (db-error-table c))
  (setf (app-error-detail c) "disk full")
  (show "accessor setf" (app-error-detail c))
  (show "report after setf" (princ-to-string c))
  (show "typep" (list (typep c 'db-error) (typep c 'app-error) (typep c 'error)
                      (typep c 'condition) (typep c 'warning))))
(show "string report" (format nil "~a" (make-condition 'quiet-error :code 1)))
(show "error with initargs"
      (handler-case (error 'db-error :code 7 :detail "bad row" :table 'orders)
        (app-error (e) (list (app-error-code e) (db-error-table e) (format nil "~a" e)))))
(show "a condition not an error"
      (list (typep (make-condition 'my-note :text "hi") 'error)
            (handler-case (signal 'my-note :text "hi") (condition (c) (note-text c)))))

;; error and its condition.
(show "simple-error"
      (handler-case (error "bad ~a of ~s" 'thing "x")
        (simple-error (e)
          (list (simple-condition-format-control e) (simple-condition-format-arguments e)
                (format nil "~a" e)))))
(show "error with a condition object"
      (let ((c (make-condition 'app-error :code 3)))
        (handler-case (error c) (error (e) (eq e c)))))
(show "make-condition simple-error"
      (format nil "~a" (make-condition 'simple-error :format-control "~a+~a" :format-arguments '(1 2))))

;; signal: handlers decline by returning, signal then returns nil.
(show "signal unhandled" (signal 'my-note :text "nobody listens"))
(show "signal declined"
      (let ((seen nil))
        (list (handler-bind ((my-note (lambda (c) (push (note-text c) seen))))
                (signal 'my-note :text "one")
                (signal 'my-note :text "two")
                :done)
              seen)))
(show "signal a string" (handler-case (signal "x ~a" 1) (simple-condition (c) (format nil "~a" c))))

;; handler-bind: handlers run before unwinding, inner first, and may decline.
(defvar *log* nil)
(defun note (x) (push x *log*))
(defun take-log () (prog1 (reverse *log*) (setq *log* nil)))
(show "bind then case"
      (handler-case
          (handler-bind ((error (lambda (c) (note (list :bind (app-error-code c))))))
            (unwind-protect (error 'app-error :code 1)
              (note :cleanup)))
        (error (c) (note :case) (app-error-code c))))
(show "order: handler before cleanup" (take-log))
(show "nested binds, inner first"
      (handler-case
          (handler-bind ((error (lambda (c) c (note :outer))))
            (handler-bind ((error (lambda (c) c (note :inner))))
              (error "x")))
        (error () (take-log))))
(show "several handlers in one cluster"
      (handler-case
          (handler-bind ((warning (lambda (c) c (note :warning)))
                         (error (lambda (c) c (note :first)))
                         ((or app-error type-error) (lambda (c) c (note :second))))
            (car 5))
        (error () (take-log))))
(show "handler-case inside takes it first"
      (handler-bind ((error (lambda (c) c (note :outer-bind))))
        (list (handler-case (car 1) (type-error () :inner-case)) (take-log))))
(show "handler transfers control"
      (block found
        (handler-bind ((app-error (lambda (c) (return-from found (list :took (app-error-code c))))))
          (error 'app-error :code 9)
          :not-reached)))
(show "a handler sees only outer handlers"
      (handler-case
          (handler-bind ((app-error (lambda (c) c (error "from handler"))))
            (handler-case (error 'app-error :code 1)
              (simple-error () :inner-case-skipped)))
        (simple-error (e) (list :outer (format nil "~a" e)))))
(show "builtin errors reach handler-bind"
      (list (handler-case (handler-bind ((type-error (lambda (c) c (note :type-error)))) (car 'x))
              (error () :caught))
            (handler-case (handler-bind ((arithmetic-error (lambda (c) c (note :div)))) (/ 1 0))
              (division-by-zero () :caught))))
(show "log" (take-log))
(show "unbound variable is a cell-error"
      (handler-case (handler-bind ((cell-error (lambda (c) c (note :cell)))) no-such-variable-here)
        (unbound-variable () (take-log))))

;; restart-case and invoke-restart.
(show "no restart used" (restart-case (+ 1 2) (use-value (v) v)))
(show "invoke-restart"
      (restart-case (progn (invoke-restart 'my-restart 1 2) :not-reached)
        (my-restart (a b) (list :restarted a b))))
(show "values of the form" (multiple-value-list (restart-case (values 1 2 3) (r () nil))))
(show "use-value from a handler"
      (handler-bind ((app-error (lambda (c) c (use-value 10))))
        (+ 1 (restart-case (error 'app-error :code 1)
               (use-value (v) v)))))
(defun parse-entry (x)
  (restart-case (if (numberp x) x (error 'app-error :code x))
    (use-value (v) :report "Use a value." v)
    (skip-entry () :report (lambda (s) (format s "Skip ~s." x)) nil)))
(show "restarts chosen by a handler"
      (handler-bind ((app-error (lambda (c)
                                  (if (eq (app-error-code c) 'skip)
                                      (invoke-restart 'skip-entry)
                                      (invoke-restart 'use-value 0)))))
        (mapcar #'parse-entry '(1 bad 3 skip))))
(show "compute-restarts"
      (restart-case (mapcar #'restart-name (subseq (compute-restarts) 0 2))
        (first-one () nil)
        (second-one () nil)))
(show "find-restart"
      (list (restart-case (restart-name (find-restart 'here)) (here () nil))
            (find-restart 'nowhere)))
(show "invoke an inactive restart"
      (handler-case (invoke-restart 'not-active) (control-error () :control-error)))
(show "restart with a :test"
      (restart-case (list (find-restart 'never) (restart-name (find-restart 'always)))
        (never () :test (lambda (c) c nil) nil)
        (always () nil)))
(show "nested restarts, inner first"
      (restart-case (restart-case (invoke-restart 'r) (r () :inner))
        (r () :outer)))
(show "restart unwinds cleanups"
      (list (restart-case (unwind-protect (invoke-restart 'out) (note :cleanup)) (out () :out))
            (take-log)))
(show "with-simple-restart"
      (multiple-value-list (with-simple-restart (skip "Skip it.") (invoke-restart 'skip) :no)))
(show "with-simple-restart normal" (with-simple-restart (skip "Skip it.") :body))
(show "continue"
      (handler-bind ((error (lambda (c) (continue c))))
        (list (cerror "Go on." "failed ~a" 1) :after)))
(show "store-value"
      (handler-bind ((type-error (lambda (c) c (store-value 5))))
        (restart-case (error 'type-error :datum "x" :expected-type 'integer)
          (store-value (v) (* v 2)))))
(show "type-error slots"
      (handler-case (error 'type-error :datum "x" :expected-type 'integer)
        (type-error (e) (list (type-error-datum e) (type-error-expected-type e)))))
(show "abort"
      (restart-case (progn (abort) :not-reached) (abort () :aborted)))

;; warn and muffle-warning.
(show "warn muffled"
      (handler-bind ((warning (lambda (c) (note (format nil "~a" c)) (muffle-warning c))))
        (list (warn "careful: ~a" 1) (take-log))))
(define-condition my-warning (warning) ())
(show "warn a type"
      (handler-bind ((my-warning (lambda (c) (note c) (muffle-warning))))
        (warn 'my-warning)
        (length (take-log))))
(show "warn caught by handler-case" (handler-case (warn "w") (warning (c) (format nil "~a" c))))
(show "warning is no error" (handler-case (progn (handler-bind ((warning #'muffle-warning)) (warn "x")) :ok) (error () :error)))

;; ignore-errors returns the condition second.
(show "ignore-errors"
      (multiple-value-bind (value c) (ignore-errors (error "oops ~a" 1))
        (list value (format nil "~a" c))))
(show "ignore-errors passes other conditions" (handler-case (ignore-errors (signal 'my-note)) (my-note () :passed)))

;; handler-case :no-error.
(show ":no-error gets the values"
      (handler-case (values 1 2) (error () :error) (:no-error (a b) (list :ok a b))))
(show ":no-error skipped on error"
      (multiple-value-list (handler-case (error "x") (error () (values :error 2)) (:no-error (v) v))))

;; More of define-condition.
(define-condition retry-error (error)
  ((attempts :initarg :attempts :reader retry-attempts))
  (:default-initargs :attempts 3)
  (:documentation "An error with a default initarg.")
  (:report (lambda (c s) (format s "gave up after ~d attempts" (retry-attempts c)))))
(show ":default-initargs"
      (list (retry-attempts (make-condition 'retry-error))
            (retry-attempts (make-condition 'retry-error :attempts 5))
            (princ-to-string (make-condition 'retry-error))))
(define-condition both-error (db-error retry-error) ())
(show "several parents"
      (let ((c (make-condition 'both-error :code 1)))
        (list (typep c 'db-error) (typep c 'retry-error) (retry-attempts c) (db-error-table c))))
(show "handler-case on a parent"
      (handler-case (error 'both-error :code 2) (retry-error (e) (app-error-code e))))

;; Built-in errors are conditions of the CL classes.
(dolist (thunk (list (lambda () (car 1))
                     (lambda () (/ 1 0))
                     (lambda () (symbol-value 'unbound-for-sure))
                     (lambda () (funcall (lambda (x) x)))))
  (show "class of a builtin error"
        (handler-case (funcall thunk)
          (error (e) (list (typep e 'error) (typep e 'type-error) (typep e 'arithmetic-error)
                           (typep e 'cell-error) (typep e 'program-error))))))
(show "type-of" (list (type-of (make-condition 'db-error)) (handler-case (/ 1 0) (error (e) (type-of e)))))
(show "serious-condition" (handler-case (error "x") (serious-condition () :serious)))

;; invoke-restart-interactively and :interactive.
(show "interactive"
      (restart-case (invoke-restart-interactively 'fix)
        (fix (&optional (v :none)) :interactive (lambda () (list :from-interactive)) v)))
(show "interactive without a function"
      (restart-case (invoke-restart-interactively 'fix) (fix (&optional (v :none)) v)))

;; check-type signals a type-error with a store-value restart.
(show "check-type"
      (handler-case (let ((x 5)) (check-type x string))
        (type-error (e) (list (type-error-datum e) (type-error-expected-type e)))))
(show "check-type with store-value"
      (let ((x 5))
        (handler-bind ((type-error (lambda (c) (store-value (princ-to-string (type-error-datum c))))))
          (check-type x string))
        x))
