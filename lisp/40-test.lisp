;;; SPDX-License-Identifier: Apache-2.0
;;; A small test framework: (deftest name body...) with (is FORM) checks, (is-error TYPE FORM),
;;; and (run-tests), which prints one line per failure and a summary, and signals an error when
;;; anything failed (so a script run by `tlisp` exits non-zero).

(defvar *tests* nil "The registered tests, newest first: (name . function).
  (let ((*tests* nil)) (deftest doc-ex-tests (is t)) (mapcar #'car *tests*))  ; => (doc-ex-tests)")
(defvar *test-checks-failed* 0)
(defvar *test-checks-passed* 0)
(defvar *current-test* nil)

(defun %register-test (name fn)
  (setq *tests* (cons (cons name fn) (remove-if (lambda (entry) (eq (car entry) name)) *tests*)))
  name)

(defmacro deftest (name &body body)
  "(deftest NAME BODY...) defines a test; its checks are (is ...) and (is-error ...) forms.
  (let ((*tests* nil)) (deftest doc-ex-deftest (is (= (+ 1 1) 2))) (mapcar #'car *tests*))  ; => (doc-ex-deftest)"
  `(%register-test ',name (named-lambda ,name () ,@body)))

(defun %check-result (form ok values message)
  (if ok
      (setq *test-checks-passed* (+ *test-checks-passed* 1))
      (progn
        (setq *test-checks-failed* (+ *test-checks-failed* 1))
        (format t "FAIL ~a: ~s" *current-test* form)
        (when values (format t "~%     values: ~s" values))
        (when message (format t "~%     ~a" message))
        (terpri)))
  ok)

(defun approx= (a b &optional (tolerance 1e-9))
  "(approx= A B [TOLERANCE]) is true when A and B differ by at most TOLERANCE, relative to
their size when that is above 1.
  (approx= (+ 0.1 0.2) 0.3)  ; => t
  (approx= 100.0 101.0 0.01)  ; => t"
  (<= (abs (- a b)) (* tolerance (max 1 (abs a) (abs b)))))

(defmacro is (form &optional message)
  "(is FORM [MESSAGE]) checks that FORM is true. For a two-argument comparison such as
(is (equal x y)) a failure shows both values.
  (is (= (+ 1 1) 2))  ; => t"
  (if (and (consp form)
           (member (car form) '(= equal eql eq string= < > <= >= /= approx= allclose tensor-equal))
           (= (length form) 3))
      (let ((a (gensym "a")) (b (gensym "b")))
        `(let ((,a ,(cadr form)) (,b ,(caddr form)))
           (,#'%check-result ',form (,(car form) ,a ,b) (,#'list ,a ,b) ,message)))
      `(,#'%check-result ',form ,form nil ,message)))

(defmacro is-error (type form)
  "(is-error TYPE FORM) checks that evaluating FORM signals a condition of TYPE (unquoted).
  (is-error type-error (car 5))  ; => t"
  (let ((c (gensym "c")))
    `(let ((,c (handler-case (progn ,form nil) (condition (e) e))))
       (,#'%check-result '(is-error ,type ,form)
                         (and ,c (,#'condition-type-p ,c ',type))
                         (if ,c
                             (,#'list (,#'condition-type ,c) (,#'condition-message ,c))
                             (,#'list "no error"))
                         nil))))

(defun run-tests (&rest names)
  "(run-tests [NAME...]) runs the named tests (default: all, in definition order), prints
failures and a summary line, and signals an error if any check failed.
  (let ((*tests* nil) (*test-checks-passed* 0) (*test-checks-failed* 0))
    (deftest doc-ex-run-tests (is (equal (reverse '(1 2)) '(2 1))) (is-error error (car 5)))
    (with-output-to-string (s) (run-tests)))  ; => \"1 tests, 2 checks passed, 0 failed, 0 errors\\n\""
  (let ((tests (reverse *tests*))
        (errors 0))
    (when names
      (setq tests (remove-if-not (lambda (entry) (member (car entry) names)) tests)))
    (setq *test-checks-failed* 0 *test-checks-passed* 0)
    (dolist (test tests)
      (setq *current-test* (car test))
      (handler-case (funcall (cdr test))
        (error (e)
          (setq errors (+ errors 1))
          (format t "ERROR ~a: ~a (~a)~%" (car test) (condition-message e) (condition-type e)))))
    (format t "~d tests, ~d checks passed, ~d failed, ~d errors~%"
            (length tests) *test-checks-passed* *test-checks-failed* errors)
    (when (or (> *test-checks-failed* 0) (> errors 0))
      (error "~d checks failed and ~d tests signalled errors" *test-checks-failed* errors))
    t))
