;;; SPDX-License-Identifier: Apache-2.0
;;; Small Common Lisp forms: the, locally, declaim, proclaim, eval-when, psetf, shiftf,
;;; rotatef, etypecase and ctypecase.

(defmacro the (type form)
  "(the TYPE FORM) is FORM's value; the type is a declaration, not checked.
  (the integer (+ 1 2))  ; => 3"
  type
  form)

(defmacro locally (&body body)
  "(locally DECLARATION... FORM...) evaluates the FORMs; declarations are ignored.
  (locally (declare (optimize speed)) (+ 1 2))  ; => 3"
  `(progn ,@body))

(defmacro declaim (&rest specs)
  "(declaim SPEC...) accepts global declarations (optimize, type, inline, ...) and ignores them.
  (declaim (optimize (speed 3)) (inline doc-ex-fast))  ; => nil"
  specs
  nil)

(defun proclaim (spec)
  "(proclaim SPEC) accepts a global declaration and ignores it.
  (proclaim '(optimize (safety 1)))  ; => nil"
  spec
  nil)

(defmacro eval-when (situations &body body)
  "(eval-when (SITUATION...) FORM...) evaluates the FORMs when SITUATIONS include :execute or
:load-toplevel (or their old names eval and load); code is evaluated as it is read, so
:compile-toplevel alone means the FORMs are skipped.
  (eval-when (:compile-toplevel :load-toplevel :execute) (+ 1 2))  ; => 3
  (eval-when (:compile-toplevel) 'skipped)  ; => nil"
  (if (intersection situations '(:execute :load-toplevel eval load))
      `(progn ,@body)
      nil))

(defmacro psetf (&rest pairs)
  "(psetf PLACE VALUE ...) stores each VALUE into its PLACE, computing every VALUE first;
returns nil.
  (let ((v (vector 1 2))) (psetf (aref v 0) (aref v 1) (aref v 1) (aref v 0)) v)  ; => #(2 1)"
  (let ((temps (mapcar (lambda (p) (gensym "v")) (%pairs pairs))))
    `(let ,(mapcar #'list temps (mapcar #'cadr (%pairs pairs)))
       (setf ,@(apply #'append (mapcar (lambda (p tmp) (list (car p) tmp)) (%pairs pairs) temps)))
       nil)))

(defmacro shiftf (&rest places-and-value)
  "(shiftf PLACE... VALUE) moves each PLACE's value into the place before it and VALUE into
the last; returns the first PLACE's old value.
  (let ((x 0)) (shiftf x 5))  ; => 0"
  (let* ((places (butlast places-and-value))
         (temps (mapcar (lambda (p) (gensym "old")) places)))
    `(let ,(mapcar #'list temps places)
       (psetf ,@(apply #'append (mapcar #'list places (append (cdr temps) (last places-and-value)))))
       ,(car temps))))

(defmacro rotatef (&rest places)
  "(rotatef PLACE...) moves each PLACE's value into the place before it, the first into the
last; returns nil.
  (let ((a 1) (b 2)) (rotatef a b) (list a b))  ; => (2 1)"
  (when places
    `(psetf ,@(apply #'append (mapcar #'list places (append (cdr places) (list (car places))))))))

(defmacro etypecase (value &rest clauses)
  "(etypecase VALUE (TYPE BODY...)...) is typecase with a type-error when no clause fits.
  (etypecase 2.5 (integer 'int) (float 'float))  ; => float
  (handler-case (etypecase \"s\" (integer 'int)) (type-error () 'no-clause))  ; => no-clause"
  (let ((v (gensym "v")))
    `(let ((,v ,value))
       (typecase ,v
         ,@clauses
         (t (error 'type-error "etypecase: ~s fits none of the types ~s" ,v ',(mapcar #'car clauses)))))))

(defmacro ctypecase (value &rest clauses)
  "(ctypecase VALUE (TYPE BODY...)...) is etypecase (there are no restarts to store a new value).
  (ctypecase 'x (symbol 'sym) (number 'num))  ; => sym"
  `(etypecase ,value ,@clauses))
