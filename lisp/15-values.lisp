;;; SPDX-License-Identifier: Apache-2.0
;;; Multiple values, as in Common Lisp: every form is built on the special form
;;; (multiple-value-call FUNCTION FORM...) and the builtins values and values-list.

(defmacro multiple-value-list (form)
  "(multiple-value-list FORM) is the list of all the values FORM returns.
  (multiple-value-list (truncate 7 2))  ; => (3 1)"
  `(multiple-value-call ,#'list ,form))

(defmacro multiple-value-bind (vars form &body body)
  "(multiple-value-bind (VAR...) FORM BODY...) binds each VAR to one of FORM's values (nil
for those it does not return; extra values are ignored) and evaluates BODY.
  (multiple-value-bind (q r) (floor 17 5) (list q r))  ; => (3 2)"
  ;; The values come as a fresh list, taken apart by a let: no closure is made, so the frames
  ;; around the form can stay on the frame stack.
  (let ((values (gensym "values")))
    `(let* ((,values (multiple-value-call ,#'list ,form))
            ,@(let ((index -1))
                (mapcar (lambda (var) (setq index (+ index 1)) `(,var (,#'nth ,index ,values))) vars)))
       ,@body)))

(defmacro nth-value (n form)
  "(nth-value N FORM) is FORM's value number N (from 0), or nil.
  (nth-value 1 (floor 7 2))  ; => 1"
  `(,#'nth ,n (multiple-value-list ,form)))

(defmacro multiple-value-prog1 (first &body body)
  "(multiple-value-prog1 FIRST BODY...) evaluates FIRST then BODY, returning all of FIRST's
values.
  (let ((log nil))
    (list (multiple-value-list (multiple-value-prog1 (floor 7 2) (push 'ran log))) log))  ; => ((3 1) (ran))"
  (let ((values (gensym "values")))
    `(let ((,values (multiple-value-list ,first)))
       ,@body
       (,#'values-list ,values))))

(defmacro multiple-value-setq (vars form)
  "(multiple-value-setq (VAR...) FORM) sets each VAR to one of FORM's values (nil for those it
does not return); returns the first value.
  (let (q r) (multiple-value-setq (q r) (floor 17 5)) (list q r))  ; => (3 2)"
  (let ((temps (mapcar (lambda (v) (gensym (symbol-name v))) vars)))
    `(multiple-value-bind ,temps ,form
       ,@(mapcar (lambda (v tmp) `(setq ,v ,tmp)) vars temps)
       ,(car temps))))

;;; catch and throw: a throw signals a private condition (a condition, not an error, so
;;; handler-case clauses for error let it pass) that the catch for its tag takes.
(define-condition %throw (condition))

(defvar *active-catch-tags* nil
  "The tags of the catch forms now running, innermost first.
  (catch 'doc-ex-tag (first *active-catch-tags*))  ; => doc-ex-tag")

(defun %catch (tag thunk)
  (let ((*active-catch-tags* (cons tag *active-catch-tags*)))
    (handler-case (funcall thunk)
      (%throw (c)
        (let ((data (condition-data c)))  ; (TAG . VALUES)
          (if (eq (car data) tag)
              (values-list (cdr data))
              (error c)))))))

(defmacro catch (tag &body body)
  "(catch TAG BODY...) evaluates BODY; a (throw TAG VALUE) inside it, at any depth, ends it
with VALUE's values. Otherwise catch returns BODY's values.
  (catch 'done (throw 'done 42) 0)  ; => 42"
  `(,#'%catch ,tag (lambda () ,@body)))

(defun %throw-values (tag values)
  (unless (member tag *active-catch-tags* :test #'eq)
    (error 'control-error "throw: no catch is active for the tag ~s" tag))
  (error (make-condition '%throw :message "throw" :data (cons tag values))))

(defmacro throw (tag &optional result)
  "(throw TAG RESULT) ends the innermost active (catch TAG ...) with RESULT's values; an error
when no catch for TAG (compared with eq) is active.
  (catch 'found (dolist (x '(1 5 7)) (when (> x 4) (throw 'found x))) nil)  ; => 5
  (handler-case (throw 'doc-ex-no-catch 1) (control-error () 'no-catch))  ; => no-catch"
  `(,#'%throw-values ,tag (multiple-value-list ,result)))
