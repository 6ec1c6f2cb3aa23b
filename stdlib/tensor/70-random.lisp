;;; SPDX-License-Identifier: Apache-2.0
;;; Random numbers: Threefry-2x32 (20 rounds, Salmon et al. 2011) built from u32 primitives,
;;; so generation is part of the graph, fuses, and reproduces on every backend. Each draw
;;; uses key (seed, draw number) and counters 0..n-1.

;;; The generator's state (seed, draws) lives in the tensor runtime: manual-seed sets it, and
;;; each draw reads its key from a small u32 tensor made by %rng-next-key. Because the key is
;;; data, not a constant in the graph, every draw of one shape runs the same compiled kernel,
;;; and a function captured by (jit f) draws fresh numbers on every call.

(defun %u32 (v shp) (prim:const v 'u32 shp))

(defun %u32-word (k shp)
  ;; K (an integer, or a u32 tensor of one element) as a u32 tensor of shape SHP.
  (if (integerp k)
      (%u32 (mod k 4294967296) shp)
      (prim:expand (prim:reshape k (mapcar (lambda (d) 1) shp)) shp)))

(defun threefry2x32 (k0 k1 x0 x1)
  "(threefry2x32 K0 K1 X0 X1) The Threefry-2x32 block function (20 rounds) with key (K0 K1),
integers or one-element u32 tensors, on counter tensors X0 and X1 (u32): a list of two u32
tensors.
  (let ((zero (zeros '(1) :dtype 'u32)))
    (mapcar #'to-list (threefry2x32 0 0 zero zero)))  ; => ((1797259609) (2579123966))"
  ;; The rounds: x0 += x1, x1 = rotl(x1, R) xor x0, with R from (13 15 26 6 17 29 16 24), and
  ;; every fourth round the key schedule (k0, k1, k0 xor k1 xor 466688986) and the round number
  ;; added; a rotation is (x * 2^R) or (x / 2^(32-R)). The graph is built in C++
  ;; (%threefry2x32), from the same nodes in the same order.
  (let ((shp (tensor-shape x0)))
    (%threefry2x32 (%u32-word k0 shp) (%u32-word k1 shp) x0 x1)))

(defun %random-words (shp)
  ;; Both words of one Threefry block per element: a list of two u32 tensors of SHAPE
  ;; (advances the generator by one draw).
  (let* ((n (%numel-of shp))
         (key (%rng-next-key))
         (word (lambda (i) (prim:shrink key (list (list i (+ i 1))))))
         (counters (prim:iota (list n) 0 'u32)))
    (mapcar (lambda (w) (prim:reshape w shp))
            (threefry2x32 (funcall word 0) (funcall word 1) counters (%u32-word (funcall word 2) (list n))))))

(defun random-bits (shp)
  "(random-bits SHAPE) A u32 tensor of SHAPE with uniformly random bits (advances the generator).
  (let ((r (random-bits '(2 3)))) (list (tensor-shape r) (tensor-dtype r)))  ; => ((2 3) u32)"
  (first (%random-words shp)))

(defun %unit-f32 (bits shp)
  ;; An f32 in [0, 1) from the top 23 of 32 random BITS (u32): under exponent 0 they make a
  ;; float in [1, 2), less 1.
  (let ((one-two (prim:bitcast (prim:or (prim:idiv bits (%u32 512 shp)) (%u32 1065353216 shp)) 'f32)))
    (prim:add one-two (prim:const -1.0 'f32 shp))))

(defcomposite rand (shp &key (dtype 'f32))
  "(rand SHAPE &key (dtype 'f32)) Uniform random numbers in [0, 1) of a float DTYPE: multiples
of 2^-23 for f32 (PyTorch's are of 2^-24), 2^-11 for f16, 2^-8 for bf16, and 2^-53 for f64.
  (let ((u (rand 1000))) (list (item (ge (amin u) 0.0)) (item (lt (amax u) 1.0))))  ; => (t t)
  (tensor-dtype (rand '(2 3) :dtype 'f64))  ; => f64
  (tensor-dtype (rand '(2) :dtype 'c64))  ; => c64"
  (when (dtype-complex-p dtype)
    ;; As torch.rand: the real and imaginary parts each uniform in [0, 1).
    (return-from rand (let ((pd (%part-dtype dtype))) (complex (rand shp :dtype pd) (rand shp :dtype pd)))))
  (%float-dtype-arg 'rand dtype)
  (let ((shp (%shape-arg 'rand shp)))
    (if (eq dtype 'f64)
        ;; 27 bits of one word and 26 of the other: (a 2^26 + b) 2^-53, exact in f64.
        (let* ((words (%random-words shp))
               (a (prim:cast (prim:idiv (first words) (%u32 32 shp)) 'f64))
               (b (prim:cast (prim:idiv (second words) (%u32 64 shp)) 'f64)))
          (prim:mul (prim:add (prim:mul a (prim:const (expt 2.0 26) 'f64 shp)) b)
                    (prim:const (expt 2.0 -53) 'f64 shp)))
        (let* ((u (%unit-f32 (random-bits shp) shp))
               ;; A narrower float would round values near 1 up to 1: keep only as many bits
               ;; as its significand holds (11 for f16, 8 for bf16), so every value is exact.
               (bits (case dtype (f16 11) (bf16 8) (t nil))))
          (prim:cast (if bits
                         (let ((scale (prim:const (expt 2.0 bits) 'f32 shp)))
                           (prim:mul (floor (prim:mul u scale)) (prim:recip scale)))
                         u)
                     dtype)))))

(defun %cos-2pi-unit (u)
  ;; cos(2 pi u) for an f32 U in [0, 1) (Box-Muller's angle) in f32, with no general range
  ;; reduction: u - 1/2 is exact, the symmetries of the cosine bring it to an angle y in
  ;; [0, pi/4], and Taylor polynomials of cos and sin there are within an ulp or so (their
  ;; first dropped terms: 2.5e-8 and 1.7e-9). cos of 2 pi u through the cos op reduces the
  ;; angle as if it could be any float, in f64: 76 ms for 2^24 on one AVX2 thread against 14.
  ;; Built from primitives (U is never NaN, so min is -max(-a, -b)): through the composites
  ;; (sub, minimum, where ...) a draw's graph took 0.3 ms more to build.
  (let* ((shp (tensor-shape u))
         (k (lambda (v) (prim:const v 'f32 shp)))
         (sub (lambda (a b) (prim:add a (prim:neg b))))
         (smaller (lambda (a b) (prim:neg (prim:max (prim:neg a) (prim:neg b)))))
         (poly (lambda (y2 coefficients)  ; c0 + y2 (c1 + y2 (c2 + ...)), Horner's rule
                 (let ((acc (funcall k (car (last coefficients)))))
                   (dolist (c (cdr (reverse coefficients)) acc)
                     (setq acc (prim:add (funcall k c) (prim:mul y2 acc)))))))
         (d (funcall sub u (funcall k 0.5)))
         (half (prim:add (prim:max d (prim:neg d)) (funcall k 0.0)))   ; |u - 1/2|: cos(2 pi u) = -cos(2 pi |u - 1/2|)
         (w (funcall smaller half (funcall sub (funcall k 0.5) half)))  ; [0, 1/4]; past 1/4 the cosine changes sign
         (flip (prim:cmplt (funcall k 0.25) half))
         (v (funcall smaller w (funcall sub (funcall k 0.25) w)))       ; [0, 1/8]; past 1/8 it is a sine
         (use-sin (prim:cmplt (funcall k 0.125) w))
         (y (prim:mul v (funcall k (* 2 pi))))
         (y2 (prim:mul y y))
         (c (funcall poly y2 (list 1.0 -0.5 (/ 1.0 24) (/ -1.0 720) (/ 1.0 40320))))
         (s (prim:mul y (funcall poly y2 (list 1.0 (/ -1.0 6) (/ 1.0 120) (/ -1.0 5040) (/ 1.0 362880)))))
         (r (prim:where use-sin s c)))
    (prim:where flip r (prim:neg r))))

(defcomposite randn (shp &key (dtype 'f32))
  "(randn SHAPE &key (dtype 'f32)) Standard normal random numbers (Box-Muller; computed in f64
for f64, else in f32 from both words of one Threefry block per element).
  (shape (randn '(3 4)))  ; => (3 4)
  (< (abs (item (mean (randn 10000)))) 0.05)  ; => t
  (< (abs (- (item (mean (square (abs (randn 10000 :dtype 'c64))))) 1.0)) 0.05)  ; => t"
  (when (dtype-complex-p dtype)
    ;; As torch.randn: a complex normal of variance 1, its parts each of variance 1/2.
    (return-from randn (let ((pd (%part-dtype dtype)))
                         (mul (complex (randn shp :dtype pd) (randn shp :dtype pd)) (sqrt 0.5)))))
  (%float-dtype-arg 'randn dtype)
  (let* ((shp (%shape-arg 'randn shp))
         (ft (if (eq dtype 'f64) 'f64 'f32))
         ;; In f32 both uniforms come from one Threefry block's two words; an f64 needs a
         ;; block for each.
         (words (if (eq ft 'f32) (%random-words shp)))
         (u1 (if words (%unit-f32 (first words) shp) (rand shp :dtype ft)))
         (u2 (if words (%unit-f32 (second words) shp) (rand shp :dtype ft)))
         (r (sqrt (mul -2.0 (log (sub 1.0 u1)))))
         (z (if (eq ft 'f32) (prim:mul r (%cos-2pi-unit u2)) (mul r (cos (mul (* 2 pi) u2))))))
    (prim:cast z dtype)))

(defcomposite uniform (shp &key (low 0.0) (high 1.0) (dtype 'f32))
  "(uniform SHAPE &key (low 0) (high 1) (dtype 'f32)) Uniform random numbers in [LOW, HIGH).
  (let ((u (uniform '(100) :low -2.0 :high 2.0)))
    (list (item (ge (amin u) -2.0)) (item (lt (amax u) 2.0))))  ; => (t t)"
  (%float-dtype-arg 'uniform dtype)
  (cast (add (mul (rand shp :dtype (if (eq dtype 'f64) 'f64 'f32)) (- high low)) low) dtype))

(defcomposite normal (shp &key (mean 0.0) (std 1.0) (dtype 'f32))
  "(normal SHAPE &key (mean 0) (std 1) (dtype 'f32)) Normal random numbers with MEAN and STD.
  (shape (normal '(2 2) :mean 10.0 :std 0.1))  ; => (2 2)
  (< (abs (- (item (mean (normal '(10000) :mean 5.0 :std 0.5))) 5.0)) 0.05)  ; => t"
  (%float-dtype-arg 'normal dtype)
  (cast (add (mul (randn shp :dtype (if (eq dtype 'f64) 'f64 'f32)) std) mean) dtype))

(defcomposite randint (low high shp &key (dtype 'i32))
  "(randint LOW HIGH SHAPE &key (dtype 'i32)) Random integers in [LOW, HIGH).
  (let ((r (randint 0 6 '(100))))
    (list (tensor-dtype r) (item (ge (amin r) 0)) (item (lt (amax r) 6))))  ; => (i32 t t)"
  (unless (< low high) (error 'type-error "randint: LOW (~a) must be below HIGH (~a)" low high))
  (%dtype-arg 'randint dtype)
  (let* ((shp (%shape-arg 'randint shp))
         (span (- high low))
         (r (prim:cast (prim:mul (prim:cast (random-bits shp) 'f64) (prim:const (/ span 4294967296.0) 'f64 shp)) 'i64)))
    (prim:cast (prim:add r (prim:const low 'i64 shp)) dtype)))

(defcomposite bernoulli (p &key shp (dtype 'f32))
  "(bernoulli P &key shp (dtype 'f32)) 1 with probability P (a number or a tensor of
probabilities), else 0; SHP gives the shape when P is a number.
  (to-list (bernoulli (tensor '(0.0 1.0 1.0 0.0))))  ; => (0.0 1.0 1.0 0.0)
  (tensor-shape (bernoulli 0.5 :shp '(3 2) :dtype 'bool))  ; => (3 2)"
  (%dtype-arg 'bernoulli dtype)
  (let* ((pt (%as-tensor p))
         (s (or shp (tensor-shape pt))))
    (cast (lt (rand s :dtype (if (dtype-float-p (tensor-dtype pt)) (tensor-dtype pt) 'f32)) pt) dtype)))

(defcomposite rand-like (x)
  "(rand-like X) Uniform random numbers in [0, 1) shaped like X (X's dtype if a float or complex).
  (let ((r (rand-like (zeros '(2 3) :dtype 'f64)))) (list (tensor-shape r) (tensor-dtype r)))  ; => ((2 3) f64)"
  (rand (tensor-shape x) :dtype (if (or (dtype-float-p (tensor-dtype x)) (dtype-complex-p (tensor-dtype x)))
                                    (tensor-dtype x)
                                    'f32)))

(defcomposite randn-like (x)
  "(randn-like X) Standard normal random numbers shaped like X (X's dtype if a float or complex).
  (let ((r (randn-like (tensor '(1 2 3))))) (list (tensor-shape r) (tensor-dtype r)))  ; => ((3) f32)"
  (randn (tensor-shape x) :dtype (if (or (dtype-float-p (tensor-dtype x)) (dtype-complex-p (tensor-dtype x)))
                                     (tensor-dtype x)
                                     'f32)))

(defun %unit-f64 (shp)
  ;; Uniform f64 numbers in (0, 1) from 32 random bits: (bits + 1/2) / 2^32, never 0 or 1.
  (prim:mul (prim:add (prim:cast (random-bits shp) 'f64) (prim:const 0.5 'f64 shp))
            (prim:const (expt 2.0 -32) 'f64 shp)))

(defun %check-weights (w c n replacement)
  ;; The errors torch.multinomial gives, for weights W (rows, C) as f64.
  (unless (%guard (logical-and (ge (amin w) 0.0) (lt (amax w) inf)) 'type-error
                  "multinomial: a weight is negative, infinite or NaN")
    (error 'type-error "multinomial: weights must be finite and non-negative; they range from ~a to ~a"
           (item (amin w)) (item (amax w))))
  (unless (%guard (amin (gt (sum w :axis -1) 0.0)) 'type-error "multinomial: a row of weights sums to 0")
    (error 'type-error "multinomial: a row of weights sums to 0; it gives no distribution"))
  (unless replacement
    (unless (%guard (ge (amin (sum (gt w 0.0) :axis -1 :dtype 'i32)) n) 'type-error
                    (format nil "multinomial: fewer than ~a categories of nonzero weight to draw without replacement" n))
      (error 'type-error "multinomial: cannot draw ~a samples without replacement from a row with only ~a categories of nonzero weight"
             n (item (amin (sum (gt w 0.0) :axis -1 :dtype 'i32)))))))

(defcomposite multinomial (probs n &key replacement)
  "(multinomial PROBS N &key replacement) N category indices (i64) drawn for each row of
PROBS, a 1-d (C) or 2-d (rows C) tensor of non-negative weights (not necessarily summing to
1), as torch.multinomial: category i is drawn with probability PROBS[i] / sum(PROBS). The
result is (N) or (rows N). Without REPLACEMENT the N draws of a row are distinct (a
weighted draw without replacement, by an exponential race: the N largest log(u)/w, with u
uniform in (0, 1)), so N may not exceed the number of nonzero weights; with REPLACEMENT each
draw is independent (inverse CDF on the running sum). A type-error for a negative, infinite
or NaN weight, a row summing to 0, N < 1, or N too large without replacement. Seeded by
manual-seed like every random function: the same draws on every device.
  (to-list (multinomial (tensor '(0.0 1.0 0.0)) 1))  ; => (1)
  (to-list (first (sort (multinomial (tensor '(1.0 0.0 2.0 3.0)) 3))))  ; => (0 2 3)
  (shape (multinomial (tensor '((0.5 0.5) (0.9 0.1))) 5 :replacement t))  ; => (2 5)"
  (let* ((p (%as-tensor probs)) (nd (ndim p)))
    (unless (member nd '(1 2))
      (error 'shape-error "multinomial: PROBS must be 1-d or 2-d, got shape ~s" (tensor-shape p)))
    (unless (and (integerp n) (>= n 1))
      (error 'type-error "multinomial: N must be a positive integer, got ~s" n))
    (let* ((w (prim:cast (if (= nd 1) (prim:reshape p (cons 1 (tensor-shape p))) p) 'f64))
           (rows (first (tensor-shape w))) (c (second (tensor-shape w))))
      (unless (integerp c)
        (error 'shape-error "multinomial: the number of categories (~a) must be known" c))
      (unless (or replacement (<= n c))
        (error 'type-error "multinomial: cannot draw ~a samples without replacement from ~a categories" n c))
      (%check-weights w c n replacement)
      (let ((r (if replacement
                   ;; Sample s is the number of running sums at or below u_s * total: the
                   ;; category whose interval [cdf[i-1], cdf[i]) holds it. u < 1, so u * total
                   ;; is below the last sum (which is the total), and empty intervals (zero
                   ;; weights) never hold it.
                   (let* ((cdf (cumsum w :axis 1))
                          (total (slice cdf t (list (- c 1) c)))              ; (rows 1)
                          (u (mul (%unit-f64 (list rows n)) total))           ; (rows n)
                          (at-or-below (le (unsqueeze cdf 1) (unsqueeze u 2))))   ; (rows n C)
                     (sum at-or-below :axis 2 :dtype 'i64))
                   ;; The exponential race: log(u)/w is -inf for a zero weight.
                   (let ((keys (div (log (%unit-f64 (list rows c))) w)))
                     (prim:cast (second (topk keys n)) 'i64)))))
        (if (= nd 1) (prim:reshape r (list n)) r)))))

(defcomposite randperm (n &key (dtype 'i64))
  "(randperm N &key (dtype 'i64)) A random permutation of 0..N-1, as torch.randperm: the
order that sorts N random 63-bit keys (a tie, about one in 2^63/N^2, keeps index order).
  (to-list (first (sort (randperm 5))))  ; => (0 1 2 3 4)
  (tensor-dtype (randperm 3))  ; => i64"
  (unless (and (integerp n) (>= n 0))
    (error 'type-error "randperm: N must be a non-negative integer, got ~s" n))
  (%dtype-arg 'randperm dtype)
  (if (= n 0)
      (prim:const 0 dtype '(0))
      (let* ((shp (list n))
             (words (%random-words shp))
             (hi (prim:idiv (first words) (%u32 2 shp)))     ; 31 bits
             (lo (second words))
             (keys (prim:add (prim:mul (prim:cast hi 'i64) (prim:const 4294967296 'i64 shp))
                             (prim:cast lo 'i64))))
        (prim:cast (argsort keys) dtype))))

;;; Exponential, gamma, beta and Poisson samples. A parameter is a number or a tensor (the
;;; samples take the parameters' broadcast shape, or SHP when given); samples are in the
;;; parameters' float dtype (f32 for numbers). Rejection samplers draw a fixed number of
;;; proposals per element at once and keep the first accepted one, so one kernel serves a
;;; whole tensor; every proposal failing is rarer than 1e-20.

(defun %sampler-setup (fn params shp dtype)
  ;; (SHAPE DTYPE PARAMS-AS-TENSORS) for a sampler FN.
  (let* ((tensors (remove-if-not #'tensorp params))
         (dt (or dtype (let ((f (find-if (lambda (x) (dtype-float-p (tensor-dtype x))) tensors)))
                         (if f (tensor-dtype f) 'f32))))
         (shape (or shp (if tensors (apply #'broadcast-shapes (mapcar #'tensor-shape tensors)) nil))))
    (%float-dtype-arg fn dt)
    (when (and shp tensors (not (equal (apply #'broadcast-shapes shp (mapcar #'tensor-shape tensors)) shp)))
      (error 'shape-error "~a: parameters of shapes ~s do not broadcast to :shp ~s" fn (mapcar #'tensor-shape tensors) shp))
    (list shape dt (mapcar (lambda (p) (broadcast-to (cast (%as-tensor p) dt) shape)) params))))

(defun %check-positive (fn name p)
  (when (if (tensorp p) (item (any (le p 0.0))) (<= p 0))
    (error 'value-error "~a: ~a must be positive, got ~a" fn name (if (tensorp p) "a tensor with a value <= 0" p))))

(defcomposite rand-exponential (rate &key shp dtype)
  "(rand-exponential RATE &key shp dtype) Exponential samples with rate RATE (mean 1/RATE),
as torch.distributions.Exponential: -log(U) / RATE. Gradients reach RATE (a reparameterized
sample).
  (let ((e (rand-exponential 2.0 :shp '(20000))))
    (list (item (ge (amin e) 0.0)) (< (abs (- (item (mean e)) 0.5)) 0.02)))  ; => (t t)"
  (%check-positive 'rand-exponential "rate" rate)
  (destructuring-bind (shape dt params) (%sampler-setup 'rand-exponential (list rate) shp dtype)
    ;; 1 - U is in (0, 1], so its log is finite.
    (div (neg (log (sub 1.0 (rand shape :dtype dt)))) (first params))))

(defun %standard-gamma (alpha shape dt)
  ;; Gamma(ALPHA, 1) samples (ALPHA a tensor of SHAPE): Marsaglia and Tsang's method with 16
  ;; proposals per element, ALPHA < 1 boosted to ALPHA + 1 and scaled by U^(1/ALPHA).
  (let* ((rounds 16)
         (boost (lt alpha 1.0))
         (a1 (where boost (add alpha 1.0) alpha))
         (d (sub a1 (/ 1.0 3.0)))
         (c (reciprocal (sqrt (mul d 9.0))))
         (x (randn (cons rounds shape) :dtype dt))
         (u (rand (cons rounds shape) :dtype dt))
         (v (let ((b (add (mul c x) 1.0))) (mul b (mul b b))))
         (accept (logical-and (gt v 0.0)
                              (lt (log u) (add (mul (mul x x) 0.5) (mul d (add (sub 1.0 v) (log (maximum v 1e-30))))))))
         (first-accepted (argmax (cast accept 'i32) :axis 0 :keepdim t))
         (g (mul d (squeeze (gather v first-accepted :axis 0) 0)))
         (g (where boost (mul g (pow (rand shape :dtype dt) (reciprocal alpha))) g)))
    (maximum g (if (eq dt 'f64) 2.2250738585072014e-308 1.1754944e-38))))

(defcomposite rand-gamma (alpha &key (rate 1.0) shp dtype)
  "(rand-gamma ALPHA &key (rate 1) shp dtype) Gamma samples with shape ALPHA and rate RATE
(mean ALPHA/RATE), as torch.distributions.Gamma. Gradients reach RATE, not ALPHA.
  (let ((g (rand-gamma 3.0 :rate 2.0 :shp '(20000))))
    (list (item (gt (amin g) 0.0)) (< (abs (- (item (mean g)) 1.5)) 0.05)))  ; => (t t)"
  (%check-positive 'rand-gamma "alpha" alpha)
  (%check-positive 'rand-gamma "rate" rate)
  (destructuring-bind (shape dt params) (%sampler-setup 'rand-gamma (list alpha rate) shp dtype)
    (div (%standard-gamma (detach (first params)) shape dt) (second params))))

(defcomposite rand-beta (a b &key shp dtype)
  "(rand-beta A B &key shp dtype) Beta(A, B) samples in (0, 1) (mean A/(A+B)), as
torch.distributions.Beta: X / (X + Y) of gamma samples X ~ Gamma(A), Y ~ Gamma(B).
  (let ((x (rand-beta 2.0 6.0 :shp '(20000))))
    (list (item (gt (amin x) 0.0)) (item (lt (amax x) 1.0)) (< (abs (- (item (mean x)) 0.25)) 0.01)))  ; => (t t t)"
  (%check-positive 'rand-beta "a" a)
  (%check-positive 'rand-beta "b" b)
  (destructuring-bind (shape dt params) (%sampler-setup 'rand-beta (list a b) shp dtype)
    (let ((x (%standard-gamma (detach (first params)) shape dt))
          (y (%standard-gamma (detach (second params)) shape dt)))
      (div x (add x y)))))

(defcomposite rand-poisson (rate &key shp dtype)
  "(rand-poisson RATE &key shp dtype) Poisson samples with mean RATE (RATE >= 0), as
torch.poisson, in RATE's float dtype. Rates below 10 invert the distribution function (one
uniform draw against 48 cumulative probabilities); larger ones use Hormann's transformed
rejection (PTRS), 24 proposals each.
  (let ((k (rand-poisson 4.0 :shp '(20000))))
    (list (tensor-equal k (floor k)) (< (abs (- (item (mean k)) 4.0)) 0.1)))  ; => (t t)
  (to-list (rand-poisson (tensor '(0.0 0.0))))  ; => (0.0 0.0)"
  (when (if (tensorp rate) (item (any (lt rate 0.0))) (< rate 0))
    (error 'value-error "rand-poisson: the rate must be >= 0, got ~a" (if (tensorp rate) "a negative value" rate)))
  (destructuring-bind (shape dt params) (%sampler-setup 'rand-poisson (list rate) shp dtype)
    (let* ((lam (detach (first params)))
           ;; Small rates: inversion, the number of cumulative probabilities P(K <= j) below
           ;; one uniform draw, for j < 48 (P(K >= 48 | LAM < 10) < 1e-17), in f64.
           (small (let* ((l64 (cast (minimum lam 10.0) 'f64))
                         (u (rand shape :dtype 'f64))
                         (p (exp (neg l64)))
                         (cdf p)
                         (count (cast (gt u cdf) dt)))
                    (loop for j from 1 below 48
                          do (setq p (mul p (div l64 (float j))))
                             (setq cdf (add cdf p))
                             (setq count (add count (cast (gt u cdf) dt))))
                    count))
           ;; Large rates: PTRS.
           (l (maximum lam 10.0))
           (rounds 24)
           (slam (sqrt l))
           (loglam (log l))
           (b (add (mul slam 2.53) 0.931))
           (a (add (mul b 0.02483) -0.059))
           (invalpha (add (div 1.1328 (sub b 3.4)) 1.1239))
           (vr (sub 0.9277 (div 3.6224 (sub b 2.0))))
           (u (sub (rand (cons rounds shape) :dtype dt) 0.5))
           (v (rand (cons rounds shape) :dtype dt))
           (us (sub 0.5 (abs u)))
           (k (floor (add (mul (add (div (mul a 2.0) us) b) u) (add l 0.43))))
           (quick (logical-and (ge us 0.07) (le v vr)))
           (reject (logical-or (lt k 0.0) (logical-and (lt us 0.013) (gt v us))))
           (ok (le (sub (add (log v) (log invalpha)) (log (add (div a (mul us us)) b)))
                   (sub (sub (mul k loglam) l) (lgamma (add (maximum k 0.0) 1.0)))))
           (accept (logical-or quick (logical-and (logical-not reject) ok)))
           (first-accepted (argmax (cast accept 'i32) :axis 0 :keepdim t))
           (large (squeeze (gather k first-accepted :axis 0) 0)))
      (where (lt lam 10.0) small large))))
