;;; SPDX-License-Identifier: Apache-2.0
;;; conformance: a backend's op conformance report. (require 'conformance)
;;;
;;;   tlisp test-backend backends/cpu/cpu.lisp -o docs/conformance/cpu.md
;;;   (conformance:report "my-backend.lisp" :out "report.md")
;;;
;;; Every primitive op and composite of the tensor library runs, for every dtype, on the backend
;;; and on the reference executor (ref) from the same inputs; the results are compared with a
;;; tolerance per dtype (the op fuzzer's), and for f32 and f64 so are the gradients. The report
;;; is a Markdown table of ops x dtypes: pass, FAIL with the largest error (or the backend's
;;; error message), or "-" where both devices refuse the dtype; and each op's time on the
;;; backend at a larger size.

(defvar conformance:*dtypes* '(f64 f32 f16 bf16 i64 i32 i16 i8 u32 u8 bool)
  "The dtypes a report covers, as columns.
  (subseq conformance:*dtypes* 0 4)  ; => (f64 f32 f16 bf16)")

(defvar conformance:*tolerances* '((f64 . 1e-9) (f32 . 2e-4) (f16 . 2e-2) (bf16 . 4e-2))
  "Relative tolerance per float dtype: |got - want| <= tol * (1 + |want|).
  (cdr (assoc 'f16 conformance:*tolerances*))  ; => 0.02")

(defvar conformance:*classes*
  '((:all f64 f32 f16 bf16 i64 i32 i16 i8 u32 u8 bool)
    (:num f64 f32 f16 bf16 i64 i32 i16 i8 u32 u8)
    (:float f64 f32 f16 bf16)
    (:int i64 i32 i16 i8 u32 u8)
    (:bits i64 i32 i16 i8 u32 u8 bool)
    (:signed f64 f32 f16 bf16 i64 i32 i16 i8)
    (:none)))

;;; A case: (NAME KIND CLASS INPUTS FORM . OPTIONS). KIND is :primitive or :composite; CLASS
;;; names the dtypes it is run for (conformance:*classes*); INPUTS are the inputs a, b, c, ...
;;; of FORM, each a shape or (SHAPE DOMAIN [DTYPE]) with DOMAIN :any (-2..2), :pos (0.25..2),
;;; :unit (-0.9..0.9), :small (-1..1 for exp-like ops) or (:index K) (integers 0..K-1, i64
;;; unless DTYPE), and DTYPE fixing that input's dtype; shapes may use n, m and k, which are
;;; 3, 4 and 5 when checking and 256, 256 and 64 when timing. OPTIONS: :grad nil (no
;;; gradient check), :time nil (not timed), :random t (seeded identically on both devices).
(defvar conformance:*cases*
  '(;; Primitives (prim:* builtins), one op each.
    ("neg" :primitive :num ((n m)) (prim:neg a))
    ("neg, mul, exp2" :composite :num ((n m) (n m)) (list (neg a) (mul a b) (exp2 (clip a -2 2))))
    ("recip" :primitive :float (((n m) :pos)) (prim:recip a))
    ("sqrt" :primitive :float (((n m) :pos)) (prim:sqrt a))
    ("exp2" :primitive :float (((n m) :small)) (prim:exp2 a))
    ("log2" :primitive :float (((n m) :pos)) (prim:log2 a))
    ("sin" :primitive :float ((n m)) (prim:sin a))
    ("cos" :primitive :float ((n m)) (prim:cos a))
    ("cast" :primitive :all ((n m)) (list (prim:cast a 'f32) (prim:cast a 'i32) (prim:cast a 'bool)) :grad nil)
    ("bitcast" :primitive :all ((n m)) (prim:bitcast a (dtype a)) :grad nil)
    ("add" :primitive :all ((n m) (n m)) (prim:add a b))
    ("mul" :primitive :all ((n m) (n m)) (prim:mul a b))
    ("idiv" :primitive :int ((n m) ((n m) :pos)) (prim:idiv a b))
    ("mod" :primitive :int ((n m) ((n m) :pos)) (prim:mod a b))
    ("max" :primitive :all ((n m) (n m)) (prim:max a b))
    ("cmplt" :primitive :all ((n m) (n m)) (prim:cmplt a b) :grad nil)
    ("cmpeq" :primitive :all ((n m) (n m)) (prim:cmpeq a b) :grad nil)
    ("and" :primitive :bits ((n m) (n m)) (prim:and a b) :grad nil)
    ("or" :primitive :bits ((n m) (n m)) (prim:or a b) :grad nil)
    ("xor" :primitive :bits ((n m) (n m)) (prim:xor a b) :grad nil)
    ("where" :primitive :all (((n m) :any bool) (n m) (n m)) (prim:where a b c))
    ("reduce :sum" :primitive :num ((n m)) (prim:reduce :sum a '(1)))
    ("reduce :max" :primitive :num ((n m)) (prim:reduce :max a '(0)))
    ("reduce :prod" :primitive :num ((n m)) (prim:reduce :prod a '(1)))
    ("reshape" :primitive :all ((n m)) (prim:reshape a (list (* n m))))
    ("permute" :primitive :all ((n m k)) (prim:permute a '(2 0 1)))
    ("expand" :primitive :all ((n 1)) (prim:expand a (list n m)))
    ("pad" :primitive :all ((n m)) (prim:pad a '((1 2) (0 1))))
    ("shrink" :primitive :all ((n m)) (prim:shrink a '((1 3) (0 2))))
    ("flip" :primitive :all ((n m)) (prim:flip a '(1)))
    ("gather" :primitive :all ((n m) ((k m) (:index 3))) (prim:gather a b 0))
    ("scatter-add" :primitive :num ((n m) ((k m) (:index 3)) (k m)) (prim:scatter-add a b c 0))
    ("copy" :primitive :all ((n m)) (prim:copy a))
    ("const, iota" :primitive :all () (list (full '(3 4) 1 :dtype dt) (arange 12 :dtype dt)) :grad nil)
    ;; Elementwise composites.
    ("sub" :composite :num ((n m) (n m)) (sub a b))
    ("div" :composite :float ((n m) ((n m) :pos)) (div a b))
    ("pow" :composite :float (((n m) :pos) ((n m) :unit)) (pow a b))
    ("maximum" :composite :num ((n m) (n m)) (maximum a b))
    ("minimum" :composite :num ((n m) (n m)) (minimum a b))
    ("floor-divide" :composite :num ((n m) ((n m) :pos)) (floor-divide a b) :grad nil)
    ("remainder" :composite :num ((n m) ((n m) :pos)) (remainder a b))
    ("fmod" :composite :num ((n m) ((n m) :pos)) (fmod a b))
    ("atan2" :composite :float ((n m) (n m)) (atan2 a b))
    ("clip" :composite :num ((n m)) (clip a -1 1))
    ("square" :composite :num ((n m)) (square a))
    ("reciprocal" :composite :float (((n m) :pos)) (reciprocal a))
    ("rsqrt" :composite :float (((n m) :pos)) (rsqrt a))
    ("exp" :composite :float (((n m) :small)) (exp a))
    ("expm1" :composite :float (((n m) :small)) (expm1 a))
    ("log" :composite :float (((n m) :pos)) (log a))
    ("log1p" :composite :float (((n m) :pos)) (log1p a))
    ("log2" :composite :float (((n m) :pos)) (log2 a))
    ("sqrt" :composite :float (((n m) :pos)) (sqrt a))
    ("sin, cos, tan" :composite :float (((n m) :unit)) (list (sin a) (cos a) (tan a)))
    ("asin, acos, atan" :composite :float (((n m) :unit)) (list (asin a) (acos a) (atan a)))
    ("sinh, cosh, tanh" :composite :float (((n m) :small)) (list (sinh a) (cosh a) (tanh a)))
    ("asinh, atanh" :composite :float (((n m) :unit)) (list (asinh a) (atanh a)))
    ("acosh" :composite :float (((n m) :pos)) (acosh (add a 1.0)))
    ("erf" :composite :float ((n m)) (erf a))
    ("abs" :composite :signed ((n m)) (abs a))
    ("sign" :composite :signed ((n m)) (sign a))
    ("floor, ceil, trunc, round" :composite :float ((n m)) (list (floor a) (ceil a) (trunc a) (round a)) :grad nil)
    ("relu" :composite :signed ((n m)) (relu a))
    ("leaky-relu, elu, selu" :composite :float ((n m)) (list (leaky-relu a) (elu a) (selu a)))
    ("gelu" :composite :float ((n m)) (list (gelu a) (gelu a :approximate :tanh)))
    ("sigmoid, silu, mish" :composite :float ((n m)) (list (sigmoid a) (silu a) (mish a)))
    ("softplus" :composite :float ((n m)) (softplus a))
    ("hardsigmoid, hardswish" :composite :float ((n m)) (list (hardsigmoid a) (hardswish a)))
    ("isnan, isinf" :composite :float ((n m)) (list (isnan (div a 0.0)) (isinf (div a 0.0))) :grad nil)
    ("lt, le, gt, ge, ne, equals" :composite :num ((n m) (n m))
     (list (lt a b) (le a b) (gt a b) (ge a b) (ne a b) (equals a b)) :grad nil)
    ("logical-and, -or, -xor, -not" :composite :all ((n m) (n m))
     (list (logical-and a b) (logical-or a b) (logical-xor a b) (logical-not a)) :grad nil)
    ("bitwise-and, -or, -xor" :composite :bits ((n m) (n m))
     (list (bitwise-and a b) (bitwise-or a b) (bitwise-xor a b)) :grad nil)
    ("where" :composite :num (((n m) :any bool) (n m) (n m)) (where a b c))
    ("masked-fill" :composite :num ((n m) ((n m) :any bool)) (masked-fill a b 0))
    ("cast" :composite :all ((n m)) (list (cast a 'f64) (cast a 'i64) (cast a 'f16)) :grad nil)
    ;; Reductions.
    ("sum" :composite :num ((n m)) (list (sum a) (sum a :axis 1) (sum a :axis 0 :keepdim t)))
    ("prod" :composite :num (((n m) :unit)) (list (prod a :axis 1) (prod a)))
    ("mean" :composite :float ((n m)) (list (mean a) (mean a :axis 1)))
    ("amax, amin" :composite :num ((n m)) (list (amax a :axis 1) (amin a :axis 0)))
    ("argmax, argmin" :composite :num ((n m)) (list (argmax a :axis 1) (argmin a :axis 0)) :grad nil)
    ("all, any" :composite :all ((n m)) (list (all a :axis 1) (any a :axis 0)) :grad nil)
    ("var, std" :composite :float ((n m)) (list (var a :axis 1) (std a :axis 0 :correction 0)))
    ("norm" :composite :float ((n m)) (list (norm a) (norm a :p 1)))
    ("logsumexp" :composite :float ((n m)) (logsumexp a :axis 1))
    ("softmax" :composite :float ((n m)) (softmax a :axis 1))
    ("log-softmax" :composite :float ((n m)) (log-softmax a :axis 1))
    ("cumsum" :composite :num ((n m)) (cumsum a :axis 1))
    ("cumprod" :composite :float (((n m) :unit)) (cumprod a :axis 1))
    ("sort, argsort" :composite :num ((n m)) (list (first (sort a :axis 1)) (argsort a :axis 1)) :grad nil)
    ("topk" :composite :float ((n m)) (first (topk a 2 :axis 1)))
    ;; Linear algebra.
    ("matmul" :composite :num ((n k) (k m)) (matmul a b))
    ("matmul, batched" :composite :float ((2 n k) (k m)) (matmul a b))
    ("dot, outer" :composite :num ((k) (k)) (list (dot a b) (outer a b)))
    ("einsum" :composite :float ((n k) (k m)) (einsum "ij,jk->ik" a b))
    ("tril, triu" :composite :all ((n m)) (list (tril a) (triu a 1)) :grad nil)
    ("eye" :composite :all () (eye 3 4 :dtype dt) :grad nil)
    ("cosine-similarity" :composite :float ((n m) (n m)) (cosine-similarity a b :axis 1))
    ;; Shapes and movement.
    ("reshape, flatten" :composite :all ((n m k)) (list (reshape a (list n (* m k))) (flatten a)))
    ("permute, transpose" :composite :all ((n m k)) (list (permute a '(1 2 0)) (transpose a 0 2)))
    ("expand" :composite :all ((n 1)) (expand a (list n m)))
    ("squeeze, unsqueeze" :composite :all ((n 1 m)) (list (squeeze a :axis 1) (unsqueeze a 0)))
    ("flip" :composite :all ((n m)) (flip a :axis 1))
    ("pad" :composite :num ((n m)) (list (pad a '((1 1) (2 0))) (pad a '((1 1) (1 1)) :mode :reflect)))
    ("slice" :composite :all ((n m)) (slice a '(1 3) '(0 4 2)))
    ("cat, stack" :composite :all ((n m) (n m)) (list (cat (list a b) :axis 1) (stack (list a b))))
    ("hstack, vstack" :composite :all ((n m) (n m)) (list (hstack (list a b)) (vstack (list a b))))
    ("split, chunk" :composite :all ((n m)) (append (split a '(1 3) :axis 1) (chunk a 2 :axis 1)))
    ("repeat, tile" :composite :all ((n m)) (list (repeat a 2 :axis 0) (tile a '(2 1))))
    ("contiguous" :composite :all ((n m)) (contiguous (transpose a)))
    ("index-select" :composite :all ((n m) ((k) (:index 3))) (index-select a b :axis 0))
    ("gather" :composite :all ((n m) ((n m) (:index 3))) (gather a b :axis 0))
    ("take" :composite :all ((n m) ((k) (:index 12))) (take a b))
    ("scatter" :composite :all ((n m) ((1 m) (:index 3)) (1 m)) (scatter a b c :axis 0) :grad nil)
    ("scatter-add" :composite :num ((n m) ((k m) (:index 3)) (k m)) (scatter-add a b c :axis 0))
    ("one-hot" :composite :none (((k) (:index 4))) (one-hot a 4) :grad nil)
    ;; Creation.
    ("zeros, ones, full" :composite :all () (list (zeros '(3 4) :dtype dt) (ones '(3 4) :dtype dt)
                                                  (full '(3 4) 1 :dtype dt)) :grad nil)
    ("zeros-like, ones-like, full-like" :composite :all ((n m))
     (list (zeros-like a) (ones-like a) (full-like a 1)) :grad nil)
    ("arange, linspace" :composite :num () (list (arange 1 10 2 :dtype dt) (linspace 0 8 5 :dtype dt)) :grad nil)
    ;; Random (the generator is in the graph: the same seed gives the same bits everywhere).
    ("rand, randn, uniform, normal" :composite :float ()
     (list (rand '(3 4) :dtype dt) (randn '(3 4) :dtype dt) (uniform '(3 4) :low -1 :high 2)
           (normal '(3 4) :mean 1 :std 2)) :grad nil :random t)
    ("randint, randperm" :composite :none () (list (randint 0 10 '(3 4)) (randperm 8)) :grad nil :random t)
    ("rand-like, randn-like, bernoulli" :composite :float ((n m))
     (list (rand-like a) (randn-like a) (bernoulli (sigmoid a))) :grad nil :random t)
    ("multinomial" :composite :none (((n m) :pos f32)) (multinomial a 2) :grad nil :random t)
    ;; Neural-network layers.
    ("conv1d" :composite :float ((2 3 9) (4 3 3)) (conv1d a b :padding 1))
    ("conv2d" :composite :float ((2 3 6 6) (4 3 3 3)) (list (conv2d a b) (conv2d a b :stride 2 :padding 1)))
    ("conv-transpose2d" :composite :float ((2 4 4 4) (4 3 3 3)) (conv-transpose2d a b :stride 2))
    ("max-pool2d, avg-pool2d" :composite :float ((2 3 6 6)) (list (max-pool2d a 2) (avg-pool2d a 3 :stride 1)))
    ("adaptive-avg-pool2d" :composite :float ((2 3 6 6)) (adaptive-avg-pool2d a '(2 3)))
    ("interpolate" :composite :float ((1 2 3 4))
     (list (interpolate a :scale-factor 2) (interpolate a :size '(5 7) :mode :bilinear)))
    ("batch-norm" :composite :float ((n m 2)) (batch-norm a :training t))
    ("layer-norm, rms-norm" :composite :float ((n m)) (list (layer-norm a) (rms-norm a)))
    ("group-norm, instance-norm" :composite :float ((2 4 5)) (list (group-norm a 2) (instance-norm a))))
  "The conformance suite's cases.
  (rest (assoc \"recip\" conformance:*cases* :test #'equal))  ; => (:primitive :float (((n m) :pos)) (prim:recip a))")

(defvar conformance:*state* 1)
(defun conformance:%rnd (n)
  (setq conformance:*state* (mod (+ (* conformance:*state* 1103515245) 12345) 2147483648))
  (mod (floor conformance:*state* 65536) n))

(defun conformance:%float-p (dt) (member dt '(f64 f32 f16 bf16)))

(defun conformance:%bind-shape (shape sizes)
  (mapcar (lambda (d) (if (symbolp d) (cdr (assoc d sizes)) d)) shape))

(defun conformance:%element (dt domain)
  "A random element of dtype DT in DOMAIN (floats on a grid of 1/64, exact in every float dtype)."
  (cond ((eq dt 'bool) (= 0 (conformance:%rnd 2)))
        ((consp domain) (conformance:%rnd (second domain)))
        ((conformance:%float-p dt)
         (let ((u (/ (conformance:%rnd 257) 256.0)))
           (/ (round (* 64 (case domain
                             (:pos (+ 0.25 (* 1.75 u)))
                             (:unit (- (* 1.8 u) 0.9))
                             (:small (- (* 2 u) 1))
                             (t (- (* 4 u) 2)))))
              64.0)))
        ((member dt '(u32 u8)) (if (eq domain :pos) (+ 1 (conformance:%rnd 5)) (conformance:%rnd 10)))
        ((eq domain :pos) (+ 1 (conformance:%rnd 5)))
        (t (- (conformance:%rnd 11) 5))))

(defun conformance:%inputs (case dt sizes)
  "The inputs of CASE for dtype DT: a list of (dtype shape elements)."
  (mapcar (lambda (spec)
            (let* ((full (and (consp spec) (consp (first spec))))
                   (shape (conformance:%bind-shape (if full (first spec) spec) sizes))
                   (domain (if full (second spec) :any))
                   (idt (cond ((and full (third spec)) (third spec))
                              ((consp domain) 'i64)
                              (t dt))))
              (list idt shape (loop repeat (apply #'* shape) collect (conformance:%element idt domain)))))
          (fourth case)))

(defun conformance:%leaves (inputs)
  (mapcar (lambda (i) (reshape (tensor (third i) :dtype (first i)) (second i))) inputs))

(defun conformance:%options (case key default)
  (let ((tail (nthcdr 5 case)))
    (if (member key tail) (getf tail key) default)))

(defun conformance:%evaluate (case dt leaves sizes)
  "CASE's form with its inputs bound to LEAVES (and dt, n, m, k), as a list of tensors."
  (let ((names '(a b c d)) (bindings nil))
    (loop for leaf in leaves for name in names do (push (list name leaf) bindings))
    (push (list 'dt (list 'quote dt)) bindings)
    (dolist (s sizes) (push (list (car s) (cdr s)) bindings))
    (when (conformance:%options case :random nil) (manual-seed 7))
    (let ((v (eval `(let ,bindings ,(fifth case)))))
      (if (listp v) v (list v)))))

(defun conformance:%flat (x) (to-list (reshape (cast x (if (eq (dtype x) 'bool) 'i32 (dtype x))) (list (numel x)))))

(defun conformance:%run (device case dt inputs sizes)
  "The values (flat lists) CASE computes on DEVICE, or (:error MESSAGE)."
  (use-backend device)
  (handler-case
      (mapcar #'conformance:%flat (conformance:%evaluate case dt (conformance:%leaves inputs) sizes))
    (error (e) (list :error (condition-message e)))))

(defun conformance:%error (got want dt)
  "The largest relative error between value lists GOT and WANT (0 when equal), or nil when their
shapes differ; an integer or bool mismatch counts as 1."
  (if (/= (length got) (length want))
      nil
      (let ((worst 0.0) (tol (cdr (assoc dt conformance:*tolerances*))))
        (loop for g-list in got for w-list in want
              do (if (/= (length g-list) (length w-list))
                     (setq worst nil)
                     (loop for g in g-list for w in w-list
                           do (let ((e (cond ((and (numberp g) (numberp w) (/= g g) (/= w w)) 0.0)
                                             ((eql g w) 0.0)
                                             ((and tol (numberp g) (numberp w) (= g g) (= w w))
                                              (/ (abs (- g w)) (+ 1 (abs w))))
                                             (t 1.0))))
                                (when (and worst (> e worst)) (setq worst e))))))
        worst)))

(defun conformance:%check (device case dt)
  "(:pass), (:fail TEXT) or (:unsupported) for CASE's forward computation in dtype DT."
  (let* ((sizes '((n . 3) (m . 4) (k . 5)))
         (inputs (progn (setq conformance:*state* (+ 17 (length (first case)))) (conformance:%inputs case dt sizes)))
         (want (conformance:%run 'ref case dt inputs sizes))
         (got (conformance:%run device case dt inputs sizes)))
    (cond ((and (eq (first want) :error) (eq (first got) :error)) (list :unsupported))
          ((eq (first got) :error) (list :fail (second got)))
          ((eq (first want) :error) (list :fail (format nil "ref failed: ~a" (second want))))
          (t (let ((e (conformance:%error got want dt))
                   (tol (or (cdr (assoc dt conformance:*tolerances*)) 0)))
               (cond ((null e) (list :fail "shapes differ"))
                     ((<= e tol) (list :pass))
                     (t (list :fail (format nil "max error ~,1e" e)))))))))

(defun conformance:%gradients (device case dt inputs sizes)
  "The gradients of sum(outputs * fixed weights) with respect to CASE's float inputs on DEVICE."
  (use-backend device)
  (handler-case
      (let* ((leaves (mapcar (lambda (l) (if (conformance:%float-p (dtype l)) (requires-grad! l) l))
                             (conformance:%leaves inputs)))
             (outs (conformance:%evaluate case dt leaves sizes))
             (loss (let ((total nil) (j 0))
                     (dolist (o outs)
                       (setq j (+ j 1))
                       (when (conformance:%float-p (dtype o))
                         (let ((w (reshape (cast (arange (numel o)) (dtype o)) (shape o))))
                           (let ((term (sum (mul o (div (add (cos (mul w 1.3)) j) 2.0)))))
                             (setq total (if total (add total (cast term (dtype total))) term))))))
                     total))
             (float-leaves (remove-if-not (lambda (l) (conformance:%float-p (dtype l))) leaves)))
        (if (or (null loss) (null float-leaves))
            (list :error "no float output or input")
            (progn
              (backward loss)
              (mapcar (lambda (l) (let ((g (grad l))) (if g (conformance:%flat g) (list :none)))) float-leaves))))
    (error (e) (list :error (condition-message e)))))

(defun conformance:%check-backward (device case)
  "(:pass), (:fail TEXT), (:unsupported) or nil (not checked) for CASE's gradients in f32 and f64."
  (when (and (conformance:%options case :grad t)
             (intersection '(f32 f64) (cdr (assoc (third case) conformance:*classes*))))
    (let ((result (list :pass)))
      (dolist (dt '(f64 f32))
        (let* ((sizes '((n . 3) (m . 4) (k . 5)))
               (inputs (progn (setq conformance:*state* (+ 29 (length (first case)))) (conformance:%inputs case dt sizes)))
               (want (conformance:%gradients 'ref case dt inputs sizes))
               (got (conformance:%gradients device case dt inputs sizes)))
          (cond ((eq (first result) :fail))  ; the first failure is the one reported
                ((and (eq (first want) :error) (eq (first got) :error))
                 (when (eq (first result) :pass) (setq result (list :unsupported))))
                ((eq (first got) :error) (setq result (list :fail (format nil "~a: ~a" dt (second got)))))
                ((eq (first want) :error) (setq result (list :fail (format nil "~a: ref failed: ~a" dt (second want)))))
                (t (let ((e (conformance:%error got want dt)) (tol (* 10 (cdr (assoc dt conformance:*tolerances*)))))
                     (unless (and e (<= e tol))
                       (setq result (list :fail (format nil "~a: max error ~a" dt (if e (format nil "~,1e" e) "(shapes)"))))))))))
      result)))

(defun conformance:%time (device case)
  "Microseconds per run of CASE in f32 (or its first dtype) at n = m = 256, k = 64 on DEVICE,
the median of 5 runs after one to compile; nil when it is not timed or fails."
  (let ((dts (cdr (assoc (third case) conformance:*classes*))))
    (when (and (conformance:%options case :time t) (fourth case)
               (some (lambda (s) (some #'symbolp (if (and (consp s) (consp (first s))) (first s) s))) (fourth case)))
      (let* ((dt (if (member 'f32 dts) 'f32 (or (first dts) 'f32)))
             (sizes '((n . 256) (m . 256) (k . 64)))
             (inputs (progn (setq conformance:*state* 5) (conformance:%inputs case dt sizes))))
        (use-backend device)
        (handler-case
            (let* ((leaves (mapcar #'realize (conformance:%leaves inputs)))
                   (run (lambda ()
                          (let ((t0 (get-internal-real-time)))
                            (realize-all (conformance:%evaluate case dt leaves sizes))
                            (/ (- (get-internal-real-time) t0) 1000.0)))))
              (funcall run)
              (let ((times (sort (loop repeat 5 collect (funcall run)) #'<)))
                (nth 2 times)))
          (error () nil))))))

(defun conformance:%symbols (tree)
  "Every symbol in TREE."
  (cond ((symbolp tree) (list tree))
        ((consp tree) (append (conformance:%symbols (car tree)) (conformance:%symbols (cdr tree))))
        (t nil)))

(defun conformance:%cell (r)
  (case (first r)
    (:pass "pass")
    (:unsupported "-")
    (:fail (format nil "**FAIL** ~a" (conformance:%md (second r))))
    (t "")))

(defun conformance:%md (text)
  "TEXT for a Markdown table cell: one line, pipes escaped, at most 80 characters."
  (let* ((one (substitute #\Space #\Newline (princ-to-string text)))
         (short (if (> (length one) 80) (concat (subseq one 0 77) "...") one)))
    (with-output-to-string (out)
      (loop for c across short do (if (char= c #\|) (write-string "\\|" out) (write-char c out))))))

(defun conformance:%backend-name (runtime)
  "The backend a runtime file defines (its defbackend form's name)."
  (let ((text (read-file runtime)) (at 0) (name nil))
    (loop (multiple-value-bind (form used)
              (handler-case (read-from-string (subseq text at)) (error () (values :eof 0)))
            (when (or (eq form :eof) (= used 0)) (return))
            (when (and (consp form) (eq (first form) 'defbackend)) (setq name (second form)))
            (setq at (+ at used))))
    (or name (error 'file-error "conformance: ~a defines no backend (no defbackend form)" runtime))))

(defun conformance:report (runtime &key out (options "") only quiet)
  "(conformance:report RUNTIME &key out options only quiet) Loads the backend runtime file
RUNTIME (or uses a backend name: cpu, ref, ...), starts it with OPTIONS (e.g. \"sim=nvptx\"),
and runs every case of conformance:*cases* (only those whose names contain ONLY, when given)
for every dtype against the reference executor, forward and backward, and times each op.
Writes the Markdown report to OUT (or, when OUT is nil, prints it unless QUIET) and prints one
line per op unless QUIET. Returns the number of failures.
  (list (conformance:report 'cpu :only \"recip\" :quiet t :out \"/tmp/tl-doc-conformance.md\")
        (subseq (read-file \"/tmp/tl-doc-conformance.md\") 0 26))  ; => (0 \"# Backend conformance: cpu\")"
  (let* ((name (if (symbolp runtime) runtime (progn (load runtime) (conformance:%backend-name runtime))))
         (was (device))
         (cases (remove-if-not (lambda (c) (or (null only) (search only (first c)))) conformance:*cases*))
         (failures 0) (passes 0) (unsupported 0) (rows nil))
    (use-backend name :options options)
    (let ((device-name (device-info)))
      (dolist (c cases)
        (let* ((class (cdr (assoc (third c) conformance:*classes*)))
               (cells (mapcar (lambda (dt) (if (member dt class) (conformance:%check name c dt) nil))
                              conformance:*dtypes*))
               (backward (conformance:%check-backward name c))
               (time (conformance:%time name c)))
          (when (eq (third c) :none)  ; dtypes of their own: one check, shown under i64
            (setf (nth 4 cells) (conformance:%check name c 'f32)))
          (dolist (r (cons backward cells))
            (case (first r) (:pass (incf passes)) (:fail (incf failures)) (:unsupported (incf unsupported))))
          (unless quiet
            (format t "~30a ~a~%" (first c)
                    (if (some (lambda (r) (eq (first r) :fail)) (cons backward cells)) "FAIL" "ok")))
          (push (list c cells backward time) rows)))
      (use-backend was)
      (let* ((covered (conformance:%symbols (mapcar #'fifth conformance:*cases*)))
             (composites (let ((l nil))
                           (maphash (lambda (k v)
                                      (unless (or (eql 0 (search "%" (symbol-name k))) (member k covered))
                                        (push (symbol-name k) l)))
                                    *composites*)
                           (sort l #'string<)))
             (text
               (with-output-to-string (s)
                 (format s "# Backend conformance: ~a~a~%~%" name (if (equal options "") "" (format nil " (~a)" options)))
                 (format s "Generated by `tlisp test-backend` (stdlib/conformance.lisp): every primitive op and composite~%")
                 (format s "of the tensor library, for every dtype, on the backend and on the reference executor from~%")
                 (format s "the same inputs; gradients (of a weighted sum of the outputs) in f64 and f32.~%~%")
                 (format s "- Backend: `~a`~a, device: ~a~%" name (if (equal options "") "" (format nil " with options `~a`" options)) device-name)
                 (format s "- Runtime file: `~a`~%" (if (symbolp runtime) (symbol-name runtime) runtime))
                 (format s "- Checks: ~a pass, ~a fail, ~a unsupported on both devices (`-`)~%"
                         passes failures unsupported)
                 (format s "- Tolerance: |got - want| <= tol (1 + |want|), tol ~{~a ~a~^, ~} (gradients: 10 tol); integers and bools exactly~%"
                         (apply #'append (mapcar (lambda (p) (list (car p) (cdr p))) conformance:*tolerances*)))
                 (format s "- Time: microseconds per call on the backend, f32, n = m = 256, k = 64, median of 5 (blank: fixed shapes, not timed)~%~%")
                 (format s "| op | kind |~{ ~a |~} backward | µs |~%" conformance:*dtypes*)
                 (format s "|---|---|~{~a~}---|---:|~%" (mapcar (lambda (d) (progn d "---|")) conformance:*dtypes*))
                 (dolist (row (reverse rows))
                   (let ((c (first row)))
                     (format s "| ~a | ~a |~{ ~a |~} ~a | ~a |~%"
                             (conformance:%md (first c)) (string-downcase (symbol-name (second c)))
                             (mapcar #'conformance:%cell (second row))
                             (if (third row) (conformance:%cell (third row)) "")
                             (if (fourth row) (format nil "~,1f" (fourth row)) ""))))
                 (when (and composites (null only))
                   (format s "~%Composites with no case yet: ~{`~a`~^, ~}.~%" composites)))))
        (if out
            (progn (write-file out text)
                   (unless quiet (format t "~a: ~a pass, ~a fail, ~a unsupported; report written to ~a~%"
                                         name passes failures unsupported out)))
            (unless quiet (princ text)))
        failures))))

(defun conformance:main (args)
  "(conformance:main ARGS) What tlisp test-backend runs: ARGS are its command-line words,
RUNTIME.lisp (or a backend name) [-o REPORT.md] [--options \"k=v ...\"] [--only TEXT] [--quiet].
Exits with 1 when a check fails, 2 on bad arguments.
  (fboundp 'conformance:main)  ; => t"
  (let ((runtime nil) (out nil) (options "") (only nil) (quiet nil))
    (loop while args
          do (let ((a (pop args)))
               (cond ((member a '("-o" "--out") :test #'equal) (setq out (pop args)))
                     ((equal a "--options") (setq options (or (pop args) "")))
                     ((equal a "--only") (setq only (pop args)))
                     ((equal a "--quiet") (setq quiet t))
                     ((and (null runtime) (not (eql 0 (search "-" a)))) (setq runtime a))
                     (t (format t "tlisp test-backend: unexpected argument ~s~%" a) (exit 2)))))
    (unless runtime
      (format t "usage: tlisp test-backend RUNTIME.lisp|NAME [-o REPORT.md] [--options \"k=v ...\"] [--only TEXT] [--quiet]~%")
      (format t "  runs the op conformance suite on the backend against the reference executor~%")
      (exit 2))
    (let ((failures (conformance:report (if (probe-file runtime) runtime (intern (string-downcase runtime)))
                                        :out out :options options :only only :quiet quiet)))
      (exit (if (> failures 0) 1 0)))))

(provide 'conformance)
