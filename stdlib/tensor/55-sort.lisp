;;; SPDX-License-Identifier: Apache-2.0
;;; Sorting along an axis (sort, argsort, topk) by a bitonic sorting network built from the
;;; primitives: O(N log^2 N) work and O(log^2 N) graph nodes for an axis of N (short axes
;;; by counting, below).

;;; The order puts NaN after every number (as PyTorch's ascending sort does; first when
;;; descending) and keeps equal elements in their original order (stable): the network
;;; sorts (key, original index) pairs, comparing indices where the keys tie, so every pair
;;; is distinct and the order is strict and total. The axis is padded to a power of two M
;;; with sentinel keys that sort last (NaN, -inf or the dtype's extreme integer); a sentinel
;;; tying with a real element loses on its index, which is above every real one.
;;;
;;; The network (Batcher's bitonic sort, in the form without alternating directions): for
;;; block sizes B = 2, 4, ..., M, each element of a block first meets its mirror image in
;;; the block (flip), then, for S = B/4, ..., 1, its partner S places away in blocks of 2S.
;;; Each of those log2(M)(log2(M)+1)/2 steps is a reshape that puts the partners on an axis
;;; of their own, a flip of that axis, one comparison and a where over the whole tensor: the
;;; lower place keeps the smaller of the two, the upper the larger. Values move by where, so
;;; their gradient reaches the elements they came from.
;;;
;;; A short axis (up to *sort-rank-limit* elements) is sorted by counting instead: each
;;; element's place is the number of elements that come before it, an N x N comparison that
;;; fuses into one kernel (O(N^2) work, but no launch per step: 5x faster at N = 1000, 2x
;;; slower at N = 10000 on the CPU), and a one-hot of the places picks the elements.

(defvar *sort-rank-limit* 1024
  "The longest axis that sort, argsort and topk sort by counting (O(N^2) work in one fused
kernel) rather than by the bitonic network (O(N log^2 N) work in O(log^2 N) kernels).
  (let ((*sort-rank-limit* 2)) (to-list (first (sort (tensor '(3 1 2))))))  ; => (1 2 3)")

(defun %sort-sentinel (dt descending)
  ;; A key of dtype DT that no element comes after (ties lose on the index).
  (if (dtype-float-p dt)
      (if descending (- inf) nan)
      (let ((limits (case dt
                     (i8 '(-128 127)) (u8 '(0 255)) (i16 '(-32768 32767))
                     (i32 '(-2147483648 2147483647)) (u32 '(0 4294967295))
                     (t '(-9223372036854775808 9223372036854775807)))))
        (if descending (first limits) (second limits)))))

(defun %sort-key-before (a b descending float)
  ;; True where key A comes strictly before key B (NaN after every number when ascending).
  (let ((lo (if descending b a)) (hi (if descending a b)))
    (if float
        (prim:or (prim:cmplt lo hi)
                 ;; HI is NaN and LO is not.
                 (prim:and (prim:cmpeq lo lo) (logical-not (prim:cmpeq hi hi))))
        (prim:cmplt lo hi))))

(defun %sort-before (a ia b ib descending float)
  ;; True where (A, IA) comes before (B, IB): by key, and by index where the keys tie.
  (prim:or (%sort-key-before a b descending float)
           (prim:and (logical-not (%sort-key-before b a descending float)) (prim:cmplt ia ib))))

(defun %sort-step (keys idx view axis descending float)
  ;; One compare-exchange step: KEYS and IDX (... M) viewed as VIEW, whose axis AXIS holds
  ;; the partners mirrored (a flip of it maps each element to its partner). Returns the new
  ;; (KEYS IDX).
  (let* ((shp (tensor-shape keys)) (len (nth axis view))
         (k (prim:reshape keys view)) (i (prim:reshape idx view))
         (pk (prim:flip k (list axis))) (pidx (prim:flip i (list axis)))
         ;; The upper half of AXIS keeps the larger of each pair, the lower the smaller.
         (upper (prim:cmplt (prim:const (- (/ len 2) 1) 'i32 view) (prim:iota view axis 'i32)))
         (take (prim:xor (%sort-before pk pidx k i descending float) upper)))
    (list (prim:reshape (prim:where take pk k) shp)
          (prim:reshape (prim:where take pidx i) shp))))

(defun %sort-network (keys descending)
  ;; KEYS (... n) sorted along the last axis, and the indices (i32) they came from.
  (let* ((shp (tensor-shape keys)) (lead (butlast shp)) (n (car (last shp)))
         (nd (length shp)) (dt (tensor-dtype keys)) (float (dtype-float-p dt))
         (m (let ((m 1)) (loop while (< m n) do (setq m (* 2 m))) m))
         (full (append lead (list m)))
         (keys (if (= m n)
                   keys
                   (prim:where (prim:cmplt (prim:const (- n 1) 'i32 full) (prim:iota full (- nd 1) 'i32))
                               (prim:const (%sort-sentinel dt descending) dt full)
                               (prim:pad keys (append (mapcar (lambda (d) '(0 0)) lead) (list (list 0 (- m n))))))))
         (idx (prim:iota full (- nd 1) 'i32))
         (width 2))
    (loop while (<= width m)
          do (let ((r (%sort-step keys idx (append lead (list (/ m width) width)) nd descending float)))
               (setq keys (first r) idx (second r)))
             (let ((s (/ width 4)))
               (loop while (>= s 1)
                     do (let ((r (%sort-step keys idx (append lead (list (/ m (* 2 s)) 2 s)) nd descending float)))
                          (setq keys (first r) idx (second r)))
                        (setq s (/ s 2))))
             (setq width (* 2 width)))
    (list keys idx)))

(defun %sort-ties (a b float)
  ;; True where keys A and B hold the same place in the order (NaNs tie with each other).
  (if float
      (prim:or (prim:cmpeq a b) (prim:and (logical-not (prim:cmpeq a a)) (logical-not (prim:cmpeq b b))))
      (prim:cmpeq a b)))

(defun %sort-by-rank (keys descending k)
  ;; KEYS (... n) sorted along the last axis by counting, the first K places: the list
  ;; (VALUES INDICES). Element i's place is #{j : j before i} + #{j < i : j ties i}.
  (let* ((nd (ndim keys)) (shp (tensor-shape keys)) (n (car (last shp)))
         (float (dtype-float-p (tensor-dtype keys)))
         (xi (prim:expand (prim:reshape keys (append (butlast shp) (list n 1))) (append (butlast shp) (list n n))))
         (xj (prim:expand (prim:reshape keys (append (butlast shp) (list 1 n))) (append (butlast shp) (list n n))))
         (pairs (append (butlast shp) (list n n)))
         (j-lower (prim:cmplt (prim:iota pairs nd 'i32) (prim:iota pairs (- nd 1) 'i32)))
         (before (prim:or (%sort-key-before xj xi descending float)
                          (prim:and (%sort-ties xi xj float) j-lower)))
         (ranks (prim:reduce :sum (prim:cast before 'i32) (list nd)))        ; (... n 1)
         ;; (... n k): element i goes to place r.
         (wide (append (butlast shp) (list n k)))
         (hot (prim:cmpeq (prim:expand ranks wide) (prim:iota wide nd 'i32)))
         (dt (tensor-dtype keys))
         (out (append (butlast shp) (list k)))
         ;; Each reduce has one picked term. Floats take the max over it and -inf, which
         ;; keeps it exactly (a -0.0 too, which a sum from +0.0 would not); the gradient
         ;; reaches it alone (unless it is -inf itself).
         (pick (lambda (v dt)
                 (let ((float (dtype-float-p dt)))
                   (prim:reshape (prim:reduce (if (or float (eq dt 'bool)) :max :sum)
                                              (prim:where hot v (prim:const (if float (- inf) 0) dt wide))
                                              (list (- nd 1)))
                                 out)))))
    (list (funcall pick (prim:expand (prim:reshape keys (append (butlast shp) (list n 1))) wide) dt)
          (funcall pick (prim:iota wide (- nd 1) 'i32) 'i32))))

(defun %sort-along (fn x axis descending k)
  ;; X's K first elements along AXIS in the order, and their indices: a list of two tensors.
  (let* ((tx (%as-tensor x)) (tx (if (= (ndim tx) 0) (prim:reshape tx '(1)) tx))
         (a (%axis fn axis (ndim tx)))
         (n (nth a (tensor-shape tx)))
         (k (or k n)))
    (unless (integerp n)
      (error 'shape-error "~a: axis ~a has symbolic size ~a; sorting needs a known size" fn a n))
    (unless (and (integerp k) (<= 0 k n))
      (error 'index-error "~a: k = ~s is out of range for axis ~a of size ~a" fn k a n))
    (let* ((moved (transpose tx a -1))
           (dt (tensor-dtype moved))
           (keys (if (eq dt 'bool) (prim:cast moved 'i32) moved))
           (sorted (if (<= n *sort-rank-limit*)
                       (%sort-by-rank keys descending k)
                       (%sort-network keys descending)))
           (first-k (lambda (r) (prim:shrink r (append (mapcar (lambda (d) (list 0 d)) (butlast (tensor-shape r)))
                                                       (list (list 0 k))))))
           (vals (funcall first-k (first sorted)))
           (picked (list (if (eq dt 'bool) (prim:cast vals 'bool) vals)
                         (funcall first-k (second sorted)))))
      (mapcar (lambda (r) (let ((r (transpose r a -1))) (if (= (ndim x) 0) (prim:reshape r nil) r)))
              picked))))

(defvar *list-sort* sort "The list and vector sort, a builtin.
  (funcall *list-sort* (list 3 1 2) #'<)  ; => (1 2 3)")

(defun sort (x &rest args)
  "(sort X &key (axis -1) descending stable) For a tensor, the list (VALUES INDICES): X's
elements sorted along AXIS, ascending unless DESCENDING, and the indices they came from
(i32; PyTorch's are i64), as torch.sort. The sort is always stable (equal elements keep their order; STABLE is
accepted for PyTorch's sake) and NaN sorts as the largest. The gradient of VALUES reaches
the elements they came from. Takes O(N log^2 N) work for an axis of N (a bitonic network;
O(N^2) in one fused kernel up to *sort-rank-limit*).
(sort SEQUENCE PREDICATE &key key) For a list or vector, the builtin sort.
  (mapcar #'to-list (sort (tensor '(3 1 2)) :axis 0))  ; => ((1 2 3) (1 2 0))"
  (if (not (tensorp x))
      (apply *list-sort* x args)
      (destructuring-bind (&key (axis -1) descending stable) args
        (%sort-along 'sort x axis descending nil))))
(puthash 'sort t *composites*)

(defcomposite argsort (x &key (axis -1) descending stable)
  "(argsort X &key (axis -1) descending stable) The indices (i32) that sort X along AXIS, as
torch.argsort: (second (sort X ...)). Stable, NaN last when ascending; work as for sort.
  (to-list (argsort (tensor '(3 1 2)) :axis 0))  ; => (1 2 0)"
  (second (%sort-along 'argsort x axis descending nil)))

(defcomposite topk (x k &key (axis -1) (largest t) (sorted t))
  "(topk X K &key (axis -1) (largest t) (sorted t)) The list (VALUES INDICES) of the K largest
elements along AXIS (the K smallest when LARGEST is nil), in order, and their indices (i32),
as torch.topk. Of equal elements the first come first; the result is always sorted (SORTED
is accepted for PyTorch's sake). The gradient of VALUES reaches the chosen elements. Takes
work as for sort (it sorts the whole axis).
  (mapcar #'to-list (topk (tensor '(3.0 1.0 2.0)) 2))  ; => ((3.0 2.0) (0 2))"
  (%sort-along 'topk x axis largest k))
