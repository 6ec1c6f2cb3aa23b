;;; SPDX-License-Identifier: Apache-2.0
;;; Conditions: handler-case, define-condition hierarchies, accessors, unwind-protect, assert, nesting.

(defun show (label value) (format t "~a: ~s~%" label value))
(defun describe-condition (e) (list (condition-type e) (condition-message e)))

;; A condition hierarchy.
(define-condition app-error (error))
(define-condition db-error (app-error))
(define-condition net-error (app-error))
(define-condition timeout-error (net-error))

(defun risky (kind)
  (case kind
    (db (error 'db-error "db failed with code ~a" 42))
    (net (error 'net-error "network down"))
    (timeout (error 'timeout-error "timed out after ~d ms" 500))
    (plain (error "plain error: ~s and ~a" "quoted" "bare"))
    (div (/ 1 0))
    (car (car 5))
    (otherwise 'no-error)))

;; The first clause whose type matches (the type itself or an ancestor) wins.
(dolist (kind '(db net timeout plain div car none))
  (show kind
        (handler-case (risky kind)
          (db-error (e) (cons 'db-handler (describe-condition e)))
          (net-error (e) (cons 'net-handler (describe-condition e)))
          (app-error (e) (cons 'app-handler (describe-condition e)))
          (arithmetic-error (e) (cons 'arith-handler (describe-condition e)))
          (error (e) (cons 'error-handler (describe-condition e))))))
(show "clause order matters"
      (handler-case (risky 'timeout)
        (app-error () 'app-first)
        (timeout-error () 'never-reached)))
(show "(or ...) types"
      (handler-case (risky 'div) ((or type-error division-by-zero) (e) (condition-type e))))
(show "condition clause catches everything" (handler-case (risky 'car) (condition () 'caught)))
(show "t clause" (handler-case (risky 'db) (t () 'caught-by-t)))
(show "clause without a variable" (handler-case (risky 'net) (error () 'caught)))
(show "no error: the body's value" (handler-case (+ 1 2) (error () 'never)))
(show "handler body is a progn" (handler-case (risky 'db) (error (e) 'first (condition-type e))))

;; Condition accessors.
(let ((c (handler-case (risky 'timeout) (error (e) e))))
  (show "conditionp" (conditionp c))
  (show "condition-type" (condition-type c))
  (show "condition-message" (condition-message c))
  (show "condition-type-p"
        (mapcar (lambda (type) (condition-type-p c type))
                '(timeout-error net-error app-error error condition db-error type-error))))
(show "error with only a type" (handler-case (error 'app-error) (error (e) (condition-message e))))
(show "error with type and data"
      (handler-case (error 'app-error 1 2) (error (e) (list (condition-message e) (condition-data e)))))
(show "make-condition"
      (handler-case (error (make-condition 'db-error :message "made by hand" :data '(table users)))
        (db-error (e) (list (condition-type e) (condition-message e) (condition-data e)))))
(show "format directives in error" (handler-case (error "~a|~s|~d|~~" "a" "s" 7) (error (e) (condition-message e))))
(show "signal a built-in type" (handler-case (error 'type-error "custom type error") (type-error (e) (condition-message e))))

;; Errors from the system, by type.
(defmacro try (form) `(handler-case ,form (error (e) (describe-condition e))))
(show "car" (try (car 'x)))
(show "+" (try (+ 1 "a")))
(show "unbound" (try this-variable-is-unbound))
(show "undefined" (try (this-function-is-undefined 1)))
(show "arity" (try (risky)))
(show "keyword" (try (funcall (lambda (&key a) a) :b 1)))
(show "overflow" (try (* most-positive-fixnum 2)))
(show "mod by zero" (try (mod 5 0)))
(show "elt out of range" (try (elt '(1 2) 5)))
(show "aref out of range" (try (aref (vector 1) 3)))
(show "not a function" (try (funcall 42)))
(show "parse-number" (try (parse-number "12abc")))
(show "read-from-string" (try (read-from-string "(a b")))
(show "unknown condition type" (try (error 'no-such-condition "x")))
(show "check-type" (try (let ((x 5)) (check-type x string))))
(show "ecase" (try (ecase 3 (1 'a) (2 'b))))
(show "arity-error is a program-error" (handler-case (risky) (program-error (e) (condition-type e))))
(show "division-by-zero is an arithmetic-error"
      (handler-case (/ 5 0) (arithmetic-error (e) (condition-type-p e 'division-by-zero))))

;; unwind-protect: cleanups run on normal exit, on errors and on non-local exits, innermost first.
(defvar *log* nil)
(defun note (x) (push x *log*))
(defun take-log () (prog1 (reverse *log*) (setq *log* nil)))
(show "normal exit value" (unwind-protect (progn (note 'body) 'value) (note 'cleanup)))
(show "log" (take-log))
(show "error exit"
      (handler-case
          (unwind-protect
              (unwind-protect (progn (note 'body) (error "boom") (note 'not-reached))
                (note 'inner-cleanup))
            (note 'outer-cleanup))
        (error (e) (note 'handler) (condition-message e))))
(show "log" (take-log))
(show "return-from exit"
      (block b
        (unwind-protect (progn (note 'body) (return-from b 'returned) (note 'not-reached))
          (note 'cleanup))))
(show "log" (take-log))
(show "return from dolist"
      (dolist (x '(1 2 3)) (unwind-protect (when (= x 2) (return x)) (note x))))
(show "log" (take-log))
(show "an error in the cleanup replaces the first"
      (handler-case (unwind-protect (error "first") (error "second")) (error (e) (condition-message e))))

;; ignore-errors.
(show "ignore-errors" (list (ignore-errors (car 1)) (ignore-errors 5) (ignore-errors (error "x") 6)))

;; assert.
(show "assert passes" (assert (= 1 1)))
(show "assert fails" (handler-case (assert (= 1 2)) (assertion-error (e) (condition-message e))))
(show "assert with a message"
      (handler-case (let ((n -1)) (assert (>= n 0) "n must be >= 0, got ~a" n)) (error (e) (describe-condition e))))

;; Nested handlers.
(show "inner handler does not match, outer does"
      (handler-case (handler-case (risky 'net) (db-error () 'wrong))
        (net-error (e) (list 'outer (condition-message e)))))
(show "inner handler matches"
      (handler-case (handler-case (risky 'db) (db-error () 'inner)) (error () 'outer)))
(show "rethrow from a handler"
      (handler-case (handler-case (risky 'db) (error (e) (error "wrapped: ~a" (condition-message e))))
        (error (e) (describe-condition e))))
(show "resignal the same condition"
      (handler-case (handler-case (risky 'db) (error (e) (error e)))
        (db-error (e) (list 'same (condition-message e)))))
(show "handler in a loop"
      (let ((results nil))
        (dolist (x '(1 0 2 0 4) (reverse results))
          (push (handler-case (/ 8 x) (division-by-zero () 'inf)) results))))
(show "an error leaves the function through several frames"
      (labels ((level3 () (risky 'db))
               (level2 () (list (level3)))
               (level1 () (list (level2))))
        (handler-case (level1) (db-error () 'caught-at-top))))

;; Errors inside callbacks of builtins.
(show "mapcar callback" (handler-case (mapcar (lambda (x) (/ 10 x)) '(1 2 0 4)) (division-by-zero (e) (condition-message e))))
(show "sort predicate" (handler-case (sort (list 1 'a 2) #'<) (type-error () 'bad-element)))
(show "reduce callback" (handler-case (reduce (lambda (a b) (if (> b 2) (error 'app-error "too big: ~a" b) (+ a b))) '(1 2 3 4))
                          (app-error (e) (condition-message e))))
(show "maphash callback"
      (let ((h (make-hash-table)))
        (setf (gethash 'a h) 1 (gethash 'b h) 'oops)
        (handler-case (let ((sum 0)) (maphash (lambda (k v) (setq sum (+ sum v))) h) sum)
          (type-error () 'bad-value))))
(show "handler-case in a callback"
      (mapcar (lambda (x) (handler-case (risky x) (error (e) (condition-type e)))) '(db net none)))

;; eval, require and load signal conditions too.
(show "eval" (try (eval '(car 1))))
(show "require a missing module" (handler-case (require 'no-such-module-here) (file-error (e) (condition-type e))))
(show "load a missing file" (try (load "/nonexistent/dir/file.lisp")))
