;;; SPDX-License-Identifier: Apache-2.0
;;; Models and nn: defmodel, parameters, modes, nn:linear, losses against hand-computed values,
;;; a layer's shape error, and a small model trained by gradient descent.

(require 'nn)
(defun tl (x) (to-list x))

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  "A two-layer perceptron."
  (x) (fc2 (relu (fc1 x))))

(deftest models
  (manual-seed 0)
  (let ((m (mlp 4 8 3)))
    (is (model-p m))
    (is (eq (model-name m) 'mlp))
    (is (equal (mapcar #'car (named-parameters m)) '("fc1.weight" "fc1.bias" "fc2.weight" "fc2.bias")))
    (is (equal (mapcar #'shape (parameters m)) '((4 8) (8) (8 3) (3))))
    (is (every #'requires-grad-p (parameters m)))
    (is (equal (shape (m (randn '(5 4)))) '(5 3)))
    (is (equal (shape (funcall m (randn '(2 7 4)))) '(2 7 3)))     ; leading axes broadcast
    ;; Modes reach sub-models.
    (is (training-p m))
    (eval! m)
    (is (not (training-p (cdr (assoc 'fc1 (model-fields m))))))
    (train! m)
    (is (training-p (cdr (assoc 'fc2 (model-fields m)))))
    ;; A wrong input shape names the layer and both shapes.
    (is (string-contains (handler-case (m (randn '(5 7))) (shape-error (e) (condition-message e)))
                         "nn:linear (4 -> 8): expected an input of shape (... 4), got (5 7)"))
    (is (string-contains (documentation 'mlp) "two-layer"))))

(deftest linear
  (manual-seed 1)
  (let* ((l (nn:linear 3 2))
         (w (cdr (assoc 'weight (model-fields l))))
         (b (cdr (assoc 'bias (model-fields l))))
         (x (tensor '((1.0 2.0 3.0) (-1.0 0.5 0.0)))))
    (is (allclose (l x) (add (matmul x w) b)))
    ;; PyTorch's initialization: uniform in +-1/sqrt(in).
    (is (<= (item (amax (abs w))) (/ 1.0 (sqrt 3))))
    (is (null (cdr (assoc 'bias (model-fields (nn:linear 3 2 :bias nil))))))
    (is (= (length (parameters (nn:linear 3 2 :bias nil))) 1))))

(deftest losses
  (let ((p (tensor '(1.0 2.0 3.0))) (q (tensor '(1.5 2.0 1.0))))
    (is (allclose (nn:mse p q) (/ (+ 0.25 0.0 4.0) 3)))
    (is (allclose (nn:l1 p q) (/ (+ 0.5 0.0 2.0) 3))))
  ;; cross-entropy: -log softmax(logits)[target], averaged.
  (let* ((logits (tensor '((2.0 1.0 0.1) (0.5 2.5 -1.0))))
         (targets (tensor '(0 1)))
         (row-loss (lambda (row k)
                     (let ((z (reduce #'+ (mapcar #'exp row))))
                       (- (log (/ (exp (nth k row)) z))))))
         (want (/ (+ (funcall row-loss '(2.0 1.0 0.1) 0) (funcall row-loss '(0.5 2.5 -1.0) 1)) 2)))
    (is (allclose (nn:cross-entropy logits targets) want :atol 1e-6))
    (is (allclose (nn:nll (log-softmax logits :axis 1) targets) want :atol 1e-6))
    ;; Label smoothing eps: (1 - eps) * CE + eps * mean over classes of -log p.
    (let* ((eps 0.1)
           (lp (to-list (log-softmax logits :axis 1)))
           (smooth (/ (+ (+ (* (- 1 eps) (nth 0 (nth 0 lp))) (* (/ eps 3) (reduce #'+ (nth 0 lp))))
                         (+ (* (- 1 eps) (nth 1 (nth 1 lp))) (* (/ eps 3) (reduce #'+ (nth 1 lp)))))
                      -2)))
      (is (allclose (nn:cross-entropy logits targets :label-smoothing eps) smooth :atol 1e-6)))
    (is-error shape-error (nn:cross-entropy logits (tensor '(0 1 2))))
    (is-error shape-error (nn:cross-entropy (tensor '(1.0 2.0)) targets))))

(deftest training-a-small-model
  ;; Two Gaussian blobs, separated by an MLP trained with plain gradient descent.
  (manual-seed 7)
  (let* ((n 64)
         (x (realize (cat (list (add (randn (list n 2)) 2.0) (add (randn (list n 2)) -2.0)) :axis 0)))
         (y (realize (cat (list (zeros (list n) :dtype 'i32) (ones (list n) :dtype 'i32)) :axis 0)))
         (m (mlp 2 16 2))
         (first-loss nil) (loss nil))
    (dotimes (step 60)
      (setq loss (nn:cross-entropy (m x) y))
      (unless first-loss (setq first-loss (item loss)))
      (zero-grad! (parameters m))
      (backward loss)
      (no-grad (dolist (p (parameters m)) (realize (prim:assign p (sub p (mul (grad p) 0.5)))))))
    (is (< (item loss) (* 0.2 first-loss)))
    (let ((accuracy (item (mean (cast (equals (argmax (m x) :axis 1) y) 'f32)))))
      (is (> accuracy 0.95)))))

(run-tests)
