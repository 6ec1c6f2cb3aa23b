;;; SPDX-License-Identifier: Apache-2.0
;;; Activation functions.

(defcomposite relu (x)
  "(relu X) max(X, 0) elementwise (NaN stays NaN). Its gradient at 0 is 0, as PyTorch's.
  (to-list (relu (tensor '(-1.0 0.0 2.0))))  ; => (0.0 0.0 2.0)"
  ;; max(x, 0) reads x once, so it fuses as a matmul's epilogue; its own gradient would split
  ;; the tie at 0 (issue 19), hence the rule: g where x > 0.
  (let ((tx (%as-tensor x)))
    (if (dtype-float-p (tensor-dtype tx))
        (with-custom-grad ((tx tx))
            (prim:max tx (%scalar-like 0 tx))
          (g) (list (prim:where (prim:cmplt (%scalar-like 0 tx) tx) g (%scalar-like 0 g))))
        (prim:max tx (%scalar-like 0 tx)))))

(defcomposite leaky-relu (x &optional (slope 0.01))
  "(leaky-relu X [SLOPE]) X where X > 0, else SLOPE * X (SLOPE defaults to 0.01).
  (to-list (leaky-relu (tensor '(-2.0 3.0)) 0.5))  ; => (-1.0 3.0)
  (to-list (leaky-relu (tensor '(-100.0 3.0))))  ; => (-1.0 3.0)"
  (let ((f (%float-tensor x))) (where (gt f 0) f (mul f slope))))

(defcomposite elu (x &optional (alpha 1.0))
  "(elu X [ALPHA]) X where X > 0, else ALPHA * (exp(X) - 1).
  (to-list (elu (tensor '(2.0 -20.0))))  ; => (2.0 -1.0)"
  ;; The exp branch sees min(X, 0): for a large X its exp would overflow, and the zero
  ;; gradient where sends it would become 0 * inf = NaN (issue 19).
  (let ((f (%float-tensor x)))
    (where (gt f 0) f (mul alpha (expm1 (where (gt f 0) 0 f))))))

(defcomposite selu (x)
  "(selu X) Scaled ELU with the self-normalizing constants (alpha 1.6733, scale 1.0507).
  (to-list (round (mul (selu (tensor '(-1.0 0.0 1.0))) 1000)))  ; => (-1111.0 0.0 1051.0)"
  (mul 1.0507009873554805 (elu x 1.6732632423543772)))

(defcomposite sigmoid (x)
  "(sigmoid X) 1 / (1 + exp(-X)) elementwise, computed as e/(1 + e) or 1/(1 + e) with
e = exp(-|X|), so that no exp overflows (forward or backward) for any X.
  (to-list (sigmoid (tensor '(0.0))))  ; => (0.5)"
  (let* ((f (%float-tensor x))
         (e (exp (%neg-abs f)))
         (num (prim:where (prim:cmplt f (%scalar-like 0 f)) e (%scalar-like 1 f))))
    (prim:mul num (prim:recip (prim:add (%scalar-like 1 f) e)))))

(defcomposite gelu (x &key (approximate nil))
  "(gelu X &key approximate) Gaussian error linear unit: X * Phi(X), with Phi computed from
erf, or with :approximate :tanh from the tanh formula 0.5x(1 + tanh(0.79788456(x + 0.044715x^3))).
  (to-list (round (mul (gelu (tensor '(-1.0 0.0 1.0))) 1000)))  ; => (-159.0 0.0 841.0)
  (to-list (gelu (tensor '(0.0 10.0)) :approximate :tanh))  ; => (0.0 10.0)"
  (let ((f (%float-tensor x)))
    (if approximate
        ;; 0.5 (1 + tanh u) = sigmoid(2u): no cancellation for large negative X, where the
        ;; tanh form gives 0 and a NaN gradient below -10.6 (issue 19).
        ;; Beyond |X| = 1e4 the factor is exactly 0 or 1; the clip keeps X^3 finite.
        (let ((c (clip f -1e4 1e4)))
          (mul f (sigmoid (mul 1.5957691216057308 (add c (mul 0.044715 (mul c (mul c c))))))))
        (mul (mul 0.5 f) (add 1 (erf (mul f 0.7071067811865476)))))))

(defcomposite silu (x)
  "(silu X) X * sigmoid(X) (also called swish).
  (to-list (round (mul (silu (tensor '(-1.0 0.0 1.0))) 1000)))  ; => (-269.0 0.0 731.0)"
  (let ((f (%float-tensor x))) (mul f (sigmoid f))))

(defcomposite softplus (x &key (beta 1.0) (threshold 20.0))
  "(softplus X &key (beta 1) (threshold 20)) log(1 + exp(beta X)) / beta; X itself where
beta X > threshold, as PyTorch does.
  (to-list (round (mul (softplus (tensor '(-1.0 0.0 1.0 30.0))) 1000)))  ; => (313.0 693.0 1313.0 30000.0)"
  ;; The log1p branch sees min(beta X, threshold), so its exp never overflows (issue 19).
  (let* ((f (%float-tensor x)) (bx (mul f beta)) (big (gt bx threshold)))
    (where big f (div (log1p (exp (where big 0 bx))) beta))))

(defcomposite mish (x)
  "(mish X) X * tanh(softplus(X)).
  (to-list (round (mul (mish (tensor '(-1.0 0.0 1.0))) 1000)))  ; => (-303.0 0.0 865.0)"
  (let ((f (%float-tensor x))) (mul f (tanh (softplus f)))))

(defcomposite hardswish (x)
  "(hardswish X) X * clip(X + 3, 0, 6) / 6.
  (to-list (hardswish (tensor '(-1.5 0.0 3.0))))  ; => (-0.375 0.0 3.0)"
  (let ((f (%float-tensor x))) (mul f (div (clip (add f 3) 0 6) 6))))

(defcomposite hardsigmoid (x)
  "(hardsigmoid X) clip(X / 6 + 1/2, 0, 1).
  (to-list (hardsigmoid (tensor '(-3.0 0.0 3.0))))  ; => (0.0 0.5 1.0)"
  (clip (add (div (%float-tensor x) 6) 0.5) 0 1))
