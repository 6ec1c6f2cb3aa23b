;;; SPDX-License-Identifier: Apache-2.0
;;; defoptimizer and defoptimizer-set: graph-rewrite rules written in Lisp. The engine that
;;; matches and applies them is src/rewrite/; the built-in rule sets follow in this folder.

(defun %pattern-var-p (x)
  (and (symbolp x) x (string-prefix-p "?" (symbol-name x)) (> (length (symbol-name x)) 1)))

(defun %pattern-vars (form)
  ;; The ?variables of FORM, in order of first appearance.
  (let ((vars nil))
    (labels ((walk (x)
               (cond ((%pattern-var-p x) (unless (member x vars) (setq vars (cons x vars))))
                     ((consp x) (walk (car x)) (walk (cdr x))))))
      (walk form))
    (reverse vars)))

(defun %template-arg (x)
  ;; An op argument in a replacement: a ?variable, a literal (quoted), or a Lisp expression.
  (cond ((%pattern-var-p x) x)
        ((or (numberp x) (stringp x) (keywordp x) (null x) (eq x t)) x)
        ((symbolp x) (list 'quote x))
        ((and (consp x) (symbolp (car x)) (car x)) x)
        (t (list 'quote x))))

(defun %template (x)
  ;; A replacement template as a Lisp expression that builds it: op forms call the prim:*
  ;; builtins (a (const V) takes the dtype and shape of the node replaced unless given), a
  ;; (?f ...) form builds the op bound to ?f, anything else is ordinary Lisp.
  (cond ((atom x) x)
        ((%pattern-var-p (car x)) (cons '%make-op (cons (car x) (mapcar #'%template (cdr x)))))
        ((and (symbolp (car x)) (prim-op-p (car x)))
         (let ((op (car x)) (sig (%op-signature (car x))) (rest (cdr x)) (out nil) (i 0))
           (cond ((eq op 'const)
                  (list 'prim:const (%template-arg (first rest))
                        (if (cdr rest) (%template-arg (second rest)) '(dtype ?root))
                        (if (cddr rest) (%template-arg (third rest)) '(shape ?root))))
                 ((eq op 'extern)
                  (list '%extern-call (first rest) (cons 'list (mapcar #'%template (cdr rest)))))
                 (t
                  (dolist (a rest)
                    (let ((slot (if (< i (length sig)) (subseq sig i (+ i 1)) "A")))
                      (setq out (cons (if (equal slot "S") (%template a) (%template-arg a)) out))
                      (setq i (+ i 1))))
                  (cons (%prim-function-name op) (reverse out))))))
        (t x)))

(defun %check-bound (rule where form vars)
  (dolist (v (%pattern-vars form))
    (unless (or (eq v '?root) (member v vars))
      (error 'optimizer-error "defoptimizer ~a: ~a in the ~a is not bound by the pattern" rule v where))))

(defun %check-heads (rule form)
  ;; The op forms of a replacement template name a primitive op, a ?variable or a function
  ;; (Lisp code below a function call is left to the evaluator).
  (when (consp form)
    (let ((h (car form)))
      (when (and (symbolp h) h (not (%pattern-var-p h)) (not (prim-op-p h)) (not (fboundp h))
                 (not (member h '(quote lambda let let* if when unless cond and or progn function))))
        (error 'optimizer-error "defoptimizer ~a: unknown op or function ~a in the replacement ~s" rule h form))
      (when (or (%pattern-var-p h) (and (symbolp h) (prim-op-p h)))
        (dolist (a (cdr form)) (%check-heads rule a))))))

(defmacro defoptimizer (name &rest spec)
  "(defoptimizer NAME [DOC] PATTERN [:when GUARD] [:set SET] [:backend B] => REPLACEMENT)
Teaches the JIT a graph rewrite. PATTERN is a tree of primitive ops, written with the
arguments of the prim:* builtins: (reduce :sum (mul (expand ?a) (expand ?b)) ?axes). ?x binds
a node or an argument (a repeated ?x must match the same one), _ matches anything, (?f ?x)
any op with one source, literals match equal arguments ((const 0) any zero), and the operands
of commutative ops match in either order. GUARD is any Lisp expression over the variables
(nodes are tensors; ?root is the matched node). REPLACEMENT is a template in the same op
language, or a Lisp expression returning a tensor (nil declines). Rules run before
scheduling, to a fixed point, in the order defined; SET groups them (default user) and B
restricts one to a backend (:cpu, :cuda) or a kind of device (:host, :gpu).
  (progn
    (defoptimizer doc-ex-twice \"x * 2 = x + x.\" (mul ?x (const 2)) => (add ?x ?x))
    (prog1 (optimizers-fired (mul (tensor '(1.0 2.0)) 2.0)) (optimizer-disable 'doc-ex-twice)))  ; => (doc-ex-twice)"
  (let ((doc nil) (pattern nil) (guard nil) (has-guard nil) (replacement nil) (arrow nil) (set nil) (backend nil))
    (when (stringp (car spec)) (setq doc (car spec) spec (cdr spec)))
    (unless spec (error 'optimizer-error "defoptimizer ~a: no pattern" name))
    (setq pattern (car spec) spec (cdr spec))
    (loop
      (when (null spec) (return))
      (let ((key (car spec)))
        (unless (cdr spec) (error 'optimizer-error "defoptimizer ~a: ~a needs a value" name key))
        (cond ((eq key '=>) (setq arrow t replacement (cadr spec)))
              ((eq key :when) (setq guard (cadr spec) has-guard t))
              ((eq key :set) (setq set (cadr spec)))
              ((eq key :backend) (setq backend (cadr spec)))
              (t (error 'optimizer-error "defoptimizer ~a: unexpected ~s (expected =>, :when, :set or :backend)"
                        name key)))
        (setq spec (cddr spec))))
    (unless arrow (error 'optimizer-error "defoptimizer ~a: no => REPLACEMENT" name))
    (let ((vars (%pattern-vars pattern)))
      (%check-bound name "replacement" replacement vars)
      (%check-bound name "guard" guard vars)
      (%check-heads name replacement)
      `(%define-optimizer ',name ,doc ',pattern ',vars
                          ,(if has-guard `(lambda (?root ,@vars) ,guard) nil)
                          (lambda (?root ,@vars) ,(%template replacement))
                          ',set ,(if backend (symbol-name backend) nil)))))

(defmacro defoptimizer-set (name &rest doc)
  "(defoptimizer-set NAME [DOC]) Declares a named set of optimizer rules; rules join it with
:set NAME. (optimizer-disable 'NAME) turns the whole set off.
  (defoptimizer-set doc-ex-rules \"Rules of the manual's examples.\")  ; => doc-ex-rules"
  `(%define-optimizer-set ',name ,(car doc)))

(defmacro with-optimizers-disabled (names &rest body)
  "(with-optimizers-disabled (NAME...) BODY...) Runs BODY with the optimizer rules or sets
NAME... turned off, e.g. to compare results with and without them.
  (optimizers-fired (mul (tensor '(1.0 2.0)) 1.0))  ; => (mul-one)
  (with-optimizers-disabled (simplify cse) (optimizers-fired (mul (tensor '(1.0 2.0)) 1.0)))  ; => nil"
  `(%call-with-optimizers-disabled ',names (lambda () ,@body)))

(defun %make-op (op &rest srcs)
  ;; The op bound to a (?f ...) pattern, applied to new sources.
  (apply (symbol-value (%prim-function-name op)) srcs))

(defvar *extern-kernels* nil
  "External kernels usable in replacements: an alist (name . result-function), where the
function of the source tensors returns (dtype shape).
  (and (assoc \"sgemm\" *extern-kernels* :test #'equal) t)  ; => t")

(defun %extern-call (name srcs)
  (let ((entry (assoc name *extern-kernels* :test #'equal)))
    (unless entry
      (error 'optimizer-error "extern: no external kernel named ~s (known: ~{~a~^, ~})" name
             (mapcar #'car *extern-kernels*)))
    (let ((result (apply (cdr entry) srcs)))
      (prim:extern name srcs (first result) (second result)))))

;;; Helpers for guards.

(defmacro same-shape-p (x &optional (y '?root))
  "(same-shape-p X [Y]) In a guard: true when tensor X has the shape and dtype of Y, by
default of the node the rule replaces (?root).
  (same-shape-p (zeros '(2 3)) (ones '(2 3)))  ; => t
  (same-shape-p (zeros '(2)) (zeros '(2) :dtype 'i32))  ; => nil"
  `(let ((a ,x) (b ,y)) (and (equal (shape a) (shape b)) (eq (dtype a) (dtype b)))))

(defun const-p (x) "(const-p X) True when X is a constant node.
  (const-p (zeros '(3)))  ; => t
  (const-p (tensor '(1 2)))  ; => nil" (eq (node-op x) 'const))
