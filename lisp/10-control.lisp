;;; SPDX-License-Identifier: Apache-2.0
;;; Control macros: case, iteration (dolist, dotimes, do), places (setf, push, incf),
;;; conditions (define-condition, assert, ignore-errors) and time.

(defmacro case (key &rest clauses)
  "(case KEY (KEYS BODY...)...) evaluates the BODY of the first clause whose KEYS (a list,
or a single atom) contains KEY by eql. A last clause with KEYS t or otherwise is the default.
  (case 3 ((1 2) 'low) ((3 4) 'mid) (t 'high))  ; => mid"
  (let ((k (gensym "key")))
    `(let ((,k ,key))
       (cond ,@(mapcar (lambda (clause)
                         (let ((keys (car clause)))
                           (cond ((or (eq keys t) (eq keys 'otherwise))
                                  `(t nil ,@(cdr clause)))
                                 ((listp keys)
                                  `((or ,@(mapcar (lambda (x) `(,#'eql ,k ',x)) keys))
                                    nil ,@(cdr clause)))
                                 (t `((,#'eql ,k ',keys) nil ,@(cdr clause))))))
                       clauses)))))

(defmacro ecase (key &rest clauses)
  "(ecase KEY CLAUSES...) is like case, but no matching clause is an error.
  (ecase 2 (1 'one) (2 'two))  ; => two"
  (let ((k (gensym "key")))
    `(let ((,k ,key))
       (case ,k ,@clauses
         (otherwise (,#'error 'type-error "ecase: ~s matches none of ~s" ,k
                              ',(mapcar #'car clauses)))))))

