;;; SPDX-License-Identifier: Apache-2.0
;;; defstruct, as in Common Lisp: a constructor with &key (or a BOA lambda list), setf-able
;;; accessors, a predicate, a copier, :conc-name and :include; instances print as
;;; #S(NAME :SLOT VALUE ...), or through the :print-object or :print-function given (the
;;; printer asks %print-structure). Instances are made by the builtins in builtins_struct.cpp.

(defvar *print-escape* t
  "True while the printer prints readably (prin1, ~s); nil under princ and ~a. A structure's
:print-object function sees it.
  (let ((seen nil))
    (defstruct (doc-ex-escape (:print-object (lambda (o s) (setq seen *print-escape*) (princ \"e\" s)))))
    (princ-to-string (make-doc-ex-escape))
    seen)  ; => nil")

(defvar *%print-structure-depth* 0
  "How many structure print functions are under way (a failing one's error message prints the
structure again, plainly past a depth of 8).")

(defun %print-structure (object readably)
  ;; What the printer (printer.cpp) shows for the structure OBJECT: the output of its type's
  ;; print function (or an included type's), or nil for the plain #S(...).
  (let ((printer (do ((d (%struct-descriptor object) (aref d 2)) (p nil))
                     ((or p (null d)) p)
                   (setq p (get (aref d 0) '%struct-printer)))))
    (when (and printer (< *%print-structure-depth* 8))
      (let ((*%print-structure-depth* (+ *%print-structure-depth* 1))
            (*print-escape* readably))
        (with-output-to-string (s) (funcall printer object s))))))

(defun %struct-info (name)
  "(%struct-info NAME) is (DESCRIPTOR SLOTS) for the structure type NAME, where SLOTS lists
(SLOT-NAME DEFAULT-FORM READ-ONLY) for every slot, inherited ones first; nil if NAME is none."
  (and (symbolp name) (get name '%struct)))

(defun %struct-slot-spec (slot)
  "(%struct-slot-spec SLOT) is (NAME DEFAULT READ-ONLY) for a slot written as NAME or
(NAME DEFAULT &key :type :read-only)."
  (cond ((symbolp slot) (list slot nil nil))
        ((and (consp slot) (symbolp (car slot)))
         (list (car slot) (cadr slot) (getf (cddr slot) :read-only)))
        (t (error 'program-error "defstruct: a slot is NAME or (NAME DEFAULT OPTION...), got ~s" slot))))

(defun %struct-setf-expander (descriptor index accessor)
  "(%struct-setf-expander DESCRIPTOR INDEX ACCESSOR) is the setf expander of one accessor."
  (lambda (value instance)
    (list #'%struct-set instance descriptor index value (list 'quote accessor))))

(defun %struct-read-only-expander (accessor name)
  "(%struct-read-only-expander ACCESSOR NAME) is the setf expander of a :read-only slot: an error."
  (lambda (value instance)
    (error 'program-error "setf: ~a is a read-only slot of the structure ~a" accessor name)))

(defun %boa-variables (lambda-list)
  "(%boa-variables LAMBDA-LIST) is the variables a constructor's lambda list binds."
  (let ((out nil))
    (dolist (p lambda-list (nreverse out))
      (cond ((member p '(&optional &rest &key &aux &body &allow-other-keys)) nil)
            ((symbolp p) (push p out))
            ((consp p) (push (if (consp (car p)) (cadar p) (car p)) out))))))

(defmacro defstruct (name-and-options &rest slots)
  "(defstruct NAME-OR-(NAME OPTION...) [DOC] SLOT...) defines a structure type NAME: the
constructor make-NAME taking each slot as a keyword, the accessors NAME-SLOT (setf-able unless
:read-only), the predicate NAME-p and the copier copy-NAME. A SLOT is NAME or (NAME DEFAULT
[:read-only t]). Options: (:conc-name PREFIX), (:constructor NAME [LAMBDA-LIST]),
(:predicate NAME), (:copier NAME), (:include PARENT); nil as a name omits that function.
  (progn (defstruct doc-ex-pos (x 0) (y 0))
    (let ((p (make-doc-ex-pos :x 3)))
      (setf (doc-ex-pos-y p) 4)
      (list p (doc-ex-pos-x p) (doc-ex-pos-p p))))  ; => (#S(doc-ex-pos :x 3 :y 4) 3 t)"
  (let* ((name (if (consp name-and-options) (car name-and-options) name-and-options))
         (options (if (consp name-and-options) (cdr name-and-options) nil))
         (prefix (concat (symbol-name name) "-"))
         (constructors nil)
         (no-default-constructor nil)
         (predicate (intern (concat (symbol-name name) "-p")))
         (copier (intern (concat "copy-" (symbol-name name))))
         (parent nil)
         (overrides nil)
         (printer nil)               ; :print-object's function (OBJECT STREAM), or :print-function's
         (printer-takes-depth nil))  ; (OBJECT STREAM DEPTH)
    (unless (symbolp name) (error 'program-error "defstruct: the name must be a symbol, got ~s" name))
    (when (stringp (car slots)) (setq slots (cdr slots)))  ; the docstring
    (dolist (option options)
      (let ((key (if (consp option) (car option) option))
            (args (if (consp option) (cdr option) nil)))
        (case key
          (:conc-name (setq prefix (if (car args) (string (car args)) "")))
          (:constructor
           (cond ((null args) nil)
                 ((null (car args)) (setq no-default-constructor t))
                 (t (push args constructors))))
          (:predicate (setq predicate (car args)))
          (:copier (setq copier (car args)))
          (:include (setq parent (car args) overrides (cdr args)))
          (:print-object (setq printer (car args)))
          (:print-function (setq printer (car args) printer-takes-depth t))
          ((:type :named :initial-offset) nil)
          (otherwise (error 'program-error "defstruct: unknown option ~s" option)))))
    (let* ((parent-info (when parent
                          (or (%struct-info parent)
                              (error 'program-error "defstruct ~s: cannot include ~s, not a structure type" name parent))))
           (inherited (mapcar (lambda (spec)
                                (let ((override (find (car spec) (mapcar #'%struct-slot-spec overrides) :key #'car)))
                                  (or override spec)))
                              (cadr parent-info)))
           (own (mapcar #'%struct-slot-spec slots))
           (all (append inherited own))
           (names (mapcar #'car all))
           (descriptor (vector name names (car parent-info)))
           (instance (gensym "instance")))
      (when (and (null constructors) (not no-default-constructor))
        (push (list (intern (concat "make-" (symbol-name name)))) constructors))
      (setf (get name '%struct) (list descriptor all))
      `(progn
         (,#'%put ',name '%struct (list ,descriptor ',all))
         (,#'%put ',name '%struct-printer
                  ,(when printer
                     (let ((fn (if (symbolp printer) `',printer printer)))  ; a name is called late
                       (if printer-takes-depth
                           `(lambda (object stream) (funcall ,fn object stream 0))
                           fn))))
         ,@(mapcar
            (lambda (c)
              (if (cdr c)
                  (let ((vars (%boa-variables (cadr c))))
                    `(defun ,(car c) ,(cadr c)
                       (,#'%make-struct ,descriptor
                                        ,@(mapcar (lambda (spec) (if (member (car spec) vars) (car spec) (cadr spec)))
                                                  all))))
                  `(defun ,(car c) (&key ,@(mapcar (lambda (spec) (list (car spec) (cadr spec))) all))
                     (,#'%make-struct ,descriptor ,@names))))
            constructors)
         ,@(let ((index -1))
             (mapcan (lambda (spec)
                       (setq index (+ index 1))
                       (let ((accessor (intern (concat prefix (symbol-name (car spec))))))
                         (list `(defun ,accessor (,instance)
                                  (,#'%struct-ref ,instance ,descriptor ,index ',accessor))
                               (if (caddr spec)
                                   `(puthash ',accessor (,#'%struct-read-only-expander ',accessor ',name)
                                             *setf-expanders*)
                                   `(puthash ',accessor (,#'%struct-setf-expander ,descriptor ,index ',accessor)
                                             *setf-expanders*)))))
                     all))
         ,@(when predicate
             `((defun ,predicate (x) (,#'%struct-typep x ,descriptor))))
         ,@(when copier
             `((defun ,copier (,instance)
                 (unless (,#'%struct-typep ,instance ,descriptor)
                   (error 'type-error "~a: argument 1 must be a ~a, got ~s" ',copier ',name ,instance))
                 (,#'copy-structure ,instance))))
         ',name))))

;; typecase and typep know structure types, :include included.
(let ((builtin-matches #'%type-matches-p))
  (defun %type-matches-p (value type)
    (let ((info (%struct-info type)))
      (if info
          (%struct-typep value (car info))
          (funcall builtin-matches value type)))))

(defun %in-bounds-p (x low high)
  ;; X within LOW and HIGH of a type specifier: * none, (N) exclusive, N inclusive.
  (and (cond ((eq low '*) t) ((consp low) (> x (car low))) (t (>= x low)))
       (cond ((eq high '*) t) ((consp high) (< x (car high))) (t (<= x high)))))

(defun typep (object type)
  "(typep OBJECT TYPE) is true when OBJECT is of TYPE: a type-of name, a structure name, t,
nil, atom, number, real, integer, float, list, cons, null, symbol, keyword, string, vector,
sequence, function, hash-table, fixnum, bit, array, or (or TYPE...), (and TYPE...), (not TYPE),
(member X...), (eql X), (satisfies FN), (integer LOW HIGH) and the same of float, real and
number (* for no bound, (N) for an exclusive one), (mod N), (unsigned-byte N),
(signed-byte N), (vector TYPE SIZE), (simple-vector SIZE), (string SIZE).
  (typep 3 'integer)  ; => t
  (typep 5 '(integer 0 10))  ; => t
  (typep 11 '(integer 0 10))  ; => nil"
  (cond ((eq type t) t)
        ((null type) nil)
        ((consp type)
         (case (car type)
           (or (some (lambda (ty) (typep object ty)) (cdr type)))
           (and (every (lambda (ty) (typep object ty)) (cdr type)))
           (not (not (typep object (cadr type))))
           ((member eql) (and (member object (cdr type)) t))
           (satisfies (and (funcall (cadr type) object) t))
           ((integer float real rational number)
            ;; (integer LOW HIGH): * or omitted for no bound, (N) for an exclusive one.
            (and (typep object (car type))
                 (%in-bounds-p object (if (cdr type) (cadr type) '*) (if (cddr type) (caddr type) '*))))
           (mod (and (integerp object) (<= 0 object) (< object (cadr type))))
           (unsigned-byte (and (integerp object) (<= 0 object)
                               (or (null (cdr type)) (eq (cadr type) '*) (< object (expt 2 (min 62 (cadr type)))))))
           (signed-byte (and (integerp object)
                             (or (null (cdr type)) (eq (cadr type) '*) (>= (cadr type) 64)
                                 (let ((half (expt 2 (- (cadr type) 1)))) (and (<= (- half) object) (< object half))))))
           ((vector simple-vector array simple-array)
            (and (typep object (car type))
                 (let ((size (if (eq (car type) 'simple-vector) (cadr type) (caddr type)))
                       (dims (array-dimensions object)))
                   (or (null size) (eq size '*) (equal size dims)
                       (and (integerp size) (if (member (car type) '(array simple-array))
                                                (= size (length dims))  ; (array t RANK)
                                                (equal (list size) dims)))
                       (and (consp size) (= (length size) (length dims))
                            (every (lambda (s d) (or (eq s '*) (eql s d))) size dims))))))
           (string (and (stringp object) (or (null (cdr type)) (eq (cadr type) '*) (eql (cadr type) (length object)))))
           (otherwise (error 'type-error "typep: unknown type specifier ~s" type))))
        (t (case type
             (atom (atom object))
             (real (numberp object))
             (cons (consp object))
             (null (null object))
             (keyword (keywordp object))
             (symbol (symbolp object))
             (string (stringp object))
             (vector (or (vectorp object) (stringp object)))
             ((array simple-array) (arrayp object))
             (simple-vector (vectorp object))
             (fixnum (integerp object))  ; integers are 64-bit: every integer is a fixnum
             (bit (or (eql object 0) (eql object 1)))
             (rational (integerp object))
             (hash-table (hash-table-p object))
             (boolean (or (null object) (eq object t)))
             (otherwise (%type-matches-p object type))))))
