;;; SPDX-License-Identifier: Apache-2.0
;;; Nothing computed is computed twice (issue 20): an intermediate a realize materializes
;;; anyway, which a live tensor or another lazy graph still refers to, keeps its buffer, so
;;; what is built on it later reads it instead of computing it again. Nothing else is kept.

(defun stat (k) (getf (tensor-stats) k))
(defun kernels-run () (getf (jit-stats) :kernels-run))
(defmacro counting-runs (&rest body)
  `(let ((before (kernels-run))) ,@body (- (kernels-run) before)))
(defvar x (realize (randn '(64 64))))
(defvar w (realize (mul (randn '(64 64)) 0.1)))

(deftest a-materialized-intermediate-is-kept
  ;; The matmul is a kernel of its own (a sum reads it): its result stays with y.
  (let* ((y (matmul x x))
         (s (sum (sum y :axis 1))))
    (is (= (kernel-count (mean y)) 2))
    (realize s)
    (is (= (kernel-count (mean y)) 1))
    (is (allclose (mean y) (mean (matmul x x)) :rtol 1e-5))))

(deftest fused-work-is-not-stored
  ;; exp fuses into the sum's kernel: it is never in memory, so nothing of it is kept (it is
  ;; cheaper to compute again than to store).
  (let ((y (exp x)))
    (realize (sum y))
    (is (= (kernel-count y) 1))))

(deftest layers-realized-one-by-one-cost-linear-work
  ;; A forward that realizes inside each layer (here a cache write) computes each layer once:
  ;; without kept intermediates layer i would compute layers 0..i again, 1 + 2 + ... + 8.
  (let ((h x)
        (cache (realize (zeros '(8 64))))
        (per-layer nil))
    (dotimes (i 8)
      (let ((before (kernels-run)))
        (setq h (tanh (matmul h w)))
        (index-put! cache i (sum h :axis 0))
        (push (- (kernels-run) before) per-layer)))
    ;; each layer runs a few kernels of its own (its matmul and tanh, its sum, the write), not
    ;; those of the layers before it too
    (is (every (lambda (k) (<= k 6)) per-layer))
    (is (= (first per-layer) (second per-layer)))
    (let ((ref x))
      (dotimes (i 8) (setq ref (tanh (matmul ref w))))
      (is (allclose (slice cache 7) (sum ref :axis 0) :rtol 1e-4 :atol 1e-5)))))

(deftest kept-buffers-go-with-their-tensors
  (gc)
  (let ((base (stat :bytes-in-use)))
    (let ((y (matmul x x)))
      (realize (sum (sum y :axis 1)))
      (is (> (stat :bytes-in-use) base)))       ; y's buffer, and the row sums
    (gc)
    (is (= (stat :bytes-in-use) base))))

(deftest values-realized-with-bind-are-not-kept
  ;; A value computed with :bind values may be realized again with others.
  (let* ((z (zeros '(n 4)))
         (y (matmul (+ z 1.0) (ones '(4 4))))
         (s (sum y :axis 1)))
    (is (equal (to-list (realize s :bind '((n . 2)))) '(16.0 16.0)))
    (is (equal (to-list (realize (sum y :axis 1) :bind '((n . 3)))) '(16.0 16.0 16.0)))))

(deftest a-realized-softmax-is-not-computed-again-by-backward
  ;; softmax's gradient rule is written in its value p: once the loss was printed (realized),
  ;; p is kept, and backward is one kernel, p (g - sum(g p)), reading it.
  (let* ((x (requires-grad! (realize (randn '(4 6)))))
         (w (realize (randn '(4 6))))
         (p (softmax x :axis 1))
         (loss (sum (mul p w))))
    (realize loss)
    (is (= (counting-runs (backward loss)) 1))
    (is (allclose (grad x) (mul p (sub w (sum (mul w p) :axis 1 :keepdim t))) :atol 1e-6))))

(deftest a-kept-buffer-that-is-the-result-counts-once
  ;; A matmul's result is a reshape of its sums, whose buffer is kept on the sums' node too:
  ;; the same bytes, counted once toward the next collection. (Counted twice, a 640 x 640
  ;; product, 1.56 MiB, reached the 2 MiB that ask for a collection on every realize.)
  (let ((a (realize (randn '(640 640))))
        (bs (loop for i below 4 collect (realize (randn '(640 640))))))
    (realize (matmul a (first bs)))  ; (compiles)
    (gc)  ; (what the allocations above asked for)
    (let ((before (getf (gc-stats) :collections)))
      (dotimes (i 3)
        (gc)
        (realize (matmul a (nth (+ i 1) bs))))
      ;; (the three asked for here, no more)
      (is (= (getf (gc-stats) :collections) (+ before 3))))))

(deftest collections-wait-for-an-eighth-of-the-held-tensor-memory
  ;; Garbage tensors are counted toward the next collection, which comes after 2 MiB of them
  ;; or an eighth of the tensor memory live objects held at the last one, whichever is
  ;; more: with 32 MiB of weights held, a loop making 1 MiB results collects every 4 MiB, not
  ;; every 2 MiB (a language model's decode loop collected every token).
  (let ((weights (realize (randn '(8 1024 1024))))
        (x (realize (randn '(256 1024)))))
    (gc)
    (is (>= (getf (gc-stats) :held) (* 32 1024 1024)))
    (setq x (realize (mul x 0.5)))
    (let ((before (getf (gc-stats) :collections)))
      (dotimes (i 40) (setq x (realize (mul x 0.5))))  ; each result 1 MiB, the last one garbage
      (is (<= (- (getf (gc-stats) :collections) before) 12)))
    (is (= (numel weights) (* 8 1024 1024)))))

(run-tests)
