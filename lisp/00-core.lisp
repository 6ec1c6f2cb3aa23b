;;; SPDX-License-Identifier: Apache-2.0
;;; The core of the prelude: definition forms, conditionals and list accessors. Loaded first;
;;; every other prelude file may use what is here.
;;;
;;; Macros here write the functions they call as ,#'name: the function object itself goes into
;;; the expansion, so a user's local variable named `list` or `car` cannot capture the call.

(%define-macro 'defmacro
  (named-lambda defmacro (name params &rest body)
    "(defmacro NAME LAMBDA-LIST [DOC] BODY...) defines NAME as a macro: a function from the
unevaluated argument forms to the form that replaces the call.
  (progn (defmacro doc-ex-unless-zero (x &body body) `(if (= ,x 0) nil (progn ,@body)))
    (doc-ex-unless-zero 2 'ran))  ; => ran"
    `(progn (%define-macro ',name (named-lambda ,name ,params ,@body)) ',name)))

(defmacro defun (name params &rest body)
  "(defun NAME LAMBDA-LIST [DOC] BODY...) defines a global function. LAMBDA-LIST may use
&optional, &rest (&body), &key (with defaults) and &aux; BODY has an implicit block NAME.
  (progn (defun doc-ex-scale (x &key (by 2)) \"Multiplies X by BY.\" (* x by)) (doc-ex-scale 5 :by 3))  ; => 15"
  `(progn (%define-function ',name (named-lambda ,name ,params ,@body)) ',name))

(defmacro defvar (name &optional (value nil value-p) doc)
  "(defvar NAME [VALUE [DOC]]) declares a global special variable, set to VALUE only if it
has no value yet (without VALUE it stays unbound). `let` binds special variables dynamically.
  (progn (defvar *doc-ex-defvar* 1) (defvar *doc-ex-defvar* 2) *doc-ex-defvar*)  ; => 1"
  (if value-p
      `(if (,#'boundp ',name)
           (%define-variable ',name nil nil ,doc)
           (%define-variable ',name ,value t ,doc))
      `(%define-variable ',name nil :declare-only ,doc)))

(defmacro defparameter (name value &optional doc)
  "(defparameter NAME VALUE [DOC]) declares a global special variable and sets it to VALUE.
  (progn (defparameter *doc-ex-rate* 1) (defparameter *doc-ex-rate* 2) *doc-ex-rate*)  ; => 2"
  `(%define-variable ',name ,value t ,doc))

(defmacro defconstant (name value &optional doc)
  "(defconstant NAME VALUE [DOC]) defines a global constant; assigning to it is an error.
  (progn (defconstant +doc-ex-dims+ 3) (* 2 +doc-ex-dims+))  ; => 6"
  `(%define-constant ',name ,value ,doc))

(defmacro when (test &body body)
  "(when TEST BODY...) evaluates BODY when TEST is true; returns the last value or nil.
  (when (> 2 1) 'yes)  ; => yes"
  `(if ,test (progn ,@body) nil))

(defmacro unless (test &body body)
  "(unless TEST BODY...) evaluates BODY when TEST is false; returns the last value or nil.
  (unless (> 2 1) 'yes)  ; => nil"
  `(if ,test nil (progn ,@body)))

(defmacro cond (&rest clauses)
  "(cond (TEST BODY...)...) evaluates the BODY of the first clause whose TEST is true. A
clause with no BODY returns the TEST's value; use t as the last TEST for a default.
  (cond ((> 1 2) 'a) ((> 2 1) 'b) (t 'c))  ; => b"
  (if (null clauses)
      nil
      (let ((clause (car clauses)))
        (if (not (consp clause))
            (error 'program-error "cond: a clause must be a list (TEST BODY...), got ~s" clause))
        (if (null (cdr clause))
            (let ((v (gensym "v")))
              `(let ((,v ,(car clause)))
                 (if ,v ,v (cond ,@(cdr clauses)))))
            `(if ,(car clause)
                 (progn ,@(cdr clause))
                 (cond ,@(cdr clauses)))))))

(defun first (list) "(first LIST) is the first element of LIST.
  (first '(1 2 3))  ; => 1" (car list))
(defun second (list) "(second LIST) is the second element of LIST.
  (second '(1 2 3))  ; => 2" (car (cdr list)))
(defun third (list) "(third LIST) is the third element of LIST.
  (third '(1 2 3))  ; => 3" (car (cdr (cdr list))))
(defun fourth (list) "(fourth LIST) is the fourth element of LIST.
  (fourth '(a b c d e))  ; => d" (car (cdr (cdr (cdr list)))))
(defun rest (list) "(rest LIST) is LIST without its first element.
  (rest '(1 2 3))  ; => (2 3)" (cdr list))
(defun caddr (list) "(caddr LIST) is the third element of LIST.
  (caddr '(1 2 3 4))  ; => 3" (car (cdr (cdr list))))
(defun cdddr (list) "(cdddr LIST) is LIST without its first three elements.
  (cdddr '(1 2 3 4))  ; => (4)" (cdr (cdr (cdr list))))
(defun cadddr (list) "(cadddr LIST) is the fourth element of LIST.
  (cadddr '(1 2 3 4))  ; => 4" (car (cdr (cdr (cdr list)))))

(defmacro prog1 (first &body body)
  "(prog1 FIRST BODY...) evaluates FIRST then BODY, returning FIRST's value.
  (prog1 1 2 3)  ; => 1"
  (let ((v (gensym "v")))
    `(let ((,v ,first)) ,@body ,v)))

(defmacro prog2 (first second &body body)
  "(prog2 FIRST SECOND BODY...) evaluates all, returning SECOND's value.
  (prog2 1 2 3)  ; => 2"
  `(progn ,first (prog1 ,second ,@body)))

(defmacro return (&optional value)
  "(return [VALUE]) returns VALUE from the innermost enclosing (block nil ...), such as a
dolist, dotimes or loop.
  (dolist (x '(1 2 3)) (when (= x 2) (return (* x 100))))  ; => 200"
  `(return-from nil ,value))

(defun %labels-unset (&rest args)
  "(%labels-unset ARGS...) is what a labels function holds until labels has defined it."
  (error 'program-error "labels: a local function called with ~s before it was defined" args))

;; Each name starts out bound to a function, so the analyzer knows it is a local function that
;; hides a global macro of the same name in operator position.
(defmacro labels (definitions &body body)
  "(labels ((NAME LAMBDA-LIST BODY...)...) BODY...) defines local functions that can call
themselves and each other, then evaluates BODY.
  (labels ((fact (n) (if (< n 2) 1 (* n (fact (- n 1)))))) (fact 10))  ; => 3628800"
  `(let ,(mapcar (lambda (d) (list (car d) #'%labels-unset)) definitions)
     ,@(mapcar (lambda (d) `(setq ,(car d) (named-lambda ,(car d) ,(cadr d) ,@(cddr d))))
               definitions)
     ,@body))

(defmacro letrec (bindings &body body)
  "(letrec ((VAR VALUE)...) BODY...) binds VARs so that each VALUE can refer to all of them.
  (letrec ((even? (lambda (n) (if (= n 0) t (odd? (- n 1))))) (odd? (lambda (n) (if (= n 0) nil (even? (- n 1)))))) (even? 10))  ; => t"
  `(let ,(mapcar (lambda (b) (list (car b) nil)) bindings)
     ,@(mapcar (lambda (b) `(setq ,(car b) ,(cadr b))) bindings)
     ,@body))

(defmacro flet (definitions &body body)
  "(flet ((NAME LAMBDA-LIST BODY...)...) BODY...) defines local functions (which cannot call
each other) and evaluates BODY.
  (flet ((double (x) (* 2 x))) (double 21))  ; => 42"
  `(let ,(mapcar (lambda (d) `(,(car d) (named-lambda ,(car d) ,(cadr d) ,@(cddr d)))) definitions)
     ,@body))

(defun zerop (x) "(zerop X) is true when the number X is zero.
  (zerop 0)  ; => t" (= x 0))
(defun plusp (x) "(plusp X) is true when the number X is positive.
  (plusp 3)  ; => t" (> x 0))
(defun minusp (x) "(minusp X) is true when the number X is negative.
  (minusp 3)  ; => nil" (< x 0))
(defun evenp (n) "(evenp N) is true when the integer N is even.
  (evenp 4)  ; => t" (= (mod n 2) 0))
(defun oddp (n) "(oddp N) is true when the integer N is odd.
  (oddp 4)  ; => nil" (= (mod n 2) 1))
(defun signum (x) "(signum X) is -1, 0 or 1 by the sign of X (as a float for floats).
  (signum -3)  ; => -1"
  (cond ((> x 0) (if (floatp x) 1.0 1)) ((< x 0) (if (floatp x) -1.0 -1)) (t x)))

(defun describe (x)
  "(describe X) prints what X is: for a symbol naming a function, its usage and docstring.
  (with-output-to-string (s) (describe 42))  ; => \"42 is an integer.\\n\""
  (princ (describe-string x))
  (terpri)
  nil)

(defmacro define (target &rest body)
  "(define (NAME ARG...) BODY...) or (define NAME VALUE) Scheme's definition at top level:
a function, as defun makes it, or a global variable set to VALUE (not special: let binds it
lexically, as Scheme does). Returns NAME.
  (progn (define (doc-ex-square x) (* x x)) (doc-ex-square 4))  ; => 16
  (progn (define doc-ex-answer 42) doc-ex-answer)  ; => 42"
  (cond ((consp target) `(defun ,(car target) ,(cdr target) ,@body))
        ((and (symbolp target) target (not (keywordp target)) (= (length body) 1))
         `(progn (setq ,target ,(car body)) ',target))
        (t (error 'program-error "define: expected (define (NAME ARG...) BODY...) or (define NAME VALUE), got ~s"
                  (cons 'define (cons target body))))))
