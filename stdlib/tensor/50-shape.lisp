;;; SPDX-License-Identifier: Apache-2.0
;;; Shape and indexing: views (reshape, permute, expand, pad, slice, flip, ...) that never
;;; copy, and the joins, splits and gathers built from them.

(defun %shape-list (fn args)
  "Dimensions given either as one list or as separate arguments."
  (cond ((and (= (length args) 1) (listp (car args))) (car args))
        ((every #'integerp args) args)
        (t (error 'type-error "~a: expected a shape, got ~s" fn args))))

(defcomposite reshape (x &rest dims)
  "(reshape X SHAPE) X viewed with a new SHAPE of the same element count (a list, or the
dimensions as arguments). One dimension may be -1: it is inferred.
  (to-list (reshape (arange 6) 2 3))  ; => ((0 1 2) (3 4 5))
  (to-list (reshape (arange 6) '(3 -1)))  ; => ((0 1) (2 3) (4 5))"
  (let* ((tx (%as-tensor x))
         (shp (%shape-list 'reshape dims))
         (holes (count -1 shp)))
    (when (> holes 1) (error 'shape-error "reshape: more than one -1 in ~s" shp))
    (when (= holes 1)
      (let* ((known (apply #'dim* (remove -1 shp)))
             (missing (and (not (eql known 0)) (dim/ (numel tx) known))))
        (unless missing
          (error 'shape-error "reshape: cannot reshape ~s (~a elements) to ~s" (tensor-shape tx) (numel tx) shp))
        (setq shp (substitute missing -1 shp))))
    (prim:reshape tx shp)))

(defcomposite permute (x &rest order)
  "(permute X ORDER) X with its axes reordered: axis i of the result is axis ORDER[i] of X
(a list, or the axes as arguments).
  (shape (permute (zeros '(1 2 3)) '(2 0 1)))  ; => (3 1 2)"
  (let ((tx (%as-tensor x)))
    (prim:permute tx (mapcar (lambda (a) (%axis 'permute a (ndim tx))) (%shape-list 'permute order)))))

(defun %args-or-keys (fn usage args keys defaults)
  ;; The values of an op's optional arguments KEYS (keywords), given either positionally,
  ;; in KEYS' order, or as keywords; DEFAULTS for those not given. A type-error naming FN
  ;; with USAGE for anything else.
  (if (and args (keywordp (car args)))
      (progn
        (unless (and (evenp (length args))
                     (loop for (k v) on args by #'cddr always (member k keys)))
          (error 'type-error "~a: expected ~a, got ~s" fn usage args))
        (mapcar (lambda (k d) (getf args k d)) keys defaults))
      (progn
        (when (or (> (length args) (length keys)) (some #'keywordp args))
          (error 'type-error "~a: expected ~a, got ~s" fn usage args))
        (let ((i -1))
          (mapcar (lambda (d) (setq i (1+ i)) (if (< i (length args)) (nth i args) d)) defaults)))))

(defcomposite transpose (x &rest args)
  "(transpose X [AXIS0 AXIS1]) X with two axes swapped (by default the last two; a 0-d or
1-d tensor is returned as is). The axes may also be given as (transpose X :axis (AXIS0
AXIS1)).
  (to-list (transpose (tensor '((1 2 3) (4 5 6)))))  ; => ((1 4) (2 5) (3 6))"
  (let* ((tx (%as-tensor x)) (n (ndim tx))
         (axes (if (and args (eq (car args) :axis))
                   (let ((pair (second args)))
                     (unless (and (= (length args) 2) (listp pair) (= (length pair) 2))
                       (error 'type-error "transpose: :axis takes a list of two axes, got ~s" (cdr args)))
                     pair)
                   (%args-or-keys 'transpose "[AXIS0 AXIS1] or :axis (AXIS0 AXIS1)" args '(:axis0 :axis1) '(-2 -1)))))
    (if (< n 2)
        tx
        (let* ((a (%axis 'transpose (first axes) n)) (b (%axis 'transpose (second axes) n))
               (order (mapcar (lambda (i) (cond ((= i a) b) ((= i b) a) (t i))) (range n))))
          (prim:permute tx order)))))

(defcomposite expand (x &rest dims)
  "(expand X SHAPE) X broadcast to SHAPE without copying (-1 keeps a dimension).
  (to-list (expand (tensor '((1) (2))) '(2 3)))  ; => ((1 1 1) (2 2 2))"
  (let* ((tx (%as-tensor x))
         (shp (%shape-list 'expand dims))
         (pad (- (length shp) (ndim tx)))
         (old (if (< pad 0)
                  (error 'shape-error "expand: cannot expand ~s to ~s, which has fewer dimensions"
                         (tensor-shape tx) shp)
                  (append (make-list pad 1) (tensor-shape tx)))))
    (broadcast-to tx (mapcar (lambda (d o) (if (eql d -1) o d)) shp old))))

(defcomposite contiguous (x)
  "(contiguous X) A contiguous copy of X (movement ops are otherwise views).
  (to-list (contiguous (transpose (tensor '((1 2) (3 4))))))  ; => ((1 3) (2 4))"
  (prim:copy (%as-tensor x)))

(defun %axis-arg (fn args required)
  ;; The axis of an op that takes it as (AXIS) or (:axis AXIS); nil when not given and not
  ;; REQUIRED. Both forms are kept: the positional one is the older.
  (cond ((null args) (if required (error 'type-error "~a: expected an axis, as AXIS or :axis AXIS" fn) nil))
        ((and (eq (car args) :axis) (= (length args) 2)) (second args))
        ((and (null (cdr args)) (not (keywordp (car args)))) (car args))
        (t (error 'type-error "~a: expected an axis, as AXIS or :axis AXIS, got ~s" fn args))))

(defcomposite flip (x &rest args)
  "(flip X &key axis) X reversed along AXIS (an integer or a list; all axes by default). The
axis may also be given alone: (flip X AXIS).
  (to-list (flip (tensor '(1 2 3)) :axis 0))  ; => (3 2 1)"
  (let ((tx (%as-tensor x))) (prim:flip tx (%axes 'flip (%axis-arg 'flip args nil) (ndim tx)))))

(defcomposite squeeze (x &rest args)
  "(squeeze X &key axis) X without its size-1 axes (or only AXIS, if it has size 1). The axis
may also be given alone: (squeeze X AXIS).
  (shape (squeeze (zeros '(1 2 1))))  ; => (2)"
  (let* ((tx (%as-tensor x)) (shp (tensor-shape tx)) (axis (%axis-arg 'squeeze args nil)))
    (if axis
        (let ((a (%axis 'squeeze axis (ndim tx))))
          (if (eql (nth a shp) 1) (prim:reshape tx (%remove-axes shp (list a))) tx))
        (prim:reshape tx (remove 1 shp)))))

(defcomposite unsqueeze (x &rest args)
  "(unsqueeze X AXIS) X with a new axis of size 1 inserted at AXIS (negative counts from the
end); also (unsqueeze X :axis AXIS).
  (shape (unsqueeze (zeros '(2 3)) 0))  ; => (1 2 3)"
  (let* ((tx (%as-tensor x)) (n (ndim tx))
         (a (%axis 'unsqueeze (%axis-arg 'unsqueeze args t) (+ n 1)))
         (shp (tensor-shape tx)))
    (prim:reshape tx (append (subseq shp 0 a) (list 1) (subseq shp a)))))

(defvar *list-flatten* flatten "The list version of flatten, from the prelude.
  (funcall *list-flatten* '(1 (2 (3))))  ; => (1 2 3)")

(defun flatten (x &rest args)
  "(flatten X [START END]) For a tensor, X with axes START..END (inclusive; by default all)
merged into one; also (flatten X :start START :end END). For a list, the list of its non-nil
atoms.
  (shape (flatten (zeros '(2 3 4)) 1))  ; => (2 12)"
  (if (not (tensorp x))
      (funcall *list-flatten* x)
      (let ((n (ndim x))
            (ends (%args-or-keys 'flatten "[START END] or :start START :end END" args '(:start :end) '(0 -1))))
        (if (= n 0)
            (prim:reshape x '(1))
            (let* ((s (%axis 'flatten (first ends) n)) (e (%axis 'flatten (second ends) n)) (shp (tensor-shape x)))
              (prim:reshape x (append (subseq shp 0 s) (list (apply #'dim* (subseq shp s (+ e 1)))) (subseq shp (+ e 1)))))))))
(puthash 'flatten t *composites*)

;;; --- padding --------------------------------------------------------------------------

(defun %full-pads (fn pads n)
  ;; Pairs given for the last axes apply to those; earlier axes get (0 0).
  (unless (and (listp pads) (every (lambda (p) (and (consp p) (= (length p) 2))) pads))
    (error 'type-error "~a: padding must be a list of (before after) pairs, got ~s" fn pads))
  (when (> (length pads) n)
    (error 'shape-error "~a: ~a padding pairs for a tensor with ~a dimensions" fn (length pads) n))
  (append (make-list (- n (length pads)) '(0 0)) pads))

(defun %shrink-axis (x axis b e)
  (prim:shrink x (let ((i -1)) (mapcar (lambda (d) (setq i (1+ i)) (if (= i axis) (list b e) (list 0 d))) (tensor-shape x)))))

(defun %pad-axis (x axis b e)
  (prim:pad x (let ((i -1)) (mapcar (lambda (d) (setq i (1+ i)) (if (= i axis) (list b e) '(0 0))) (tensor-shape x)))))

(defcomposite pad (x pads &key (mode :constant) (value 0))
  "(pad X PADS &key (mode :constant) (value 0)) X padded by PADS, a list of (before after)
pairs for the last axes. Modes: :constant (VALUE), :reflect (mirror without repeating the
edge), :replicate (repeat the edge).
  (to-list (pad (tensor '(1 2)) '((1 2))))  ; => (0 1 2 0 0)"
  (let* ((tx (%as-tensor x)) (n (ndim tx)) (pads (%full-pads 'pad pads n)))
    (case mode
      (:constant
       (let ((p (prim:pad tx pads)))
         (if (and (numberp value) (= value 0))
             p
             (where (prim:pad (prim:const t 'bool (tensor-shape tx)) pads) p value))))
      ((:reflect :replicate)
       (let ((r tx) (axis 0))
         (dolist (pr pads r)
           (let* ((b (first pr)) (e (second pr)) (len (nth axis (tensor-shape r))))
             (when (and (eq mode :reflect) (or (>= b len) (>= e len)))
               (error 'shape-error "pad: reflect padding (~a ~a) must be smaller than axis ~a of size ~a" b e axis len))
             (when (> b 0)
               (setq r (cat (list (if (eq mode :reflect)
                                      (prim:flip (%shrink-axis r axis 1 (+ b 1)) (list axis))
                                      (broadcast-to (%shrink-axis r axis 0 1) (%replace-nth (tensor-shape r) axis b)))
                                  r)
                            :axis axis)))
             (when (> e 0)
               (let ((len2 (nth axis (tensor-shape r))))
                 (setq r (cat (list r (if (eq mode :reflect)
                                          (prim:flip (%shrink-axis r axis (- len2 e 1) (- len2 1)) (list axis))
                                          (broadcast-to (%shrink-axis r axis (- len2 1) len2) (%replace-nth (tensor-shape r) axis e))))
                              :axis axis))))
             (setq axis (1+ axis))))))
      (t (error 'type-error "pad: mode must be :constant, :reflect or :replicate, got ~s" mode)))))

;;; --- slicing --------------------------------------------------------------------------

(defun %clamp (v lo hi) (max lo (min hi v)))

(defun %symbolic-index-p (x)
  ;; A symbolic dimension used as an index: a symbol, a (dim NAME VALUE), or (+|-|* ...) of them.
  (or (and (symbolp x) x (not (eq x t))) (dim-p x) (and (consp x) (member (car x) '(+ - *)))))

(defun %slice-axis (x axis start stop step)
  (let* ((n (nth axis (tensor-shape x))))
    (cond ((or (not (integerp n)) (%symbolic-index-p start) (%symbolic-index-p stop))
           ;; A symbolic axis or bound: plain ranges only, taken as given (checked when realized).
           (unless (= step 1) (error 'shape-error "slice: a step along symbolic axis ~a (~a) or with symbolic bounds is not supported" axis n))
           (%shrink-axis x axis (or start 0) (or stop n)))
          ((= step 0) (error 'index-error "slice: step must not be zero"))
          ((> step 0)
           (let* ((s (%clamp (if start (if (< start 0) (+ start n) start) 0) 0 n))
                  (e (%clamp (if stop (if (< stop 0) (+ stop n) stop) n) 0 n))
                  (e (max s e))
                  (y (%shrink-axis x axis s e))
                  (len (- e s)))
             (if (or (= step 1) (<= len 1))
                 (if (= step 1) y (%shrink-axis y axis 0 (min len 1)))
                 (let* ((k (ceiling len step))
                        (padded (%pad-axis y axis 0 (- (* k step) len)))
                        (shp (tensor-shape padded))
                        (split (append (subseq shp 0 axis) (list k step) (subseq shp (+ axis 1))))
                        (r (%shrink-axis (prim:reshape padded split) (+ axis 1) 0 1)))
                   (prim:reshape r (%remove-axes (tensor-shape r) (list (+ axis 1))))))))
          (t
           (let* ((s (if start (%clamp (if (< start 0) (+ start n) start) -1 (- n 1)) (- n 1)))
                  (e (if stop (%clamp (if (< stop 0) (+ stop n) stop) -1 (- n 1)) -1)))
             ;; Element i of X is element n-1-i of the flipped X.
             (%slice-axis (prim:flip x (list axis)) axis (- n 1 s) (- n 1 e) (- step)))))))

(defcomposite slice (x &rest specs)
  "(slice X SPEC...) A view of part of X, one SPEC per leading axis: t or nil keeps the
axis, an integer picks one index (dropping the axis; negative counts from the end), and
(START STOP [STEP]) takes a range as Python does (nil for a default, negative indices
count from the end, a negative STEP walks backwards). An index or bound may be symbolic (a
symbol bound by with-dims or realize's :bind, a (dim NAME VALUE), or (+ ...) of them): taken
as given, step 1, checked against the axis when realized.
  (to-list (slice (arange 6) '(1 4)))  ; => (1 2 3)"
  (let* ((tx (%as-tensor x)) (n (ndim tx)) (axis 0) (drop nil))
    (when (> (length specs) n)
      (error 'index-error "slice: ~a specs for a tensor with ~a dimensions" (length specs) n))
    (dolist (spec specs)
      (cond ((or (null spec) (eq spec t)))
            ((integerp spec)
             (let* ((len (nth axis (tensor-shape tx)))
                    (i (if (and (< spec 0) (integerp len)) (+ spec len) spec)))
               (when (and (integerp len) (or (< i 0) (>= i len)))
                 (error 'index-error "slice: index ~a out of range for axis ~a of size ~a" spec axis len))
               (setq tx (%shrink-axis tx axis i (dim+ i 1)))
               (push axis drop)))
            ((%symbolic-index-p spec)
             ;; A symbolic index (bound by with-dims or :bind), checked when realized.
             (setq tx (%shrink-axis tx axis spec (dim+ spec 1)))
             (push axis drop))
            ((listp spec)
             (setq tx (%slice-axis tx axis (first spec) (second spec) (or (third spec) 1))))
            (t (error 'type-error "slice: bad spec ~s (expected t, an integer, a symbolic index or (start stop [step]))" spec)))
      (setq axis (1+ axis)))
    (if drop (prim:reshape tx (%remove-axes (tensor-shape tx) drop)) tx)))

;;; --- symbolic positions and in-place writes -----------------------------------------------

(defun %dim-pair (v name)
  ;; One with-dims binding as (NAME . VALUE).
  (cond ((dim-p v) (let ((b (%dim-binding v))) (if name (cons name (cdr b)) b)))
        ((and name (integerp v) (>= v 0)) (cons name v))
        (t (error 'type-error "with-dims: ~a must be a non-negative integer or a (dim NAME VALUE), got ~s"
                  (or name "a binding") v))))

(defmacro with-dims (bindings &rest body)
  "(with-dims (BINDING...) BODY...) Runs BODY with symbolic dimensions bound to values. A
BINDING is (NAME VALUE), NAME a symbol and VALUE an integer or a (dim ...), or a variable
holding a (dim NAME VALUE). Tensors built in BODY whose shapes or slice bounds name NAME carry
its value, so they realize without :bind; their kernels stay symbolic in it, so one compiled
kernel serves every value (a KV cache's position):
(with-dims ((pos 7)) (slice cache t '(0 (+ pos 1)))) is rows 0..7, of shape ((+ 1 pos) ...):
  (let ((cache (reshape (arange 8 :dtype 'f32) '(4 2)))) (with-dims ((pos 1)) (to-list (slice cache '(0 (+ pos 1))))))  ; => ((0.0 1.0) (2.0 3.0))"
  (let ((pairs (mapcar (lambda (b)
                         (cond ((and (symbolp b) b) `(%dim-pair ,b nil))
                               ((and (consp b) (symbolp (car b)) (consp (cdr b)) (null (cddr b)))
                                `(%dim-pair ,(cadr b) ',(car b)))
                               (t (error 'program-error "with-dims: a binding is (NAME VALUE) or a variable holding a (dim NAME VALUE), got ~s" b))))
                       bindings)))
    `(let ((%outer-dims (%set-scoped-dims nil)))
       (%set-scoped-dims (append %outer-dims (list ,@pairs)))
       (unwind-protect (progn ,@body) (%set-scoped-dims %outer-dims)))))

(defun index-put! (target pos value &key (axis 0))
  "(index-put! TARGET POS VALUE &key (axis 0)) Writes VALUE into TARGET, a realized tensor, at
position POS along AXIS, in place, and returns TARGET. VALUE (a tensor or a number,
broadcast and cast to TARGET's dtype) has TARGET's shape with K at AXIS, writing positions
POS..POS+K-1, or TARGET's shape without AXIS, writing one. The write costs what VALUE holds,
not TARGET. POS is an integer (negative counts from the end), or symbolic: a (dim NAME VALUE)
or a symbol bound by with-dims. Every position of one shape runs the same compiled kernel, so
a decode step writing row POS of a KV cache compiles once:
(index-put! cache (dim 'pos 5) row) is cache[5] = row.
  (let ((cache (realize (zeros '(4 2))))) (index-put! cache 1 (tensor '(7.0 8.0))) (to-list cache))  ; => ((0.0 0.0) (7.0 8.0) (0.0 0.0) (0.0 0.0))"
  (let* ((shp (tensor-shape target))
         (rank (length shp))
         (ax (if (< axis 0) (+ axis rank) axis)))
    (unless (and (>= ax 0) (< ax rank))
      (error 'index-error "index-put!: axis ~a out of range for a tensor of shape ~a" axis shp))
    (let* ((v (%as-tensor value))
           (v (if (= (ndim v) (- rank 1)) (unsqueeze v :axis ax) v))
           (k (if (= (ndim v) rank) (nth ax (tensor-shape v)) 1))
           (n (nth ax shp))
           (pos (if (and (integerp pos) (< pos 0) (integerp n)) (+ pos n) pos)))
      (when (and (integerp pos) (integerp n) (integerp k) (or (< pos 0) (> (+ pos k) n)))
        (error 'index-error "index-put!: positions ~a..~a out of range for axis ~a of size ~a (shape ~a)"
               pos (+ pos k -1) ax n shp))
      ;; An integer position becomes a bound symbolic one, so the kernel serves every position.
      (let ((at (if (integerp pos) (dim '%index-put-position pos) pos)))
        (flet ((write ()
                 (let ((view (%shrink-axis target ax at (dim+ at k))))
                   (realize (prim:assign view (cast (broadcast-to v (tensor-shape view)) (dtype target)))))))
          (if (dim-p at) (with-dims (at) (write)) (write)))))
    target))

;;; --- joining and splitting --------------------------------------------------------------

(defun %dims= (s1 s2)
  (and (= (length s1) (length s2)) (loop for x in s1 for y in s2 always (dim= x y))))

(defcomposite cat (tensors &key (axis 0))
  "(cat TENSORS &key (axis 0)) The tensors joined along AXIS; other dimensions must match.
Dtypes promote.
  (to-list (cat (list (tensor '(1 2)) (tensor '(3))) :axis 0))  ; => (1 2 3)"
  (when (null tensors) (error 'type-error "cat: no tensors to join"))
  (let* ((ts (mapcar #'%as-tensor tensors))
         (dt (apply #'result-dtype ts))
         (ts (mapcar (lambda (x) (prim:cast x dt)) ts))
         (n (ndim (car ts)))
         (a (%axis 'cat axis (max n 1)))
         (ref (tensor-shape (car ts)))
         (k 0))
    (dolist (x ts)
      (unless (and (= (ndim x) n)
                   (%dims= (%remove-axes (tensor-shape x) (list a)) (%remove-axes ref (list a))))
        (error 'shape-error "cat: tensor ~a has shape ~s, which does not match ~s except along axis ~a"
               k (tensor-shape x) ref a))
      (setq k (1+ k)))
    (if (null (cdr ts))
        (car ts)
        (let* ((total (apply #'dim+ (mapcar (lambda (x) (nth a (tensor-shape x))) ts)))
               (offset 0) (acc nil))
          (dolist (x ts acc)
            (let* ((len (nth a (tensor-shape x)))
                   (p (%pad-axis x a offset (dim- total (dim+ offset len)))))
              (setq acc (if acc (prim:add acc p) p))
              (setq offset (dim+ offset len))))))))

(defcomposite stack (tensors &key (axis 0))
  "(stack TENSORS &key (axis 0)) The tensors (all of one shape) joined along a new AXIS.
  (shape (stack (list (zeros '(2)) (ones '(2)))))  ; => (2 2)"
  (when (null tensors) (error 'type-error "stack: no tensors to join"))
  (let* ((ts (mapcar #'%as-tensor tensors)) (a (%axis 'stack axis (+ (ndim (car ts)) 1))))
    (cat (mapcar (lambda (x) (unsqueeze x a)) ts) :axis a)))

(defcomposite vstack (tensors)
  "(vstack TENSORS) The tensors joined along axis 0 (1-d tensors become rows).
  (to-list (vstack (list (tensor '(1 2)) (tensor '(3 4)))))  ; => ((1 2) (3 4))"
  (cat (mapcar (lambda (x) (let ((tx (%as-tensor x))) (if (< (ndim tx) 2) (reshape tx 1 -1) tx))) tensors) :axis 0))

(defcomposite hstack (tensors)
  "(hstack TENSORS) The tensors joined along axis 1 (along axis 0 for 1-d tensors).
  (to-list (hstack (list (tensor '((1) (2))) (tensor '((3) (4))))))  ; => ((1 3) (2 4))
  (to-list (hstack (list (tensor '(1 2)) (tensor '(3)))))  ; => (1 2 3)"
  (let ((ts (mapcar #'%as-tensor tensors)))
    (cat ts :axis (if (< (ndim (car ts)) 2) 0 1))))

(defcomposite split (x sizes &key (axis 0))
  "(split X SIZES &key (axis 0)) A list of views of X along AXIS: pieces of SIZES (a list
whose sum is the axis size), or of size SIZES each (the last may be smaller).
  (mapcar #'to-list (split (arange 5) '(2 3)))  ; => ((0 1) (2 3 4))"
  (let* ((tx (%as-tensor x)) (a (%axis 'split axis (ndim tx))) (n (nth a (tensor-shape tx))))
    (when (integerp sizes)
      (when (<= sizes 0) (error 'type-error "split: size must be positive, got ~a" sizes))
      (setq sizes (let ((out nil) (left n))
                    (loop while (> left 0) do (push (min sizes left) out) (setq left (- left sizes)))
                    (reverse out))))
    (unless (eql (apply #'+ sizes) n)
      (error 'shape-error "split: sizes ~s add up to ~a, but axis ~a has size ~a" sizes (apply #'+ sizes) a n))
    (let ((offset 0))
      (mapcar (lambda (s) (prog1 (%shrink-axis tx a offset (+ offset s)) (setq offset (+ offset s)))) sizes))))

(defcomposite chunk (x n &key (axis 0))
  "(chunk X N &key (axis 0)) X split into N pieces of equal size along AXIS (the last may be
smaller).
  (mapcar #'to-list (chunk (arange 5) 2))  ; => ((0 1 2) (3 4))
  (mapcar #'shape (chunk (zeros '(2 6)) 3 :axis 1))  ; => ((2 2) (2 2) (2 2))"
  (let* ((tx (%as-tensor x)) (len (nth (%axis 'chunk axis (ndim tx)) (tensor-shape tx))))
    (split tx (max 1 (ceiling len n)) :axis axis)))

(defcomposite repeat (x n &key axis)
  "(repeat X N &key axis) Each element of X repeated N times along AXIS (flattened X when
AXIS is nil), as numpy.repeat does: (repeat [1 2] 2) is [1 1 2 2].
  (to-list (repeat (tensor '(1 2)) 2))  ; => (1 1 2 2)"
  (let* ((tx (%as-tensor x)) (tx (if axis tx (prim:reshape tx (list (numel tx)))))
         (a (if axis (%axis 'repeat axis (ndim tx)) 0))
         (shp (tensor-shape tx))
         (inner (append (subseq shp 0 (+ a 1)) (list 1) (subseq shp (+ a 1))))
         (wide (append (subseq shp 0 (+ a 1)) (list n) (subseq shp (+ a 1)))))
    (prim:reshape (prim:expand (prim:reshape tx inner) wide)
                  (%replace-nth shp a (dim* (nth a shp) n)))))

(defcomposite tile (x reps)
  "(tile X REPS) X repeated REPS[i] times along each axis i, as numpy.tile does (REPS may be
an integer; missing leading entries are 1).
  (to-list (tile (tensor '(1 2)) '(2)))  ; => (1 2 1 2)"
  (let* ((tx (%as-tensor x))
         (reps (if (integerp reps) (list reps) reps))
         (n (max (ndim tx) (length reps)))
         (reps (append (make-list (- n (length reps)) 1) reps))
         (tx (prim:reshape tx (append (make-list (- n (ndim tx)) 1) (tensor-shape tx))))
         (shp (tensor-shape tx))
         (inner nil) (wide nil) (final nil))
    (loop for d in shp for r in reps
          do (setq inner (append inner (list 1 d))
                   wide (append wide (list r d))
                   final (append final (list (dim* r d)))))
    (prim:reshape (prim:expand (prim:reshape tx inner) wide) final)))

;;; --- indexing by tensors ----------------------------------------------------------------

(defun %check-indices (fn index n &optional (negative-ok t))
  "Checks that every entry of INDEX lies in [-N, N), or [0, N) when NEGATIVE-OK is nil (also
on every replay of a captured function: the check is a guard)."
  (when (and (integerp n) (> (numel index) 0))
    (let ((lo (amin index)) (hi (amax index)))
      (unless (%guard (logical-and (ge lo (if negative-ok (- n) 0)) (lt hi n)) 'index-error
                      (format nil "~a: an index is out of range for an axis of size ~a" fn n))
        (let ((lo (item lo)) (hi (item hi)))
          (error 'index-error "~a: index ~a out of range for an axis of size ~a" fn (if (>= hi n) hi lo) n))))))

(defun %index-tensor (fn index)
  ;; Integer indices, widened: i8/u8/i16 to i32 and u32 to i64, so that negative indices and
  ;; bounds compare in a type that holds them (a u8 index compared with -N wrapped; issue 19).
  (let* ((ix (%as-tensor index)) (dt (tensor-dtype ix)))
    (when (or (dtype-float-p dt) (eq dt 'bool))
      (error 'dtype-error "~a: indices must be an integer tensor, got ~a" fn dt))
    (cond ((member dt '(i8 u8 i16)) (prim:cast ix 'i32))
          ((eq dt 'u32) (prim:cast ix 'i64))
          (t ix))))

(defcomposite one-hot (indices n &key (dtype 'i32))
  "(one-hot INDICES N &key (dtype 'i32)) A tensor with a new last axis of size N that is 1 at
each index of INDICES and 0 elsewhere. Every index must be in [0, N) (an index-error
otherwise, as PyTorch's one_hot).
  (to-list (one-hot (tensor '(0 2)) 3))  ; => ((1 0 0) (0 0 1))"
  (let ((ix (%index-tensor 'one-hot indices)))
    (%check-indices 'one-hot ix n nil)
    (prim:cast (equals (unsqueeze ix -1) (arange n :dtype (tensor-dtype ix))) dtype)))

(defun %axis-and-args (fn usage args n)
  ;; The arguments after X of an op taking N arguments and an axis: either (ARG... &key axis)
  ;; or, in PyTorch's order, (AXIS ARG...) with AXIS an integer. The two differ in the number
  ;; of arguments before any keyword, so neither is mistaken for the other. Returns
  ;; (AXIS ARG...), AXIS 0 when not given.
  (let ((pos nil) (keys args))
    (loop while (and keys (not (keywordp (car keys)))) do (push (pop keys) pos))
    (setq pos (reverse pos))
    (cond ((and (= (length pos) (+ n 1)) (integerp (car pos)) (null keys)) pos)
          ((and (= (length pos) n) (or (null keys) (and (eq (car keys) :axis) (= (length keys) 2))))
           (cons (getf keys :axis 0) pos))
          (t (error 'type-error "~a: expected ~a, got ~s" fn usage args)))))

(defcomposite gather (x &rest args)
  "(gather X INDEX &key (axis 0)) out[i][j][k] = X[INDEX[i][j][k]][j][k] for AXIS 0 (likewise
for other axes), as torch.gather: INDEX has X's rank, and its other dimensions are at most
X's. The old form (gather X AXIS INDEX) still works. The gradient reaches the gathered
elements (summed where an element is gathered more than once).
  (to-list (gather (tensor '((1 2) (3 4))) (tensor '((1 0)) :dtype 'i64) :axis 0))  ; => ((3 2))"
  (destructuring-bind (axis index) (%axis-and-args 'gather "(gather X INDEX &key axis)" args 1)
    (let* ((tx (%as-tensor x)) (ix (%index-tensor 'gather index)) (n (ndim tx))
           (a (%axis 'gather axis n))
           (ishape (tensor-shape ix)) (n-a (nth a (tensor-shape tx))))
      (unless (= (ndim ix) n)
        (error 'shape-error "gather: index has shape ~s, which is not of X's rank (X is ~s)" ishape (tensor-shape tx)))
      (%check-indices 'gather ix n-a)
      (let* ((ix (where (lt ix 0) (add ix n-a) ix))
             (ranges (let ((i -1)) (mapcar (lambda (d) (setq i (1+ i)) (if (= i a) (list 0 d) (list 0 (nth i ishape)))) (tensor-shape tx)))))
        (prim:gather (prim:shrink tx ranges) ix a)))))

(defcomposite take (x indices)
  "(take X INDICES) Elements of the flattened X at INDICES (negative counts from the end);
the result has INDICES' shape.
  (to-list (take (tensor '((1 2) (3 4))) (tensor '(0 3))))  ; => (1 4)"
  (let* ((tx (%as-tensor x)) (ix (%index-tensor 'take indices))
         (len (numel tx)) (flat (prim:reshape tx (list len))))
    (%check-indices 'take ix len)
    (let ((ix (where (lt ix 0) (add ix len) ix)))
      (prim:reshape (prim:gather flat (prim:reshape ix (list (numel ix))) 0) (tensor-shape ix)))))

(defun %select-along (x index axis)
  ;; The slices of X at the positions of INDEX (1-d, in range) along AXIS: INDEX's values
  ;; spread over the other axes (a view) select whole slices.
  (let* ((shp (tensor-shape x)) (k (numel index))
         (ones (let ((i -1)) (mapcar (lambda (d) (setq i (1+ i)) (if (= i axis) k 1)) shp))))
    (prim:gather x (prim:expand (prim:reshape index ones) (%replace-nth shp axis k)) axis)))

(defcomposite index-select (x index &key (axis 0))
  "(index-select X INDEX &key (axis 0)) The slices of X at positions INDEX (a 1-d integer
tensor or a list; negative counts from the end) along AXIS, in INDEX's order and repeats
allowed, as torch.index_select: AXIS of the result has INDEX's length. The gradient reaches
the selected slices (summed over repeats).
  (to-list (index-select (tensor '((1 2) (3 4) (5 6))) (tensor '(2 0)) :axis 0))  ; => ((5 6) (1 2))"
  (let* ((tx (%as-tensor x)) (ix (%index-tensor 'index-select index)) (nd (ndim tx))
         (a (%axis 'index-select axis nd)) (n (nth a (tensor-shape tx))))
    (when (> (ndim ix) 1)
      (error 'shape-error "index-select: INDEX must be 1-d, got shape ~s" (tensor-shape ix)))
    (%check-indices 'index-select ix n)
    (%select-along tx (prim:reshape (where (lt ix 0) (add ix n) ix) (list (numel ix))) a)))

(defcomposite masked-fill (x mask value)
  "(masked-fill X MASK VALUE) X with VALUE (a number or a 0-d tensor) where MASK is true, as
torch.Tensor.masked_fill: MASK broadcasts to X's shape, and the result has X's shape and
dtype. The gradient reaches X where MASK is false (and a tensor VALUE from the rest).
  (to-list (masked-fill (tensor '(1 2 3)) (tensor '(nil t nil)) 0))  ; => (1 0 3)"
  (let* ((tx (%as-tensor x)) (m (%bool mask)))
    (unless (%dims= (broadcast-shapes (tensor-shape m) (tensor-shape tx)) (tensor-shape tx))
      (error 'shape-error "masked-fill: a mask of shape ~s does not broadcast to X's shape ~s"
             (tensor-shape m) (tensor-shape tx)))
    (when (and (tensorp value) (/= (ndim value) 0))
      (error 'shape-error "masked-fill: VALUE must be a number or a 0-d tensor, got shape ~s" (tensor-shape value)))
    (where m (if (tensorp value) (prim:cast value (tensor-dtype tx)) value) tx)))

(defun %scatter (fn x axis index src last-wins)
  ;; X with SRC's elements (shrunk to INDEX's shape) added at (or, when LAST-WINS, written to)
  ;; the positions INDEX gives along AXIS.
  (let* ((tx (%as-tensor x)) (ix (%index-tensor fn index)) (nd (ndim tx))
         (a (%axis fn axis nd)) (ishape (tensor-shape ix)) (xshape (tensor-shape tx))
         (n-a (nth a xshape)) (dt (tensor-dtype tx)))
    (unless (and (= (ndim ix) nd)
                 (loop for i from 0 below nd always (or (= i a) (<= (nth i ishape) (nth i xshape)))))
      (error 'shape-error "~a: index of shape ~s for X of shape ~s (it needs X's rank, and other dimensions at most X's)"
             fn ishape xshape))
    (when (tensorp src)
      (unless (and (= (ndim src) nd) (loop for i from 0 below nd always (<= (nth i ishape) (nth i (tensor-shape src)))))
        (error 'shape-error "~a: index of shape ~s for a source of shape ~s (it needs the source's rank, and dimensions at most its)"
               fn ishape (tensor-shape src))))
    (%check-indices fn ix n-a)
    (if last-wins
        (%scatter-last tx ix a ishape xshape n-a dt src)
        (%scatter-add tx ix a ishape xshape dt src))))

(defun %scatter-values (src dt ishape)
  ;; The part of SRC of INDEX's shape ISHAPE, in dtype DT (a number fills it).
  (if (tensorp src)
      (prim:cast (prim:shrink src (mapcar (lambda (d) (list 0 d)) ishape)) dt)
      (prim:const src dt ishape)))

(defun %scatter-add (tx ix a ishape xshape dt src)
  ;; The primitive adds into a tensor of the index's shape but along A: a smaller index adds
  ;; into that corner of X.
  (let* ((ix (where (lt ix 0) (add ix (nth a xshape)) ix))
         (sv (%scatter-values src dt ishape))
         (corner (%replace-nth ishape a (nth a xshape))))
    (if (%dims= corner xshape)
        (prim:scatter-add tx ix sv a)
        (let ((sums (prim:pad (prim:scatter-add (prim:const 0 dt corner) ix sv a)
                              (mapcar (lambda (c x) (list 0 (dim- x c))) corner xshape))))
          (if (eq dt 'bool) (logical-or tx sums) (prim:add tx sums))))))

(defun %scatter-last (tx ix a ishape xshape n-a dt src)
  ;; Of several sources for one target, the last along A wins: each index element picks its
  ;; target with a one-hot along a new last axis of X's size.
  (let* ((ix (where (lt ix 0) (add ix n-a) ix))
         (sv (%scatter-values src dt ishape))
         (wide (append ishape (list n-a)))
         (oh (equals (unsqueeze ix -1) (arange n-a :dtype (tensor-dtype ix))))   ; ISHAPE + (n-a)
         (keep (let* ((pos (prim:iota wide a 'i32))
                      (last (prim:reduce :max (prim:where oh pos (prim:const -1 'i32 wide)) (list a))))
                 (logical-and oh (equals pos last))))
         (kind (if (eq dt 'bool) :max :sum))
         (moved (lambda (r)   ; reduced over AXIS (kept as 1), to AXIS of size n-a, padded to X's shape
                  (let* ((r (prim:reshape (transpose r a -1) (%replace-nth ishape a n-a))))
                    (prim:pad r (mapcar (lambda (i x) (list 0 (dim- x i))) (%replace-nth ishape a n-a) xshape)))))
         (sums (funcall moved (prim:reduce kind (prim:where keep (prim:expand (unsqueeze sv -1) wide) (prim:const 0 dt wide)) (list a)))))
    (where (funcall moved (prim:reduce :max keep (list a))) sums tx)))

(defcomposite scatter-add (x &rest args)
  "(scatter-add X INDEX SRC &key (axis 0)) X with SRC's elements added at the positions INDEX
gives along AXIS, as torch.scatter_add: for AXIS 0, out[INDEX[i][j]][j] += SRC[i][j]. INDEX
has X's rank, its dimensions at most SRC's (the part of SRC of INDEX's shape is used) and,
but for AXIS, at most X's; repeated indices add up. Also (scatter-add X AXIS INDEX SRC).
Gradients reach X and the used part of SRC.
  (to-list (scatter-add (zeros '(3) :dtype 'i32) (tensor '(0 2 0) :dtype 'i64) (tensor '(1 2 3) :dtype 'i32)))  ; => (4 0 2)"
  (destructuring-bind (axis index src)
      (%axis-and-args 'scatter-add "(scatter-add X INDEX SRC &key axis)" args 2)
    (%scatter 'scatter-add x axis index src nil)))

(defcomposite scatter (x &rest args)
  "(scatter X INDEX SRC &key (axis 0)) X with SRC's elements written at the positions INDEX
gives along AXIS, as torch.scatter: for AXIS 0, out[INDEX[i][j]][j] = SRC[i][j]. SRC may be a
number (torch's value form). Shapes as for scatter-add. Where several indices name one
place, the last along AXIS wins (PyTorch leaves that undefined). Also (scatter X AXIS INDEX
SRC). The gradient reaches X where nothing is written, and the written elements of SRC.
  (to-list (scatter (zeros '(4) :dtype 'i32) (tensor '(1 3)) (tensor '(5 7))))  ; => (0 5 0 7)
  (to-list (scatter (zeros '(2 2) :dtype 'i32) (tensor '((1) (0))) 9 :axis 1))  ; => ((0 9) (9 0))"
  (destructuring-bind (axis index src)
      (%axis-and-args 'scatter "(scatter X INDEX SRC &key axis)" args 2)
    (%scatter 'scatter x axis index src t)))

;; The builtin copies the rows as data, without gradients: fast for batching a data set,
;; but a loss through it silently lost its gradient (issue 19).
(defvar *take-rows-copy* take-rows "The builtin take-rows: rows copied as data, untracked.
  (to-list (funcall *take-rows-copy* (tensor '((1 2) (3 4) (5 6))) '(2 0)))  ; => ((5 6) (1 2))")

(defun take-rows (x indices)
  "(take-rows X INDICES) The rows of X (along axis 0) at INDICES, a list of integers or an
integer tensor, in order. When X requires a gradient the rows are selected with
index-select, so the gradient reaches them; otherwise they are copied directly (as a data
loader's batches are).
  (to-list (take-rows (tensor '((1 2) (3 4) (5 6))) '(2 0)))  ; => ((5 6) (1 2))"
  (if (and (tensorp x) (requires-grad-p x))
      (index-select x indices :axis 0)
      (funcall *take-rows-copy* x indices)))

(defun %triangle (fn x k upper)
  (let* ((tx (%as-tensor x)) (n (ndim tx)))
    (when (< n 2) (error 'shape-error "~a: needs at least 2 dimensions, got shape ~s" fn (tensor-shape tx)))
    (let* ((shp (last (tensor-shape tx) 2))
           (diff (prim:add (prim:iota shp 1 'i32) (prim:neg (prim:iota shp 0 'i32))))
           (kk (prim:const k 'i32 shp))
           (mask (if upper (logical-not (prim:cmplt diff kk)) (logical-not (prim:cmplt kk diff)))))
      (where mask tx (prim:const 0 (tensor-dtype tx) '())))))

(defcomposite triu (x &optional (k 0))
  "(triu X [K]) X with the elements below the K-th diagonal of its last two axes zeroed.
  (to-list (triu (ones '(3 3) :dtype 'i32)))  ; => ((1 1 1) (0 1 1) (0 0 1))
  (to-list (triu (ones '(3 3) :dtype 'i32) 1))  ; => ((0 1 1) (0 0 1) (0 0 0))"
  (%triangle 'triu x k t))

(defcomposite tril (x &optional (k 0))
  "(tril X [K]) X with the elements above the K-th diagonal of its last two axes zeroed.
  (to-list (tril (ones '(3 3) :dtype 'i32)))  ; => ((1 0 0) (1 1 0) (1 1 1))"
  (%triangle 'tril x k nil))
