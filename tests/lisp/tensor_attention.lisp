;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 24: attention written the plain way, softmax(Q K^T / sqrt(d) + ...) V, computed by
;;; the scheduler's online-softmax kernel (one pass per row: running max, running sum and
;;; output row, rescaled as the max grows; neither the scores nor the weights stored) wherever
;;; the graph allows it ((jit-online-softmax :always)). Each variant a user writes by hand (an
;;; additive bias, a sliding window built from index comparisons, soft-capped logits, grouped
;;; query heads, f64, a decode step over a KV cache of symbolic length) is checked against the
;;; same formula computed in f64 with the weights stored. The reference executor (ref) has no
;;; scheduler and computes the formula as written: the checks are the same on every device.
;;; The training step's gradients, with the L x L matrices recomputed in backward
;;; (recompute_softmax; blocked on the CPU where lengths come in 16s), are checked against the
;;; stored form's, and its schedule for the absence of any kernel of the weights' shape.

(require 'nn)
(require 'hf)
(load "data/grad_check.lisp")
(manual-seed 24)
(jit-online-softmax :always)

(defun f64 (x) (cast x 'f64))

;; softmax(SCORES) V in f64 with the weights realized (stored): the three-kernel form.
(defun stored (scores v) (matmul (realize (softmax (f64 scores) :axis -1)) (f64 v)))

(defun scaled-scores (q k)
  (mul (matmul (f64 q) (transpose (f64 k))) (/ 1.0 (sqrt (car (last (shape q)))))))

(defun close (a b &key (tol 1e-5)) (allclose (f64 a) b :rtol tol :atol tol))

(defvar q (realize (randn '(2 3 5 8))))
(defvar k (realize (randn '(2 3 7 8))))
(defvar v (realize (randn '(2 3 7 6))))

(deftest online-plain-and-causal
  ;; nn:attention itself: 5 queries over 7 keys, values 6 wide (not the query width).
  (is (close (nn:attention q k v) (stored (scaled-scores q k) v)))
  (let ((kk (slice k t t '(0 5))) (vv (slice v t t '(0 5))))
    (is (close (nn:attention q kk vv :causal t)
               (stored (where (tril (ones '(5 5) :dtype 'bool)) (scaled-scores q kk) (- inf)) vv))))
  ;; f64 throughout
  (is (close (nn:attention (f64 q) (f64 k) (f64 v)) (stored (scaled-scores q k) v) :tol 1e-12)))

(deftest online-variants
  (let ((s (lambda (q k) (mul (matmul q (transpose k)) (/ 1.0 (sqrt 8.0))))))
    ;; An additive bias (ALiBi-like), one per head, broadcast over the batch.
    (let ((bias (realize (randn '(3 5 7)))))
      (is (close (matmul (softmax (add (funcall s q k) bias) :axis -1) v)
                 (stored (add (scaled-scores q k) (f64 bias)) v))))
    ;; A sliding window from index comparisons: query i sees keys i-2..i+2 (never stored).
    (let* ((i (reshape (arange 5) '(5 1))) (j (reshape (arange 7) '(1 7)))
           (near (logical-and (ge (sub j i) -2) (le (sub j i) 2))))
      (is (close (matmul (softmax (where near (funcall s q k) (- inf)) :axis -1) v)
                 (stored (where near (scaled-scores q k) (- inf)) v))))
    ;; Soft-capped logits, c tanh(x / c).
    (is (close (matmul (softmax (mul (tanh (div (funcall s q k) 2.0)) 2.0) :axis -1) v)
               (stored (mul (tanh (div (scaled-scores q k) 2.0)) 2.0) v)))
    ;; Grouped-query heads: 2 query heads per key/value head, broadcast (repeat_kv without the copy).
    (let ((qg (realize (randn '(2 2 5 8)))) (kg (realize (randn '(2 1 7 8)))) (vg (realize (randn '(2 1 7 6)))))
      (is (close (nn:attention qg kg vg) (stored (scaled-scores qg kg) vg))))))

(deftest online-blocks
  ;; Keys and values in multiples of 16 (the CPU's blocked kernel: 4 rows against 16 keys at a
  ;; time, the rows' blocks going through the keys together); the others run row by row.
  (let ((qb (realize (randn '(1 2 8 16)))) (kb (realize (randn '(1 2 48 16)))) (vb (realize (randn '(1 2 48 32))))
        (s (lambda (q k) (mul (matmul q (transpose k)) 0.25))))
    (is (close (nn:attention qb kb vb) (stored (scaled-scores qb kb) vb)))
    ;; causal over the last 8 keys: the first 40 always seen
    (let ((mask (reshape (ge (add (reshape (arange 8) '(8 1)) 40) (reshape (arange 48) '(1 48))) '(1 1 8 48))))
      (is (close (nn:attention qb kb vb :mask mask) (stored (where mask (scaled-scores qb kb) (- inf)) vb))))
    ;; a window that hides whole blocks of keys from some rows, and the first block from all
    (let* ((i (reshape (arange 8) '(8 1))) (j (reshape (arange 48) '(1 48)))
           (near (logical-and (ge j (add (mul i 4) 16)) (le j (add (mul i 4) 20)))))
      (is (close (matmul (softmax (where near (funcall s qb kb) (- inf)) :axis -1) vb)
                 (stored (where near (scaled-scores qb kb) (- inf)) vb))))
    ;; bias and soft cap
    (let ((bias (realize (randn '(2 8 48)))))
      (is (close (matmul (softmax (add (mul (tanh (div (funcall s qb kb) 3.0)) 3.0) bias) :axis -1) vb)
                 (stored (add (mul (tanh (div (scaled-scores qb kb) 3.0)) 3.0) (f64 bias)) vb))))
    ;; 6 rows (blocks of 2), and rows whose max grows by thousands from block to block
    (let ((q6 (realize (randn '(1 2 6 16)))) (big (reshape (mul (arange 48 :dtype 'f32) 100.0) '(1 1 1 48))))
      (is (close (matmul (softmax (add (funcall s q6 kb) big) :axis -1) vb)
                 (stored (add (scaled-scores q6 kb) (f64 big)) vb))))
    ;; causal over 32 keys: the row blocks skip the key blocks after them
    (let ((q32 (realize (randn '(1 2 32 16)))) (k32 (slice kb t t '(0 32))) (v32 (slice vb t t '(0 32))))
      (is (close (nn:attention q32 k32 v32 :causal t)
                 (stored (where (tril (ones '(32 32) :dtype 'bool)) (scaled-scores q32 k32) (- inf)) v32))))
    ;; NaN in one key: every row sees it
    (let ((bad (realize (where (reshape (equals (arange 48) 33) '(1 1 48 1)) (tensor nan) kb))))
      (is (every (lambda (x) (/= x x)) (flatten (to-list (nn:attention qb bad vb))))))))

(deftest online-edges
  (let ((qq (realize (randn '(1 4 8)))) (kk (realize (randn '(1 6 8)))) (vv (realize (randn '(1 6 3)))))
    ;; Rows whose first keys are all masked: the running max is -inf until a key is seen.
    (let ((late (reshape (ge (arange 6) 3) '(1 6))))
      (is (close (nn:attention qq kk vv :mask late)
                 (stored (where late (scaled-scores qq kk) (- inf)) vv))))
    ;; A row with every key masked is NaN, as the stored form's 0/0 (PyTorch's too).
    (let* ((none (reshape (ge (arange 4) 1) '(1 4 1)))  ; row 0 sees no key
           (o (to-list (nn:attention qq kk vv :mask (expand none '(1 4 6))))))
      (is (every (lambda (x) (/= x x)) (first (first o))))
      (is (notany (lambda (x) (/= x x)) (apply #'append (rest (first o))))))
    ;; Large logits: the max grows by thousands from key to key without overflow.
    (let ((big (mul (arange 6 :dtype 'f32) 1000.0)))
      (is (close (matmul (softmax (add (scaled-scores qq kk) (reshape big '(1 1 6))) :axis -1) vv)
                 (stored (add (scaled-scores qq kk) (reshape (f64 big) '(1 1 6))) vv))))
    ;; A NaN key poisons every row that sees it, as in the stored form.
    (let* ((bad (realize (where (reshape (equals (arange 6) 2) '(1 6 1)) (tensor nan) kk)))
           (o (to-list (nn:attention qq bad vv))))
      (is (every (lambda (x) (/= x x)) (apply #'append (first o)))))))

(deftest online-review-cases
  ;; Masks whose index arithmetic wraps (unsigned differences, indices cast to i8) are not
  ;; analysed: no block is skipped on their account.
  (let ((qq (realize (randn '(1 2 32 16)))) (kk (realize (randn '(1 2 160 16)))) (vv (realize (randn '(1 2 160 16)))))
    (let* ((i (reshape (arange 32 :dtype 'u32) '(32 1))) (j (reshape (arange 160 :dtype 'u32) '(1 160)))
           (c (lt (sub j i) 5)))
      (is (close (matmul (softmax (where c (- inf) (mul (matmul qq (transpose kk)) 0.25)) :axis -1) vv)
                 (stored (where c (- inf) (mul (scaled-scores qq kk) 1.0)) vv))))
    (let ((c (lt (reshape (cast (arange 160) 'i8) '(1 160)) 100)))
      (is (close (matmul (softmax (where c (mul (matmul qq (transpose kk)) 0.25) (- inf)) :axis -1) vv)
                 (stored (where c (scaled-scores qq kk) (- inf)) vv)))))
  ;; Scores that a scatter-add makes (a kernel of its own, never inlined), and scores that
  ;; another kernel reads too.
  (let* ((base (realize (randn '(16 16)))) (src (realize (randn '(16 16))))
         (idx (realize (cast (mul (rand '(16 16)) 15.9) 'i64))) (vv (realize (randn '(16 16))))
         (x (scatter-add base idx src)))
    (is (close (matmul (softmax x :axis -1) vv) (stored (scatter-add (f64 base) idx (f64 src)) vv))))
  (let* ((qq (realize (randn '(16 8)))) (kk (realize (randn '(16 8))))
         (x (matmul qq (transpose kk)))
         (vv (reshape (sum (reshape x '(4 16 4)) :axis 0) '(16 4)))
         (x64 (matmul (f64 qq) (transpose (f64 kk)))))
    (is (close (matmul (softmax x :axis -1) vv)
               (stored x64 (reshape (sum (reshape x64 '(4 16 4)) :axis 0) '(16 4)))))))

(deftest online-half
  ;; f16 and bf16: the online kernel computes in f32 (the scores and exponentials as the graph
  ;; rounds them, the running output rows in f32) and rounds the output once; row by row for
  ;; these lengths, in blocks for keys and values in 16s. Checked against the stored form in
  ;; f64 from the same half-precision inputs, within the dtype's tolerance, and the online
  ;; kernel is what ran.
  (let* ((qb (realize (randn '(1 2 8 16)))) (kb (realize (randn '(1 2 48 16)))) (vb (realize (randn '(1 2 48 32))))
         (i (reshape (arange 8) '(8 1))) (j (reshape (arange 48) '(1 48)))
         (causal (ge (add i 40) j))
         (near (logical-and (ge j (add (mul i 4) 16)) (le j (add (mul i 4) 20)))))
    (dolist (dt '(f16 bf16))
      (let* ((tol (if (eq dt 'f16) 1e-2 5e-2))
             (h (lambda (x) (realize (cast x dt))))
             (cases
               (list (list (nn:attention (funcall h q) (funcall h k) (funcall h v))
                           (stored (scaled-scores (funcall h q) (funcall h k)) (funcall h v)))
                     (list (nn:attention (funcall h qb) (funcall h kb) (funcall h vb))
                           (stored (scaled-scores (funcall h qb) (funcall h kb)) (funcall h vb)))
                     (list (nn:attention (funcall h qb) (funcall h kb) (funcall h vb) :mask causal)
                           (stored (where causal (scaled-scores (funcall h qb) (funcall h kb)) (- inf)) (funcall h vb)))
                     (list (matmul (softmax (where near (mul (matmul (funcall h qb) (transpose (funcall h kb))) 0.25) (- inf))
                                            :axis -1)
                                   (funcall h vb))
                           (stored (where near (scaled-scores (funcall h qb) (funcall h kb)) (- inf)) (funcall h vb))))))
        (dolist (c cases)
          (is (eq (dtype (first c)) dt))
          (is (search "online-softmax" (schedule->text (first c))))
          (is (close (first c) (second c) :tol tol)))))))

(deftest online-decode
  ;; One query a step against a KV cache written in place, its length a symbolic dimension
  ;; (hf:attention, as GPT-2 and Llama decode): every step agrees with the whole prefix.
  (let* ((ks (realize (randn '(2 6 8)))) (vs (realize (randn '(2 6 8)))) (qs (realize (randn '(4 6 8))))
         (cache (cons (realize (zeros '(2 6 8))) (realize (zeros '(2 6 8)))))
         (ok t))
    (dotimes (p 6)
      (let* ((pos (dim 'pos p))
             (out (with-dims (pos)
                    (realize (hf:attention (slice qs t (list p (+ p 1))) (slice ks t (list p (+ p 1)))
                                           (slice vs t (list p (+ p 1))) :cache cache :start pos))))
             ;; query heads 0 1 read key/value head 0, heads 2 3 head 1
             (kp (reshape (slice ks t (list 0 (+ p 1))) (list 2 1 (+ p 1) 8)))
             (vp (reshape (slice vs t (list 0 (+ p 1))) (list 2 1 (+ p 1) 8)))
             (want (stored (scaled-scores (reshape (slice qs t (list p (+ p 1))) '(2 2 1 8)) kp) vp)))
        (setq ok (and ok (close (reshape out '(2 2 1 8)) want)))))
    (is ok)))

(deftest online-gradients
  ;; Backward reads the weights again, so training graphs keep them; the gradients are
  ;; PyTorch's either way.
  (is (grad-check (lambda (q k v) (nn:attention q k v :causal t))
                  (randn '(1 3 4)) (randn '(1 3 4)) (randn '(1 3 2)))))

;; The schedule of the realize a backward runs (the loss with every gradient).
(defun backward-schedule (loss)
  (let ((text nil) (realize-all (symbol-function 'realize-all)))
    (unwind-protect
         (progn
           (setf (symbol-function 'realize-all)
                 (lambda (xs) (setq text (schedule->text xs)) (funcall realize-all xs)))
           (backward loss))
      (setf (symbol-function 'realize-all) realize-all))
    text))

;; The gradients of sum(F(q, k, v) * weight) for fresh leaves, and the schedule that computed them.
(defun grads-of (f q k v weight)
  (let* ((leaves (mapcar (lambda (x) (requires-grad! (realize (mul x 1)))) (list q k v)))
         (text (backward-schedule (sum (mul (apply f leaves) weight)))))
    (list (mapcar #'grad leaves) text)))

(deftest recomputed-gradients
  ;; Backward without the L x L matrices (FlashAttention-2's recomputation): the weights, the
  ;; scores, dP = dO V^T and the scores' gradient are computed again inside each kernel that
  ;; reads them, from the row max and sum stored as kernels of their own; each variant's
  ;; gradients are the stored form's (:never), and no kernel of the recomputed backward has
  ;; the weights' shape, where the stored one has several.
  (let* ((s (lambda (q k) (mul (matmul q (transpose k)) (/ 1.0 (sqrt (car (last (shape q))))))))
         (i (reshape (arange 5) '(5 1))) (j (reshape (arange 7) '(1 7)))
         (near (logical-and (ge (sub j i) -2) (le (sub j i) 2)))
         (bias (realize (randn '(3 5 7))))
         (kg (realize (randn '(2 1 7 8)))) (vg (realize (randn '(2 1 7 6))))
         (qb (realize (randn '(1 2 32 16)))) (kb (realize (randn '(1 2 48 16)))) (vb (realize (randn '(1 2 48 32))))
         (qc (realize (randn '(1 2 48 16)))) (bias6 (realize (randn '(2 6 32))))
         (variants
           (list (list "plain" (lambda (q k v) (nn:attention q k v)) q k v)
                 (list "causal" (lambda (q k v) (nn:attention q k v :causal t)) q k v)
                 (list "bias" (lambda (q k v) (matmul (softmax (add (funcall s q k) bias) :axis -1) v)) q k v)
                 (list "window" (lambda (q k v) (matmul (softmax (where near (funcall s q k) (- inf)) :axis -1) v)) q k v)
                 (list "soft cap" (lambda (q k v) (matmul (softmax (mul (tanh (div (funcall s q k) 2.0)) 2.0) :axis -1) v))
                       q k v)
                 (list "grouped" (lambda (q k v) (nn:attention q k v)) (slice q t '(0 2)) kg vg)
                 (list "f64" (lambda (q k v) (nn:attention q k v :causal t)) (f64 q) (f64 k) (f64 v))
                 ;; (half precision: recomputed row by row, rounding as the stored form does)
                 (list "f16" (lambda (q k v) (nn:attention q k v :causal t)) (cast q 'f16) (cast k 'f16) (cast v 'f16))
                 (list "bf16" (lambda (q k v) (nn:attention q k v)) (cast q 'bf16) (cast k 'bf16) (cast v 'bf16))
                 ;; Keys in 16s and 32s: the CPU's blocked kernels (4 or 2 rows against 32 or 16
                 ;; terms at a time, weights then products), an epilogue, the key gradient's permute.
                 (list "blocks 32x48" (lambda (q k v) (nn:attention q k v)) qb kb vb)
                 (list "blocks causal 48x48" (lambda (q k v) (nn:attention q k v :causal t)) qc kb vb)
                 (list "blocks 6x32 bias" (lambda (q k v) (matmul (softmax (add (funcall s q k) bias6) :axis -1) v))
                       (slice qb t t '(0 6)) (slice kb t t '(0 32)) (slice vb t t '(0 32) '(0 16))))))
    (dolist (variant variants)
      (let* ((f (second variant)) (args (cddr variant))
             (wshape (format nil "~a" (shape (funcall s (first args) (second args)))))
             (weight (realize (add (rand (shape (apply f args))) 0.5)))
             (stored (progn (jit-online-softmax :never) (grads-of f (first args) (second args) (third args) weight)))
             (again (progn (jit-online-softmax :always) (grads-of f (first args) (second args) (third args) weight)))
             (same (every #'identity (mapcar (lambda (a b) (close a (f64 b) :tol 1e-4)) (first again) (first stored)))))
        (unless same
          (format t "~a: largest differences ~s~%" (first variant)
                  (mapcar (lambda (a b) (item (amax (abs (sub (f64 a) (f64 b)))))) (first again) (first stored))))
        (is same)
        (is (search wshape (second stored)))
        (is (not (search wshape (second again))))))))

(deftest recomputed-learned-bias
  ;; A learned additive bias's gradient is the scores' gradient itself, L x L, so that kernel
  ;; stays and nothing is recomputed (its row kernel cannot compute the weights inline); the
  ;; gradients are the stored form's (a fuzzer case once read garbage here).
  (let* ((qs (realize (randn '(1 1 4 1)))) (ks (realize (randn '(1 1 5 1)))) (vs (realize (randn '(1 1 5 32))))
         (b (realize (randn '(4 5)))) (w (realize (randn '(1 1 4 32))))
         (f (lambda (q k v b) (sum (mul (matmul (softmax (add (mul (matmul q (transpose k)) 0.5) b) :axis -1) v) w))))
         (grads (lambda (mode)
                  (jit-online-softmax mode)
                  (second (funcall (value-and-grad f) qs ks vs b)))))
    (let ((stored (funcall grads :never)) (again (funcall grads :always)))
      (is (every #'identity (mapcar (lambda (a b) (close a (f64 b) :tol 1e-4)) again stored))))))

(deftest recomputed-review-cases
  ;; Graphs a review built against recompute_softmax, each equal to the stored form: a product
  ;; of the weights read only through an expand and a permute (a root: its kernel must not
  ;; store the reduce through the expand), and a reduce nested in another inline reduce whose
  ;; value must not outlive its loop (an internal error before).
  (flet ((same (outs)
           (jit-online-softmax :always)
           (let ((a (realize-all (funcall outs nil))))
             (jit-online-softmax :never)
             (every #'identity (mapcar (lambda (x y) (close x y :tol 1e-4)) a (realize-all (funcall outs t)))))))
    (let ((q (realize (randn '(2 8 4)))) (k (realize (randn '(2 8 4))))
          (v (realize (randn '(2 8 4)))) (v2 (realize (randn '(2 8 4)))))
      (is (same (lambda (ref)
                  (let* ((w (softmax (if ref (f64 (matmul q (transpose k))) (matmul q (transpose k))) :axis -1))
                         (o (matmul w (if ref (f64 v) v))))
                    (list (permute (expand (reshape o '(2 1 8 4)) '(2 3 8 4)) '(0 3 2 1))
                          (matmul w (if ref (f64 v2) v2))))))))
    (let* ((q (realize (randn '(1 6 4)))) (k (realize (randn '(1 6 4))))
           (m (realize (randn '(1 1 5 6)))) (m2 (realize (randn '(1 1 5 6)))) (v (realize (randn '(1 6 3))))
           (bc (lambda (x shape to) (expand (reshape x shape) to))))
      (is (same (lambda (ref)
                  (let* ((c (lambda (x) (if ref (f64 x) x)))
                         (w (softmax (funcall c (matmul q (transpose k))) :axis -1))
                         (y (sum (mul (add (funcall bc w '(1 6 1 6) '(1 6 5 6)) (funcall c m)) (funcall c m2)) :axis 2))
                         (ye (funcall bc y '(1 6 6 1) '(1 6 6 3)))
                         (we (funcall bc w '(1 6 6 1) '(1 6 6 3)))
                         (ve (funcall bc (funcall c v) '(1 1 6 3) '(1 6 6 3))))
                    (list (sum (mul (where (lt ye we) ye we) ve) :axis 2) (matmul w (funcall c v))))))))))

(deftest recomputed-hidden-blocks
  ;; The blocked kernels skip a block of 4 rows and 32 (16) terms that the mask hides entirely
  ;; (a causal mask's blocks past the diagonal, a window's outside it), where the weight is then
  ;; the reduce's identity; a row the mask hides entirely (its max -inf) is NaN in every
  ;; gradient that reads it, as in the stored form, so its blocks are not skipped. Masks
  ;; hiding: the keys after each row, the first 16 rows entirely (keys up to i - 16), and
  ;; everything outside a window of 20 keys.
  (let* ((qb (realize (randn '(1 2 48 16)))) (kb (realize (randn '(1 2 64 16)))) (vb (realize (randn '(1 2 64 32))))
         (i (reshape (arange 48) '(48 1))) (j (reshape (arange 64) '(1 64)))
         (s (lambda (q k) (mul (matmul q (transpose k)) 0.25)))
         (masked (lambda (keep) (lambda (q k v) (matmul (softmax (where keep (funcall s q k) (- inf)) :axis -1) v))))
         (variants (list (list "causal" (funcall masked (le j i)))
                         (list "rows hidden" (funcall masked (le j (sub i 16))))
                         (list "window" (funcall masked (logical-and (le j (add i 10)) (ge j (sub i 10)))))))
         (weight (realize (add (rand '(1 2 48 32)) 0.5)))
         ;; Equal NaNs, and the other elements within tolerance.
         (same (lambda (a b)
                 (and (equal (to-list (isnan a)) (to-list (isnan b)))
                      (close (where (isnan a) 0.0 a) (f64 (where (isnan b) 0.0 b)) :tol 1e-4)))))
    (dolist (variant variants)
      (let* ((f (second variant))
             (stored (progn (jit-online-softmax :never) (first (grads-of f qb kb vb weight))))
             (again (progn (jit-online-softmax :always) (first (grads-of f qb kb vb weight))))
             (ok (every #'identity (mapcar same again stored))))
        (unless ok (format t "~a: gradients differ~%" (first variant)))
        (is ok)
        ;; (the value gradient: the weights' NaN rows reach every key; the scores' gradient is 0
        ;; where the mask hides them)
        (is (eq (string= (first variant) "rows hidden") (item (any (isnan (third again))))))))))

(defun occurrences (needle text)
  (let ((n 0) (at 0))
    (loop (let ((p (search needle text :start2 at)))
            (if p (setq n (+ n 1) at (+ p 1)) (return n))))))

(deftest recomputed-row-term
  ;; The softmax gradient's row term sum(dP W), where W feeds only the product with the values,
  ;; is taken from the output's rows, rowsum(dO O) (FlashAttention-2's D): no kernel recomputes
  ;; the scores for it. The scores (the q . k products, shape (1 2 32 1 48)) are computed by the
  ;; max, the sum, the output, dV, and with dP by dK and dQ: 8 times (10 with D from W).
  (jit-online-softmax :always)
  (let* ((qb (realize (randn '(1 2 32 16)))) (kb (realize (randn '(1 2 48 16)))) (vb (realize (randn '(1 2 48 32))))
         (weight (realize (randn '(1 2 32 32))))
         (got (grads-of (lambda (q k v) (nn:attention q k v)) qb kb vb weight)))
    (is (= 8 (occurrences "(1 2 32 1 48)" (second got))))
    ;; the gradients of the plain form, in f64, with the weights stored
    (let ((want (progn (jit-online-softmax :never)
                       (first (grads-of (lambda (q k v) (matmul (softmax (mul (matmul q (transpose k)) 0.25) :axis -1) v))
                                        (f64 qb) (f64 kb) (f64 vb) (f64 weight))))))
      (is (every #'identity (mapcar (lambda (a b) (close a b :tol 1e-4)) (first got) want))))
    (jit-online-softmax :always)))

(deftest recomputed-square-heads
  ;; Heads as wide as they are long (d = L = 32): every gradient has the weights' shape, and the
  ;; output's product with the loss's weight (a short product whose terms read the weights) is
  ;; not the scores' gradient; still recomputed (no kernel of rows, the softmax's), with the
  ;; stored form's gradients.
  (let* ((qs (realize (randn '(1 2 32 32)))) (ks (realize (randn '(1 2 32 32)))) (vs (realize (randn '(1 2 32 32))))
         (weight (realize (randn '(1 2 32 32))))
         (f (lambda (q k v) (nn:attention q k v)))
         (stored (progn (jit-online-softmax :never) (grads-of f qs ks vs weight)))
         (again (progn (jit-online-softmax :always) (grads-of f qs ks vs weight))))
    (is (search "(rows)" (second stored)))
    (is (not (search "(rows)" (second again))))
    (is (every #'identity (mapcar (lambda (a b) (close a (f64 b) :tol 1e-4)) (first again) (first stored))))))

(deftest cross-entropy-rows
  ;; The other row-wise chain: log-softmax then the negative log-likelihood of the targets
  ;; (nn:cross-entropy) stores no log-probabilities. Its row reduces (max, log-sum-exp, the
  ;; target's term) read the logits where they are, and backward's only kernel of the logits'
  ;; shape is the gradient itself (softmax - one-hot, from the stored log-sum-exp).
  (let* ((logits (requires-grad! (realize (randn '(64 1000)))))
         (targets (realize (randint 0 1000 '(64))))
         (loss (nn:cross-entropy logits targets))
         (forward (schedule->text loss))
         (back (backward-schedule loss))
         (want (neg (mean (sum (mul (log-softmax (f64 logits) :axis -1) (one-hot targets 1000 :dtype 'f64)) :axis -1)))))
    (is (search "reduce :max" forward))
    (is (= 0 (occurrences "(64 1000)" forward)))
    (is (= 1 (occurrences "(64 1000)" back)))
    (is (close loss want))
    (is (close (grad logits) (div (sub (softmax (f64 logits) :axis -1) (one-hot targets 1000 :dtype 'f64)) 64.0)))))

(jit-online-softmax :auto)
(run-tests)
