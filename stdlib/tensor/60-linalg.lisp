;;; SPDX-License-Identifier: Apache-2.0
;;; Linear algebra: matmul (batched, broadcasting), dot, outer, einsum.

(defcomposite matmul (a b)
  "(matmul A B) The matrix product. 1-d operands act as a row (A) or column (B) vector and
that axis is dropped from the result; leading batch axes broadcast, as in NumPy.
  (to-list (matmul (tensor '((1.0 2.0) (3.0 4.0))) (tensor '((1.0) (1.0)))))  ; => ((3.0) (7.0))"
  (let* ((ta (%as-tensor a)) (tb (%as-tensor b)))
    (when (or (= (ndim ta) 0) (= (ndim tb) 0))
      (error 'shape-error "matmul: operands must have at least 1 dimension, got ~s x ~s" (tensor-shape ta) (tensor-shape tb)))
    (when (or (%complexp ta) (%complexp tb))
      (return-from matmul (%complex-matmul ta tb)))
    (let* ((a2 (if (= (ndim ta) 1) (unsqueeze ta 0) ta))
           (b2 (if (= (ndim tb) 1) (unsqueeze tb 1) tb))
           (k1 (car (last (tensor-shape a2))))
           (k2 (nth (- (ndim b2) 2) (tensor-shape b2))))
      (unless (dim= k1 k2)
        (error 'shape-error "matmul: inner dimensions differ, ~s x ~s" (tensor-shape ta) (tensor-shape tb)))
      (let ((r (%matmul2 a2 b2)))
        (cond ((and (= (ndim ta) 1) (= (ndim tb) 1)) (reshape r nil))
              ((= (ndim ta) 1) (squeeze r -2))
              ((= (ndim tb) 1) (squeeze r -1))
              (t r))))))

(defun %sum-to (x shp)
  ;; X summed over the axes it was broadcast along to reach its shape from SHP.
  (let* ((extra (- (ndim x) (length shp)))
         (x (if (> extra 0) (sum x :axis (loop for i from 0 below extra collect i)) x))
         (axes (loop for d in shp for e in (tensor-shape x) for i from 0
                     when (and (eql d 1) (not (eql e 1))) collect i)))
    (if axes (sum x :axis axes :keepdim t) x)))

(defun %split-size (k n m)
  ;; For a long sum of K terms into a small N x M result (a weight gradient summed over a
  ;; batch of rows), a chunk size dividing K whose slice of the right operand (chunk x M
  ;; floats) stays in cache; nil for other shapes (a square matmul gains nothing).
  (when (and (integerp k) (integerp n) (integerp m) (>= k (* 8 (max n m))))
    (let ((target (max 128 (min 4096 (floor 32768 (max m 1))))))
      (when (>= k (* 4 target))
        (loop for b from target downto 128 when (= 0 (mod k b)) return b)))))

;; (for a softmax feeding the product as A: see *grad-products*)
(defun %note-product (ga a g y)
  (when (and *grad-products* (equal (tensor-shape ga) (tensor-shape a)))
    (puthash (node-id ga) (list (node-id a) g y) *grad-products*)))

(defun %matmul2 (a b)
  ;; A (... n k) times B (... k m), as A (... n k 1) times B (... 1 k m) summed over k:
  ;; neither operand is transposed, so B's rows stream in order. Its gradients are matmuls
  ;; too (A^T G and G B^T), so they get the same treatment.
  (let ((dt (tensor-dtype a)))
    (if (and (member dt '(f16 bf16)) (eq dt (tensor-dtype b)))
        (%matmul2-half a b dt)
        (with-custom-grad ((a a) (b b))
            (%matmul2-sum a b)
          (g y) (let ((ga (%matmul2 g (transpose b))))
                  (%note-product ga a g y)
                  (list (%sum-to ga (tensor-shape a))
                        (%sum-to (%matmul2 (transpose a) g) (tensor-shape b))))))))

(defun %matmul2-half (a b dt)
  ;; Half precision (DT, A's and B's dtype) multiplies and sums in f32 and rounds once, as
  ;; PyTorch does: more accurate than rounding each product, and the CPU's register tiles run
  ;; in f32 (bf16 512^3 took 168 ms with bf16 products, 5 ms so; one AVX-512 thread). The gradients too, from
  ;; the same widened operands: attention's weights are widened once, for the forward product
  ;; and the values' gradient both (so that its backward can compute them again, not store
  ;; them: recompute_softmax in schedule.cpp).
  (let ((af (prim:cast a 'f32)) (bf (prim:cast b 'f32)))
    (with-custom-grad ((a a) (b b))
        (prim:cast (%matmul2-sum af bf) dt)
      (g y) (let* ((gf (prim:cast g 'f32))
                   (ga (prim:cast (%matmul2 gf (transpose bf)) dt)))
              (%note-product ga a g y)
              (list (%sum-to ga (tensor-shape a))
                    (%sum-to (prim:cast (%matmul2 (transpose af) gf) dt) (tensor-shape b)))))))

(defun %matmul2-sum (a b)
  ;; %matmul2's product, as a sum of products in A's and B's dtype.
  (let* ((k (car (last (tensor-shape a))))
         (chunk (%split-size k (nth (- (ndim a) 2) (tensor-shape a)) (car (last (tensor-shape b))))))
    (if chunk
        ;; A long sum (a weight gradient summed over a batch of rows) in chunks: each
        ;; chunk's panel of B stays in cache, and the chunks run in parallel; then the
        ;; partial products are added.
        (let* ((sa (tensor-shape a)) (sb (tensor-shape b))
               (na (length sa)) (nb (length sb)) (c (/ k chunk))
               (a3 (prim:reshape a (append (butlast sa) (list c chunk))))              ; (... n c B)
               (a3 (prim:permute a3 (append (loop for i from 0 below (- na 2) collect i)
                                            (list (- na 1) (- na 2) na))))                 ; (... c n B)
               (b3 (prim:reshape b (append (subseq sb 0 (- nb 2)) (list c chunk (car (last sb))))))) ; (... c B m)
          (sum (sum (mul (unsqueeze a3 -1) (unsqueeze b3 -3)) :axis -2) :axis -3))
        (sum (mul (unsqueeze a -1) (unsqueeze b -3)) :axis -2))))

(defcomposite dot (a b)
  "(dot A B) The inner product of two 1-d tensors of equal length.
  (item (dot (tensor '(1 2 3)) (tensor '(4 5 6))))  ; => 32"
  (let ((ta (%as-tensor a)) (tb (%as-tensor b)))
    (unless (and (= (ndim ta) 1) (= (ndim tb) 1) (dim= (car (tensor-shape ta)) (car (tensor-shape tb))))
      (error 'shape-error "dot: needs two 1-d tensors of equal length, got ~s and ~s" (tensor-shape ta) (tensor-shape tb)))
    (sum (mul ta tb))))

(defcomposite outer (a b)
  "(outer A B) The outer product of two 1-d tensors: element (i j) is A[i] * B[j].
  (to-list (outer (tensor '(1 2)) (tensor '(3 4))))  ; => ((3 4) (6 8))"
  (let ((ta (%as-tensor a)) (tb (%as-tensor b)))
    (unless (and (= (ndim ta) 1) (= (ndim tb) 1))
      (error 'shape-error "outer: needs two 1-d tensors, got ~s and ~s" (tensor-shape ta) (tensor-shape tb)))
    (mul (unsqueeze ta 1) (unsqueeze tb 0))))

(defun %einsum-letters (s) (mapcar (lambda (c) (intern (string c))) (coerce s 'list)))

(defcomposite einsum (spec &rest operands)
  "(einsum SPEC OPERAND...) Sums of products over the indices in SPEC, e.g. \"ij,jk->ik\"
(matmul), \"bij,bjk->bik\", \"i,i->\" (dot), \"i,j->ij\" (outer), \"ij->ji\". Without ->, the
output is the indices used once, in alphabetical order. An index may not repeat within one
operand.
  (to-list (einsum \"ij,jk->ik\" (tensor '((1 2) (3 4))) (tensor '((1 0) (0 1)))))  ; => ((1 2) (3 4))
  (item (einsum \"i,i->\" (tensor '(1 2 3)) (tensor '(4 5 6))))  ; => 32
  (to-list (einsum \"ij->i\" (tensor '((1 2 3) (4 5 6)))))  ; => (6 15)"
  (let* ((arrow (string-contains spec "->"))
         (lhs (if arrow (subseq spec 0 arrow) spec))
         (inputs (mapcar #'%einsum-letters (string-split (string-replace lhs " " "") ",")))
         (all nil))
    (unless (= (length inputs) (length operands))
      (error 'shape-error "einsum: ~s names ~a operands, got ~a" spec (length inputs) (length operands)))
    (dolist (in inputs) (dolist (c in) (unless (member c all) (setq all (append all (list c))))))
    (let* ((out (if arrow
                    (%einsum-letters (string-replace (subseq spec (+ arrow 2)) " " ""))
                    (sort (remove-if (lambda (c) (> (count-if (lambda (x) (eq x c)) (apply #'append inputs)) 1)) all)
                          (lambda (p q) (string< (symbol-name p) (symbol-name q))))))
           (sizes (make-hash-table :test 'eq))
           (terms nil))
      (loop for in in inputs for x in operands for k from 0
            do (let ((tx (%as-tensor x)))
                 (unless (= (length in) (ndim tx))
                   (error 'shape-error "einsum: operand ~a has shape ~s but ~s names ~a indices" k (tensor-shape tx) spec (length in)))
                 (when (/= (length (remove-duplicates in)) (length in))
                   (error 'shape-error "einsum: an index repeats within operand ~a of ~s (diagonals are not supported)" k spec))
                 (loop for c in in for d in (tensor-shape tx)
                       do (let ((seen (gethash c sizes)))
                            (when (and seen (not (dim= seen d)) (not (eql d 1)) (not (eql seen 1)))
                              (error 'shape-error "einsum: index ~a has size ~a in one operand and ~a in another" c seen d))
                            (when (or (null seen) (eql seen 1)) (puthash c d sizes))))
                 ;; Move this operand's axes into the order of ALL, with size-1 axes for the rest.
                 (let* ((present (remove-if-not (lambda (c) (member c in)) all))
                        (perm (mapcar (lambda (c) (position c in)) present))
                        (p (prim:permute tx perm))
                        (full (mapcar (lambda (c) (if (member c in) (nth (position c present) (tensor-shape p)) 1)) all)))
                   (push (prim:reshape p full) terms))))
      (dolist (c out)
        (unless (member c all) (error 'shape-error "einsum: output index ~a is not in any input of ~s" c spec)))
      (let* ((summed (remove-if (lambda (c) (member c out)) all))
             (axes (mapcar (lambda (c) (position c all)) summed))
             ;; (A sum of f16 or bf16 products is computed in f32 and rounded once, as matmul's.)
             (dt (tensor-dtype (first terms)))
             (half (and axes (member dt '(f16 bf16)) (every (lambda (x) (eq (tensor-dtype x) dt)) terms)))
             (prod (%fold #'mul (reverse (if half (mapcar (lambda (x) (prim:cast x 'f32)) terms) terms))))
             (r (cond (half (prim:cast (sum prod :axis axes) dt)) (axes (sum prod :axis axes)) (t prod)))
             (kept (remove-if (lambda (c) (member c summed)) all)))
        (if (null out)
            (reshape r nil)
            (prim:permute r (mapcar (lambda (c) (position c kept)) out)))))))
