;;; SPDX-License-Identifier: Apache-2.0
;;; defcomposite, tensor creation from data, and helpers the tensor library shares.

(defvar *composites* (make-hash-table :test 'eq)
  "Names defined with defcomposite.
  (gethash 'softmax *composites*)  ; => t")

(defmacro defcomposite (name params &rest body)
  "(defcomposite NAME (PARAM...) [DOC] BODY...)
Defines NAME as a tensor function written over primitives (a composite), like defun.
Composites are what the JIT traces and fuses; (composite-p 'NAME) is true for them. A
quantized tensor (quantize) passed as a required or optional argument arrives cast to f32.
  (progn (defcomposite doc-ex-double (x) (add x x)) (composite-p 'doc-ex-double))  ; => t
  (to-list (doc-ex-double (tensor '(1.5 2.0))))  ; => (3.0 4.0)"
  (let* ((positional (loop for p in params
                           until (member p '(&key &rest &body &aux))
                           unless (eq p '&optional) collect (if (consp p) (car p) p)))
         (doc (and (stringp (car body)) (cdr body) (list (car body))))
         (forms (if doc (cdr body) body)))
    `(progn
       (defun ,name ,params ,@doc
         (let ,(mapcar (lambda (p) (list p (list '%readable p))) positional) ,@forms))
       (puthash ',name t *composites*)
       ',name)))

(defun composite-p (name)
  "(composite-p NAME) True when NAME was defined with defcomposite.
  (composite-p 'relu)  ; => t
  (composite-p 'car)  ; => nil"
  (gethash name *composites*))

(defun tensor-shape (x)
  "(tensor-shape X) The shape of tensor X (same as shape; usable where shape is shadowed).
  (tensor-shape (tensor '((1 2 3) (4 5 6))))  ; => (2 3)
  (tensor-shape (tensor 5))  ; => nil"
  (shape x))

(defun tensor-dtype (x)
  "(tensor-dtype X) The dtype of tensor X (same as dtype; usable where dtype is shadowed).
  (tensor-dtype (tensor '(1 2)))  ; => i32
  (tensor-dtype (tensor '(1 2.5)))  ; => f32"
  (dtype x))

(defun tensor (data &key dtype)
  "(tensor DATA &key dtype) A tensor holding DATA, a number or nested lists of numbers.
The dtype is inferred (f32 if any element is a float, else i32, i64 for integers beyond
32 bits, bool for t/nil) unless given.
  (to-list (tensor '((1 2) (3 4))))  ; => ((1 2) (3 4))
  (tensor-dtype (tensor '(t nil)))  ; => bool
  (tensor-dtype (tensor 3000000000))  ; => i64
  (to-list (tensor '(1 2) :dtype 'f64))  ; => (1.0 2.0)"
  (if (tensorp data)
      (if dtype (cast data dtype) data)
      (%tensor-from-list data dtype)))

(defun %as-tensor (x &optional dt)
  "X as a tensor (numbers and lists are converted), cast to DT when given."
  (cond ((tensorp x) (if dt (prim:cast x dt) x))
        (t (%tensor-from-list x dt))))

(defun %float-tensor (x)
  "X as a tensor of a float dtype (integer and bool tensors become f32; a complex tensor is a
dtype-error: a function that takes one asks for %inexact-tensor)."
  (let ((tx (%as-tensor x)))
    (if (dtype-float-p (tensor-dtype tx)) tx (prim:cast tx 'f32))))

(defun %inexact-tensor (x)
  "X as a tensor of a float or complex dtype (integer and bool tensors become f32)."
  (let ((tx (%as-tensor x)))
    (if (or (dtype-float-p (tensor-dtype tx)) (dtype-complex-p (tensor-dtype tx))) tx (prim:cast tx 'f32))))

(defun %refuse-complex (fn x)
  "A dtype-error naming FN when X is a complex tensor (for functions of ordered values)."
  (when (and (tensorp x) (dtype-complex-p (dtype x)))
    (error 'dtype-error "~a: not defined for complex tensors (~a); take (real z), (imag z) or (abs z)" fn (dtype x))))

(defun %scalar-like (value x)
  "A tensor of X's dtype and shape filled with VALUE."
  (prim:const value (tensor-dtype x) (tensor-shape x)))

(defun %dtype-arg (fn dt)
  "DT when it names a dtype; a dtype-error naming FN otherwise."
  (if (dtypep dt)
      dt
      (error 'dtype-error "~a: unknown dtype ~s (expected one of f32 f64 f16 bf16 i8 i16 i32 i64 u8 u32 bool c64 c128 q8_0 q4_0)"
             fn dt)))

(defun %float-dtype-arg (fn dt)
  "DT when it names a float dtype; a dtype-error naming FN otherwise."
  (unless (dtype-float-p (%dtype-arg fn dt))
    (error 'dtype-error "~a: needs a float dtype (f32 f64 f16 bf16), got ~a" fn dt))
  dt)

(defun %axis (fn axis n)
  "AXIS (possibly negative) normalized for a tensor with N axes; an index-error naming FN."
  (unless (integerp axis)
    (error 'type-error "~a: axis must be an integer, got ~s" fn axis))
  (let ((a (if (< axis 0) (+ axis n) axis)))
    (when (or (< a 0) (>= a n))
      (error 'index-error "~a: axis ~a out of range for a tensor with ~a dimensions" fn axis n))
    a))

(defun %axes (fn axis n)
  "AXIS (nil for all, an integer or a list) as a sorted list of normalized axes."
  (cond ((null axis) (range n))
        ((listp axis) (sort (mapcar (lambda (a) (%axis fn a n)) axis) #'<))
        (t (list (%axis fn axis n)))))

(defun %remove-axes (shp axes)
  "SHP without the axes in AXES."
  (let ((out nil) (i 0))
    (dolist (d shp (reverse out))
      (unless (member i axes) (push d out))
      (setq i (1+ i)))))

(defun %replace-nth (lst n value)
  (let ((i -1))
    (mapcar (lambda (x) (setq i (1+ i)) (if (= i n) value x)) lst)))

(defun %numel-of (shp)
  (apply #'dim* shp))

;;; Custom gradients: defined here, before the composites that use them (autograd itself
;;; is in 90-autograd.lisp).

(defvar *custom-grads* (make-hash-table)
  "Custom gradient rules (with-custom-grad), by node id.
  (hash-table-p *custom-grads*)  ; => t")

(defvar *grad-products* nil
  "While backward runs: for each gradient a matrix product gave its left operand P (G B^T,
by node id), the list (P's id, G, the product's value Y = P B), so that a softmax whose
weights P feed the product can take its row term sum(G' P) as sum(G Y) (see softmax).
  (null *grad-products*)  ; => t")

(defmacro with-custom-grad (inputs forward &rest backward)
  "(with-custom-grad ((VAR TENSOR)...) FORWARD (G [Y]) BODY...) FORWARD's value, whose gradient
backward computes by BODY (with G bound to the value's gradient, Y when given to the value
itself, and each VAR to its TENSOR) as a list of gradients, one per VAR (nil for none),
instead of differentiating the ops of FORWARD. For an equivalent but cheaper derivative of a
composite (as conv2d's windows and softmax use). BODY reaches FORWARD's value only through Y
(a closure over it would keep it alive); it runs with gradient tracking off.
  (let ((x (requires-grad! (tensor '(1.0 4.0)))))
    (backward (sum (with-custom-grad ((v x)) (sqrt v) (g y) (list (div g (mul 2.0 y))))))
    (to-list (grad x)))  ; => (0.5 0.25)"
  ;; The rule is made before FORWARD runs, so it cannot hold on to FORWARD's value (which
  ;; would keep the node, and so the rule, alive): backward passes the value to it.
  (let* ((params (car backward))
         (g (car params))
         (y (if (cdr params) (cadr params) (gensym)))
         (body (cdr backward))
         (rule (gensym)))
    `(let* (,@inputs)
       (let ((,rule (lambda (,g &optional ,y) ,@body)))
         (%custom-grad ,forward (list ,@(mapcar #'car inputs)) ,rule)))))

(defun %custom-grad (y inputs rule)
  ;; Registers RULE for Y's node (when gradients flow through it); rules of dead nodes go.
  (dolist (id (%dead-custom-grads)) (remhash id *custom-grads*))
  (when (requires-grad-p y)
    ;; Backward hands the rule the gradient of Y's node: the parts of a complex Y.
    (puthash (%set-custom-grad y inputs)
             (if (%complexp y)
                 (lambda (g &optional yy) (funcall rule (view-as-complex g) (and yy (view-as-complex yy))))
                 rule)
             *custom-grads*))
  y)
