;;; SPDX-License-Identifier: Apache-2.0
;;; nn: layers and losses, as models over the tensor library. (require 'nn)
;;; Initializations follow PyTorch's documented defaults.

(defun nn:%param (x)
  ;; X realized as a parameter (a leaf that requires a gradient).
  (requires-grad! (realize x)))

(defun nn:%check-last-axis (layer x size)
  (unless (and (tensorp x) (> (ndim x) 0) (dim= (car (last (shape x))) size))
    (error 'shape-error "~a: expected an input of shape (... ~a), got ~s" layer size
           (if (tensorp x) (shape x) x))))

(defmodel nn:linear (in out &key (bias t))
  ((bound (/ 1.0 (sqrt in)))
   (weight (nn:%param (uniform (list in out) :low (- bound) :high bound)))
   (bias (when bias (nn:%param (uniform (list out) :low (- bound) :high bound)))))
  "(nn:linear IN OUT &key (bias t)) A fully connected layer: x W + b, W of shape (IN OUT),
both initialized uniformly in +-1/sqrt(IN) as in PyTorch."
  (x)
  (nn:%check-last-axis (format nil "nn:linear (~a -> ~a)" in out) x in)
  (let ((y (matmul x weight))) (if bias (add y bias) y)))

(defmodel nn:sequential (&rest layers)
  ((layers layers))
  "(nn:sequential LAYER...) Calls the layers in order, each on the previous one's result."
  (x)
  (dolist (l layers) (setq x (funcall l x)))
  x)

(defun nn:mse (prediction target)
  "(nn:mse PREDICTION TARGET) The mean squared error."
  (mean (square (sub prediction target))))

(defun nn:l1 (prediction target)
  "(nn:l1 PREDICTION TARGET) The mean absolute error."
  (mean (abs (sub prediction target))))

(defun nn:%targets (logits classes-of smoothing)
  ;; Class probabilities for LABELS (integer class indices), with label smoothing.
  (let* ((classes (car (last (shape logits))))
         (hot (one-hot classes-of classes :dtype (dtype logits))))
    (if (and smoothing (> smoothing 0))
        (add (mul hot (- 1.0 smoothing)) (/ smoothing classes))
        hot)))

(defun nn:cross-entropy (logits targets &key (label-smoothing 0.0))
  "(nn:cross-entropy LOGITS TARGETS &key (label-smoothing 0)) The mean cross-entropy of
LOGITS (batch, classes) against integer class TARGETS (batch), as PyTorch's CrossEntropyLoss."
  (unless (= (ndim logits) 2)
    (error 'shape-error "nn:cross-entropy: expected logits of shape (batch classes), got ~s" (shape logits)))
  (unless (and (tensorp targets) (equal (shape targets) (list (first (shape logits)))))
    (error 'shape-error "nn:cross-entropy: targets of shape ~s for logits of shape ~s"
           (if (tensorp targets) (shape targets) targets) (shape logits)))
  (neg (mean (sum (mul (log-softmax logits :axis 1) (nn:%targets logits targets label-smoothing)) :axis 1))))

(defun nn:nll (log-probs targets)
  "(nn:nll LOG-PROBS TARGETS) The mean negative log-likelihood of integer class TARGETS under
LOG-PROBS (batch, classes)."
  (neg (mean (sum (mul log-probs (nn:%targets log-probs targets nil)) :axis 1))))

(provide 'nn)
