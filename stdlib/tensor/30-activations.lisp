;;; SPDX-License-Identifier: Apache-2.0
;;; Activation functions.

(defcomposite relu (x)
  "(relu X) max(X, 0) elementwise."
  (let ((tx (%as-tensor x))) (prim:max tx (%scalar-like 0 tx))))

(defcomposite leaky-relu (x &optional (slope 0.01))
  "(leaky-relu X [SLOPE]) X where X > 0, else SLOPE * X (SLOPE defaults to 0.01)."
  (let ((f (%float-tensor x))) (where (gt f 0) f (mul f slope))))

(defcomposite elu (x &optional (alpha 1.0))
  "(elu X [ALPHA]) X where X > 0, else ALPHA * (exp(X) - 1)."
  (let ((f (%float-tensor x))) (where (gt f 0) f (mul alpha (sub (exp f) 1)))))

(defcomposite selu (x)
  "(selu X) Scaled ELU with the self-normalizing constants (alpha 1.6733, scale 1.0507)."
  (mul 1.0507009873554805 (elu x 1.6732632423543772)))

(defcomposite sigmoid (x)
  "(sigmoid X) 1 / (1 + exp(-X)) elementwise."
  (let ((f (%float-tensor x))) (reciprocal (add 1 (exp (neg f))))))

(defcomposite gelu (x &key (approximate nil))
  "(gelu X &key approximate) Gaussian error linear unit: X * Phi(X), with Phi computed from
erf, or with :approximate :tanh from the tanh formula 0.5x(1 + tanh(0.79788456(x + 0.044715x^3)))."
  (let ((f (%float-tensor x)))
    (if approximate
        (mul (mul 0.5 f) (add 1 (tanh (mul 0.7978845608028654 (add f (mul 0.044715 (mul f (mul f f))))))))
        (mul (mul 0.5 f) (add 1 (erf (mul f 0.7071067811865476)))))))

(defcomposite silu (x)
  "(silu X) X * sigmoid(X) (also called swish)."
  (let ((f (%float-tensor x))) (mul f (sigmoid f))))

(defcomposite softplus (x &key (beta 1.0) (threshold 20.0))
  "(softplus X &key (beta 1) (threshold 20)) log(1 + exp(beta X)) / beta; X itself where
beta X > threshold, as PyTorch does."
  (let* ((f (%float-tensor x)) (bx (mul f beta)))
    (where (gt bx threshold) f (div (log (add 1 (exp bx))) beta))))

(defcomposite mish (x)
  "(mish X) X * tanh(softplus(X))."
  (let ((f (%float-tensor x))) (mul f (tanh (softplus f)))))

(defcomposite hardswish (x)
  "(hardswish X) X * clip(X + 3, 0, 6) / 6."
  (let ((f (%float-tensor x))) (mul f (div (clip (add f 3) 0 6) 6))))

(defcomposite hardsigmoid (x)
  "(hardsigmoid X) clip(X / 6 + 1/2, 0, 1)."
  (clip (add (div (%float-tensor x) 6) 0.5) 0 1))
