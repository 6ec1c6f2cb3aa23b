;;; SPDX-License-Identifier: Apache-2.0
;;; sparse: sparse tensors in coordinate (COO) form, as torch.sparse_coo_tensor, and the
;;; sparse-dense matrix product a graph neural network layer needs. (require 'sparse)
;;;
;;; A sparse tensor holds INDICES (an i64 tensor of shape (RANK NNZ): column j is the position
;;; of the j-th stored element), VALUES (a tensor of shape (NNZ)) and its SHAPE. Positions may
;;; repeat (their values add up, as in PyTorch, until sparse:coalesce sums them). Everything is
;;; built on gather and scatter-add, so gradients reach the values and the dense operands, and
;;; every device runs it.

(defstruct (sparse:coo (:constructor sparse:%make-coo (indices values shape)) (:conc-name sparse:%coo-)
                       (:predicate sparse:%coo-p) (:copier nil))
  indices values shape)

(defun sparse:sparse-p (x)
  "(sparse:sparse-p X) Whether X is a sparse tensor.
  (list (sparse:sparse-p (sparse:coo '((0)) '(1.0) '(2))) (sparse:sparse-p (zeros '(2))))  ; => (t nil)"
  (sparse:%coo-p x))

(defun sparse:%check (name s)
  (unless (sparse:%coo-p s)
    (error 'type-error "~a: expected a sparse tensor (sparse:coo), got ~s" name s))
  s)

(defun sparse:coo (indices values shape)
  "(sparse:coo INDICES VALUES SHAPE) A sparse tensor of SHAPE whose element at the position
in column j of INDICES (RANK x NNZ: an integer tensor or a list of RANK lists) is VALUES[j] (a
tensor or a list of NNZ numbers); the rest are zeros. Repeated positions add up. Indices
outside SHAPE are an index-error.
  (sparse:nnz (sparse:coo '((0 1 1) (2 0 2)) '(3.0 4.0 5.0) '(2 3)))  ; => 3
  (to-list (sparse:to-dense (sparse:coo '((0 1 1) (2 0 2)) '(3.0 4.0 5.0) '(2 3))))  ; => ((0.0 0.0 3.0) (4.0 0.0 5.0))"
  (let* ((idx (if (tensorp indices) (cast indices 'i64) (tensor indices :dtype 'i64)))
         (vals (if (tensorp values) values (tensor values))))
    (unless (and (listp shape) (every (lambda (d) (and (integerp d) (>= d 0))) shape))
      (error 'type-error "sparse:coo: the shape must be a list of non-negative integers, got ~s" shape))
    (when (and (= (ndim idx) 1) (= (numel idx) 0)) (setq idx (reshape idx (list (length shape) 0))))
    (unless (and (= (ndim idx) 2) (= (first (shape idx)) (length shape)))
      (error 'shape-error "sparse:coo: indices must be (~a NNZ) for a shape of rank ~a, got ~s"
             (length shape) (length shape) (shape idx)))
    (unless (and (= (ndim vals) 1) (= (first (shape vals)) (second (shape idx))))
      (error 'shape-error "sparse:coo: ~a positions but values of shape ~s" (second (shape idx)) (shape vals)))
    (when (> (second (shape idx)) 0)
      (let ((lo (to-list (amin idx :axis 1))) (hi (to-list (amax idx :axis 1))))
        (loop for l in lo for h in hi for d in shape for axis from 0
              do (when (or (< l 0) (>= h d))
                   (error 'index-error "sparse:coo: an index along axis ~a is outside 0..~a (found ~a)" axis (- d 1)
                          (if (< l 0) l h))))))
    (sparse:%make-coo idx vals shape)))

(defun sparse:indices (s) "(sparse:indices S) The (RANK NNZ) positions of S's stored elements.
  (to-list (sparse:indices (sparse:coo '((1) (0)) '(2.0) '(2 2))))  ; => ((1) (0))"
  (sparse:%coo-indices (sparse:%check "sparse:indices" s)))

(defun sparse:values (s) "(sparse:values S) The (NNZ) stored values of S.
  (to-list (sparse:values (sparse:coo '((1) (0)) '(2.0) '(2 2))))  ; => (2.0)"
  (sparse:%coo-values (sparse:%check "sparse:values" s)))

(defun sparse:shape (s) "(sparse:shape S) S's shape as a dense tensor would have it.
  (sparse:shape (sparse:coo '((1) (0)) '(2.0) '(2 2)))  ; => (2 2)"
  (sparse:%coo-shape (sparse:%check "sparse:shape" s)))

(defun sparse:nnz (s) "(sparse:nnz S) How many elements S stores (repeated positions counted each time).
  (sparse:nnz (sparse:coo '((0 0) (1 1)) '(1.0 2.0) '(2 2)))  ; => 2"
  (second (shape (sparse:%coo-indices (sparse:%check "sparse:nnz" s)))))

(defun sparse:%flat (s)
  ;; Each stored element's position in the row-major flattening of S's shape: an i64 (NNZ).
  (let* ((shp (sparse:%coo-shape s))
         (idx (sparse:%coo-indices s))
         (flat (zeros (list (sparse:nnz s)) :dtype 'i64))
         (stride 1))
    (loop for axis from (- (length shp) 1) downto 0
          do (setq flat (add flat (mul (slice idx axis) stride)))
             (setq stride (* stride (nth axis shp))))
    flat))

(defun sparse:%indices-of (positions shp)
  ;; The (RANK NNZ) i64 index tensor of POSITIONS, a list of row-major flat positions in SHP.
  (if (null positions)
      (zeros (list (length shp) 0) :dtype 'i64)
      (let ((coordinates (mapcar (lambda (p)
                                   (let ((rest p) (out nil))
                                     (dolist (d (reverse shp)) (push (mod rest d) out) (setq rest (floor rest d)))
                                     out))
                                 positions)))
        (tensor (apply #'mapcar #'list coordinates) :dtype 'i64))))

(defun sparse:to-dense (s)
  "(sparse:to-dense S) S as a dense tensor (repeated positions summed). Its gradient reaches S's
values (as the dense gradient at their positions).
  (to-list (sparse:to-dense (sparse:coo '((0 0) (1 1)) '(1.0 2.0) '(2 2))))  ; => ((0.0 3.0) (0.0 0.0))"
  (sparse:%check "sparse:to-dense" s)
  (let* ((shp (sparse:%coo-shape s))
         (vals (sparse:%coo-values s))
         (n (apply #'* shp)))
    (reshape (scatter-add (zeros (list n) :dtype (dtype vals)) (sparse:%flat s) vals) shp)))

(defun sparse:from-dense (x)
  "(sparse:from-dense X) The sparse tensor of X's nonzero elements, in row-major order (X is
read: it is computed here). Gradients of the values reach X at those positions.
  (let ((s (sparse:from-dense (tensor '((0.0 2.0) (3.0 0.0))))))
    (list (to-list (sparse:indices s)) (to-list (sparse:values s))))  ; => (((0 1) (1 0)) (2.0 3.0))"
  (let* ((shp (shape x))
         (flat (to-list (reshape (ne x 0) (list (numel x)))))
         (positions (loop for v in flat for i from 0 when v collect i)))
    (sparse:coo (sparse:%indices-of positions shp)
                (index-select (reshape x (list (numel x))) (tensor positions :dtype 'i64))
                shp)))

(defun sparse:coalesce (s)
  "(sparse:coalesce S) S with each position stored once (repeated positions summed), in
row-major order, as torch's coalesce. The positions are read (computed here); gradients reach
the values.
  (let ((c (sparse:coalesce (sparse:coo '((1 0 1) (0 1 0)) '(1.0 2.0 3.0) '(2 2)))))
    (list (to-list (sparse:indices c)) (to-list (sparse:values c))))  ; => (((0 1) (1 0)) (2.0 4.0))"
  (sparse:%check "sparse:coalesce" s)
  (let* ((shp (sparse:%coo-shape s))
         (flat (to-list (sparse:%flat s)))
         (unique (sort (remove-duplicates flat) #'<))
         (slot (make-hash-table)))
    (loop for u in unique for i from 0 do (setf (gethash u slot) i))
    (let* ((inverse (tensor (mapcar (lambda (f) (gethash f slot)) flat) :dtype 'i64))
           (vals (sparse:%coo-values s))
           (summed (scatter-add (zeros (list (length unique)) :dtype (dtype vals)) inverse vals)))
      (sparse:%make-coo (sparse:%indices-of unique shp) summed shp))))

(defun sparse:transpose (s)
  "(sparse:transpose S) The transpose of the sparse matrix S (its two index rows swapped).
  (sparse:shape (sparse:transpose (sparse:coo '((0) (2)) '(1.0) '(2 3))))  ; => (3 2)"
  (sparse:%check "sparse:transpose" s)
  (unless (= (length (sparse:%coo-shape s)) 2)
    (error 'shape-error "sparse:transpose: expected a sparse matrix, got shape ~s" (sparse:%coo-shape s)))
  (let ((idx (sparse:%coo-indices s)))
    (sparse:%make-coo (stack (list (slice idx 1) (slice idx 0))) (sparse:%coo-values s)
                      (reverse (sparse:%coo-shape s)))))

(defun sparse:add (a b)
  "(sparse:add A B) The sum of two sparse tensors of one shape (their stored elements
together, uncoalesced).
  (to-list (sparse:to-dense (sparse:add (sparse:coo '((0)) '(1.0) '(2)) (sparse:coo '((0)) '(2.0) '(2)))))  ; => (3.0 0.0)"
  (sparse:%check "sparse:add" a)
  (sparse:%check "sparse:add" b)
  (unless (equal (sparse:%coo-shape a) (sparse:%coo-shape b))
    (error 'shape-error "sparse:add: shapes ~s and ~s differ" (sparse:%coo-shape a) (sparse:%coo-shape b)))
  (sparse:%make-coo (cat (list (sparse:%coo-indices a) (sparse:%coo-indices b)) :axis 1)
                    (cat (list (sparse:%coo-values a) (sparse:%coo-values b)))
                    (sparse:%coo-shape a)))

(defun sparse:scale (s x)
  "(sparse:scale S X) S with every value multiplied by the number (or 0-d tensor) X.
  (to-list (sparse:values (sparse:scale (sparse:coo '((0)) '(1.5) '(2)) 2.0)))  ; => (3.0)"
  (sparse:%check "sparse:scale" s)
  (sparse:%make-coo (sparse:%coo-indices s) (mul (sparse:%coo-values s) x) (sparse:%coo-shape s)))

(defun sparse:matmul (s d)
  "(sparse:matmul S D) The product of the sparse matrix S (M K) and the dense D (K F) or (K),
dense (M F) or (M): each stored element (i, j, v) adds v D[j] to row i (a gather of D's rows
and a scatter-add, so it costs what the stored elements do, not M K). Gradients reach S's
values and D, as torch.sparse.mm's.
  (let ((a (sparse:coo '((0 1) (1 0)) '(2.0 3.0) '(2 2))))
    (to-list (sparse:matmul a (tensor '((1.0 10.0) (2.0 20.0))))))  ; => ((4.0 40.0) (3.0 30.0))"
  (sparse:%check "sparse:matmul" s)
  (let ((shp (sparse:%coo-shape s)))
    (unless (= (length shp) 2)
      (error 'shape-error "sparse:matmul: expected a sparse matrix, got shape ~s" shp))
    (unless (and (tensorp d) (<= 1 (ndim d) 2) (equal (first (shape d)) (second shp)))
      (error 'shape-error "sparse:matmul: a sparse ~s matrix times ~s (expected (~a F) or (~a))" shp
             (if (tensorp d) (shape d) d) (second shp) (second shp)))
    (if (= (ndim d) 1)
        (squeeze (sparse:matmul s (unsqueeze d -1)) -1)
        (let* ((idx (sparse:%coo-indices s))
               (rows (slice idx 0))
               (cols (slice idx 1))
               (f (second (shape d)))
               (vals (sparse:%coo-values s))
               (dt (result-dtype vals d))
               (picked (mul (index-select (cast d dt) cols) (unsqueeze (cast vals dt) -1))))
          (scatter-add (zeros (list (first shp) f) :dtype dt)
                       (expand (unsqueeze rows -1) (sparse:nnz s) f)
                       picked)))))

(defun sparse:sum (s &key axis)
  "(sparse:sum S &key axis) The sum of S's elements, or (dense) along AXIS of a sparse matrix.
  (to-list (sparse:sum (sparse:coo '((0 1 1) (1 0 1)) '(1.0 2.0 3.0) '(2 2)) :axis 1))  ; => (1.0 5.0)"
  (sparse:%check "sparse:sum" s)
  (if (null axis)
      (sum (sparse:%coo-values s))
      (let* ((shp (sparse:%coo-shape s))
             (axis (if (< axis 0) (+ axis (length shp)) axis)))
        (unless (and (= (length shp) 2) (<= 0 axis 1))
          (error 'shape-error "sparse:sum: an axis of a sparse matrix, got axis ~a of shape ~s" axis shp))
        ;; Summing out AXIS keeps the other index.
        (let ((keep (slice (sparse:%coo-indices s) (- 1 axis)))
              (vals (sparse:%coo-values s)))
          (scatter-add (zeros (list (nth (- 1 axis) shp)) :dtype (dtype vals)) keep vals)))))

(provide 'sparse)
