;;; SPDX-License-Identifier: Apache-2.0
;;; Autograd: reverse-mode differentiation over the primitive graph. Each primitive op has one
;;; backward rule (defgrad), written with primitives, so every composite is differentiable
;;; with nothing more. Gradients are lazy graphs too: they fuse like any other computation.

(defvar *grad-rules* (make-hash-table :test 'eq)
  "The backward rule of each primitive op: a function of the output gradient, the node and
its sources, giving one gradient (or nil) per source.
  (functionp (gethash 'add *grad-rules*))  ; => t")

(defmacro defgrad (op params &rest body)
  "(defgrad OP (G Y SRC...) BODY...) The backward rule of primitive OP: given the gradient G of
its output Y and its sources, a list of the sources' gradients (nil for none).
  (functionp (gethash 'mul *grad-rules*))  ; => t
  (progn (defgrad doc-ex-op (g y a) (list g)) (functionp (gethash 'doc-ex-op *grad-rules*)))  ; => t"
  `(progn (puthash ',op (lambda ,params ,@body) *grad-rules*) ',op))

(defun %like (v x) (prim:const v (dtype x) (shape x)))

(defun %inverse-order (order)
  (let ((inv (make-list (length order) 0)) (i 0))
    (dolist (a order) (setf (nth a inv) i) (setq i (+ i 1)))
    inv))

(defgrad add (g y a b) (list g g))
(defgrad mul (g y a b) (list (prim:mul g b) (prim:mul g a)))
(defgrad neg (g y a) (list (prim:neg g)))
(defgrad recip (g y a) (list (prim:neg (prim:mul g (prim:mul y y)))))
(defgrad sqrt (g y a) (list (prim:mul g (prim:recip (prim:mul y (%like 2 y))))))
(defgrad exp2 (g y a) (list (prim:mul g (prim:mul y (%like (log 2) y)))))
(defgrad log2 (g y a) (list (prim:mul g (prim:recip (prim:mul a (%like (log 2) a))))))
(defgrad sin (g y a) (list (prim:mul g (prim:cos a))))
(defgrad cos (g y a) (list (prim:neg (prim:mul g (prim:sin a)))))
(defgrad cast (g y a) (list (if (dtype-float-p (dtype a)) (prim:cast g (dtype a)) nil)))
(defgrad copy (g y a) (list g))

(defgrad max (g y a b)
  ;; To the larger operand; split evenly on ties.
  (let* ((half (prim:mul (prim:cast (prim:cmpeq a b) (dtype g)) (%like 0.5 g)))
         (to-a (prim:add (prim:cast (prim:cmplt b a) (dtype g)) half))
         (to-b (prim:add (prim:cast (prim:cmplt a b) (dtype g)) half)))
    (list (prim:mul g to-a) (prim:mul g to-b))))

(defgrad where (g y c a b)
  (let ((zero (%like 0 g)))
    (list nil (prim:where c g zero) (prim:where c zero g))))

(defgrad reduce (g y a)
  (let ((axes (node-arg y 1)) (sa (shape a)))
    (case (node-arg y 0)
      (:sum (list (prim:expand g sa)))
      (:max
       ;; All to the first element (in row-major order over AXES) equal to the maximum, or
       ;; the first NaN, as PyTorch's max along a dimension and max-pooling do.
       (let* ((ye (prim:expand y sa))
              (hit (if (dtype-float-p (dtype a))
                       (prim:or (prim:cmpeq a ye) (prim:and (%isnan-prim a) (%isnan-prim ye)))
                       (prim:cmpeq a ye)))
              (idx (%flat-index sa axes))
              (none (%like (- (%index-limit sa)) idx))
              ;; The smallest index that hits, as -max(-index).
              (first (prim:neg (prim:reduce :max (prim:where hit (prim:neg idx) none) axes)))
              (one (prim:cmpeq idx (prim:expand first sa))))
         (list (prim:where one (prim:expand g sa) (prim:const 0 (dtype g) sa)))))
      (t
       ;; prod: the product of the other elements. Not g y / x, which is NaN where x = 0: with
       ;; one zero, the zero gets the product of the rest and the others 0; with more, all 0.
       (let* ((zero (%like 0 a)) (one (%like 1 a))
              (is0 (prim:cmpeq a zero))
              (zeros (prim:expand (prim:reduce :sum (prim:cast is0 (dtype a)) axes) sa))
              (rest (prim:expand (prim:reduce :prod (prim:where is0 one a) axes) sa))
              (others (prim:where is0
                                  (prim:where (prim:cmpeq zeros one) rest zero)
                                  (prim:where (prim:cmpeq zeros zero)
                                              (prim:mul (prim:expand y sa) (prim:recip (prim:where is0 one a)))
                                              zero))))
         (list (prim:mul (prim:expand g sa) others)))))))

(defun %isnan-prim (x)
  (prim:xor (prim:cmpeq x x) (prim:const t 'bool (shape x))))

(defun %index-limit (shp)
  ;; 1 + the largest flat index of a tensor of shape SHP (a bound, for symbolic shapes).
  (let ((n (apply #'dim* shp))) (if (integerp n) (+ n 1) 9223372036854775807)))

(defun %flat-index (shp axes)
  ;; Each element's index in row-major order over AXES of shape SHP (i64; i32 when small).
  (let* ((limit (%index-limit shp))
         (dt (if (< limit 2147483647) 'i32 'i64))
         (idx (prim:const 0 dt shp))
         (stride 1))
    (dolist (ax (reverse axes) idx)
      (let ((term (prim:iota shp ax dt)))
        (setq idx (prim:add idx (if (eql stride 1) term
                                    (prim:mul term (if (integerp stride) (prim:const stride dt shp)
                                                       (%dim-tensor stride dt shp))))))
        (setq stride (dim* stride (nth ax shp)))))))

(defun %dim-tensor (d dt shp)
  ;; The value of dimension expression D (symbolic) as a tensor of shape SHP.
  (prim:reduce :sum (prim:const 1 dt (append shp (list d))) (list (length shp))))

(defgrad reshape (g y a) (list (prim:reshape g (shape a))))
(defgrad permute (g y a) (list (prim:permute g (%inverse-order (node-arg y 0)))))
(defgrad flip (g y a) (list (prim:flip g (node-arg y 0))))

(defgrad expand (g y a)
  ;; Summed over the axes the expand grew.
  (let ((axes nil) (i 0))
    (mapcar (lambda (from to) (unless (equal from to) (setq axes (cons i axes))) (setq i (+ i 1)))
          (shape a) (shape y))
    (list (if axes (prim:reduce :sum g (reverse axes)) g))))

(defgrad pad (g y a)
  (list (prim:shrink g (mapcar (lambda (p d) (list (first p) (dim+ (first p) d))) (node-arg y 0) (shape a)))))

(defgrad shrink (g y a)
  (list (prim:pad g (mapcar (lambda (r d) (list (first r) (dim+ d (dim* -1 (second r))))) (node-arg y 0) (shape a)))))

(defgrad gather (g y x index)
  ;; Each gathered element's gradient goes back where it was read from (added up where an
  ;; element was read more than once).
  (list (prim:scatter-add (%like 0 x) index g (node-arg y 0)) nil))

(defgrad scatter-add (g y x index values)
  ;; X's elements pass through; each value's gradient is read where it was added (an index
  ;; outside the axis reads 0, as that value added nothing).
  (list g nil (prim:gather g index (node-arg y 0))))

(dolist (op '(idiv mod cmplt cmpeq and or xor bitcast))
  (puthash op (lambda (g y &rest srcs) (mapcar (lambda (s) nil) srcs)) *grad-rules*))

(defmacro no-grad (&rest body)
  "(no-grad BODY...) Runs BODY with gradient tracking off: tensors computed in it are constants
to backward (e.g. an optimizer's update).
  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (requires-grad-p (no-grad (mul x 2))))  ; => nil
  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (requires-grad-p (mul x 2)))  ; => t"
  `(let ((%was (%set-grad-enabled nil)))
     (unwind-protect (progn ,@body) (%set-grad-enabled %was))))

(defun %grad-of (n g)
  ;; The gradients of node N's sources, given the gradient G of N.
  (if (eq (node-op n) 'buffer)
      (list g)                          ; a realized value: on to the graph that computed it
      (let ((rule (if (custom-grad-p n) (gethash (node-id n) *custom-grads*) (gethash (node-op n) *grad-rules*))))
        (unless rule
          (error 'type-error "backward: no gradient through ~a (in ~a)" (node-op n) (graph->text n)))
        ;; A complex gradient (from a custom rule over complex tensors) joins the others as
        ;; its parts, which are what the graph differentiates.
        (mapcar (lambda (gs) (if (%complexp gs) (view-as-real gs) gs))
                (if (custom-grad-p n) (funcall rule g n) (apply rule g n (grad-sources n)))))))

(defun backward (loss &optional gradient)
  "(backward LOSS [GRADIENT]) Computes the gradient of LOSS (one element, else give GRADIENT,
the gradient of LOSS itself) with respect to every leaf marked with requires-grad! that it
depends on, and adds it to the leaf's (grad X). Returns LOSS.
  (let ((x (requires-grad! (tensor '(1.0 2.0 3.0))))) (backward (sum (mul x x))) (to-list (grad x)))  ; => (2.0 4.0 6.0)
  (let ((x (requires-grad! (tensor '(1.0 2.0)))))
    (backward (mul x 3.0) (tensor '(1.0 10.0)))
    (to-list (grad x)))  ; => (3.0 30.0)
  (let ((x (requires-grad! (tensor 2.0)))) (backward (mul x x)) (backward (mul x x)) (item (grad x)))  ; => 8.0"
  (unless (tensorp loss) (error 'type-error "backward: expected a tensor, got ~s" loss))
  (unless (requires-grad-p loss)
    (error 'type-error "backward: the loss does not depend on any tensor marked with requires-grad!"))
  (when (and (%complexp loss) (null gradient))
    (error 'dtype-error "backward: the loss is complex (~a); give its GRADIENT, or take a real function of it (abs, real)"
           (dtype loss)))
  ;; A complex loss Z's GRADIENT V stands for the real loss Re(sum(conj(V) Z)), whose
  ;; gradient with respect to Z's parts is V's parts.
  (let ((g0 (cond (gradient
                   (unless (equal (shape gradient) (shape loss))
                     (error 'shape-error "backward: the gradient is ~s but the loss is ~s" (shape gradient) (shape loss)))
                   (if (%complexp loss)
                       (view-as-real (cast gradient (dtype loss)))
                       (cast gradient (dtype loss))))
                  ((eql (numel loss) 1) (prim:const 1 (dtype loss) (shape loss)))
                  (t (error 'shape-error "backward: the loss has shape ~s; give the gradient for more than one element"
                            (shape loss)))))
        (grads (make-hash-table))
        (leaves nil)
        (*grad-products* (make-hash-table)))
    (puthash (node-id loss) g0 grads)
    ;; The gradient graph is built with tracking off: it is not differentiated again, and
    ;; its nodes must not keep the forward graph alive from the leaves.
    (no-grad
    (dolist (n (reverse (grad-order loss)))
      (let ((g (gethash (node-id n) grads)))
        (when g
          (if (grad-leaf-p n)
              (setq leaves (cons (cons n g) leaves))
              (mapcar (lambda (s gs)
                      (when (and gs (requires-grad-p s))
                        (let ((old (gethash (node-id s) grads)))
                          (puthash (node-id s) (if old (prim:add old gs) gs) grads))))
                    (grad-sources n) (%grad-of n g)))))))
    ;; Every leaf's gradient in one schedule: the backward work they share runs once.
    (no-grad
      (let ((totals (mapcar (lambda (leaf)
                              (let ((old (grad (car leaf))))
                                (if old (prim:add old (cdr leaf)) (cdr leaf))))
                            leaves)))
        ;; The loss with them: it is then the value before an optimizer changes the weights
        ;; in place (read lazily after a step, it would see the new weights).
        (realize-all (cons loss totals))
        (mapcar (lambda (leaf total) (%set-grad (car leaf) total)) leaves totals)))
    loss))

(defun zero-grad! (params)
  "(zero-grad! PARAMS) Clears the accumulated gradients of a tensor or a list of tensors.
  (let ((x (requires-grad! (tensor '(1.0 2.0))))) (backward (sum x)) (zero-grad! (list x)) (grad x))  ; => nil"
  (dolist (p (if (listp params) params (list params))) (%set-grad p nil))
  nil)

(defun value-and-grad (f)
  "(value-and-grad F) A function of the same arguments as F that returns (VALUE GRADS): F's
value (a one-element tensor) and its gradients with respect to each tensor argument (nil
for the others), computed with the arguments as fresh leaves; gradients accumulated
elsewhere are not touched.
  (let ((r (funcall (value-and-grad (lambda (x y) (sum (mul x y)))) (tensor '(1.0 2.0)) (tensor '(3.0 4.0)))))
    (list (item (first r)) (mapcar #'to-list (second r))))  ; => (11.0 ((3.0 4.0) (1.0 2.0)))
  (let ((r (funcall (value-and-grad (lambda (x n) (sum (pow x n)))) (tensor '(1.0 2.0)) 3)))
    (list (to-list (first (second r))) (second (second r))))  ; => ((3.0 12.0) nil)"
  (lambda (&rest args)
    (let* ((leaves (mapcar (lambda (a) (if (and (tensorp a) (or (dtype-float-p (dtype a)) (dtype-complex-p (dtype a))))
                                               (%fresh-leaf a)
                                               a))
                           args))
           (value (apply f leaves)))
      (when (requires-grad-p value) (backward value))
      (list value (mapcar (lambda (a) (if (and (tensorp a) (requires-grad-p a)) (grad a) nil)) leaves)))))
