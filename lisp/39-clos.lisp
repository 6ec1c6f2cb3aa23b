;;; SPDX-License-Identifier: Apache-2.0
;;; CLOS, as in Common Lisp (issue 25). defclass: slots with :initarg, :initform, :reader,
;;; :writer, :accessor, :allocation (:instance or :class) and :documentation; the class options
;;; :default-initargs and :documentation; several superclasses, ordered as Common Lisp orders
;;; them. make-instance runs initialize-instance, then shared-initialize. slot-value (setf-able),
;;; slot-boundp, slot-makunbound, slot-exists-p, with-slots, with-accessors. defgeneric and
;;; defmethod dispatch on every required argument, by class (built-in classes, defstruct types
;;; and defclass classes) or (eql VALUE); the standard method combination: :around, :before,
;;; primary and :after methods, call-next-method and next-method-p. The printer calls
;;; print-object for instances. Not there: the metaobject protocol (beyond class-of,
;;; find-class, class-name and class-precedence-list), change-class, other method combinations;
;;; instances made before a class is redefined keep their old slots.
;;;
;;; An instance is a structure instance (builtins_struct.cpp) whose type descriptor is
;;; #(NAME SLOT-NAMES nil CLASS): the names of its own slots, in the order they are stored, and
;;; its class. Classes are such instances too, of the class standard-class.

(defvar %unbound-slot (gensym "unbound")
  "What an unbound slot holds.")
(defvar %clos-epoch 0
  "Counts changes to classes and methods: a generic function's dispatch cache is good for one.")

;;; Classes.

(defvar %class-slot-names
  '(name direct-superclasses direct-slots slots precedence descriptor kind default-initargs
    documentation direct-subclasses class-cells valid-initargs))
