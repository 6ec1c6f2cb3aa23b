;;; SPDX-License-Identifier: Apache-2.0
;;; The condition system, as in Common Lisp (issue 25): define-condition with slots and
;;; :report, make-condition, signal, warn, cerror, handler-bind, and restarts. Offering a
;;; condition to the handlers is src/eval/conditions.cpp; handler-case is a special form.

;;; Condition classes. Each type defined here or by define-condition maps to
;;; (SLOTS REPORT DEFAULT-INITARGS): SLOTS a list of (NAME INITARGS INITFUNCTION), REPORT nil,
;;; a string or a function of the condition and a stream, DEFAULT-INITARGS nil or a function
;;; returning a plist.
(defvar *%condition-classes* (make-hash-table :test 'eq)
  "The slots, report and default initargs of each condition type that has them.")

(defun %register-condition-class (name slots report default-initargs)
  (puthash name (list slots report default-initargs) *%condition-classes*)
  name)

(defun %condition-ancestors (type)
  ;; TYPE, then its ancestors depth-first, each once.
  (let ((seen nil))
    (labels ((walk (ty)
               (unless (member ty seen :test #'eq)
                 (push ty seen)
                 (dolist (parent (%condition-parents ty)) (walk parent)))))
      (walk type))
    (nreverse seen)))

(defun %condition-class-info (type index)
  ;; The first non-nil entry INDEX of the classes of TYPE and its ancestors.
  (dolist (ty (%condition-ancestors type) nil)
    (let ((entry (nth index (gethash ty *%condition-classes*))))
      (when entry (return entry)))))

(defun %condition-slot-defs (type)
  (let ((out nil))
    (dolist (ty (%condition-ancestors type))
      (dolist (slot (car (gethash ty *%condition-classes*)))
        (unless (assoc (car slot) out) (push slot out))))
    (nreverse out)))

(defun %initarg-value (initargs keys)
  ;; (VALUE) for the first of KEYS present in the plist INITARGS, else nil.
  (do ((tail initargs (cddr tail)))
      ((null tail) nil)
    (when (member (car tail) keys :test #'eq) (return (list (cadr tail))))))

(defun %condition-update-report (c)
  ;; The report is computed when the condition is made and when a slot changes, so that
  ;; printing it (~a) and an uncaught error show it.
  (let ((report (%condition-class-info (condition-type c) 1))
        (slots (%condition-slots c)))
    (cond ((stringp report) (%set-condition-message c report))
          (report (%set-condition-message
                   c (with-output-to-string (stream) (funcall report c stream))))
          ((getf slots 'format-control)
           (%set-condition-message
            c (apply #'format nil (getf slots 'format-control) (getf slots 'format-arguments)))))
    c))

(defun make-condition (type &rest initargs)
  "(make-condition TYPE &rest INITARGS) makes a condition of TYPE, its slots set from the
INITARGS plist (or their :initform). :message and :data set the report and data directly.
  (condition-message (make-condition 'simple-error :format-control \"bad ~a\" :format-arguments '(1)))  ; => \"bad 1\"
  (type-error-datum (make-condition 'type-error :datum 5 :expected-type 'string))  ; => 5"
  (unless (%condition-type-known-p type)
    (error 'program-error "make-condition: unknown condition type ~s" type))
  (let* ((defaults (%condition-class-info type 2))
         (all (if defaults (append initargs (funcall defaults)) initargs))
         (slots nil))
    (dolist (def (%condition-slot-defs type))
      (let ((found (%initarg-value all (cadr def))))
        (push (car def) slots)
        (push (cond (found (car found)) ((caddr def) (funcall (caddr def))) (t nil)) slots)))
    ;; Initargs no slot takes are kept as the condition's data (TensorLisp's older
    ;; (error 'TYPE :KEY VALUE) form); Common Lisp would reject them.
    (let ((known (append '(:message :data) (apply #'append (mapcar #'cadr (%condition-slot-defs type)))))
          (data (getf all :data)))
      (do ((tail initargs (cddr tail))) ((null tail))
        (unless (member (car tail) known :test #'eq) (setq data initargs)))
      (%condition-update-report
       (%make-condition type (getf all :message) data (nreverse slots))))))

(defun %condition-slot (c name)
  (unless (conditionp c)
    (error 'type-error "~a: argument 1 must be a condition, got ~s" name c))
  (getf (%condition-slots c) name))

(defun %set-condition-slot (c name value)
  (let ((slots (%condition-slots c)))
    (setf (getf slots name) value)
    (%set-condition-slots c slots)
    (%condition-update-report c)
    value))

(defun %define-condition-accessors (name readers writers)
  (dolist (reader readers)
    (setf (symbol-value reader)
          (let ((slot name)) (named-lambda reader (c) (%condition-slot c slot)))))
  (dolist (writer writers)
    (puthash writer
             (let ((slot name))
               (lambda (value c) (list '%set-condition-slot c (list 'quote slot) value)))
             *setf-expanders*)))

(defmacro define-condition (name parents &optional slots &rest options)
  "(define-condition NAME (PARENT...) (SLOT...) OPTION...) defines a condition type. A SLOT is
NAME or (NAME :initarg :KEY :initform FORM :reader R :accessor A :writer W). OPTIONs:
(:report STRING-OR-FUNCTION), where the function takes the condition and a stream;
(:default-initargs :KEY FORM ...); (:documentation STRING). With no PARENT, the type is a
condition (not an error).
  (progn (define-condition doc-ex-bad-size (error)
           ((size :initarg :size :reader doc-ex-bad-size-size))
           (:report (lambda (c stream) (format stream \"bad size ~a\" (doc-ex-bad-size-size c)))))
    (handler-case (error 'doc-ex-bad-size :size 3)
      (doc-ex-bad-size (e) (list (doc-ex-bad-size-size e) (condition-message e)))))  ; => (3 \"bad size 3\")"
  (when (stringp slots) (setq slots nil))  ; (define-condition NAME (PARENT) DOC), the old form
  (let ((specs nil) (accessors nil) (report nil) (defaults nil))
    (dolist (slot slots)
      (let* ((slot (if (consp slot) slot (list slot)))
             (plist (cdr slot))
             (initargs nil) (readers nil) (writers nil))
        (do ((tail plist (cddr tail))) ((null tail))
          (case (car tail)
            (:initarg (push (cadr tail) initargs))
            (:reader (push (cadr tail) readers))
            (:writer (push (if (consp (cadr tail)) (cadr (cadr tail)) (cadr tail)) writers))
            (:accessor (push (cadr tail) readers) (push (cadr tail) writers))))
        (push `(,#'list ',(car slot) ',(reverse initargs)
                        ,(if (%initarg-value plist '(:initform))
                             `(lambda () ,(getf plist :initform))
                             nil))
              specs)
        (push `(,#'%define-condition-accessors ',(car slot) ',readers ',writers) accessors)))
    (dolist (option options)
      (case (car option)
        (:report (setq report (let ((r (cadr option)))
                                (cond ((stringp r) r)
                                      ((symbolp r) `',r)
                                      (t r)))))
        (:default-initargs (setq defaults `(lambda () (,#'list ,@(cdr option)))))))
    `(progn
       (,#'%define-condition ',name ',(or parents '(condition)))
       (,#'%register-condition-class ',name (,#'list ,@(reverse specs)) ,report ,defaults)
       ,@(reverse accessors)
       ',name)))

;;; The slots of the built-in types, and their readers.
(%register-condition-class 'simple-condition
                           (list (list 'format-control '(:format-control) nil)
                                 (list 'format-arguments '(:format-arguments) nil))
                           nil nil)
(defun simple-condition-format-control (c)
  "(simple-condition-format-control C) The format control string C was made with.
  (simple-condition-format-control
    (make-condition 'simple-error :format-control \"bad ~a\" :format-arguments '(3)))  ; => \"bad ~a\""
  (%condition-slot c 'format-control))
(defun simple-condition-format-arguments (c)
  "(simple-condition-format-arguments C) The format arguments C was made with.
  (simple-condition-format-arguments
    (make-condition 'simple-error :format-control \"bad ~a\" :format-arguments '(3)))  ; => (3)"
  (%condition-slot c 'format-arguments))
(%register-condition-class 'type-error
                           (list (list 'datum '(:datum) nil) (list 'expected-type '(:expected-type) nil))
                           nil nil)
(defun type-error-datum (c)
  "(type-error-datum C) The value of the wrong type: the argument a builtin refused, or the
:datum C was made with.
  (handler-case (car 5) (type-error (e) (type-error-datum e)))  ; => 5"
  (%condition-slot c 'datum))
(defun type-error-expected-type (c)
  "(type-error-expected-type C) What was expected instead: a builtin's description of it (a
string), or the :expected-type C was made with (a type specifier, as check-type gives).
  (handler-case (car 5) (type-error (e) (type-error-expected-type e)))  ; => \"a list\"
  (handler-case (let ((x 1)) (check-type x string)) (type-error (e) (type-error-expected-type e)))  ; => string"
  (%condition-slot c 'expected-type))
(%register-condition-class 'cell-error (list (list 'name '(:name) nil)) nil nil)
(defun cell-error-name (c)
  "(cell-error-name C) The name of the cell (variable or function) C is about.
  (cell-error-name (make-condition 'unbound-variable :name 'doc-ex-nowhere))  ; => doc-ex-nowhere"
  (%condition-slot c 'name))
(%register-condition-class 'arithmetic-error
                           (list (list 'operation '(:operation) nil) (list 'operands '(:operands) nil))
                           nil nil)
(defun arithmetic-error-operation (c)
  "(arithmetic-error-operation C) The operation C was made with (:operation).
  (arithmetic-error-operation (make-condition 'division-by-zero :operation '/ :operands '(1 0)))  ; => /"
  (%condition-slot c 'operation))
(defun arithmetic-error-operands (c)
  "(arithmetic-error-operands C) The operands C was made with (:operands).
  (arithmetic-error-operands (make-condition 'division-by-zero :operation '/ :operands '(1 0)))  ; => (1 0)"
  (%condition-slot c 'operands))
(%register-condition-class 'stream-error (list (list 'stream '(:stream) nil)) nil nil)
(defun stream-error-stream (c)
  "(stream-error-stream C) The stream C is about (:stream).
  (stream-error-stream (make-condition 'end-of-file :stream :doc-ex-stream))  ; => :doc-ex-stream"
  (%condition-slot c 'stream))
(%register-condition-class 'file-error (list (list 'pathname '(:pathname) nil)) nil nil)
(defun file-error-pathname (c)
  "(file-error-pathname C) The file C is about (:pathname).
  (file-error-pathname (make-condition 'file-error :pathname \"/tmp/none\"))  ; => \"/tmp/none\""
  (%condition-slot c 'pathname))

;;; Handlers.
(defmacro handler-bind (bindings &body body)
  "(handler-bind ((TYPE HANDLER)...) BODY...) evaluates BODY with each HANDLER, a function of
one argument, active for conditions of TYPE (a type or (or TYPE...)). A handler runs where the
condition is signaled, before anything unwinds; it declines by returning, or takes the
condition by leaving (return-from, throw, invoke-restart). While it runs, only the handlers
outside this handler-bind are active.
  (let ((log nil))
    (handler-bind ((warning (lambda (c) (push (condition-message c) log) (muffle-warning c))))
      (warn \"low ~a\" 1)
      (warn \"low ~a\" 2))
    log)  ; => (\"low 2\" \"low 1\")
  (block done
    (handler-bind ((error (lambda (c) (return-from done (list 'handled (condition-message c))))))
      (error \"boom\")))  ; => (handled \"boom\")"
  (let ((vars nil) (entries nil))
    (dolist (binding bindings)
      (unless (and (consp binding) (consp (cdr binding)))
        (error 'program-error "handler-bind: a binding is (TYPE HANDLER), got ~s" binding))
      (let ((var (gensym "handler")) (type (car binding)))
        (push (list var (cadr binding)) vars)
        (dolist (one (if (and (consp type) (eq (car type) 'or)) (cdr type) (list type)))
          (push `(,#'cons ',one ,var) entries))))
    `(let ,(reverse vars)
       (,#'%handler-bind (,#'list ,@(reverse entries)) (lambda () ,@body)))))

;;; Restarts. The active restarts are a list, innermost first.
(defstruct (restart (:constructor %make-restart (name function report-function interactive test))
                    (:conc-name %restart-) (:predicate %restart-p) (:copier nil))
  name function report-function interactive test)

(defun restart-name (restart)
  "(restart-name RESTART) The name of RESTART, a symbol (nil for an anonymous one).
  (restart-case (restart-name (first (compute-restarts))) (retry () nil))  ; => retry"
  (%restart-name restart))

(defvar *%restarts* nil "The active restarts, innermost first.")

(defun %restart-clause (clause)
  ;; (NAME LAMBDA-LIST [:report R] [:interactive I] [:test T] BODY...) => (NAME LAMBDA-LIST
  ;; REPORT-FORM INTERACTIVE-FORM TEST-FORM BODY)
  (unless (and (consp clause) (symbolp (car clause)) (consp (cdr clause)) (listp (cadr clause)))
    (error 'program-error "restart-case: a clause is (NAME LAMBDA-LIST BODY...), got ~s" clause))
  (let ((rest (cddr clause)) (report nil) (interactive nil) (test nil))
    (loop while (and (consp rest) (member (car rest) '(:report :interactive :test)) (consp (cdr rest)))
          do (let ((value (cadr rest)))
               (case (car rest)
                 (:report (setq report (if (and value (symbolp value)) `',value value)))
                 (:interactive (setq interactive (if (and value (symbolp value)) `',value value)))
                 (:test (setq test (if (and value (symbolp value)) `',value value)))))
             (setq rest (cddr rest)))
    (list (car clause) (cadr clause) report interactive test rest)))

(defmacro restart-case (form &rest clauses)
  "(restart-case FORM (NAME LAMBDA-LIST [:report R] [:interactive F] [:test F] BODY...)...)
evaluates FORM with the restarts active. (invoke-restart NAME ARG...) during FORM unwinds to
here and evaluates that clause's BODY with LAMBDA-LIST bound to the ARGs. Returns FORM's
values, or the clause's.
  (handler-bind ((error (lambda (c) (invoke-restart 'use-default 0))))
    (restart-case (error \"no value\")
      (use-default (v) :report \"Use a default value.\" (list 'default v))))  ; => (default 0)
  (restart-case (+ 1 2) (skip () 0))  ; => 3"
  (let ((outer (gensym "restart-case")) (inner (gensym "restart")) (result (gensym "result"))
        (args (gensym "args"))
        (parsed (mapcar #'%restart-clause clauses))
        (index -1))
    `(block ,outer
       (let ((,result
               (block ,inner
                 (let ((*%restarts*
                         (list* ,@(mapcar (lambda (p)
                                            (setq index (+ index 1))
                                            `(%make-restart ',(first p)
                                                            (lambda (&rest ,args) (return-from ,inner (cons ,index ,args)))
                                                            ,(third p) ,(fourth p) ,(fifth p)))
                                          parsed)
                                *%restarts*)))
                   (return-from ,outer ,form)))))
         (case (car ,result)
           ,@(let ((i -1))
               (mapcar (lambda (p)
                         (setq i (+ i 1))
                         `(,i (apply (lambda ,(second p) ,@(sixth p)) (cdr ,result))))
                       parsed)))))))

(defmacro with-simple-restart ((name format-control &rest args) &body body)
  "(with-simple-restart (NAME FORMAT-CONTROL ARG...) BODY...) evaluates BODY with a restart
NAME that returns the two values nil and t.
  (handler-bind ((error (lambda (c) (invoke-restart 'skip))))
    (multiple-value-list (with-simple-restart (skip \"Skip item ~a.\" 3) (error \"bad item\"))))  ; => (nil t)
  (with-simple-restart (skip \"Skip it.\") 42)  ; => 42"
  `(restart-case (progn ,@body)
     (,name () :report (lambda (stream) (format stream ,format-control ,@args)) (values nil t))))

(defun %coerce-to-condition (fn datum args default-type)
  (cond ((conditionp datum) datum)
        ((stringp datum) (make-condition default-type :format-control datum :format-arguments args))
        ((and (symbolp datum) datum (stringp (car args)))
         ;; (signal 'TYPE "format" ARG...), as `error` accepts it.
         (make-condition datum :format-control (car args) :format-arguments (cdr args)))
        ((and (symbolp datum) datum) (apply #'make-condition datum args))
        (t (error 'type-error "~a: ~s is not a condition, a condition type or a format string"
                  fn datum))))

(defun signal (datum &rest args)
  "(signal DATUM ARG...) offers a condition to the active handlers and returns nil when they
all decline. DATUM is a condition, a condition type (ARGs are initargs) or a format string
(a simple-condition).
  (signal \"nobody listens\")  ; => nil
  (block b
    (handler-bind ((condition (lambda (c) (return-from b (condition-message c)))))
      (signal \"note ~a\" 1)))  ; => \"note 1\""
  (%signal (%coerce-to-condition "signal" datum args 'simple-condition)))

(defun warn (datum &rest args)
  "(warn DATUM ARG...) signals a warning (a simple-warning for a format string) with a
muffle-warning restart; unless a handler muffles it, prints \"WARNING: report\" on the error
output (the log). Returns nil.
  (handler-bind ((warning (lambda (c) (muffle-warning c)))) (warn \"disk ~a% full\" 90))  ; => nil
  (block b
    (handler-bind ((warning (lambda (c) (return-from b (condition-message c))))) (warn \"careful\")))  ; => \"careful\""
  (let ((c (%coerce-to-condition "warn" datum args 'simple-warning)))
    (unless (condition-type-p c 'warning)
      (error 'type-error "warn: ~s is not a warning" (condition-type c)))
    (restart-case (progn (%signal c) (%print-warning (condition-message c)))
      (muffle-warning () :report "Skip warning." nil))
    nil))

(defun cerror (continue-format datum &rest args)
  "(cerror CONTINUE-FORMAT DATUM ARG...) signals an error like `error`, with a continue
restart (reported by CONTINUE-FORMAT with ARGs) that makes cerror return nil.
  (handler-bind ((error #'continue)) (cerror \"Go on.\" \"bad ~a\" 1) 'went-on)  ; => went-on
  (handler-case (cerror \"Go on.\" \"bad ~a\" 1) (error (e) (condition-message e)))  ; => \"bad 1\""
  (let ((c (%coerce-to-condition "cerror" datum args 'simple-error)))
    (restart-case (error c)
      (continue ()
        :report (lambda (stream) (apply #'format stream continue-format args))
        nil))
    nil))

(defmacro ignore-errors (&body body)
  "(ignore-errors BODY...) evaluates BODY; if it signals an error, returns nil and the
condition instead.
  (ignore-errors (+ 1 2))  ; => 3
  (ignore-errors (/ 1 0))  ; => nil
  (condition-message (nth-value 1 (ignore-errors (error \"oops\"))))  ; => \"oops\""
  (let ((c (gensym "c")))
    `(handler-case (progn ,@body) (error (,c) (values nil ,c)))))

(defun %restart-applicable-p (restart condition)
  (let ((test (%restart-test restart)))
    (or (null test) (funcall test condition))))

(defun compute-restarts (&optional condition)
  "(compute-restarts [CONDITION]) is the list of active restarts, innermost first.
  (restart-case (mapcar #'restart-name (compute-restarts)) (retry () 1) (skip () 2))  ; => (retry skip)"
  (remove-if-not (lambda (r) (%restart-applicable-p r condition)) *%restarts*))

(defun find-restart (identifier &optional condition)
  "(find-restart NAME [CONDITION]) is the innermost active restart named NAME, or nil. Given
a restart, returns it when it is active.
  (restart-case (restart-name (find-restart 'skip)) (skip () nil))  ; => skip
  (find-restart 'doc-ex-no-such-restart)  ; => nil"
  (if (%restart-p identifier)
      (and (member identifier *%restarts* :test #'eq) identifier)
      (find-if (lambda (r) (and (eq (%restart-name r) identifier) (%restart-applicable-p r condition)))
               *%restarts*)))

(defun %active-restart (fn identifier condition)
  (or (find-restart identifier condition)
      (error 'control-error "~a: no restart ~s is active" fn
             (if (%restart-p identifier) (%restart-name identifier) identifier))))

(defun invoke-restart (restart &rest args)
  "(invoke-restart RESTART ARG...) transfers control to the active restart RESTART (a restart
or a name), passing it the ARGs.
  (restart-case (invoke-restart 'use-default 7) (use-default (v) (* v 2)))  ; => 14
  (handler-case (invoke-restart 'doc-ex-no-such-restart) (control-error () 'not-active))  ; => not-active"
  (apply (%restart-function (%active-restart "invoke-restart" restart nil)) args))

(defun invoke-restart-interactively (restart)
  "(invoke-restart-interactively RESTART) invokes RESTART with the arguments its :interactive
function returns (none without one).
  (restart-case (invoke-restart-interactively 'retry)
    (retry (&optional (n 1)) :interactive (lambda () (list 10)) (list 'retried n)))  ; => (retried 10)"
  (let ((r (%active-restart "invoke-restart-interactively" restart nil)))
    (apply (%restart-function r) (if (%restart-interactive r) (funcall (%restart-interactive r)) nil))))

(defun restart-report (restart)
  "(restart-report RESTART) is the text that describes RESTART.
  (restart-case (restart-report (find-restart 'skip))
    (skip () :report \"Skip the item.\" nil))  ; => \"Skip the item.\""
  (let ((report (%restart-report-function restart)))
    (cond ((stringp report) report)
          (report (with-output-to-string (stream) (funcall report stream)))
          (t (princ-to-string (%restart-name restart))))))

(defun abort (&optional condition)
  "(abort [CONDITION]) invokes the innermost abort restart; an error when there is none.
  (restart-case (progn (abort) 'not-reached) (abort () 'aborted))  ; => aborted"
  (invoke-restart (%active-restart "abort" 'abort condition)))

(defun continue (&optional condition)
  "(continue [CONDITION]) invokes the innermost continue restart, or returns nil.
  (handler-bind ((error (lambda (c) (continue c)))) (cerror \"Ignore it.\" \"bad\") 'continued)  ; => continued
  (continue)  ; => nil"
  (let ((r (find-restart 'continue condition))) (when r (invoke-restart r))))

(defun muffle-warning (&optional condition)
  "(muffle-warning [CONDITION]) invokes the muffle-warning restart of warn; an error when none
is active.
  (handler-bind ((warning #'muffle-warning)) (warn \"quiet\") 'no-output)  ; => no-output"
  (invoke-restart (%active-restart "muffle-warning" 'muffle-warning condition)))

(defun use-value (value &optional condition)
  "(use-value VALUE [CONDITION]) invokes the innermost use-value restart with VALUE, or
returns nil.
  (handler-bind ((error (lambda (c) (use-value 0 c))))
    (restart-case (error \"no value\") (use-value (v) v)))  ; => 0"
  (let ((r (find-restart 'use-value condition))) (when r (invoke-restart r value))))

(defun store-value (value &optional condition)
  "(store-value VALUE [CONDITION]) invokes the innermost store-value restart with VALUE, or
returns nil.
  (let ((x \"7\"))
    (handler-bind ((type-error (lambda (c) (store-value 7 c)))) (check-type x integer))
    x)  ; => 7"
  (let ((r (find-restart 'store-value condition))) (when r (invoke-restart r value))))

(defmacro check-type (place type &optional type-string)
  "(check-type PLACE TYPE [TYPE-STRING]) signals a type-error unless PLACE's value is of TYPE,
with a store-value restart that stores a new value into PLACE and checks again.
  (let ((n 3)) (check-type n integer) n)  ; => 3
  (handler-case (let ((n \"3\")) (check-type n integer)) (type-error (e) (type-error-datum e)))  ; => \"3\""
  type-string
  (let ((v (gensym "value")) (new (gensym "new")))
    `(loop
       (let ((,v ,place))
         (when (,#'typep ,v ',type) (return nil))
         (restart-case
             (,#'error (,#'make-condition
                        'type-error :datum ,v :expected-type ',type
                        :message (,#'format nil "~s must be of type ~a, got ~s (~a)" ',place ',type ,v
                                            (,#'type-of ,v))))
           (store-value (,new)
             :report (lambda (stream) (,#'format stream "Supply a new value for ~s." ',place))
             (setf ,place ,new)))))))
