;;; SPDX-License-Identifier: Apache-2.0
;;; Multiple values, as in Common Lisp: every form is built on the special form
;;; (multiple-value-call FUNCTION FORM...) and the builtins values and values-list.

(defmacro multiple-value-list (form)
  "(multiple-value-list FORM) is the list of all the values FORM returns."
  `(multiple-value-call ,#'list ,form))

(defmacro multiple-value-bind (vars form &body body)
  "(multiple-value-bind (VAR...) FORM BODY...) binds each VAR to one of FORM's values (nil
for those it does not return; extra values are ignored) and evaluates BODY."
  ;; The values come as a fresh list, taken apart by a let: no closure is made, so the frames
  ;; around the form can stay on the frame stack.
  (let ((values (gensym "values")))
    `(let* ((,values (multiple-value-call ,#'list ,form))
            ,@(let ((index -1))
                (mapcar (lambda (var) (setq index (+ index 1)) `(,var (,#'nth ,index ,values))) vars)))
       ,@body)))

(defmacro nth-value (n form)
  "(nth-value N FORM) is FORM's value number N (from 0), or nil."
  `(,#'nth ,n (multiple-value-list ,form)))

(defmacro multiple-value-prog1 (first &body body)
  "(multiple-value-prog1 FIRST BODY...) evaluates FIRST then BODY, returning all of FIRST's
values."
  (let ((values (gensym "values")))
    `(let ((,values (multiple-value-list ,first)))
       ,@body
       (,#'values-list ,values))))

(defmacro multiple-value-setq (vars form)
  "(multiple-value-setq (VAR...) FORM) sets each VAR to one of FORM's values (nil for those it
does not return); returns the first value."
  (let ((temps (mapcar (lambda (v) (gensym (symbol-name v))) vars)))
    `(multiple-value-bind ,temps ,form
       ,@(mapcar (lambda (v tmp) `(setq ,v ,tmp)) vars temps)
       ,(car temps))))
