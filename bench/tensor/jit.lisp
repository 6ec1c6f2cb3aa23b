;;; SPDX-License-Identifier: Apache-2.0
;;; Tensor benchmarks on the current device (run with tlisp --device cpu). Each line:
;;;   NAME  best-ms  GFLOP/s  GB/s
;;; best of several runs after one warm-up run (which compiles). bench/tensor/run.sh runs this
;;; next to PyTorch and NumPy and prints the ratios.

(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun best-ms (thunk reps &optional (gc t))
  (funcall thunk)  ; warm-up: compiles the kernels
  (let ((best nil))
    (dotimes (i reps)
      (when gc (gc))  ; the last run's result goes, so the same expression is computed again, not reused
      (let ((t0 (now-ms)))
        (funcall thunk)
        (let ((dt (- (now-ms) t0)))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(defun report (name ms flops bytes)
  (format t "~a ~,3f ~,2f ~,2f~%" name ms (/ flops ms 1e6) (/ bytes ms 1e6)))

(defun bench (name thunk &key (flops 0) (bytes 0) (reps 5) (gc t))
  (report name (best-ms thunk reps gc) flops bytes))

(manual-seed 0)

;; Matmul: 2 N^3 flops.
(dolist (n '(256 512 1024 2048))
  (let ((a (realize (randn (list n n))))
        (b (realize (randn (list n n)))))
    (bench (format nil "matmul-~a" n) (lambda () (realize (matmul a b)))
           :flops (* 2.0 n n n) :bytes (* 12.0 n n) :reps (if (> n 1024) 2 5))))

;; Awkward shapes (issue 22): GPT-2's logits, 50257 columns (and the same padded to 50304, a
;; multiple of the register tile), and a narrow product whose 86 columns no tile width divides.
(dolist (mkn '((48 768 50257) (48 768 50304) (2048 128 86)))
  (destructuring-bind (m k n) mkn
    (let ((a (realize (randn (list m k))))
          (b (realize (randn (list k n)))))
      (bench (format nil "matmul-~ax~ax~a" m k n) (lambda () (realize (matmul a b)))
             :flops (* 2.0 m k n) :bytes (* 4.0 (+ (* m k) (* k n) (* m n))) :reps 3))))

;; bf16 operands (multiplied and summed in f32, rounded once): a square matmul and a decode
;; step's matrix-vector product. Bytes: the operands and the result, 2 each.
(let ((a (realize (cast (randn '(1024 1024)) 'bf16))) (b (realize (cast (randn '(1024 1024)) 'bf16))))
  (bench "matmul-bf16-1024" (lambda () (realize (matmul a b))) :flops (* 2.0 1024 1024 1024)
         :bytes (* 6.0 1024 1024) :reps 3))
(let ((x (realize (cast (randn '(1 768)) 'bf16))) (w (realize (cast (randn '(768 3072)) 'bf16))))
  (bench "matvec-bf16-1x768x3072" (lambda () (realize (matmul x w))) :flops (* 2.0 768 3072)
         :bytes (* 2.0 (+ 768 (* 768 3072) 3072)) :reps 20))

;; GPT-2's tied output layer: hidden states times the transposed 50257x768 embedding, for one
;; token (decoding) and 48 (a prompt).
(let ((w (realize (randn '(50257 768)))))
  (dolist (m '(1 48))
    (let ((x (realize (randn (list m 768)))))
      (bench (format nil "lm-head-~ax768@wT" m) (lambda () (realize (matmul x (transpose w))))
             :flops (* 2.0 m 768 50257) :bytes (* 4.0 (+ (* m 768) (* 768 50257) (* m 50257))) :reps 5))))

;; Elementwise on 2^24 floats: bytes moved are what must cross memory (inputs and output).
(let* ((n (expt 2 24))
       (a (realize (randn (list n))))
       (b (realize (randn (list n))))
       (c (realize (randn (list n)))))
  (bench "add-2^24" (lambda () (realize (+ a b))) :flops n :bytes (* 12.0 n))
  (bench "relu(a*b+c)-2^24" (lambda () (realize (relu (+ (* a b) c)))) :flops (* 3.0 n) :bytes (* 16.0 n))
  (bench "6-op-chain-2^24" (lambda () (realize (* (+ (* (- a b) c) 1.5) (maximum a 0.0))))
         :flops (* 6.0 n) :bytes (* 16.0 n))
  ;; Transcendentals: exp of a float is computed in f32 within an ulp (math::exp2_product_f32).
  (bench "exp-2^24" (lambda () (realize (exp a))) :flops n :bytes (* 8.0 n))
  (bench "sigmoid-2^24" (lambda () (realize (sigmoid a))) :flops n :bytes (* 8.0 n))
  ;; sin and cos of a float: reduced by the bits of 2/pi its size needs, in f64 (math::sin_cos_f32);
  ;; arguments up to 1000 (RoPE's angles reach the context length).
  (let ((angles (realize (* a 300.0))))
    (bench "sin-2^24" (lambda () (realize (sin angles))) :flops n :bytes (* 8.0 n))
    (bench "cos-2^24" (lambda () (realize (cos angles))) :flops n :bytes (* 8.0 n)))
  ;; Normal samples (Box-Muller over Threefry: log, sqrt, cos).
  (bench "randn-2^24" (lambda () (realize (randn (list n)))) :flops n :bytes (* 4.0 n)))

;; Softmax over the last axis of 4096x4096 and layer-norm over (4096, 1024).
(let ((x (realize (randn '(4096 4096)))))
  (bench "softmax-4096x4096" (lambda () (realize (softmax x :axis 1)))
         :flops (* 5.0 4096 4096) :bytes (* 8.0 4096 4096))
  (bench "rowmax-4096x4096" (lambda () (realize (amax x :axis 1)))
         :flops (* 1.0 4096 4096) :bytes (* 4.0 4096 4096)))
(let ((x (realize (randn '(4096 1024)))))
  (bench "layernorm-4096x1024" (lambda () (realize (layer-norm x)))
         :flops (* 7.0 4096 1024) :bytes (* 8.0 4096 1024)))

;; Call overhead: a 784-256-10 MLP forward on one example, where launching dominates. Eager
;; calls build the graph and look up its schedule each time; a jit function replays. No
;; collection before each call: a collection walks the heap and evicts the 800 KB of weights
;; from the caches (the first call after one took 83 us here, the next 41), and PyTorch's loop
;; runs with warm caches. Nothing is reused between calls (each builds a new graph on x).
(let* ((w1 (realize (randn '(784 256)))) (b1 (realize (randn '(256))))
       (w2 (realize (randn '(256 10)))) (b2 (realize (randn '(10))))
       (x (realize (randn '(1 784))))
       (flops (* 2.0 (+ (* 784 256) (* 256 10))))
       (bytes (* 4.0 (+ (* 784 256) (* 256 10))))
       (forward (lambda (x) (+ (matmul (relu (+ (matmul x w1) b1)) w2) b2)))
       (jitted (jit forward)))
  (bench "mlp-1x784-eager" (lambda () (realize (funcall forward x))) :flops flops :bytes bytes :reps 300 :gc nil)
  (bench "mlp-1x784-jit" (lambda () (funcall jitted x)) :flops flops :bytes bytes :reps 300 :gc nil))

;; A KV cache's row write (issue 19): one 1024-float row into row POS of a 4096x1024 cache, in
;; place, at a new position each run. Bytes: the row read and written, not the cache.
(let* ((cache (realize (zeros '(4096 1024))))
       (row (realize (randn '(1024))))
       (pos 0))
  (bench "kv-row-write-4096x1024"
         (lambda () (index-put! cache (setq pos (mod (+ pos 1) 4096)) row))
         :bytes (* 8.0 1024) :reps 50))