(defmacro typecase (value &rest clauses)
  "(typecase VALUE (TYPE BODY...)...) picks the first clause whose TYPE (a type-of name, or
number, list, sequence, t) fits VALUE.
  (typecase 2.5 (integer 'int) (float 'float) (t 'other))  ; => float"
  (let ((v (gensym "v")))
    `(let ((,v ,value))
       (cond ,@(mapcar (lambda (clause)
                         (let ((type (car clause)))
                           (cond ((or (eq type t) (eq type 'otherwise)) `(t nil ,@(cdr clause)))
                                 (t `((,#'%type-matches-p ,v ',type) nil ,@(cdr clause))))))
                       clauses)))))

(defun %type-matches-p (value type)
  (case type
    (number (numberp value))
    (list (listp value))
    (function (functionp value))
    (symbol (symbolp value))
    (sequence (or (listp value) (vectorp value) (stringp value)))
    (otherwise (if (conditionp value)
                   (condition-type-p value type)
                   (eq (type-of value) type)))))

(defmacro dolist (spec &body body)
  "(dolist (VAR LIST [RESULT]) BODY...) evaluates BODY with VAR bound to each element of
LIST, then returns RESULT (default nil). (return X) leaves early with X.
  (let ((sum 0)) (dolist (x '(1 2 3) sum) (setq sum (+ sum x))))  ; => 6"
  (unless (and (consp spec) (symbolp (car spec)) (consp (cdr spec)))
    (error 'program-error "dolist: expected (dolist (VAR LIST [RESULT]) BODY...), got ~s" spec))
  (let ((tail (gensym "tail")))
    `(block nil
       (let ((,tail ,(cadr spec)))
         (while ,tail
           (let ((,(car spec) (,#'car ,tail))) ,@body)
           (setq ,tail (,#'cdr ,tail)))
         ,(if (cddr spec) `(let ((,(car spec) nil)) ,(caddr spec)) nil)))))

(defmacro dotimes (spec &body body)
  "(dotimes (VAR COUNT [RESULT]) BODY...) evaluates BODY with VAR bound to 0, 1, ...,
COUNT-1, then returns RESULT (default nil). (return X) leaves early with X.
  (let ((l nil)) (dotimes (i 3 (reverse l)) (push i l)))  ; => (0 1 2)"
  (unless (and (consp spec) (symbolp (car spec)) (consp (cdr spec)))
    (error 'program-error "dotimes: expected (dotimes (VAR COUNT [RESULT]) BODY...), got ~s" spec))
  (let ((n (gensym "n")) (var (car spec)))
    `(block nil
       (let ((,var 0) (,n ,(cadr spec)))
         (while (,#'< ,var ,n)
           ,@body
           (setq ,var (,#'+ ,var 1)))
         ,(caddr spec)))))

(defmacro do (bindings end-clause &body body)
  "(do ((VAR INIT [STEP])...) (END-TEST RESULT...) BODY...) is the general iteration: VARs
start at INIT, BODY runs until END-TEST is true, then each VAR is set to STEP in parallel.
  (do ((i 0 (+ i 1)) (acc nil (cons i acc))) ((= i 3) acc))  ; => (2 1 0)"
  (let ((steps (remove-if-not (lambda (b) (and (consp b) (cddr b))) bindings))
        (end-test (car end-clause))
        (result (cdr end-clause)))
    `(block nil
       (let ,(mapcar (lambda (b) (if (consp b) (list (car b) (cadr b)) b)) bindings)
         (while (,#'not ,end-test)
           ,@body
           ,@(if steps
                 `((%psetq ,@(apply #'append (mapcar (lambda (b) (list (car b) (caddr b))) steps))))
                 nil))
         ,@result))))

(defmacro do* (bindings end-clause &body body)
  "(do* ((VAR INIT [STEP])...) (END-TEST RESULT...) BODY...) is do with the VARs bound and
stepped in sequence: each INIT and STEP sees the VARs before it already updated.
  (do* ((i 0 (+ i 1)) (sq 0 (* i i))) ((= i 4) sq))  ; => 16"
  (let ((steps (remove-if-not (lambda (b) (and (consp b) (cddr b))) bindings)))
    `(block nil
       (let* ,(mapcar (lambda (b) (if (consp b) (list (car b) (cadr b)) b)) bindings)
         (while (,#'not ,(car end-clause))
           ,@body
           ,@(mapcar (lambda (b) `(setq ,(car b) ,(caddr b))) steps))
         ,@(cdr end-clause)))))

(defmacro %psetq (&rest pairs)
  ;; Every value but the last goes through a temporary; the last is computed after them and
  ;; assigned at once, before the others are (so one pair, as most do loops step, is a setq).
  (let* ((all (%pairs pairs))
         (early (butlast all))
         (last-pair (car (last all)))
         (temps (mapcar (lambda (p) (gensym "t")) early)))
    (cond ((null all) nil)
          ((null early) `(progn (setq ,(car last-pair) ,(cadr last-pair)) nil))
          (t `(let ,(mapcar #'list temps (mapcar #'cadr early))
                (setq ,(car last-pair) ,(cadr last-pair))
                ,@(mapcar (lambda (p tmp) `(setq ,(car p) ,tmp)) early temps)
                nil)))))

(defmacro psetq (&rest pairs)
  "(psetq VAR VALUE ...) assigns the VARs in parallel: every VALUE is computed first.
  (let ((a 1) (b 2)) (psetq a b b a) (list a b))  ; => (2 1)"
  `(%psetq ,@pairs))

(defun %pairs (items)
  (if (null items) nil (cons (list (car items) (cadr items)) (%pairs (cddr items)))))

;;; Places. A setf expander turns (setf (NAME ARGS...) VALUE) into the form that stores.
;;; (defsetf NAME LAMBDA-LIST (STORE) BODY...) defines one; the short form
;;; (defsetf NAME (ARGS... STORE) BODY...) is the same with the store variable last.
(defvar *setf-expanders* (make-hash-table :test 'eq)
  "Maps an accessor name to the function that expands (setf (NAME ARGS...) VALUE): it is
called with the value form first, then the argument forms.
  (functionp (gethash 'car *setf-expanders*))  ; => t")

(defmacro defsetf (name params &rest body)
  "(defsetf ACCESSOR LAMBDA-LIST (STORE) BODY...) teaches setf to store into (ACCESSOR ARG...):
BODY returns the form that stores STORE. The short form (defsetf ACCESSOR (ARG... STORE) BODY...)
puts the store variable last.
  (progn (defun doc-ex-head (cell) (car cell))
    (defsetf doc-ex-head (cell) (value) `(setf (car ,cell) ,value))
    (let ((c (list 1 2))) (setf (doc-ex-head c) 9) c))  ; => (9 2)"
  (if (and (consp (car body)) (symbolp (caar body)) (null (cdar body)) (cdr body))
      `(progn (puthash ',name (named-lambda ,name (,(caar body) ,@params) ,@(cdr body))
                       *setf-expanders*)
              ',name)
      (let ((store (car (last params))))
        `(progn (puthash ',name (named-lambda ,name (,store ,@(butlast params)) ,@body)
                         *setf-expanders*)
                ',name))))

(defsetf car (cell) (value) `(,#'%setcar ,cell ,value))
(defsetf cdr (cell) (value) `(,#'%setcdr ,cell ,value))
(defsetf first (cell) (value) `(,#'%setcar ,cell ,value))
(defsetf rest (cell) (value) `(,#'%setcdr ,cell ,value))
(defsetf cadr (items) (value) `(,#'%setcar (,#'cdr ,items) ,value))
(defsetf second (items) (value) `(,#'%setcar (,#'cdr ,items) ,value))
(defsetf third (items) (value) `(,#'%setcar (,#'cddr ,items) ,value))
(defsetf nth (n items) (value) `(,#'%setcar (,#'nthcdr ,n ,items) ,value))
(defsetf aref (array &rest subscripts) (value) `(,#'%aset ,array ,@subscripts ,value))
(defsetf elt (seq index) (value) `(,#'%set-elt ,seq ,index ,value))
(defsetf gethash (key table &optional default) (value)
  (if default
      `(progn ,default (,#'puthash ,key ,value ,table))
      `(,#'puthash ,key ,value ,table)))
(defsetf symbol-value (symbol) (value) `(,#'set ,symbol ,value))

(defsetf char (string index) (value) `(,#'%aset ,string ,index ,value))
(defsetf schar (string index) (value) `(,#'%aset ,string ,index ,value))

(defun %set-elt (seq index value)
  (if (or (vectorp seq) (stringp seq)) (%aset seq index value) (%setcar (nthcdr index seq) value)))

(defmacro setf (&rest pairs)
  "(setf PLACE VALUE ...) stores each VALUE into its PLACE: a variable, (car x), (cdr x),
(nth i x), (aref v i), (gethash k h), or any accessor with a defsetf. Returns the last VALUE.
  (let ((l (list 1 2 3))) (setf (second l) 'b) l)  ; => (1 b 3)"
  (cond ((null pairs) nil)
        ((null (cdr pairs)) (error 'program-error "setf: odd number of arguments"))
        ((cddr pairs) `(progn (setf ,(car pairs) ,(cadr pairs)) (setf ,@(cddr pairs))))
        (t (let ((place (car pairs)) (value (cadr pairs)))
             (cond ((symbolp place) `(setq ,place ,value))
                   ((not (consp place)) (error 'program-error "setf: cannot assign to ~s" place))
                   (t (let ((expander (gethash (car place) *setf-expanders*)))
                        (if expander
                            (apply expander value (cdr place))
                            (let ((expanded (macroexpand-1 place)))
                              (if (eq expanded place)
                                  (error 'program-error "setf: ~s is not a place I know how to set (use defsetf)" place)
                                  `(setf ,expanded ,value)))))))))))

(defun %place-parts (place)
  "(%place-parts PLACE) is (BINDINGS ACCESS): temporaries for the argument forms of PLACE, and
PLACE rewritten to use them, so a read-modify-write evaluates each argument form once."
  (if (or (symbolp place) (not (consp place)))
      (list nil place)
      (let ((temps (mapcar (lambda (arg) (if (or (numberp arg) (keywordp arg) (stringp arg)) arg (gensym "arg")))
                           (cdr place))))
        (list (remove-if-not (lambda (b) (symbolp (car b)))
                             (remove-if (lambda (b) (eq (car b) (cadr b)))
                                        (mapcar #'list temps (cdr place))))
              (cons (car place) temps)))))

(defmacro %modify-place (place fn &rest args)
  ;; (setf PLACE (FN PLACE ARGS...)) with PLACE's argument forms evaluated once.
  (let* ((parts (%place-parts place))
         (access (cadr parts)))
    `(let* ,(car parts)
       (setf ,access (,fn ,access ,@args)))))

(defmacro push (item place)
  "(push ITEM PLACE) puts ITEM on the front of the list in PLACE; returns the new list.
  (let ((l '(2 3))) (push 1 l) l)  ; => (1 2 3)"
  (let ((v (gensym "item")) (parts (%place-parts place)))
    `(let* ((,v ,item) ,@(car parts))
       (setf ,(cadr parts) (,#'cons ,v ,(cadr parts))))))

(defmacro pop (place)
  "(pop PLACE) removes the first element of the list in PLACE and returns it.
  (let ((l (list 1 2 3))) (list (pop l) l))  ; => (1 (2 3))"
  (let ((v (gensym "list")) (parts (%place-parts place)))
    `(let* (,@(car parts) (,v ,(cadr parts)))
       (setf ,(cadr parts) (,#'cdr ,v))
       (,#'car ,v))))

(defmacro incf (place &optional (delta 1))
  "(incf PLACE [DELTA]) adds DELTA (default 1) to the number in PLACE; returns the new value.
  (let ((n 1)) (incf n 5) n)  ; => 6"
  `(%modify-place ,place ,#'+ ,delta))

(defmacro decf (place &optional (delta 1))
  "(decf PLACE [DELTA]) subtracts DELTA (default 1) from PLACE; returns the new value.
  (let ((n 10)) (decf n) n)  ; => 9"
  `(%modify-place ,place ,#'- ,delta))

(defmacro pushnew (item place &rest keys)
  "(pushnew ITEM PLACE &key :test :test-not :key) pushes ITEM unless it is already a member of
PLACE (eql by default, as member).
  (let ((l (list 1 2))) (pushnew 2 l) (pushnew 3 l) l)  ; => (3 1 2)"
  (let ((v (gensym "item")) (parts (%place-parts place)))
    `(let* ((,v ,item) ,@(car parts))
       (if (,#'member ,v ,(cadr parts) ,@keys)
           ,(cadr parts)
           (setf ,(cadr parts) (,#'cons ,v ,(cadr parts)))))))

;;; Conditions. This define-condition serves the prelude until lisp/36-conditions.lisp
;;; replaces it with the full one (slots, :report).
(defmacro define-condition (name parents &rest options)
  "(define-condition NAME (PARENT) [DOC]) declares a condition type; handler-case clauses for
PARENT also catch it. Signal it with (error 'NAME \"message\" ARGS...).
  (progn (define-condition doc-ex-oops (error))
    (handler-case (error 'doc-ex-oops \"bad ~a\" 1) (doc-ex-oops (e) (condition-message e))))  ; => \"bad 1\""
  `(progn (%define-condition ',name ',(if parents (car parents) 'error)) ',name))

(defmacro ignore-errors (&body body)
  "(ignore-errors BODY...) evaluates BODY; if it signals an error, returns nil instead.
  (ignore-errors (car 5))  ; => nil"
  `(handler-case (progn ,@body) (error () nil)))

(defmacro assert (test &optional message &rest args)
  "(assert TEST [MESSAGE ARG...]) signals an assertion-error naming TEST when TEST is false.
  (assert (= (+ 1 1) 2))  ; => nil
  (handler-case (assert (> 1 2)) (assertion-error (e) (condition-message e)))  ; => \"assertion failed: (> 1 2)\"
  (handler-case (assert (> 1 2) \"~a is too small\" 1) (error (e) (condition-message e)))  ; => \"1 is too small\""
  `(unless ,test
     ,(if message
          `(,#'error 'assertion-error ,message ,@args)
          `(,#'error 'assertion-error "assertion failed: ~s" ',test))))

(defmacro check-type (place type)
  "(check-type PLACE TYPE) signals a type-error unless PLACE's value is of TYPE.
  (let ((n 3)) (check-type n integer) n)  ; => 3"
  `(unless (,#'%type-matches-p ,place ',type)
     (,#'error 'type-error "~s must be of type ~a, got ~s (~a)" ',place ',type ,place
               (,#'type-of ,place))))

(defconstant internal-time-units-per-second 1000000000
  "The units of get-internal-real-time in a second: it counts nanoseconds.
  (> (/ (get-internal-real-time) internal-time-units-per-second) 0)  ; => t")

(defmacro time (form)
  "(time FORM) evaluates FORM, prints how long it took, and returns its value.
  (time (+ 1 2))  ; => 3"
  (let ((start (gensym "start")) (result (gensym "result")))
    `(let* ((,start (,#'get-internal-real-time)) (,result ,form))
       (,#'format t "~&; time: ~,3f ms~%"
                  (,#'/ (,#'- (,#'get-internal-real-time) ,start) 1000000.0))
       ,result)))

(defmacro with-gensyms (names &body body)
  "(with-gensyms (NAME...) BODY...) binds each NAME to a fresh symbol, for writing macros.
  (progn (defmacro doc-ex-square-once (x) (with-gensyms (v) `(let ((,v ,x)) (* ,v ,v))))
    (doc-ex-square-once (+ 2 3)))  ; => 25"
  `(let ,(mapcar (lambda (n) `(,n (gensym ,(symbol-name n)))) names) ,@body))

(defmacro destructuring-bind (pattern value &body body)
  "(destructuring-bind LAMBDA-LIST VALUE BODY...) binds the variables of LAMBDA-LIST to the
parts of the list VALUE, as if VALUE were the arguments of a call: &optional, &rest, &key and
dotted tails work, a required parameter may itself be a nested lambda list, and a VALUE of
the wrong shape is an error.
  (destructuring-bind (a (b c) &rest d) '(1 (2 3) 4 5) (list a b c d))  ; => (1 2 3 (4 5))"
  (let* ((parsed (%macro-params pattern))
         (inner body))
    (dolist (bind (reverse (cdr parsed)))
      (setq inner `((destructuring-bind ,(car bind) ,(cadr bind) ,@inner))))
    `(,#'%destructure-apply (named-lambda destructuring-bind ,(car parsed) ,@inner) ,value ',pattern)))

(defun %destructure-apply (fn value pattern)
  (unless (listp value)
    (error 'program-error "destructuring-bind: ~s does not match ~s, it is not a list" value pattern))
  (handler-case (apply fn value)
    (arity-error (e)
      ;; Only the pattern's own arity errors, not those from the body.
      (if (string-prefix-p "destructuring-bind:" (condition-message e))
          (error 'program-error "destructuring-bind: ~s does not match ~s (~a)" value pattern
                 (subseq (condition-message e) 20))
          (error e)))))

(defun %macrolet-expander (name params body)
  ;; The expander of a macrolet definition, a function of the whole form. Its body is compiled
  ;; in the global environment: it cannot see the variables around the macrolet.
  (let* ((parsed (%macro-params params))
         (split (%split-docstring body))
         (inner (cadr split)))
    (dolist (bind (reverse (cdr parsed)))
      (setq inner `((destructuring-bind ,(car bind) ,(cadr bind) ,@inner))))
    (let ((fn (eval `(named-lambda ,name ,(car parsed) ,@inner))))
      (lambda (form) (apply fn (cdr form))))))

(defun %split-docstring (body)
  (if (and (stringp (car body)) (cdr body))
      (list (list (car body)) (cdr body))
      (list nil body)))

(defun %macro-params (params)
  ;; Returns (flat-params . destructurings), each destructuring (pattern gensym).
  (let ((flat nil) (binds nil) (required t))
    (while (consp params)
      (let ((p (car params)))
        (when (and (symbolp p) p (string-prefix-p "&" (symbol-name p)))
          (setq required nil))
        (if (and required (consp p))
            (let ((g (gensym "arg")))
              (push g flat)
              (push (list p g) binds))
            (push p flat)))
      (setq params (cdr params)))
    (let ((result (reverse flat)))
      (when params (setq result (append result params)))  ; dotted rest parameter
      (cons result (reverse binds)))))

;;; defmacro again, now with destructuring: a required parameter may itself be a lambda list,
;;; as in (defmacro with-thing ((var init) &body body) ...).
(defmacro defmacro (name params &rest body)
  "(defmacro NAME LAMBDA-LIST [DOC] BODY...) defines NAME as a macro: a function from the
unevaluated argument forms to the form that replaces the call. Required parameters may be
nested lambda lists, which destructure the corresponding argument.
  (progn (defmacro doc-ex-with-pair ((a b) pair &body body) `(destructuring-bind (,a ,b) ,pair ,@body))
    (doc-ex-with-pair (x y) '(1 2) (+ x y)))  ; => 3"
  (let* ((parsed (%macro-params params))
         (split (%split-docstring body))
         (inner (cadr split)))
    (dolist (bind (reverse (cdr parsed)))
      (setq inner `((destructuring-bind ,(car bind) ,(cadr bind) ,@inner))))
    `(progn (%define-macro ',name (named-lambda ,name ,(car parsed) ,@(car split) ,@inner))
            ',name)))
