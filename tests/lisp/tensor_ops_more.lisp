;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19, "ops users expect": scans, any/all, masked-fill, index-select, broadcasting
;;; where, triangles, stack/split/chunk, sort/argsort/topk, scatter/scatter-add, gather and
;;; norm, against values PyTorch gives (by hand or by a plain formula in f64) and their
;;; gradients against finite differences.

(load "data/grad_check.lisp")
(require (quote nn))
(defun tl (x) (to-list x))

(manual-seed 19)

(deftest cumulative-products
  (let ((m (tensor '((1.0 2.0 3.0) (0.5 0.0 4.0)))))
    (is (allclose (cumprod m :axis 1) '((1.0 2.0 6.0) (0.5 0.0 0.0))))
    (is (allclose (cumprod m :axis 0) '((1.0 2.0 3.0) (0.5 0.0 12.0))))
    (is (allclose (cumprod m :axis -1) (cumprod m :axis 1))))
  ;; Integers multiply as i64, as torch.cumprod's; bools too.
  (is (eq (dtype (cumprod (tensor '(1 2 3) :dtype 'i32))) 'i64))
  (is (equal (tl (cumprod (tensor '(100000 100000 3)))) '(100000 10000000000 30000000000)))
  (is (equal (tl (cumprod (tensor '(t t nil t)))) '(1 1 0 0)))
  (is (eq (dtype (cumprod (tensor '(1.0 2.0)) :dtype 'f64)) 'f64))
  ;; Against a running product in plain Lisp.
  (let* ((x (randn '(3 7) :dtype 'f64))
         (rows (mapcar (lambda (row) (let ((p 1.0)) (mapcar (lambda (v) (setq p (* p v))) row))) (tl x))))
    (is (allclose (cumprod x :axis 1) rows :rtol 1e-12)))
  (is (grad-check (lambda (x) (cumprod x :axis 1)) (randn '(2 5))))
  ;; One zero and two zeros in a row: the product rule's zero cases.
  (is (grad-check (lambda (x) (cumprod x :axis 0)) (tensor '((1.5 0.0) (0.0 2.0) (-1.2 0.0) (0.7 3.0))))))

(deftest any-and-all
  (let ((b (tensor '((t nil nil) (nil nil nil)))))
    (is (eq (tl (any b)) t))
    (is (eq (tl (all b)) nil))
    (is (equal (tl (any b :axis 1)) '(t nil)))
    (is (equal (tl (all (logical-not b) :axis 0)) '(nil t t)))
    (is (equal (tl (any b :axis 0 :keepdim t)) '((t nil nil))))
    (is (eq (dtype (any b)) 'bool)))
  ;; Numbers: nonzero is true, NaN included (as PyTorch's).
  (is (equal (tl (all (tensor '((1 2) (0 3))) :axis 0)) '(nil t)))
  (is (equal (tl (any (tensor (list 0.0 nan)))) t))
  (is (equal (tl (all (tensor (list 1.0 nan)))) t))
  ;; Over nothing: any is false, all is true.
  (is (equal (tl (any (zeros '(2 0)) :axis 1)) '(nil nil)))
  (is (equal (tl (all (zeros '(2 0)) :axis 1)) '(t t))))

(deftest masked-fills
  (let ((m (tensor '((1.0 2.0 3.0) (4.0 5.0 6.0)))))
    (is (allclose (masked-fill m (gt m 3.5) -1.0) '((1.0 2.0 3.0) (-1.0 -1.0 -1.0))))
    ;; The mask broadcasts to X's shape; the result keeps X's dtype.
    (is (equal (tl (masked-fill (tensor '((1 2 3) (4 5 6))) (tensor '(t nil t)) 0)) '((0 2 0) (0 5 0))))
    (is (eq (dtype (masked-fill (tensor '(1 2) :dtype 'i8) (tensor '(t nil)) 7)) 'i8))
    (is (allclose (masked-fill m (tensor '((nil) (t))) (tensor 9.0 :dtype 'f64)) '((1.0 2.0 3.0) (9.0 9.0 9.0))))
    (is (eq (dtype (masked-fill m (tensor '((nil) (t))) (tensor 9.0 :dtype 'f64))) 'f32))
    (is (allclose (masked-fill m (tensor '(t nil t)) (- inf)) (list (list (- inf) 2.0 (- inf)) (list (- inf) 5.0 (- inf)))))
    (is-error shape-error (masked-fill (ones '(3)) (tensor '((t) (nil))) 0.0))
    (is-error shape-error (masked-fill m (tensor '(t nil t)) (ones '(1)))))
  (let ((mask (tensor '((t nil nil t) (nil t nil nil) (t t t nil)))))
    (is (grad-check (lambda (x) (masked-fill x mask 2.0)) (randn '(3 4))))
    (is (grad-check (lambda (x v) (masked-fill x mask v)) (randn '(3 4)) (randn '())))))

(deftest index-selects
  (let ((m (tensor '((1 2 3) (4 5 6)))))
    (is (equal (tl (index-select m '(2 0 2) :axis 1)) '((3 1 3) (6 4 6))))
    (is (equal (tl (index-select m (tensor '(1)))) '((4 5 6))))
    (is (equal (tl (index-select m (tensor '(-1 0) :dtype 'i64) :axis -1)) '((3 1) (6 4))))
    (is (equal (shape (index-select m (tensor nil :dtype 'i32) :axis 1)) '(2 0)))
    (is (equal (tl (index-select (tensor '((t nil) (nil t))) '(1 1) :axis 1)) '((nil nil) (t t))))
    (is-error index-error (index-select m '(3) :axis 1))
    (is-error shape-error (index-select m (tensor '((0))) :axis 1))
    (is-error dtype-error (index-select m (tensor '(0.0)) :axis 1)))
  ;; Against slices picked one at a time.
  (let* ((x (randn '(3 5 2))) (idx '(4 0 4 2)))
    (is (allclose (index-select x idx :axis 1)
                  (stack (mapcar (lambda (i) (slice x t i)) idx) :axis 1))))
  ;; Repeated indices sum their gradients.
  (is (grad-check (lambda (x) (index-select x '(4 0 4 2) :axis 1)) (randn '(3 5 2))))
  (is (grad-check (lambda (x) (index-select x '(1 0) :axis 0)) (randn '(2 3)))))

(deftest broadcasting-where
  ;; COND (2 1), A (1 3), B a number: all three broadcast to (2 3).
  (let* ((c (tensor '((t) (nil))))
         (a (tensor '((1.0 2.0 3.0))))
         (r (where c a -1.0)))
    (is (equal (shape r) '(2 3)))
    (is (allclose r '((1.0 2.0 3.0) (-1.0 -1.0 -1.0))))
    (is (allclose (where (tensor '(t nil t)) (tensor '((1.0) (2.0))) (tensor '((10.0 20.0 30.0))))
                  '((1.0 20.0 1.0) (2.0 20.0 2.0))))
    ;; Promotion: i32 and f32 give f32.
    (is (eq (dtype (where c (tensor '((1 2 3))) (tensor '(0.5)))) 'f32))
    (is-error shape-error (where (tensor '(t nil)) (ones '(3)) 0.0))
    ;; Gradients are summed back over the broadcast axes.
    (is (grad-check (lambda (a b) (where c a b)) (randn '(1 3)) (randn '(2 1))))))

(deftest triangles
  (let ((m (reshape (arange 1 13) '(3 4))))
    (is (equal (tl (tril m)) '((1 0 0 0) (5 6 0 0) (9 10 11 0))))
    (is (equal (tl (triu m)) '((1 2 3 4) (0 6 7 8) (0 0 11 12))))
    (is (equal (tl (tril m 1)) '((1 2 0 0) (5 6 7 0) (9 10 11 12))))
    (is (equal (tl (triu m -1)) '((1 2 3 4) (5 6 7 8) (0 10 11 12))))
    (is (equal (tl (triu m 2)) '((0 0 3 4) (0 0 0 8) (0 0 0 0))))
    ;; A causal mask, batched.
    (is (equal (tl (tril (ones '(2 2 2) :dtype 'bool))) '(((t nil) (t t)) ((t nil) (t t)))))
    (is-error shape-error (tril (ones '(3)))))
  (is (grad-check (lambda (x) (triu x 1)) (randn '(2 3 3))))
  (is (grad-check (lambda (x) (tril x -1)) (randn '(3 4)))))

(deftest stack-split-chunk
  (let ((a (tensor '(1 2 3))) (b (tensor '(4 5 6))))
    (is (equal (tl (stack (list a b))) '((1 2 3) (4 5 6))))
    (is (equal (tl (stack (list a b) :axis 1)) '((1 4) (2 5) (3 6))))
    (is (equal (tl (stack (list a b) :axis -1)) '((1 4) (2 5) (3 6))))
    (is-error shape-error (stack (list a (tensor '(1 2))))))
  (let ((m (reshape (arange 10) '(2 5))))
    (is (equal (mapcar #'tl (split m 2 :axis 1)) '(((0 1) (5 6)) ((2 3) (7 8)) ((4) (9)))))
    (is (equal (mapcar #'tl (split m '(1 4) :axis 1)) '(((0) (5)) ((1 2 3 4) (6 7 8 9)))))
    (is (equal (mapcar #'shape (chunk m 2 :axis 1)) '((2 3) (2 2))))
    (is (equal (mapcar #'shape (chunk (arange 6) 3)) '((2) (2) (2))))
    (is (equal (mapcar #'tl (chunk m 2)) '(((0 1 2 3 4)) ((5 6 7 8 9)))))
    (is-error shape-error (split m '(1 2) :axis 1)))
  (is (grad-check (lambda (x y) (stack (list x y (mul x y)) :axis 1)) (randn '(2 3)) (randn '(2 3))))
  (is (grad-check (lambda (x) (let ((p (split x '(1 3) :axis 1))) (mul (first p) (sum (second p) :axis 1 :keepdim t))))
                  (randn '(3 4))))
  (is (grad-check (lambda (x) (apply #'sub (chunk x 2 :axis 0))) (randn '(4 3)))))

;;; --- sorting --------------------------------------------------------------------------

(defun stable-order (row descending)
  ;; The indices that sort ROW (a list) stably, by insertion into a sorted list of indices.
  (let ((order nil))
    (dotimes (i (length row))
      (let ((v (nth i row)) (before nil) (after order))
        ;; Index i goes after every index whose value is not beyond v.
        (loop while (and after (if descending (>= (nth (car after) row) v) (<= (nth (car after) row) v)))
              do (push (pop after) before))
        (setq order (append (reverse before) (list i) after))))
    order))

(deftest sorting
  (let* ((x (tensor '((3 1 2 1) (0 5 5 -2)))))
    (is (equal (mapcar #'tl (sort x)) '(((1 1 2 3) (-2 0 5 5)) ((1 3 2 0) (3 0 1 2)))))
    ;; Stable when descending too: equal elements keep their order.
    (is (equal (mapcar #'tl (sort x :descending t)) '(((3 2 1 1) (5 5 0 -2)) ((0 2 1 3) (1 2 0 3)))))
    (is (equal (tl (argsort x :axis 0)) '((1 0 0 1) (0 1 1 0))))
    (is (equal (tl (argsort x :axis 0 :descending t)) '((0 1 1 0) (1 0 0 1))))
    (is (eq (dtype (argsort x)) 'i32)))
  ;; NaN is the largest, as in torch.sort; infinities in their places.
  (is (equal (mapcar #'tl (sort (tensor (list 2.0 nan 1.0 (- inf) nan inf))))
             (list (list (- inf) 1.0 2.0 inf nan nan) '(3 2 0 5 1 4))))
  (is (equal (tl (argsort (tensor (list 2.0 nan 1.0)) :descending t)) '(1 0 2)))
  (is (equal (tl (first (sort (tensor '(t nil t nil))))) '(nil nil t t)))
  (is (equal (tl (first (sort (tensor 4.0)))) 4.0))
  ;; The builtin sort of lists is still there.
  (is (equal (sort (list 3 1 2) #'<) '(1 2 3)))
  ;; Random rows with many ties (small integers), against an insertion sort in Lisp.
  (let* ((x (randint 0 4 '(5 9)))
         (rows (tl x)))
    (is (equal (tl (argsort x)) (mapcar (lambda (r) (stable-order r nil)) rows)))
    (is (equal (tl (argsort x :descending t)) (mapcar (lambda (r) (stable-order r t)) rows)))
    (is (equal (tl (first (sort x))) (mapcar (lambda (r) (sort (copy-list r) #'<)) rows))))
  (let ((f (randn '(4 6) :dtype 'f64)))
    (is (equal (tl (first (sort f :axis 0))) (tl (transpose (first (sort (transpose f))))))))
  (is-error index-error (sort (ones '(2 3)) :axis 2))
  ;; The gradient of the values reaches the elements they came from.
  (is (grad-check (lambda (x) (first (sort x))) (randn '(3 5))))
  (is (grad-check (lambda (x) (first (sort x :axis 0 :descending t))) (randn '(4 3)))))

(deftest top-k
  (let ((x (tensor '((5 1 7 3 7) (2 2 2 9 0)))))
    (is (equal (mapcar #'tl (topk x 3)) '(((7 7 5) (9 2 2)) ((2 4 0) (3 0 1)))))
    (is (equal (mapcar #'tl (topk x 2 :largest nil)) '(((1 3) (0 2)) ((1 3) (4 0)))))
    (is (equal (mapcar #'tl (topk x 1 :axis 0)) '(((5 2 7 9 7)) ((0 1 0 1 0)))))
    (is (equal (mapcar #'shape (topk x 0)) '((2 0) (2 0))))
    (is (equal (tl (first (topk x 5))) (tl (first (sort x :descending t)))))
    (is-error index-error (topk x 6))
    (is-error index-error (topk x -1)))
  ;; Against the head of a descending sort in Lisp.
  (let* ((f (randn '(3 8) :dtype 'f64)))
    (is (allclose (first (topk f 3))
                  (mapcar (lambda (r) (subseq (sort (copy-list r) #'>) 0 3)) (tl f)) :rtol 0)))
  (is (grad-check (lambda (x) (first (topk x 2))) (randn '(3 5))))
  (is (grad-check (lambda (x) (first (topk x 2 :axis 0 :largest nil))) (randn '(4 3)))))

;;; --- scatter and gather -----------------------------------------------------------------

(deftest scatters
  (let ((idx (tensor '((0 1 2 0) (2 2 0 1)))))
    ;; torch.zeros(3, 4).scatter_add_(0, idx, torch.ones(2, 4))
    (is (allclose (scatter-add (zeros '(3 4)) idx (ones '(2 4))) '((1.0 0.0 1.0 1.0) (0.0 1.0 0.0 1.0) (1.0 1.0 1.0 0.0))))
    ;; The positional form, in PyTorch's order.
    (is (allclose (scatter-add (zeros '(3 4)) 0 idx (ones '(2 4))) (scatter-add (zeros '(3 4)) idx (ones '(2 4)))))
    ;; Repeated indices add up; an integer X stays an integer.
    (is (equal (tl (scatter-add (tensor '(10 20 30)) (tensor '(2 2 0 2)) (tensor '(1 2 3 4)))) '(13 20 37)))
    (is (allclose (scatter (zeros '(3 4)) idx (tensor '((1.0 2.0 3.0 4.0) (5.0 6.0 7.0 8.0))))
                  '((1.0 0.0 7.0 4.0) (0.0 2.0 0.0 8.0) (5.0 6.0 3.0 0.0))))
    ;; torch.full((2, 4), 9.).scatter_(1, [[3, 0], [1, 1]], 2.)
    (is (allclose (scatter (full '(2 4) 9.0) (tensor '((3 0) (1 1))) 2.0 :axis 1)
                  '((2.0 9.0 9.0 2.0) (9.0 2.0 9.0 9.0))))
    ;; Of several writes to one place the last along the axis wins.
    (is (equal (tl (scatter (zeros '(3) :dtype 'i32) (tensor '(1 1 1)) (tensor '(4 5 6)))) '(0 6 0)))
    ;; SRC larger than INDEX: only its leading part is used; X larger along other axes.
    (is (allclose (scatter-add (zeros '(2 3)) (tensor '((1) (0))) (tensor '((1.0 2.0) (3.0 4.0))) :axis 1)
                  '((0.0 1.0 0.0) (3.0 0.0 0.0))))
    (is (allclose (scatter-add (zeros '(3 3)) (tensor '((-1 0))) (ones '(1 2))) '((0.0 1.0 0.0) (0.0 0.0 0.0) (1.0 0.0 0.0))))
    (is-error index-error (scatter-add (zeros '(3 4)) (tensor '((3 0 0 0))) (ones '(1 4))))
    (is-error shape-error (scatter-add (zeros '(3 4)) (tensor '(0 1)) (ones '(2))))
    (is-error shape-error (scatter-add (zeros '(3 4)) idx (ones '(1 4))))
    (is-error type-error (scatter-add (zeros '(3 4)) idx (ones '(2 4)) :dim 0)))
  ;; Against a loop over the index in plain Lisp.
  (let* ((x (randn '(4 3) :dtype 'f64)) (src (randn '(5 3) :dtype 'f64))
         (ix (randint 0 4 '(5 3)))
         (out (tl x)))
    (dotimes (i 5)
      (dotimes (j 3)
        (let ((k (nth j (nth i (tl ix)))))
          (setf (nth j (nth k out)) (+ (nth j (nth k out)) (nth j (nth i (tl src))))))))
    (is (allclose (scatter-add x ix src) out :rtol 1e-12)))
  (let ((idx (tensor '((0 1 2 0) (2 2 0 0)))))
    (is (grad-check (lambda (x s) (scatter-add x idx s)) (randn '(3 4)) (randn '(2 4))))
    (is (grad-check (lambda (x s) (scatter x idx s)) (randn '(3 4)) (randn '(2 4))))
    (is (grad-check (lambda (x s) (scatter x (tensor '((1) (0) (1))) s :axis 1)) (randn '(3 2)) (randn '(3 3))))))

(deftest gathers
  (let ((m (tensor '((1 2 3) (4 5 6)))))
    (is (equal (tl (gather m (tensor '((2 0) (1 1))) :axis 1)) '((3 1) (5 5))))
    (is (equal (tl (gather m 1 (tensor '((2 0) (1 1))))) '((3 1) (5 5))))   ; the old form
    (is (equal (tl (gather m (tensor '((1 0 1))))) '((4 2 6))))             ; axis 0 by default
    (is-error type-error (gather m (tensor '((0))) 1)))
  ;; gather undoes scatter along an axis; its gradient is a scatter-add.
  (is (grad-check (lambda (x) (gather x (tensor '((2 0 2) (1 1 0))) :axis 1)) (randn '(2 4))))
  (is (grad-check (lambda (x) (gather x (tensor '((1 0) (1 1) (0 0))) :axis 0)) (randn '(2 3)))))

;;; --- the indexed primitives (issue 21): gather and scatter-add -------------------------------
;;; An indexed load costs what it reads; these check its values on every device, against
;;; numbers worked by hand and plain Lisp loops.

(defun lisp-gather-rows (rows idx)
  ;; ROWS (a list of lists) at the positions IDX (a list): out-of-range positions give zeros.
  (mapcar (lambda (i) (if (and (>= i 0) (< i (length rows))) (nth i rows) (make-list (length (first rows)) :initial-element 0.0)))
          idx))

(deftest indexed-primitives
  (let ((x (reshape (arange 12 :dtype 'f32) 3 4)))
    ;; Along axis 0: element (i j) is x[idx[i j]][j]; 5 and -1 are out of range and read 0.
    (is (equal (tl (prim:gather x (tensor '((2 0 1 5) (0 0 -1 2)) :dtype 'i32) 0))
               '((8.0 1.0 6.0 0.0) (0.0 1.0 0.0 11.0))))
    ;; Along axis 1, an i64 index, a result of another length along the axis.
    (is (equal (tl (prim:gather x (tensor '((3 0) (1 1) (2 9)) :dtype 'i64) 1)) '((3.0 0.0) (5.0 5.0) (10.0 0.0))))
    ;; A u8 index (255 is out of range) and a source that is computed, not stored: it is
    ;; computed only where the index points.
    (is (allclose (prim:gather (exp x) (tensor '((1 255 0 2)) :dtype 'u8) 0)
                  (list (list (exp 4.0) 0.0 (exp 2.0) (exp 11.0)))))
    ;; bool, i8 and f16 elements are copied as they are.
    (is (equal (tl (prim:gather (tensor '(t nil t)) (tensor '(1 2 2 0 7)) 0)) '(nil t t t nil)))
    (is (equal (tl (prim:gather (tensor '(-128 5 127) :dtype 'i8) (tensor '(2 0)) 0)) '(127 -128)))
    (is (equal (tl (cast (prim:gather (tensor '(0.5 65504.0) :dtype 'f16) (tensor '(1 0 1)) 0) 'f32)) '(65504.0 0.5 65504.0)))
    ;; The source may be a reduce's result (it runs as a kernel of its own first).
    (is (equal (tl (prim:gather (prim:reduce :sum x '(1)) (tensor '((2) (2) (0)) :dtype 'i32) 0)) '((38.0) (38.0) (6.0))))
    ;; A gathered row-wise softmax: the source's row max is not fused per gathered row.
    (let* ((sx (sub x (expand (amax x :axis 1 :keepdim t) '(3 4))))
           (idx (tensor '((2 2 2 2) (0 1 2 0) (1 1 1 1)) :dtype 'i32))
           (rows (tl (sub (reshape (arange 12 :dtype 'f32) 3 4) (tensor '((3.0) (7.0) (11.0)))))))
      (is (equal (tl (sub (add (prim:gather sx idx 0) 1.0) 1.0))
                 (list (nth 2 rows) (list (nth 0 (nth 0 rows)) (nth 1 (nth 1 rows)) (nth 2 (nth 2 rows)) (nth 3 (nth 0 rows)))
                       (nth 1 rows))))))
  ;; Embedding-style: whole rows, by an index spread over the other axis (a view).
  (let* ((table (randn '(50 8))) (idx '(3 1 49 0 3 -1 50)))
    (is (allclose (prim:gather table (expand (reshape (tensor idx :dtype 'i32) 7 1) '(7 8)) 0)
                  (lisp-gather-rows (tl table) idx) :rtol 0.0 :atol 0.0)))
  (is-error shape-error (prim:gather (zeros '(3 4)) (tensor '((0 1 2)) :dtype 'i32) 0))
  (is-error dtype-error (prim:gather (zeros '(3 4)) (zeros '(2 4)) 0))
  (is-error shape-error (prim:gather (zeros '(3 4)) (tensor '((0 1 2 0)) :dtype 'i32) 2)))

(deftest scatter-add-primitive
  (let ((x (reshape (arange 12 :dtype 'f32) 3 4)))
    ;; Repeats add up; 5 and -1 add nothing.
    (is (equal (tl (prim:scatter-add x (tensor '((2 0 1 5) (0 0 -1 2)) :dtype 'i32) (mul (ones '(2 4)) 100) 0))
               '((100.0 201.0 2.0 3.0) (4.0 5.0 106.0 7.0) (108.0 9.0 10.0 111.0))))
    (is (equal (tl (prim:scatter-add x (tensor '((3 0 0) (1 1 1) (2 9 2)) :dtype 'i64)
                                     (reshape (arange 9 :dtype 'f32) 3 3) 1))
               '((3.0 1.0 2.0 3.0) (4.0 17.0 6.0 7.0) (8.0 9.0 24.0 11.0)))))
  ;; Integers wrap; bools add as or.
  (is (equal (tl (prim:scatter-add (tensor '(127 0 0) :dtype 'i8) (tensor '(0 0 2)) (tensor '(1 1 -5) :dtype 'i8) 0))
             '(-127 0 -5)))
  (is (equal (tl (prim:scatter-add (tensor '(nil nil t)) (tensor '(0 0 2)) (tensor '(t nil nil)) 0)) '(t nil t)))
  ;; Against a loop in plain Lisp, over an axis in the middle.
  (let* ((x (randn '(2 5 3) :dtype 'f64)) (v (randn '(2 7 3) :dtype 'f64))
         (ix (randint -1 6 '(2 7 3))) (out (tl x)))
    (dotimes (a 2)
      (dotimes (j 7)
        (dotimes (c 3)
          (let ((k (nth c (nth j (nth a (tl ix))))))
            (when (and (>= k 0) (< k 5))
              (setf (nth c (nth k (nth a out))) (+ (nth c (nth k (nth a out))) (nth c (nth j (nth a (tl v)))))))))))
    (is (allclose (prim:scatter-add x ix v 1) out :rtol 1e-12)))
  (is-error shape-error (prim:scatter-add (zeros '(3 4)) (tensor '((0 1 2 0)) :dtype 'i32) (zeros '(2 4)) 0))
  (is-error dtype-error (prim:scatter-add (zeros '(3 4)) (tensor '((0 1 2 0)) :dtype 'i32) (zeros '(1 4) :dtype 'f64) 0))
  ;; Gradients: gather's is a scatter-add and the reverse, against finite differences (an
  ;; out-of-range index included).
  (let ((idx (tensor '((2 0 1 5) (0 0 -1 2)) :dtype 'i32)))
    (is (grad-check (lambda (x) (prim:gather x idx 0)) (randn '(3 4))))
    (is (grad-check (lambda (x v) (prim:scatter-add x idx v 0)) (randn '(3 4)) (randn '(2 4))))))

(deftest embedding-rows
  ;; nn:embedding is an indexed load; its gradient a scatter-add into the table.
  (let* ((e (nn:embedding 10 4)) (w (first (parameters e))) (ix (tensor '((1 3) (3 9)) :dtype 'i32)))
    (is (equal (shape (e ix)) '(2 2 4)))
    (is (allclose (reshape (e ix) 4 4) (lisp-gather-rows (tl w) '(1 3 3 9)) :rtol 0.0 :atol 0.0))
    (backward (sum (mul (e ix) (reshape (arange 16 :dtype 'f32) 2 2 4))))
    (is (allclose (grad w) (list '(0.0 0.0 0.0 0.0) '(0.0 1.0 2.0 3.0) '(0.0 0.0 0.0 0.0) '(12.0 14.0 16.0 18.0)
                                 '(0.0 0.0 0.0 0.0) '(0.0 0.0 0.0 0.0) '(0.0 0.0 0.0 0.0) '(0.0 0.0 0.0 0.0)
                                 '(0.0 0.0 0.0 0.0) '(12.0 13.0 14.0 15.0))))
    (is-error index-error (e (tensor '(10) :dtype 'i32)))
    (is-error index-error (e (tensor '(-1) :dtype 'i32))))
  (is (grad-check (lambda (w) (take w (tensor '((5 0) (5 -1))))) (randn '(2 3)))))

;;; --- norms ----------------------------------------------------------------------------

(defun lp-norm (xs p)
  ;; The p-norm of a list of numbers, by the formula.
  (cond ((eql p inf) (apply #'max (mapcar #'abs xs)))
        ((eql p (- inf)) (apply #'min (mapcar #'abs xs)))
        ((= p 0) (count-if (lambda (v) (/= v 0)) xs))
        (t (expt (apply #'+ (mapcar (lambda (v) (expt (abs v) p)) xs)) (/ 1.0 p)))))

(deftest norms
  (let ((m (tensor '((3.0 -4.0) (0.0 0.0) (1.0 -1.0)))))
    (is (allclose (norm m :axis 1) (list 5.0 0.0 (sqrt 2.0))))
    (is (allclose (norm m) (sqrt 27.0)))
    (is (allclose (norm m :p :fro :axis '(0 1)) (sqrt 27.0)))
    (is (allclose (norm m :p 1 :axis 0) '(4.0 5.0)))
    (is (allclose (norm m :p inf) 4.0))
    (is (allclose (norm m :p (- inf) :axis 1) '(3.0 0.0 1.0)))
    (is (allclose (norm m :p 0 :axis 1) '(2.0 0.0 2.0)))
    (is (equal (shape (norm m :axis 1 :keepdim t)) '(3 1)))
    (is (eq (dtype (norm (tensor '(3 4)))) 'f32))
    (is (allclose (norm (tensor '(3 4))) 5.0))
    (is-error type-error (norm m :p :nuc)))
  (let* ((x (randn '(4 5) :dtype 'f64)) (rows (tl x)))
    (dolist (p (list 1 2 3 0.5 inf (- inf) 0))
      (is (allclose (norm x :p p :axis 1) (mapcar (lambda (r) (lp-norm r p)) rows) :rtol 1e-10))))
  ;; At a zero vector the 2-norm's gradient is 0, not NaN.
  (let ((g (first (second ((value-and-grad (lambda (x) (sum (norm x :axis 1)))) (tensor '((0.0 0.0) (3.0 4.0))))))))
    (is (allclose g '((0.0 0.0) (0.6 0.8)))))
  (is (grad-check (lambda (x) (norm x :axis 1)) (randn '(3 4))))
  (is (grad-check (lambda (x) (norm x :p 1 :axis 0 :keepdim t)) (randn '(3 4))))
  (is (grad-check (lambda (x) (norm x :p 3)) (randn '(3 4))))
  (is (grad-check (lambda (x) (norm x :p inf :axis 1)) (randn '(3 4)))))

;;; --- API consistency -------------------------------------------------------------------

(deftest axis-keywords
  ;; Ops that take one axis take it as :axis; the positional form still works.
  (let ((m (reshape (arange 6) '(1 2 3))))
    (is (equal (tl (flip m :axis 2)) (tl (flip m 2))))
    (is (equal (tl (flip m :axis 2)) '(((2 1 0) (5 4 3)))))
    (is (equal (tl (flip m :axis '(1 2))) '(((5 4 3) (2 1 0)))))
    (is (equal (tl (flip m)) '(((5 4 3) (2 1 0)))))
    (is (equal (shape (squeeze m :axis 0)) '(2 3)))
    (is (equal (shape (squeeze m 0)) '(2 3)))
    (is (equal (shape (squeeze m :axis 1)) '(1 2 3)))
    (is (equal (shape (unsqueeze m :axis -1)) '(1 2 3 1)))
    (is (equal (shape (unsqueeze m 1)) '(1 1 2 3)))
    (is-error type-error (flip m :axes 1))
    (is-error type-error (unsqueeze m))))

(deftest take-rows-gradients
  ;; take-rows of a tensor that needs a gradient passes it on (issue 19: it was dropped).
  (let* ((w (requires-grad! (realize (reshape (arange 8.0) '(4 2)))))
         (g (first (second ((value-and-grad (lambda (w) (sum (mul (take-rows w '(3 0 3)) (tensor '((1.0 2.0))))))) w)))))
    (is (allclose g '((1.0 2.0) (0.0 0.0) (0.0 0.0) (2.0 4.0)))))
  (is (equal (tl (take-rows (tensor '((1 2) (3 4) (5 6))) (tensor '(2 0)))) '((5 6) (1 2))))
  (is (grad-check (lambda (x) (take-rows x (tensor '(1 1 0)))) (randn '(2 3)))))

(deftest scatter-add-f16-through-a-view
  ;; An f16 scatter-add reading its values through a permuted view, with indices out of range
  ;; (which add nothing): LLVM 14 miscompiled the vectorized loop's strided f16 loads next to
  ;; the masked update (the op fuzzer's seed 2072); it must equal the same with the values
  ;; copied contiguous first.
  (flet ((scat (contiguous)
           (let* ((vals (prim:permute (prim:reshape (realize (cast (arange 576) 'f16)) '(3 64 3)) '(2 0 1)))
                  (vals (if contiguous (realize (prim:copy vals)) vals))
                  (idx (tensor '(-1 0 0 0 0 -1 -1 0 -1 -1 1 0 -1 0 0 -1 -1 0 -1 -1 -1 1 0 0 -1 -1 1 0 1 -1 0 0 1 -1 0 1 -1 1 -1 1 0 1 0 1 -1 1 1 1
      0 1 1 1 -1 0 1 0 -1 1 -1 1 0 0 1 0 1 1 0 -1 -1 0 -1 1 0 1 1 0 0 0 0 1 1 0 0 -1 0 1 0 1 -1 1 1 1 -1 -1 -1 -1
      0 1 0 1 0 1 1 1 0 1 1 -1 1 1 -1 0 0 1 0 -1 0 -1 -1 -1 -1 1 -1 1 1 1 -1 0 1 1 -1 -1 0 0 -1 -1 -1 0 -1 0 1 0 1 -1
      1 -1 1 1 0 -1 -1 0 0 -1 -1 -1 1 0 1 0 0 0 1 1 0 1 -1 0 -1 0 1 0 -1 0 1 1 1 0 0 -1 0 0 -1 0 0 0 0 0 -1 1 0 -1
      -1 -1 -1 1 1 0 -1 1 -1 -1 0 1 0 -1 -1 0 1 -1 -1 0 0 1 1 -1 1 1 1 0 0 1 0 0 0 1 -1 1 1 0 0 1 0 1 1 -1 1 1 1 -1
      0 0 -1 0 -1 1 1 -1 -1 1 0 0 1 0 0 1 -1 0 0 -1 0 1 1 1 0 0 -1 -1 -1 1 -1 1 1 1 0 1 0 1 -1 -1 1 0 -1 1 -1 0 -1 1
      -1 1 0 0 -1 1 1 1 0 0 1 -1 1 0 -1 1 1 1 -1 0 1 1 -1 -1 1 0 0 -1 1 -1 -1 -1 -1 -1 0 -1 0 -1 0 -1 0 -1 1 -1 -1 0 1 -1
      1 -1 0 0 1 -1 -1 0 -1 1 0 1 0 1 0 0 0 0 0 0 0 -1 0 0 -1 0 -1 0 0 0 1 -1 -1 0 0 1 0 0 -1 0 -1 0 1 -1 0 -1 1 1
      1 -1 0 0 0 0 -1 1 1 1 1 1 1 1 -1 1 1 -1 -1 1 1 -1 -1 -1 0 1 -1 1 0 0 1 1 1 0 1 -1 0 -1 0 -1 1 1 0 1 -1 -1 -1 1
      -1 0 0 0 1 -1 1 0 -1 0 0 1 1 0 -1 -1 0 -1 1 1 1 1 1 0 0 -1 0 0 1 -1 1 1 1 0 1 0 1 1 1 1 1 0 1 0 -1 -1 -1 1
      0 0 1 1 1 -1 -1 0 0 1 1 1 0 1 0 1 -1 0 0 0 0 1 1 -1 1 -1 1 0 -1 1 -1 0 -1 0 -1 0 0 -1 -1 1 0 -1 0 -1 -1 1 -1 -1
      1 -1 1 0 0 -1 -1 -1 1 -1 1 -1 1 -1 0 -1 1 -1 0 1 0 0 0 0 1 1 -1 0 1 -1 -1 0 0 1 -1 1 0 0 1 1 -1 -1 -1 -1 1 1 -1 -1) :dtype 'i32)))
             (tl (prim:scatter-add (zeros '(1 3 64) :dtype 'f16) (reshape idx '(3 3 64)) vals 0)))))
    (is (equal (scat nil) (scat t)))))

(run-tests)
