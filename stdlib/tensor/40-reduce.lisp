;;; SPDX-License-Identifier: Apache-2.0
;;; Reductions over any axes (:axis nil means all), with :keepdim.

(defun %reduce (fn kind x axis keepdim)
  (let* ((tx (%as-tensor x))
         (axes (%axes fn axis (ndim tx)))
         (r (prim:reduce kind tx axes)))
    (if keepdim r (prim:reshape r (%remove-axes (tensor-shape r) axes)))))

(defun %reduced-count (x axes)
  "The number of elements reduced over AXES of X: an integer, or a dimension expression."
  (apply #'dim* (mapcar (lambda (a) (nth a (tensor-shape x))) axes)))

(defun %count-tensor (x axes keepdim dt)
  "The number of elements reduced over AXES of X as a tensor shaped like the reduction
(used when that number is symbolic, to be computed when the graph is realized)."
  (let ((c (prim:reduce :sum (prim:const 1 dt (tensor-shape x)) axes)))
    (if keepdim c (prim:reshape c (%remove-axes (tensor-shape c) axes)))))

(defun %divide-by-count (s x axes keepdim &optional (correction 0))
  (let ((count (%reduced-count x axes)))
    (if (integerp count)
        (div s (max 0 (- count correction)))
        (div s (sub (%count-tensor x axes keepdim (tensor-dtype s)) correction)))))

(defun %widen-int (tx dtype)
  ;; The dtype a sum or product accumulates in: DTYPE when given, else i64 for every integer
  ;; and bool tensor, as PyTorch does (a u8 sum stayed u8 and wrapped; issue 19).
  (cond (dtype (prim:cast tx dtype))
        ((and (not (dtype-float-p (tensor-dtype tx))) (not (dtype-complex-p (tensor-dtype tx)))
              (not (eq (tensor-dtype tx) 'i64)))
         (prim:cast tx 'i64))
        (t tx)))

(defcomposite sum (x &key axis keepdim dtype)
  "(sum X &key axis keepdim dtype) The sum of X's elements over AXIS (an integer, a list,
or nil for all). Integer and bool tensors sum as i64 (as PyTorch's), unless DTYPE is given.
  (to-list (sum (tensor '((1 2) (3 4))) :axis 1))  ; => (3 7)"
  (%reduce 'sum :sum (%widen-int (%as-tensor x) dtype) axis keepdim))

(defcomposite prod (x &key axis keepdim dtype)
  "(prod X &key axis keepdim dtype) The product of X's elements over AXIS. Integer and bool
tensors multiply as i64 (as PyTorch's), unless DTYPE is given.
  (item (prod (tensor '(1 2 3 4))))  ; => 24"
  (%reduce 'prod :prod (%widen-int (%as-tensor x) dtype) axis keepdim))

(defcomposite mean (x &key axis keepdim)
  "(mean X &key axis keepdim) The mean of X's elements over AXIS (as a float).
  (item (mean (tensor '(1.0 2.0 3.0 4.0))))  ; => 2.5"
  (let* ((tx (%inexact-tensor x))
         (axes (%axes 'mean axis (ndim tx))))
    (%divide-by-count (sum tx :axis axes :keepdim keepdim) tx axes keepdim)))

(defcomposite amax (x &key axis keepdim)
  "(amax X &key axis keepdim) The largest element over AXIS (NaN if any is NaN); also (max X ...).
  (to-list (amax (tensor '((1 5) (4 2))) :axis 0))  ; => (4 5)"
  (%reduce 'max :max (%as-tensor x) axis keepdim))

(defun %flip-order (x)
  ;; An order-reversing map for integers: x xor -1 (works for signed and unsigned types).
  (if (eq (tensor-dtype x) 'bool) (logical-not x) (prim:xor x (%scalar-like -1 x))))

(defcomposite amin (x &key axis keepdim)
  "(amin X &key axis keepdim) The smallest element over AXIS (NaN if any is NaN); also (min X ...).
  (to-list (amin (tensor '((1 5) (4 2))) :axis 1))  ; => (1 2)
  (item (amin (tensor '(3.0 -1.0 2.0))))  ; => -1.0"
  (let ((tx (%as-tensor x)))
    (if (dtype-float-p (tensor-dtype tx))
        (prim:neg (%reduce 'min :max (prim:neg tx) axis keepdim))
        (%flip-order (%reduce 'min :max (%flip-order tx) axis keepdim)))))

(defun %reduction-call-p (args)
  (or (null (cdr args)) (keywordp (second args))))

(defun %tensor-max (&rest args)
  (if (%reduction-call-p args)
      (apply #'amax args)
      (%fold #'maximum args)))

(defun %tensor-min (&rest args)
  (if (%reduction-call-p args)
      (apply #'amin args)
      (%fold #'minimum args)))

(defun %arg-extreme (fn x axis keepdim find-max)
  (let ((tx (%as-tensor x)))
    ;; No element is the largest of none (PyTorch raises too; it returned 2^31 - 1).
    (when (eql (if axis (nth (%axis fn axis (ndim tx)) (tensor-shape tx)) (numel tx)) 0)
      (error 'index-error "~a: ~a has no elements~a to choose from" fn
             (if axis (format nil "axis ~a of a tensor of shape ~s" axis (tensor-shape tx)) "the tensor")
             (if axis " along it" ""))))
  (let* ((tx (%as-tensor x))
         (flat (null axis))
         (tx (if flat (prim:reshape tx (list (numel tx))) tx))
         (a (if flat 0 (%axis fn axis (ndim tx))))
         (m (if find-max (amax tx :axis a :keepdim t) (amin tx :axis a :keepdim t)))
         (hit (if (dtype-float-p (tensor-dtype tx)) (logical-or (equals tx m) (isnan tx)) (equals tx m)))
         (idx (prim:iota (tensor-shape tx) a 'i32))
         (r (amin (where hit idx 2147483647) :axis a :keepdim (and keepdim (not flat)))))
    r))

(defcomposite argmax (x &key axis keepdim)
  "(argmax X &key axis keepdim) The index (i32) of the first largest element along AXIS, or
in the flattened X when AXIS is nil. A NaN counts as the largest.
  (to-list (argmax (tensor '((1 5 2) (7 0 3))) :axis 1))  ; => (1 0)"
  (%arg-extreme 'argmax x axis keepdim t))

(defcomposite argmin (x &key axis keepdim)
  "(argmin X &key axis keepdim) The index (i32) of the first smallest element along AXIS, or
in the flattened X when AXIS is nil. A NaN counts as the smallest.
  (to-list (argmin (tensor '((1 5 0) (7 0 3))) :axis 1))  ; => (2 1)
  (item (argmin (tensor '((4 2) (1 9)))))  ; => 2"
  (%arg-extreme 'argmin x axis keepdim nil))

(defcomposite var (x &key axis keepdim (correction 1))
  "(var X &key axis keepdim (correction 1)) The variance over AXIS: the sum of squared
deviations divided by N - CORRECTION (1: unbiased, as PyTorch defaults to); of a complex X,
of |deviations|^2 (a real result).
  (item (var (tensor '(1.0 2.0 3.0 4.0 5.0))))  ; => 2.5
  (item (var (tensor '(1.0 2.0 3.0 4.0)) :correction 0))  ; => 1.25"
  (let* ((tx (%inexact-tensor x))
         (axes (%axes 'var axis (ndim tx)))
         (d (sub tx (mean tx :axis axes :keepdim t)))
         (s (sum (if (%complexp d) (add (square (real d)) (square (imag d))) (mul d d)) :axis axes :keepdim keepdim)))
    (%divide-by-count s tx axes keepdim correction)))

(defcomposite std (x &key axis keepdim (correction 1))
  "(std X &key axis keepdim (correction 1)) The standard deviation over AXIS (sqrt of var).
  (item (std (tensor '(2.0 4.0 4.0 4.0 5.0 5.0 7.0 9.0)) :correction 0))  ; => 2.0
  (to-list (std (tensor '((1.0 3.0) (5.0 5.0))) :axis 1 :correction 0))  ; => (1.0 0.0)"
  (sqrt (var x :axis axis :keepdim keepdim :correction correction)))

(defcomposite logsumexp (x &key axis keepdim)
  "(logsumexp X &key axis keepdim) log(sum(exp(X))) over AXIS, computed stably.
  (item (logsumexp (tensor '(1000.0 -1000.0))))  ; => 1000.0"
  (let* ((tx (%float-tensor x))
         (axes (%axes 'logsumexp axis (ndim tx)))
         (m (amax tx :axis axes :keepdim t))
         ;; A row of -inf subtracts 0 (exp gives 0s, not NaN). The guard is applied after the
         ;; broadcast too, so the max is read broadcast as itself: a row kernel then computes it
         ;; in one pass over the row (schedule.cpp's row fusion), not a kernel of its own.
         (mx (expand m (tensor-shape tx)))
         (r (add (log (sum (exp (sub tx (where (isinf mx) 0 mx))) :axis axes :keepdim t))
                 (where (isinf m) 0 m))))
    (if keepdim r (prim:reshape r (%remove-axes (tensor-shape r) axes)))))

(defun %softmax (tx axis)
  (let ((e (exp (sub tx (amax tx :axis axis :keepdim t)))))
    (div e (sum e :axis axis :keepdim t))))

(defun %log-softmax (tx axis)
  (sub tx (logsumexp tx :axis axis :keepdim t)))

;;; Both have PyTorch's gradient rules, written in their forward's value (p, or log p), so
;;; backward reads what the forward computed (or computes it in the same kernels):
;;; differentiating their ops would go through the max's subgradient (a pass of its own over
;;; the rows) and the exp's, for a result that is the same up to rounding.
(defun %softmax-row-term (g p axis)
  ;; sum(G P) along AXIS, the softmax gradient's row term. Where P's only reader is a matrix
  ;; product P B = Y, as its left operand (attention's weights times the values), G = G_Y B^T
  ;; and the term is sum(G_Y Y) along Y's last axis: the same number from the product's rows
  ;; (O(rows x m) work, not a pass over the L x L matrices: FlashAttention-2's D = rowsum(dO O)).
  (let ((hit (and *grad-products* (gethash (node-id g) *grad-products*)))
        (last (- (ndim p) 1)))
    (if (and hit (eql (first hit) (node-id p))
             (eql (if (< axis 0) (+ axis (ndim p)) axis) last)
             (eq (dtype (second hit)) (dtype g)) (eq (dtype (third hit)) (dtype g)) (eq (dtype p) (dtype g)))
        (sum (mul (second hit) (third hit)) :axis -1 :keepdim t)
        (sum (mul g p) :axis axis :keepdim t))))

(defcomposite softmax (x &key (axis -1))
  "(softmax X &key (axis -1)) exp(X) normalized to sum to 1 along AXIS, computed stably.
Its gradient is p (g - sum(g p)) with p the softmax, as PyTorch's.
  (to-list (softmax (tensor '(0.0 0.0)) :axis 0))  ; => (0.5 0.5)"
  (let ((tx (%float-tensor x)))
    (with-custom-grad ((tx tx))
        (%softmax tx axis)
      (g p) (list (mul p (sub g (%softmax-row-term g p axis)))))))

(defcomposite log-softmax (x &key (axis -1))
  "(log-softmax X &key (axis -1)) log(softmax(X)) along AXIS, computed stably.
Its gradient is g - p sum(g) with p the softmax, as PyTorch's.
  (to-list (exp (log-softmax (tensor '(0.0 0.0)))))  ; => (0.5 0.5)
  (to-list (log-softmax (tensor '(1000.0 0.0))))  ; => (0.0 -1000.0)"
  (let ((tx (%float-tensor x)))
    (with-custom-grad ((tx tx))
        (%log-softmax tx axis)
      (g ls) (list (sub g (mul (exp ls) (sum g :axis axis :keepdim t)))))))

(defvar *scan-square-limit* 1024
  "Axes up to this long run cumsum and cumprod as one masked N x N reduce (one fused kernel,
O(N^2) work); longer ones as log2(N) shifted adds or products (O(N log N)).
  (let ((*scan-square-limit* 2)) (to-list (cumsum (tensor '(1 2 3 4)))))  ; => (1 3 6 10)")

(defun %scan-steps (moved last n kind identity)
  ;; Hillis and Steele's scan: after the step of distance d, element i combines elements
  ;; i-2d+1..i; the first d elements of each shifted copy are the identity. Sums add along a
  ;; tree (closer to the exact sum than a running one); gradients come from add and mul.
  (let* ((shp (tensor-shape moved))
         (x moved)
         (d 1))
    (loop while (< d n) do
      (let* ((kept (%shrink-axis x last 0 (- n d)))
             (padded (%pad-axis kept last d 0))
             (head (prim:cmplt (prim:iota shp last 'i32) (prim:const d 'i32 shp)))
             (shifted (if (eq kind :sum) padded (prim:where head (prim:const identity (tensor-dtype x) shp) padded))))
        (setq x (if (eq kind :sum) (prim:add x shifted) (prim:mul x shifted)))
        (setq d (* d 2))))
    x))

(defun %scan (fn tx axis kind identity)
  ;; Running reduce KIND along AXIS. Up to *scan-square-limit* elements: each row as an N x N
  ;; masked reduce, element i reducing elements 0..i; IDENTITY fills the masked-off ones, and
  ;; the reduce's own gradient rule gives the derivative (products with zeros included).
  ;; Longer axes: %scan-steps.
  (let* ((nd (ndim tx))
         (a (%axis fn axis nd))
         (last (- nd 1))
         (moved (transpose tx a last))
         (shp (tensor-shape moved))
         (n (nth last shp)))
    (if (and (integerp n) (> n *scan-square-limit*))
        (transpose (%scan-steps moved last n kind identity) a last)
        (%scan-square tx moved shp n nd last a kind identity))))

(defun %scan-square (tx moved shp n nd last a kind identity)
  (let* ((rows (append (butlast shp) (list n n)))
         (wide (prim:expand (prim:reshape moved (append (butlast shp) (list 1 n))) rows))
         (mask (prim:cmplt (prim:iota rows nd 'i32) (prim:add (prim:iota rows last 'i32) (prim:const 1 'i32 rows))))
         (r (prim:reshape (prim:reduce kind (prim:where mask wide (prim:const identity (tensor-dtype tx) rows)) (list nd))
                          shp)))
    (transpose r a last)))

;; TODO(issue 19): a log-depth scan would make cumsum and cumprod O(N log N) along AXIS.
(defcomposite cumsum (x &key (axis 0) dtype)
  "(cumsum X &key (axis 0) dtype) Running sums along AXIS: element i is the sum of elements
0..i. Integer and bool tensors sum as i64 (as PyTorch's), unless DTYPE is given. An N x N
masked sum per row: O(N^2) work for an axis of N.
  (to-list (cumsum (tensor '(1 2 3)) :axis 0))  ; => (1 3 6)"
  (%scan 'cumsum (%widen-int (%as-tensor x) dtype) axis :sum 0))

(defcomposite cumprod (x &key (axis 0) dtype)
  "(cumprod X &key (axis 0) dtype) Running products along AXIS: element i is the product of
elements 0..i. Integer and bool tensors multiply as i64 (as PyTorch's), unless DTYPE is given.
Like cumsum, an N x N masked product per row: O(N^2) work for an axis of N.
  (to-list (cumprod (tensor '(1 2 3 4))))  ; => (1 2 6 24)
  (to-list (cumprod (tensor '((1 2) (3 4))) :axis 1))  ; => ((1 2) (3 12))"
  (%scan 'cumprod (%widen-int (%as-tensor x) dtype) axis :prod 1))

(defcomposite any (x &key axis keepdim)
  "(any X &key axis keepdim) True (a bool tensor) where some element over AXIS is nonzero
(NaN counts as nonzero); over no elements, false. AXIS nil means all elements.
  (item (any (tensor '(t nil))))  ; => t"
  (%reduce 'any :max (%bool x) axis keepdim))

(defcomposite all (x &key axis keepdim)
  "(all X &key axis keepdim) True (a bool tensor) where every element over AXIS is nonzero
(NaN counts as nonzero); over no elements, true. AXIS nil means all elements.
  (item (all (tensor '(t nil))))  ; => nil"
  (logical-not (%reduce 'all :max (logical-not x) axis keepdim)))

(defun %norm-2 (f axes)
  ;; sqrt(sum f^2) over AXES (keepdim), whose gradient g f / norm is 0 at a zero vector, as
  ;; PyTorch's (differentiating the sqrt would give 0 * inf = NaN there).
  (with-custom-grad ((f f))
      (sqrt (sum (mul f f) :axis axes :keepdim t))
    (g) (let ((n (sqrt (sum (mul f f) :axis axes :keepdim t))))
          (list (where (equals n 0) 0 (mul g (div f n)))))))

(defcomposite norm (x &key (p 2) axis keepdim)
  "(norm X &key (p 2) axis keepdim) The vector P-norm of X's elements over AXIS (an integer,
a list, or nil for all elements), as torch.linalg.vector_norm: P 2 is sqrt(sum |x|^2), 1 is
sum |x|, inf max |x|, -inf min |x|, 0 the number of nonzero elements, any other number
(sum |x|^P)^(1/P); :fro is 2 (the Frobenius norm when AXIS is a matrix's two axes). The
result is a float (of a complex X too: the norm of |X|). The 2-norm's gradient at a zero
vector is 0, as PyTorch's.
  (item (norm (tensor '(3.0 4.0))))  ; => 5.0"
  (let* ((f (if (%complexp x) (abs x) (%float-tensor x)))
         (axes (%axes 'norm axis (ndim f)))
         (r (cond ((or (eq p :fro) (eql p 2) (eql p 2.0)) (%norm-2 f axes))
                  ((eql p inf) (amax (abs f) :axis axes :keepdim t))
                  ((eql p (- inf)) (amin (abs f) :axis axes :keepdim t))
                  ((and (numberp p) (= p 0)) (sum (cast (ne f 0) (tensor-dtype f)) :axis axes :keepdim t))
                  ((and (numberp p) (= p 1)) (sum (abs f) :axis axes :keepdim t))
                  ((numberp p) (pow (sum (pow (abs f) p) :axis axes :keepdim t) (/ 1.0 p)))
                  (t (error 'type-error "norm: P must be a number, inf, -inf or :fro, got ~s" p)))))
    (if keepdim r (prim:reshape r (%remove-axes (tensor-shape r) axes)))))

(defcomposite layer-norm (x &key (axis -1) (eps 1e-5))
  "(layer-norm X &key (axis -1) (eps 1e-5)) X normalized over AXIS to mean 0 and variance 1:
(X - mean) / sqrt(var + EPS), with the biased variance (as layer normalization uses).
  (to-list (layer-norm (tensor '((1.0 3.0)))))  ; => ((-0.9999949932098389 0.9999949932098389))
  (to-list (layer-norm (tensor '((1.0 3.0) (4.0 8.0))) :eps 0.0))  ; => ((-1.0 1.0) (-1.0 1.0))"
  (let* ((tx (%float-tensor x))
         (d (sub tx (mean tx :axis axis :keepdim t)))
         (v (mean (mul d d) :axis axis :keepdim t)))
    (mul d (rsqrt (add v eps)))))