(defvar %metaclass-layout (vector 'standard-class %class-slot-names nil nil)
  "The type descriptor of class metaobjects; its class is set below, once standard-class exists.")

(defmacro %define-class-accessors ()
  (let ((i -1) (forms nil))
    (dolist (slot %class-slot-names)
      (setq i (+ i 1))
      (let ((reader (intern (concat "%class-" (symbol-name slot)))))
        (push `(defun ,reader (c) (%struct-ref c %metaclass-layout ,i ',reader)) forms)
        (push `(defsetf ,reader (c) (v) (list '%struct-set c '%metaclass-layout ,i v '',reader)) forms)))
    `(progn ,@(nreverse forms))))
(%define-class-accessors)

(defun %new-class (name kind supers)
  (let ((c (apply #'%make-struct %metaclass-layout (make-list (length %class-slot-names)))))
    (setf (%class-name c) name (%class-kind c) kind (%class-direct-superclasses c) supers)
    (dolist (s supers) (push c (%class-direct-subclasses s)))
    c))

(defun %class-object-p (x)
  (and (%struct-descriptor x) (eq (%struct-descriptor x) %metaclass-layout)))

(defun %linearize (c)
  "(%linearize C) is C's class precedence list, computed as Common Lisp does: a topological
sort of C and its superclasses under each class's local precedence order (a class before its
direct superclasses, those in the order given), ties broken toward the class with a direct
subclass nearest the end of the list so far."
  (let ((all (list c)) (todo (list c)) (pairs nil))
    (do () ((null todo))
      (let ((x (pop todo)))
        (dolist (s (%class-direct-superclasses x))
          (unless (member s all :test #'eq) (setq all (append all (list s))) (setq todo (append todo (list s)))))))
    (dolist (x all)
      (let ((prev x))
        (dolist (s (%class-direct-superclasses x))
          (push (cons prev s) pairs)
          (setq prev s))))
    (let ((result nil) (remaining all))
      (do () ((null remaining))
        (let ((candidates
                (remove-if (lambda (x)
                             (some (lambda (p) (and (eq (cdr p) x) (member (car p) remaining :test #'eq))) pairs))
                           remaining)))
          (when (null candidates)
            (error 'program-error "defclass ~a: its superclasses ~s cannot be ordered (their precedences conflict)"
                   (%class-name c) (mapcar #'%class-name remaining)))
          (let ((next (car candidates)))
            (when (cdr candidates)
              (dolist (r result)  ; most recently added first
                (let ((hit (find-if (lambda (x) (member x (%class-direct-superclasses r) :test #'eq)) candidates)))
                  (when hit (setq next hit) (return)))))
            (push next result)
            (setq remaining (remove next remaining :test #'eq)))))
      (nreverse result))))

(defun %builtin-class (name supers)
  ;; The metaclasses and standard-object are classes of standard-class, as in Common Lisp, but
  ;; make-instance makes none of them.
  (let ((c (%new-class name (if (member name '(standard-object class built-in-class standard-class structure-class))
                                :meta :built-in)
                       (mapcar #'find-class supers))))
    (setf (%class-precedence c) (%linearize c))
    (setf (%class-descriptor c) nil)
    (setf (get name '%class) c)
    c))

(defun find-class (name &optional (errorp t) environment)
  "(find-class NAME [ERRORP]) is the class named NAME (a defclass class, a built-in class such
as integer or string, or a defstruct type), or, when there is none, an error (nil if ERRORP is
nil).
  (class-name (find-class 'integer))  ; => integer"
  (or (and (symbolp name) (get name '%class))
      (%struct-class name)
      (when errorp (error 'program-error "find-class: no class named ~s" name))))

(defun %struct-class (name)
  ;; The class of a defstruct type, made when first asked for: its superclass is the type it
  ;; includes, or structure-object.
  (let ((info (%struct-info name)))
    (when info
      (let* ((parent (aref (car info) 2))
             (c (%new-class name :structure
                            (list (if parent (%struct-class (aref parent 0)) (find-class 'structure-object))))))
        (setf (%class-precedence c) (%linearize c))
        (setf (get name '%class) c)
        c))))

(dolist (spec '((t) (standard-object t) (structure-object t) (number t) (real number) (integer real)
                (float real) (character t) (symbol t) (sequence t) (list sequence) (cons list)
                (null symbol list) (keyword symbol) (array t) (vector array sequence) (string vector)
                (hash-table t) (function t) (macro t) (condition t) (tensor t) (environment t)
                (class standard-object) (built-in-class class) (standard-class class)
                (structure-class class)))
  (%builtin-class (car spec) (cdr spec)))
(setf (aref %metaclass-layout 3) (find-class 'standard-class))

(defun class-of (object)
  "(class-of OBJECT) is OBJECT's class.
  (class-name (class-of 1.5))  ; => float"
  (let ((d (%struct-descriptor object)))
    (cond ((null d) (or (and (not (conditionp object)) (get (type-of object) '%class))
                        (if (conditionp object) (find-class 'condition) (find-class t))))
          ((eq d %metaclass-layout)
           (find-class (case (%class-kind object) ((:standard :meta) 'standard-class) (:structure 'structure-class)
                         (t 'built-in-class))))
          ((= (length d) 4) (aref d 3))
          (t (or (get (aref d 0) '%class) (%struct-class (aref d 0)) (find-class 'structure-object))))))

(defun class-name (class)
  "(class-name CLASS) is the name of the class CLASS.
  (class-name (find-class 'string))  ; => string"
  (unless (%class-object-p class) (error 'type-error "class-name: argument 1 must be a class, got ~s" class))
  (%class-name class))

(defun class-precedence-list (class)
  "(class-precedence-list CLASS) is CLASS, then its superclasses, most specific first.
  (mapcar #'class-name (class-precedence-list (find-class 'integer)))  ; => (integer real number t)"
  (unless (%class-object-p class) (error 'type-error "class-precedence-list: argument 1 must be a class, got ~s" class))
  (%class-precedence class))

(defun subclassp (class other)
  "(subclassp CLASS OTHER) is true when CLASS is OTHER or one of its subclasses.
  (subclassp (find-class 'integer) (find-class 'number))  ; => t"
  (and (member other (%class-precedence class) :test #'eq) t))

;;; defclass.

(defun %slot-spec (class-name spec)
  ;; SPEC as written in defclass -> (NAME . PLIST) with :initargs, :initform-p, :readers,
  ;; :writers, :allocation and :documentation; :initfunction is added by defclass's expansion.
  (cond ((and spec (symbolp spec)) (%slot-spec class-name (list spec)))
        ((and (consp spec) (car spec) (symbolp (car spec)))
         (let ((initargs nil) (readers nil) (writers nil) (initform-p nil) (allocation :instance) (doc nil)
               (options (cdr spec)))
           (do () ((null options))
             (unless (cdr options)
               (error 'program-error "defclass ~a: slot ~a: option ~s has no value" class-name (car spec) (car options)))
             (let ((key (car options)) (value (cadr options)))
               (case key
                 (:initarg (push value initargs))
                 (:initform (when initform-p
                              (error 'program-error "defclass ~a: slot ~a has two :initform options" class-name (car spec)))
                            (setq initform-p t))
                 (:reader (push value readers))
                 (:writer (push value writers))
                 (:accessor (push value readers) (push (list 'setf value) writers))
                 (:allocation (unless (member value '(:instance :class))
                                (error 'program-error "defclass ~a: slot ~a: :allocation is :instance or :class, got ~s"
                                       class-name (car spec) value))
                              (setq allocation value))
                 (:documentation (setq doc value))
                 (:type nil)
                 (otherwise (error 'program-error "defclass ~a: slot ~a: unknown slot option ~s" class-name (car spec) key))))
             (setq options (cddr options)))
           (list (car spec) :initargs (nreverse initargs) :initform-p initform-p :readers (nreverse readers)
                 :writers (nreverse writers) :allocation allocation :documentation doc)))
        (t (error 'program-error "defclass ~a: a slot is NAME or (NAME OPTION...), got ~s" class-name spec))))

(defmacro defclass (name supers slots &rest options)
  "(defclass NAME (SUPERCLASS...) (SLOT...) OPTION...) defines the class NAME. A SLOT is NAME or
(NAME [:initarg KEY]... [:initform FORM] [:reader F]... [:writer F]... [:accessor F]...
[:allocation :instance|:class] [:documentation STRING]); OPTIONs are (:default-initargs KEY
FORM...) and (:documentation STRING). Redefining a class keeps its methods; instances made
before keep their old slots.
  (progn (defclass doc-ex-point () ((x :initarg :x :initform 0 :accessor doc-ex-point-x)))
    (doc-ex-point-x (make-instance 'doc-ex-point :x 3)))  ; => 3"
  (unless (and name (symbolp name)) (error 'program-error "defclass: the name must be a symbol, got ~s" name))
  (unless (listp supers) (error 'program-error "defclass ~a: the superclasses must be a list, got ~s" name supers))
  (unless (listp slots) (error 'program-error "defclass ~a: the slots must be a list, got ~s" name slots))
  (let ((specs (mapcar (lambda (s) (%slot-spec name s)) slots))
        (defaults nil) (doc nil))
    (dolist (option options)
      (unless (consp option) (error 'program-error "defclass ~a: a class option is a list, got ~s" name option))
      (case (car option)
        (:default-initargs
         (do ((rest (cdr option) (cddr rest))) ((null rest))
           (push `(list ',(car rest) (lambda () ,(cadr rest))) defaults)))
        (:documentation (setq doc (cadr option)))
        (:metaclass nil)
        (otherwise (error 'program-error "defclass ~a: unknown class option ~s" name (car option)))))
    `(%ensure-class ',name ',supers
                    (list ,@(mapcar (lambda (spec slot)
                                      `(list* ',(car spec) :initfunction
                                              ,(if (getf (cdr spec) :initform-p)
                                                   `(lambda () ,(getf (cdr slot) :initform))
                                                   nil)
                                              ',(cdr spec)))
                                    specs slots))
                    (list ,@(nreverse defaults))
                    ,doc)))

(defun %ensure-class (name super-names direct-slots default-initargs doc)
  (let ((supers (mapcar (lambda (s)
                          (or (find-class s nil)
                              (error 'program-error "defclass ~a: no class named ~s (define a superclass first)" name s)))
                        (or super-names '(standard-object))))
        (old (get name '%class)))
    (let ((names (mapcar #'car direct-slots)))
      (dolist (n names)
        (when (> (count n names) 1) (error 'program-error "defclass ~a: two slots named ~a" name n))))
    (when (and old (not (eq (%class-kind old) :standard)))
      (error 'program-error "defclass ~a: ~a is a built-in class or a structure type" name name))
    (let ((c (or old (%new-class name :standard supers))))
      (when old
        (dolist (s (%class-direct-superclasses old))
          (setf (%class-direct-subclasses s) (remove old (%class-direct-subclasses s) :test #'eq)))
        (setf (%class-direct-superclasses c) supers)
        (dolist (s supers) (push c (%class-direct-subclasses s))))
      (setf (%class-direct-slots c) direct-slots
            (%class-default-initargs c) default-initargs
            (%class-documentation c) doc)
      (when (member c (%linearize-supers c) :test #'eq)
        (error 'program-error "defclass ~a: a class cannot be its own superclass" name))
      (setf (get name '%class) c)
      (%finalize c)
      (dolist (slot direct-slots)
        (dolist (reader (getf (cdr slot) :readers)) (%add-reader reader c (car slot)))
        (dolist (writer (getf (cdr slot) :writers)) (%add-writer writer c (car slot))))
      (setq %clos-epoch (+ %clos-epoch 1))
      c)))

(defun %linearize-supers (c)
  ;; Every class above C, C itself only when a cycle leads back to it.
  (let ((seen nil) (todo (copy-list (%class-direct-superclasses c))))
    (do () ((null todo) seen)
      (let ((x (pop todo)))
        (unless (member x seen :test #'eq)
          (push x seen)
          (setq todo (append (%class-direct-superclasses x) todo)))))))

(defun %finalize (c)
  ;; The precedence list, the effective slots, the layout of new instances; then the same
  ;; for the subclasses, which inherit from C.
  (setf (%class-precedence c) (%linearize c))
  (let ((slots nil))
    (dolist (k (reverse (%class-precedence c)))
      (dolist (spec (%class-direct-slots k))
        (unless (assoc (car spec) slots) (setq slots (append slots (list (list (car spec))))))))
    (setq slots
          (mapcar (lambda (entry)
                    (let* ((name (car entry))
                           (defs (remove nil (mapcar (lambda (k) (assoc name (%class-direct-slots k)))
                                                     (%class-precedence c))))
                           (owner (find-if (lambda (k) (assoc name (%class-direct-slots k))) (%class-precedence c)))
                           (initfn-def (find-if (lambda (d) (getf (cdr d) :initform-p)) defs))
                           (allocation (getf (cdr (car defs)) :allocation)))
                      (list name
                            (remove-duplicates (apply #'append (mapcar (lambda (d) (getf (cdr d) :initargs)) defs)))
                            (and initfn-def (getf (cdr initfn-def) :initfunction))
                            allocation
                            (when (eq allocation :class) (%class-cell owner name (car defs))))))
                  slots))
    (setf (%class-slots c) slots)
    (setf (%class-descriptor c)
          (vector (%class-name c)
                  (mapcar #'car (remove-if-not (lambda (s) (eq (nth 3 s) :instance)) slots))
                  nil c)))
  (dolist (sub (%class-direct-subclasses c)) (%finalize sub)))

(defun %class-cell (owner name def)
  ;; The cell of OWNER's shared slot NAME, made (and initialized) the first time.
  (or (cdr (assoc name (%class-class-cells owner)))
      (let ((cell (list (let ((fn (getf (cdr def) :initfunction))) (if fn (funcall fn) %unbound-slot)))))
        (push (cons name cell) (%class-class-cells owner))
        cell)))

;;; Slots.

(define-condition unbound-slot (cell-error)
  ((instance :initarg :instance :reader unbound-slot-instance))
  (:report (lambda (c stream)
             (format stream "the slot ~a of ~s is unbound" (cell-error-name c) (unbound-slot-instance c)))))

(defun %slot-missing (object name operation)
  (error 'program-error "~a: ~s has no slot named ~a" operation object name))

(defun %slot-place (object name operation)
  ;; (INSTANCE-DESCRIPTOR . INDEX) for an instance slot, (nil . CELL) for a shared one.
  (let ((d (%struct-descriptor object)))
    (unless d (error 'type-error "~a: ~s is not an instance of a class or structure" operation object))
    (let ((i (position name (aref d 1) :test #'eq)))
      (if i
          (cons d i)
          (let ((c (and (= (length d) 4) (aref d 3))))
            (let ((slot (and c (assoc name (%class-slots c)))))
              (if (and slot (nth 4 slot))
                  (cons nil (nth 4 slot))
                  (%slot-missing object name operation))))))))

(defun slot-value (object slot-name)
  "(slot-value OBJECT SLOT-NAME) is the value of OBJECT's slot SLOT-NAME (setf-able): an
unbound-slot error when it has none.
  (progn (defclass doc-ex-box () ((v :initarg :v)))
    (slot-value (make-instance 'doc-ex-box :v 7) 'v))  ; => 7"
  (let* ((d (%struct-descriptor object))
         (i (and d (position slot-name (aref d 1))))
         (v (if i
                (%struct-ref object d i 'slot-value)
                (let ((place (%slot-place object slot-name 'slot-value)))
                  (if (car place) (%struct-ref object (car place) (cdr place) 'slot-value) (car (cdr place)))))))
    (if (eq v %unbound-slot)
        (error 'unbound-slot :name slot-name :instance object)
        v)))

(defun %set-slot-value (object slot-name value)
  (let* ((d (%struct-descriptor object))
         (i (and d (position slot-name (aref d 1)))))
    (if i
        (%struct-set object d i value 'slot-value)
        (let ((place (%slot-place object slot-name 'slot-value)))
          (if (car place)
              (%struct-set object (car place) (cdr place) value 'slot-value)
              (setf (car (cdr place)) value))))
    value))
(defsetf slot-value (object slot-name) (value) `(,#'%set-slot-value ,object ,slot-name ,value))

(defun slot-boundp (object slot-name)
  "(slot-boundp OBJECT SLOT-NAME) is true when OBJECT's slot SLOT-NAME has a value.
  (progn (defclass doc-ex-maybe () (v)) (slot-boundp (make-instance 'doc-ex-maybe) 'v))  ; => nil"
  (let ((place (%slot-place object slot-name 'slot-boundp)))
    (not (eq (if (car place) (%struct-ref object (car place) (cdr place) 'slot-boundp) (car (cdr place)))
             %unbound-slot))))

(defun slot-makunbound (object slot-name)
  "(slot-makunbound OBJECT SLOT-NAME) unbinds OBJECT's slot SLOT-NAME and returns OBJECT.
  (progn (defclass doc-ex-cell () ((v :initarg :v)))
    (slot-boundp (slot-makunbound (make-instance 'doc-ex-cell :v 1) 'v) 'v))  ; => nil"
  (%set-slot-value object slot-name %unbound-slot)
  object)

(defun slot-exists-p (object slot-name)
  "(slot-exists-p OBJECT SLOT-NAME) is true when OBJECT has a slot named SLOT-NAME.
  (slot-exists-p 5 'x)  ; => nil"
  (let ((d (%struct-descriptor object)))
    (and d (or (member slot-name (aref d 1) :test #'eq)
               (and (= (length d) 4) (assoc slot-name (%class-slots (aref d 3)))))
         t)))

(defmacro with-slots (slots instance &body body)
  "(with-slots (SLOT | (VAR SLOT)...) INSTANCE BODY...) evaluates BODY with each VAR standing for
(slot-value INSTANCE 'SLOT), setf-able.
  (progn (defclass doc-ex-pair () ((a :initarg :a) (b :initarg :b)))
    (with-slots (a (second b)) (make-instance 'doc-ex-pair :a 1 :b 2) (list a second)))  ; => (1 2)"
  (let ((object (gensym "instance")))
    `(let ((,object ,instance))
       (symbol-macrolet ,(mapcar (lambda (s)
                                   (if (consp s)
                                       `(,(car s) (slot-value ,object ',(cadr s)))
                                       `(,s (slot-value ,object ',s))))
                                 slots)
         ,@body))))

(defmacro with-accessors (bindings instance &body body)
  "(with-accessors ((VAR ACCESSOR)...) INSTANCE BODY...) evaluates BODY with each VAR standing
for (ACCESSOR INSTANCE), setf-able.
  (progn (defclass doc-ex-acc () ((n :initarg :n :accessor doc-ex-acc-n)))
    (let ((x (make-instance 'doc-ex-acc :n 1)))
      (with-accessors ((n doc-ex-acc-n)) x (setf n (+ n 41)))
      (doc-ex-acc-n x)))  ; => 42"
  (let ((object (gensym "instance")))
    `(let ((,object ,instance))
       (symbol-macrolet ,(mapcar (lambda (b) `(,(car b) (,(cadr b) ,object))) bindings)
         ,@body))))

;;; Generic functions.

(defstruct (%gf (:constructor %make-gf (name lambda-list)) (:copier nil))
  name lambda-list (nreq nil) (methods nil) (cache (make-hash-table :test 'equal))
  (cache1 (make-hash-table :test 'eq)) (epoch -1) (documentation nil) (eql-p nil))
(defstruct (%method (:constructor %make-method (qualifiers specializers function keys direct)) (:copier nil))
  qualifiers specializers function keys direct)

(defun %function-name (name)
  ;; The symbol that holds the function NAME: NAME, or for (setf NAME) the symbol |(setf NAME)|,
  ;; which setf calls.
  (cond ((symbolp name) name)
        ((and (consp name) (eq (car name) 'setf) (consp (cdr name)) (symbolp (cadr name)) (null (cddr name)))
         (let ((sym (intern (concat "(setf " (symbol-name (cadr name)) ")"))))
           (unless (gethash (cadr name) *setf-expanders*)
             (puthash (cadr name)
                      (lambda (value &rest args) `(,sym ,value ,@args))
                      *setf-expanders*))
           sym))
        (t (error 'program-error "not a function name: ~s" name))))

(defun %required-count (lambda-list)
  (let ((n 0))
    (dolist (p lambda-list n)
      (when (member p '(&optional &rest &key &aux &body &allow-other-keys)) (return n))
      (setq n (+ n 1)))))

(defun %ensure-generic (name lambda-list doc)
  (let* ((sym (%function-name name))
         (gf (get sym '%generic)))
    (unless gf
      (when (and (fboundp sym) (not (get sym '%generic)))
        (when (macrop (symbol-function sym))
          (error 'program-error "defgeneric ~a: ~a is a macro" name name)))
      (setq gf (%make-gf name lambda-list))
      (setf (get sym '%generic) gf)
      ;; A function named NAME (as it prints) that dispatches. The common case, one required
      ;; argument and no (eql VALUE) methods, finds the effective method in the class cache
      ;; inline; everything else goes through %gf-call.
      (%define-function
       sym (eval `(let ((gf ',gf) (cache1 ',(%gf-cache1 gf)))
                    (named-lambda ,sym (&rest args)
                      ,@(when doc (list doc))
                      (let ((emf (and args (eql (%gf-epoch gf) %clos-epoch) (gethash (class-of (car args)) cache1))))
                        (if emf (apply emf args) (%gf-call gf args))))))))
    (when lambda-list
      (setf (%gf-lambda-list gf) lambda-list (%gf-nreq gf) (%required-count lambda-list)))
    (when doc (setf (%gf-documentation gf) doc))
    gf))

(defmacro defgeneric (name lambda-list &rest options)
  "(defgeneric NAME LAMBDA-LIST OPTION...) defines a generic function: its methods
(defmethod, or (:method ...) options) are chosen by the classes of the required arguments.
Options: (:documentation STRING), (:method [QUALIFIER] SPECIALIZED-LAMBDA-LIST BODY...).
  (progn (defgeneric doc-ex-area (shape) (:method ((s integer)) (* s s)))
    (doc-ex-area 3))  ; => 9"
  (let ((doc nil) (methods nil))
    (dolist (option options)
      (case (car option)
        (:documentation (setq doc (cadr option)))
        (:method (push `(defmethod ,name ,@(cdr option)) methods))
        ((:method-combination :argument-precedence-order :generic-function-class :method-class)
         (unless (equal option '(:method-combination standard))
           (error 'program-error "defgeneric ~a: the option ~s is not supported" name (car option))))
        (declare nil)
        (otherwise (error 'program-error "defgeneric ~a: unknown option ~s" name option))))
    `(progn (,#'%ensure-generic ',name ',lambda-list ,doc)
            ,@(nreverse methods)
            (symbol-function ',(%function-name name)))))

(defun %method-lambda-list (name specialized)
  ;; (PLAIN-LAMBDA-LIST SPECIALIZER-FORMS KEYS): the required parameters' specializers as forms
  ;; (a class name, or (eql FORM)), and the keywords the method accepts (t for any).
  (let ((plain nil) (specs nil) (required t) (keys nil) (in-keys nil))
    (dolist (p specialized)
      (cond ((member p '(&optional &rest &key &aux &body &allow-other-keys))
             (setq required nil in-keys (eq p '&key))
             (when (member p '(&rest &body &allow-other-keys)) (setq keys t))
             (when (eq p '&aux) (setq in-keys nil))
             (push p plain))
            (required
             (cond ((symbolp p) (push p plain) (push ''t specs))
                   ((and (consp p) (symbolp (car p)) (consp (cdr p)) (null (cddr p)))
                    (push (car p) plain)
                    (let ((s (cadr p)))
                      (push (cond ((symbolp s) `',s)
                                  ((and (consp s) (eq (car s) 'eql)) `(list 'eql ,(cadr s)))
                                  (t (error 'program-error "defmethod ~a: unknown specializer ~s" name s)))
                            specs)))
                   (t (error 'program-error "defmethod ~a: a required parameter is VAR or (VAR CLASS), got ~s" name p))))
            (t (push p plain)
               (when (and in-keys (not (eq keys t)))
                 (let ((var (if (consp p) (car p) p)))
                   (push (if (consp var) (car var) (intern (concat ":" (symbol-name var)))) keys))))))
    (list (nreverse plain) (nreverse specs) keys)))

(defmacro defmethod (name &rest rest)
  "(defmethod NAME [QUALIFIER] SPECIALIZED-LAMBDA-LIST BODY...) adds a method to the generic
function NAME (defining it if needed). Required parameters are VAR or (VAR CLASS) or
(VAR (eql FORM)); QUALIFIER is :before, :after or :around. In BODY, (call-next-method [ARG...])
calls the next method and (next-method-p) says whether there is one.
  (progn (defmethod doc-ex-describe ((x number)) (list :number x))
    (defmethod doc-ex-describe ((x integer)) (cons :integer (call-next-method)))
    (doc-ex-describe 3))  ; => (:integer :number 3)"
  (let ((qualifiers nil))
    (do () ((not (and rest (car rest) (symbolp (car rest)))))
      (push (pop rest) qualifiers))
    (setq qualifiers (nreverse qualifiers))
    (unless (member qualifiers '(nil (:before) (:after) (:around)) :test #'equal)
      (error 'program-error "defmethod ~a: unsupported qualifiers ~s (the standard method combination has :before, :after and :around)"
             name qualifiers))
    (unless (and rest (listp (car rest)))
      (error 'program-error "defmethod ~a: expected a specialized lambda list, got ~s" name (car rest)))
    (let* ((parts (%method-lambda-list name (car rest)))
           (plain (car parts))
           (body (cdr rest))
           (block-name (if (consp name) (cadr name) name))
           (plain (if (and (member '&key plain) (not (member '&allow-other-keys plain)))
                      (let ((aux (member '&aux plain)))
                        (append (ldiff plain aux) '(&allow-other-keys) aux))
                      plain)))
      (when (and (stringp (car body)) (cdr body)) (setq body (cdr body)))
      (if (or (%mentions-p 'call-next-method body) (%mentions-p 'next-method-p body))
          `(,#'%add-method ',name ',(car rest) ',qualifiers (list ,@(cadr parts)) ',(caddr parts)
                           (named-lambda ,block-name (%args %next)
                             (let ((call-next-method
                                     (lambda (&rest cnm-args) (,#'%call-next %next (if cnm-args cnm-args %args))))
                                   (next-method-p (lambda () (not (null %next)))))
                               (apply (named-lambda ,block-name ,plain ,@body) %args)))
                           nil)
          ;; Without call-next-method the method's own function is made once, and a generic
          ;; function whose only applicable method it is calls it directly.
          `(let ((method (named-lambda ,block-name ,plain ,@body)))
             (,#'%add-method ',name ',(car rest) ',qualifiers (list ,@(cadr parts)) ',(caddr parts)
                             (lambda (%args %next) (apply method %args))
                             method))))))

(defun %mentions-p (symbol tree)
  (cond ((eq tree symbol) t)
        ((consp tree) (or (%mentions-p symbol (car tree)) (%mentions-p symbol (cdr tree))))
        (t nil)))

(defun %add-method (name lambda-list qualifiers specializer-names keys function &optional direct)
  ;; FUNCTION takes the arguments as a list and the next methods; DIRECT, when given, is the
  ;; same method as a plain function of the arguments (it calls no next method).
  (let* ((gf (%ensure-generic name nil nil))
         (specializers (mapcar (lambda (s)
                                 (if (consp s)
                                     s
                                     (or (find-class s nil)
                                         (error 'program-error "defmethod ~a: no class named ~s" name s))))
                               specializer-names)))
    (unless (%gf-lambda-list gf)
      (setf (%gf-lambda-list gf) (mapcar (lambda (p) (if (consp p) (car p) p)) lambda-list))
      (setf (%gf-nreq gf) (%required-count (%gf-lambda-list gf))))
    (let ((n (%gf-nreq gf)))
      (unless (= n (length specializers))
        (error 'program-error "defmethod ~a: ~a required parameters, but the generic function has ~a"
               name (length specializers) n)))
    (let ((m (%make-method qualifiers specializers function keys direct)))
      (setf (%gf-methods gf)
            (cons m (remove-if (lambda (old) (and (equal (%method-qualifiers old) qualifiers)
                                                  (every #'%same-specializer (%method-specializers old) specializers)))
                               (%gf-methods gf))))
      (when (some #'consp specializers) (setf (%gf-eql-p gf) t))
      (setq %clos-epoch (+ %clos-epoch 1))
      m)))

(defun %same-specializer (a b)
  (if (consp a) (and (consp b) (eql (cadr a) (cadr b))) (eq a b)))

(defun %call-next (next args)
  (if next
      (funcall (car next) args (cdr next))
      (error 'program-error "call-next-method: no next method (arguments ~s)" args)))

(defun %gf-call (gf args)
  ;; The effective method (a function of the arguments) for the classes of the required
  ;; arguments comes from a cache: keyed by the class itself for one required argument (the
  ;; dispatcher looks there first), by the list of classes for more; a generic function with
  ;; (eql VALUE) methods computes it for each call.
  (let ((n (%gf-nreq gf)))
    (unless (eql (%gf-epoch gf) %clos-epoch)
      (clrhash (%gf-cache gf))
      (clrhash (%gf-cache1 gf))
      (setf (%gf-epoch gf) %clos-epoch))
    (if (and (eql n 1) args (not (%gf-eql-p gf)))
        (let ((c (class-of (car args))))
          (apply (or (gethash c (%gf-cache1 gf))
                     (puthash c (%effective-method gf args (list c)) (%gf-cache1 gf)))
                 args))
        (let ((classes (let ((out nil) (rest args))
                         (dotimes (i n (nreverse out))
                           (unless rest
                             (error 'program-error "~a: expected at least ~a argument~:p, got ~a"
                                    (%gf-name gf) n (length args)))
                           (push (class-of (car rest)) out)
                           (setq rest (cdr rest))))))
          (apply (if (%gf-eql-p gf)
                     (%effective-method gf args classes)
                     (or (gethash classes (%gf-cache gf))
                         (puthash classes (%effective-method gf args classes) (%gf-cache gf))))
                 args)))))

(defun %applicable-p (m args classes)
  (let ((ok t))
    (dolist (s (%method-specializers m) ok)
      (unless (if (consp s)
                  (eql (car args) (cadr s))
                  (member s (%class-precedence (car classes)) :test #'eq))
        (setq ok nil)
        (return nil))
      (setq args (cdr args) classes (cdr classes)))))

(defun %more-specific-p (a b classes)
  ;; Whether method A is more specific than B for arguments of CLASSES, leftmost argument first.
  (let ((result nil))
    (do ((sa (%method-specializers a) (cdr sa))
         (sb (%method-specializers b) (cdr sb))
         (cs classes (cdr cs)))
        ((null sa) result)
      (let ((x (car sa)) (y (car sb)))
        (unless (%same-specializer x y)
          (setq result (cond ((consp x) t)
                             ((consp y) nil)
                             (t (< (position x (%class-precedence (car cs)) :test #'eq)
                                   (position y (%class-precedence (car cs)) :test #'eq)))))
          (return result))))))

(defun %effective-method (gf args classes)
  (let* ((applicable (sort (remove-if-not (lambda (m) (%applicable-p m args classes)) (%gf-methods gf))
                           (lambda (a b) (%more-specific-p a b classes))))
         (of (lambda (q) (mapcar #'%method-function
                                 (remove-if-not (lambda (m) (equal (%method-qualifiers m) q)) applicable))))
         (primary (funcall of nil))
         (before (funcall of '(:before)))
         (after (reverse (funcall of '(:after))))
         (around (funcall of '(:around))))
    (cond
      ((null primary) (lambda (&rest args) (no-applicable-method gf args)))
      ((and (null around) (null before) (null after)
            (%method-direct (find (car primary) applicable :key #'%method-function))))
      (t
        (let ((chain (append around
                             (if (or before after)
                                 (list (lambda (args next)
                                         (dolist (f before) (funcall f args nil))
                                         (multiple-value-prog1 (funcall (car primary) args (cdr primary))
                                           (dolist (f after) (funcall f args nil)))))
                                 primary))))
          (lambda (&rest args) (funcall (car chain) args (cdr chain))))))))

(defun no-applicable-method (gf args)
  "(no-applicable-method GF ARGS) signals the error of a call of GF with ARGS that no method
fits (called by the generic function)."
  (error 'program-error "~a: no method applies to the arguments ~s (of classes ~s)"
         (%gf-name gf) args (mapcar (lambda (x) (class-name (class-of x))) args)))

(defun %add-reader (reader class slot)
  (%add-method reader '(object) nil (list (%class-name class)) nil
               (named-lambda reader (args next) (slot-value (car args) slot))
               (named-lambda reader (object) (slot-value object slot))))

(defun %add-writer (writer class slot)
  (%add-method writer '(value object) nil (list 't (%class-name class)) nil
               (named-lambda writer (args next) (%set-slot-value (cadr args) slot (car args)))
               (named-lambda writer (value object) (%set-slot-value object slot value))))

;;; Making instances.

(defun allocate-instance (class &rest initargs)
  "(allocate-instance CLASS) is a new instance of CLASS with every slot unbound.
  (progn (defclass doc-ex-raw () ((v :initform 1)))
    (slot-boundp (allocate-instance (find-class 'doc-ex-raw)) 'v))  ; => nil"
  (let ((d (%class-descriptor class)))
    (apply #'%make-struct d (make-list (length (aref d 1)) :initial-element %unbound-slot))))

(defun make-instance (class &rest initargs)
  "(make-instance CLASS INITARG VALUE...) makes an instance of CLASS (a class or its name): each
slot gets the value of one of its initargs, else its :initform; then initialize-instance
runs (add :after methods to it to do more).
  (progn (defclass doc-ex-dog () ((name :initarg :name :reader doc-ex-dog-name)))
    (doc-ex-dog-name (make-instance 'doc-ex-dog :name \"rex\")))  ; => \"rex\""
  (let ((c (if (symbolp class) (find-class class) class)))
    (unless (and (%class-object-p c) (eq (%class-kind c) :standard))
      (error 'type-error "make-instance: ~s is not a class defined by defclass" class))
    (when (oddp (length initargs))
      (error 'program-error "make-instance ~a: the initargs must come in pairs, got ~s" (%class-name c) initargs))
    (let* ((info (%init-info c))
           (all initargs))
      ;; :default-initargs of the class and its superclasses, for the initargs not given.
      (dolist (d (nth 3 info))
        (unless (%getf-p all (car d)) (setq all (append all (list (car d) (funcall (cadr d)))))))
      (%check-initargs c all info)
      (let ((instance (allocate-instance c)))
        (if (nth 2 info)
            (%initialize-slots instance (nth 2 info) all)
            (apply #'initialize-instance instance all))
        instance))))

(defun %getf-p (plist key)
  (do ((p plist (cddr p))) ((null p) nil) (when (eq (car p) key) (return t))))

(defun %init-info (c)
  ;; (ANY VALID PLAN DEFAULTS) for making instances of C, cached until a class or method
  ;; changes: whether any initarg is taken (an initialize-instance or shared-initialize method
  ;; with &rest or &allow-other-keys applies), the initargs taken otherwise, the default
  ;; :default-initargs as (KEY THUNK) most specific first, and, when no such method of the
  ;; program's applies (only the standard ones), how to fill the slots without calling them:
  ;; (INDEX-OR-NIL INITARGS INITFUNCTION CELL) per slot.
  (let ((cached (%class-valid-initargs c)))
    (if (and cached (eql (car cached) %clos-epoch))
        (cdr cached)
        (let ((valid (apply #'append (mapcar #'cadr (%class-slots c))))
              (any nil) (own-methods nil) (defaults nil)
              (names (aref (%class-descriptor c) 1)))
          (dolist (gf-name '(initialize-instance shared-initialize))
            (dolist (m (%gf-methods (get gf-name '%generic)))
              (let ((s (car (%method-specializers m))))
                (when (and (not (consp s)) (not (eq s (find-class 'standard-object)))
                           (member s (%class-precedence c) :test #'eq))
                  (setq own-methods t)
                  (if (eq (%method-keys m) t)
                      (setq any t)
                      (setq valid (append (%method-keys m) valid)))))))
          (dolist (k (%class-precedence c))
            (when (eq (%class-kind k) :standard)
              (dolist (d (%class-default-initargs k))
                (unless (assoc (car d) defaults) (setq defaults (append defaults (list d)))))))
          (let ((info (list any valid
                            (unless own-methods
                              (or (mapcar (lambda (slot)
                                            (list (position (car slot) names) (cadr slot) (caddr slot) (nth 4 slot)))
                                          (%class-slots c))
                                  (list nil)))
                            defaults)))
            (setf (%class-valid-initargs c) (cons %clos-epoch info))
            info)))))

(defun %initialize-slots (instance plan initargs)
  ;; What the standard initialize-instance does to a new instance, by PLAN (%init-info).
  (let ((d (%struct-descriptor instance)))
    (dolist (p plan instance)
      (when p
        (let ((given (do ((q initargs (cddr q))) ((null q) nil)
                       (when (member (car q) (cadr p)) (return q))))
              (index (car p)))
          (cond ((and given index) (%struct-set instance d index (cadr given) 'make-instance))
                (given (setf (car (nth 3 p)) (cadr given)))
                ((and index (caddr p)) (%struct-set instance d index (funcall (caddr p)) 'make-instance))
                ((and (caddr p) (eq (car (nth 3 p)) %unbound-slot))
                 (setf (car (nth 3 p)) (funcall (caddr p))))))))))

(defun %check-initargs (c initargs info)
  ;; Each initarg must be a slot's initarg or a key of an applicable initialize-instance or
  ;; shared-initialize method (one with &rest or &allow-other-keys takes any).
  (unless (or (null initargs) (car info) (getf initargs :allow-other-keys))
    (do ((p initargs (cddr p))) ((null p))
      (unless (member (car p) (cadr info))
        (error 'program-error "make-instance ~a: unknown initarg ~s (the class's initargs are ~s)"
               (%class-name c) (car p) (remove-duplicates (cadr info)))))))

(defgeneric shared-initialize (instance slot-names &rest initargs)
  (:documentation "Fills INSTANCE's slots from INITARGS, then the unbound ones among SLOT-NAMES (t for all) from their :initform."))
(defmethod shared-initialize ((instance standard-object) slot-names &rest initargs)
  (dolist (slot (%class-slots (class-of instance)) instance)
    (let* ((name (car slot))
           (given (do ((p initargs (cddr p))) ((null p) nil)
                    (when (member (car p) (cadr slot)) (return p)))))
      (cond (given (%set-slot-value instance name (cadr given)))
            ((and (caddr slot) (not (slot-boundp instance name))
                  (or (eq slot-names t) (member name slot-names)))
             (%set-slot-value instance name (funcall (caddr slot))))))))

(defgeneric initialize-instance (instance &rest initargs)
  (:documentation "Initializes a new INSTANCE from make-instance's INITARGS: by default, shared-initialize of every slot."))
(defmethod initialize-instance ((instance standard-object) &rest initargs)
  (apply #'shared-initialize instance t initargs))

(defgeneric reinitialize-instance (instance &rest initargs)
  (:documentation "Sets INSTANCE's slots from INITARGS (no :initform is evaluated again)."))
(defmethod reinitialize-instance ((instance standard-object) &rest initargs)
  (apply #'shared-initialize instance nil initargs))

;;; Printing.

(defmacro print-unreadable-object ((object stream &key type identity) &body body)
  "(print-unreadable-object (OBJECT STREAM [:type T]) BODY...) prints #<, OBJECT's class name
when :type is true, what BODY prints, then >.
  (progn (defclass doc-ex-ship () ((name :initarg :name)))
    (defmethod print-object ((s doc-ex-ship) stream)
      (print-unreadable-object (s stream :type t) (princ (slot-value s 'name) stream)))
    (format nil \"~a\" (make-instance 'doc-ex-ship :name \"argo\")))  ; => \"#<doc-ex-ship argo>\""
  (let ((o (gensym "object")) (s (gensym "stream")))
    `(let ((,o ,object) (,s ,stream))
       (princ "#<" ,s)
       ,@(when type `((princ (class-name (class-of ,o)) ,s) ,@(when body `((princ " " ,s)))))
       ,@body
       (princ ">" ,s)
       nil)))

(defgeneric print-object (object stream)
  (:documentation "Prints OBJECT to STREAM: the printer calls it for instances of classes. Define methods to change how they print."))
(defmethod print-object ((object standard-object) stream)
  (print-unreadable-object (object stream :type t)))
(defmethod print-object ((object class) stream)
  (print-unreadable-object (object stream :type t) (princ (%class-name object) stream)))
(defmethod print-object (object stream)
  (prin1 object stream))

(defvar *%print-object-depth* 0
  "How many print-object calls for instances are under way (printer.cpp calls %print-instance).")

(defun %print-instance (object readably)
  ;; What the printer shows for an instance of a class (printer.cpp), or nil for the plain
  ;; #<CLASS>: when print-objects are nested too deep, as when one fails and its error message
  ;; prints the instance again.
  (when (< *%print-object-depth* 8)
    (let ((*%print-object-depth* (+ *%print-object-depth* 1)))
      (with-output-to-string (s) (print-object object s)))))

;; typep and typecase know classes: an instance (of a class or a structure type) is of its
;; class and of every superclass.
(let ((previous #'%type-matches-p))
  (defun %type-matches-p (value type)
    (let ((c (and (symbolp type) (get type '%class))))
      (if (and c (or (eq (%class-kind c) :standard) (%struct-descriptor value)))
          (and (member c (%class-precedence (class-of value)) :test #'eq) t)
          (funcall previous value type)))))

;; describe shows an instance's class and slots, and a class's superclasses and slots.
(let ((plain #'describe))
  (defun describe (x)
    "(describe X) prints what X is: for a symbol naming a function, its usage and docstring; for
an instance of a class or structure, its class and slots; for a class, its precedence list
and slots.
  (with-output-to-string (s) (describe 42))  ; => \"42 is an integer.\\n\""
    (let ((d (%struct-descriptor x)))
      (cond ((and d (%class-object-p x))
             (format t "~s is a class.~%  precedence: ~{~a~^ ~}~%" x (mapcar #'class-name (%class-precedence x)))
             (when (%class-documentation x) (format t "  documentation: ~a~%" (%class-documentation x)))
             (dolist (slot (%class-slots x))
               (format t "  slot ~a~@[, initargs ~{~s~^ ~}~]~:[~;, shared by all instances~]~%"
                       (car slot) (cadr slot) (eq (nth 3 slot) :class))))
            (d
             (format t "~s is an instance of the class ~a.~%" x (class-name (class-of x)))
             (let ((names (if (= (length d) 4) (mapcar #'car (%class-slots (aref d 3))) (aref d 1))))
               (dolist (name names)
                 (format t "  ~a: ~a~%" name
                         (if (slot-boundp x name) (prin1-to-string (slot-value x name)) "unbound")))))
            (t (funcall plain x))))
    nil))
