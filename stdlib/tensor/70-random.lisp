;;; SPDX-License-Identifier: Apache-2.0
;;; Random numbers: Threefry-2x32 (20 rounds, Salmon et al. 2011) built from u32 primitives,
;;; so generation is part of the graph, fuses, and reproduces on every backend. Each draw
;;; uses key (seed, draw number) and counters 0..n-1.

;;; The generator's state (seed, draws) lives in the tensor runtime: manual-seed sets it, and
;;; each draw reads its key from a small u32 tensor made by %rng-next-key. Because the key is
;;; data, not a constant in the graph, every draw of one shape runs the same compiled kernel,
;;; and a function captured by (jit f) draws fresh numbers on every call.

(defun %u32 (v shp) (prim:const v 'u32 shp))

(defun %rotl32 (x r shp)
  ;; Rotation left by R: multiplication by 2^R wraps, division by 2^(32-R) brings the top bits down.
  (prim:or (prim:mul x (%u32 (expt 2 r) shp)) (prim:idiv x (%u32 (expt 2 (- 32 r)) shp))))

(defun %u32-word (k shp)
  ;; K (an integer, or a u32 tensor of one element) as a u32 tensor of shape SHP.
  (if (integerp k)
      (%u32 (mod k 4294967296) shp)
      (prim:expand (prim:reshape k (mapcar (lambda (d) 1) shp)) shp)))

(defun threefry2x32 (k0 k1 x0 x1)
  "(threefry2x32 K0 K1 X0 X1) The Threefry-2x32 block function (20 rounds) with key (K0 K1),
integers or one-element u32 tensors, on counter tensors X0 and X1 (u32): a list of two u32
tensors."
  (let* ((shp (tensor-shape x0))
         (k0 (%u32-word k0 shp))
         (k1 (%u32-word k1 shp))
         (ks (list k0 k1 (prim:xor (prim:xor k0 k1) (%u32 466688986 shp))))
         (rot '(13 15 26 6 17 29 16 24))
         (x0 (prim:add x0 k0))
         (x1 (prim:add x1 k1)))
    (dotimes (i 20)
      (setq x0 (prim:add x0 x1))
      (setq x1 (prim:xor (%rotl32 x1 (nth (mod i 8) rot) shp) x0))
      (when (= (mod i 4) 3)
        (let ((s (/ (+ i 1) 4)))
          (setq x0 (prim:add x0 (nth (mod s 3) ks)))
          (setq x1 (prim:add x1 (prim:add (nth (mod (+ s 1) 3) ks) (%u32 s shp)))))))
    (list x0 x1)))

(defun random-bits (shp)
  "(random-bits SHAPE) A u32 tensor of SHAPE with uniformly random bits (advances the generator)."
  (let* ((n (%numel-of shp))
         (key (%rng-next-key))
         (word (lambda (i) (prim:shrink key (list (list i (+ i 1))))))
         (counters (prim:iota (list n) 0 'u32))
         (bits (first (threefry2x32 (funcall word 0) (funcall word 1) counters
                                    (%u32-word (funcall word 2) (list n))))))
    (prim:reshape bits shp)))

(defcomposite rand (shp &key (dtype 'f32))
  "(rand SHAPE &key (dtype 'f32)) Uniform random numbers in [0, 1) of a float DTYPE."
  (%float-dtype-arg 'rand dtype)
  (let* ((shp (%shape-arg 'rand shp))
         (bits (random-bits shp))
         ;; 23 random mantissa bits under exponent 0 give a float in [1, 2).
         (one-two (prim:bitcast (prim:or (prim:idiv bits (%u32 512 shp)) (%u32 1065353216 shp)) 'f32))
         (u (prim:add one-two (prim:const -1.0 'f32 shp)))
         ;; A narrower float would round values near 1 up to 1: keep only as many bits as
         ;; its significand holds (11 for f16, 8 for bf16), so every value is exact.
         (bits (case dtype (f16 11) (bf16 8) (t nil))))
    (prim:cast (if bits
                   (let ((scale (prim:const (expt 2.0 bits) 'f32 shp)))
                     (prim:mul (floor (prim:mul u scale)) (prim:recip scale)))
                   u)
               dtype)))

(defcomposite randn (shp &key (dtype 'f32))
  "(randn SHAPE &key (dtype 'f32)) Standard normal random numbers (Box-Muller)."
  (%float-dtype-arg 'randn dtype)
  (let* ((shp (%shape-arg 'randn shp))
         (u1 (rand shp)) (u2 (rand shp))
         (r (sqrt (mul -2.0 (log (sub 1.0 u1)))))
         (z (mul r (cos (mul (* 2 pi) u2)))))
    (prim:cast z dtype)))

(defcomposite uniform (shp &key (low 0.0) (high 1.0) (dtype 'f32))
  "(uniform SHAPE &key (low 0) (high 1) (dtype 'f32)) Uniform random numbers in [LOW, HIGH)."
  (%float-dtype-arg 'uniform dtype)
  (cast (add (mul (rand shp :dtype 'f32) (- high low)) low) dtype))

(defcomposite normal (shp &key (mean 0.0) (std 1.0) (dtype 'f32))
  "(normal SHAPE &key (mean 0) (std 1) (dtype 'f32)) Normal random numbers with MEAN and STD."
  (%float-dtype-arg 'normal dtype)
  (cast (add (mul (randn shp) std) mean) dtype))

(defcomposite randint (low high shp &key (dtype 'i32))
  "(randint LOW HIGH SHAPE &key (dtype 'i32)) Random integers in [LOW, HIGH)."
  (unless (< low high) (error 'type-error "randint: LOW (~a) must be below HIGH (~a)" low high))
  (%dtype-arg 'randint dtype)
  (let* ((shp (%shape-arg 'randint shp))
         (span (- high low))
         (r (prim:cast (prim:mul (prim:cast (random-bits shp) 'f64) (prim:const (/ span 4294967296.0) 'f64 shp)) 'i64)))
    (prim:cast (prim:add r (prim:const low 'i64 shp)) dtype)))

(defcomposite bernoulli (p &key shp (dtype 'f32))
  "(bernoulli P &key shp (dtype 'f32)) 1 with probability P (a number or a tensor of
probabilities), else 0; SHP gives the shape when P is a number."
  (%dtype-arg 'bernoulli dtype)
  (let* ((pt (%as-tensor p))
         (s (or shp (tensor-shape pt))))
    (cast (lt (rand s :dtype (if (dtype-float-p (tensor-dtype pt)) (tensor-dtype pt) 'f32)) pt) dtype)))

(defcomposite rand-like (x)
  "(rand-like X) Uniform random numbers in [0, 1) shaped like X (X's dtype if a float)."
  (rand (tensor-shape x) :dtype (if (dtype-float-p (tensor-dtype x)) (tensor-dtype x) 'f32)))

(defcomposite randn-like (x)
  "(randn-like X) Standard normal random numbers shaped like X (X's dtype if a float)."
  (randn (tensor-shape x) :dtype (if (dtype-float-p (tensor-dtype x)) (tensor-dtype x) 'f32)))
