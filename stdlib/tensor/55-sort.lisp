;;; SPDX-License-Identifier: Apache-2.0
;;; Sorting along an axis (sort, argsort, topk), built from comparisons: each element's rank
;;; is the number of elements that come before it, and a one-hot of the ranks gathers them.

;;; The order puts NaN after every number (as PyTorch's ascending sort does) and keeps equal
;;; elements in their original order (stable). The rank of element i along a row is
;;;   #{j : x_j comes strictly before x_i} + #{j < i : x_j ties x_i},
;;; an N x N comparison per row: O(N^2) work and memory for an axis of N.
;;; TODO(issue 19): a bitonic network over the primitives would take O(N log^2 N).

(defun %sort-keys (x)
  ;; X in a dtype the comparisons take: bools as i32.
  (if (eq (tensor-dtype x) 'bool) (prim:cast x 'i32) x))

(defun %sort-before (a b)
  ;; True where A comes strictly before B in ascending order (a NaN comes after numbers).
  (if (dtype-float-p (tensor-dtype a))
      (logical-or (lt a b) (logical-and (isnan b) (logical-not (isnan a))))
      (lt a b)))

(defun %sort-ties (a b)
  ;; True where A and B hold the same place in the order (NaNs tie with each other).
  (if (dtype-float-p (tensor-dtype a))
      (logical-or (equals a b) (logical-and (isnan a) (isnan b)))
      (equals a b)))

(defun %sort-ranks (keys descending)
  ;; For KEYS (... n): each element's place in the stable order along the last axis (i32).
  (let* ((nd (ndim keys)) (shp (tensor-shape keys)) (n (car (last shp)))
         (xi (unsqueeze keys -1))                        ; (... n 1): element i
         (xj (unsqueeze keys -2))                        ; (... 1 n): element j
         (pairs (append (butlast shp) (list n n)))
         (j-first (if descending (%sort-before xi xj) (%sort-before xj xi)))
         (j-lower (prim:cmplt (prim:iota pairs nd 'i32) (prim:iota pairs (- nd 1) 'i32)))
         (before (logical-or j-first (logical-and (%sort-ties xi xj) j-lower))))
    (sum before :axis -1 :dtype 'i32)))

(defun %sort-pick (x ranks k)
  ;; The elements of X (... n) and their indices (i32) at places 0..K-1 of RANKS: a list
  ;; ((... k) values, (... k) indices). Values are picked by where, so their gradient reaches
  ;; the picked elements.
  (let* ((nd (ndim x)) (shp (tensor-shape x)) (n (car (last shp)))
         (pairs (append (butlast shp) (list n k)))
         (hot (equals (unsqueeze ranks -1) (arange k :dtype 'i32)))   ; (... n k): element i at place r
         (dt (tensor-dtype x))
         (vals (prim:reduce (if (eq dt 'bool) :max :sum)
                            (prim:where hot (prim:expand (unsqueeze x -1) pairs) (prim:const 0 dt pairs))
                            (list (- nd 1))))
         (idx (prim:reduce :sum (prim:where hot (prim:iota pairs (- nd 1) 'i32) (prim:const 0 'i32 pairs))
                           (list (- nd 1)))))
    (list (prim:reshape vals (append (butlast shp) (list k)))
          (prim:reshape idx (append (butlast shp) (list k))))))

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
           (picked (%sort-pick moved (%sort-ranks (%sort-keys moved) descending) k)))
      (mapcar (lambda (r) (let ((r (transpose r a -1))) (if (= (ndim x) 0) (prim:reshape r nil) r)))
              picked))))

(defvar *list-sort* sort "The list and vector sort, a builtin.")

(defun sort (x &rest args)
  "(sort X &key (axis -1) descending stable) For a tensor, the list (VALUES INDICES): X's
elements sorted along AXIS, ascending unless DESCENDING, and the indices (i32) they came
from, as torch.sort. The sort is always stable (equal elements keep their order; STABLE is
accepted for PyTorch's sake) and NaN sorts as the largest. The gradient of VALUES reaches
the elements they came from. Takes O(N^2) work for an axis of N.
(sort SEQUENCE PREDICATE &key key) For a list or vector, the builtin sort."
  (if (not (tensorp x))
      (apply *list-sort* x args)
      (destructuring-bind (&key (axis -1) descending stable) args
        (%sort-along 'sort x axis descending nil))))
(puthash 'sort t *composites*)

(defcomposite argsort (x &key (axis -1) descending stable)
  "(argsort X &key (axis -1) descending stable) The indices (i32) that sort X along AXIS, as
torch.argsort: (second (sort X ...)). Stable, NaN last when ascending; O(N^2) for an axis of N."
  (second (%sort-along 'argsort x axis descending nil)))

(defcomposite topk (x k &key (axis -1) (largest t) (sorted t))
  "(topk X K &key (axis -1) (largest t) (sorted t)) The list (VALUES INDICES) of the K largest
elements along AXIS (the K smallest when LARGEST is nil), in order, and their indices (i32),
as torch.topk. Of equal elements the first come first; the result is always sorted (SORTED
is accepted for PyTorch's sake). The gradient of VALUES reaches the chosen elements. Takes
O(N^2) work for an axis of N."
  (%sort-along 'topk x axis largest k))
