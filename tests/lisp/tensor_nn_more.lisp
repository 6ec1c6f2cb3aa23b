;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19, "ops users expect" for networks: functional normalizations, cosine similarity,
;;; interpolate, smooth L1 and Huber losses, and cross-entropy with spatial targets, class
;;; weights, ignore-index and label smoothing, against PyTorch's values (by hand or by a
;;; plain formula in f64) and gradients against finite differences.

(require 'nn)
(load "data/grad_check.lisp")
(defun tl (x) (to-list x))

(manual-seed 23)

;;; --- normalizations ---------------------------------------------------------------------

(defun standardize (xs)
  ;; A list of numbers minus their mean, over sqrt(biased variance + 1e-5).
  (let* ((n (length xs)) (mu (/ (apply #'+ xs) n))
         (var (/ (apply #'+ (mapcar (lambda (v) (* (- v mu) (- v mu))) xs)) n)))
    (mapcar (lambda (v) (/ (- v mu) (sqrt (+ var 1e-5)))) xs)))

(deftest functional-norms
  (let* ((x (randn '(4 3 2) :dtype 'f64))
         (w (tensor '(1.0 2.0 -1.0) :dtype 'f64)) (b (tensor '(0.5 0.0 1.0) :dtype 'f64)))
    ;; batch-norm: channel c over batch and length.
    (let ((y (batch-norm x :weight w :bias b)))
      (dotimes (c 3)
        (let ((vals (flatten (tl (slice x t c)))))
          (is (allclose (flatten (tl (slice y t c)))
                        (mapcar (lambda (v) (+ (* (nth c '(1.0 2.0 -1.0)) v) (nth c '(0.5 0.0 1.0)))) (standardize vals))
                        :rtol 1e-10)))))
    ;; With running statistics: evaluation uses them; training updates them in place.
    (let ((rm (realize (tensor '(0.0 1.0 2.0) :dtype 'f64))) (rv (realize (tensor '(1.0 4.0 0.25) :dtype 'f64))))
      (is (allclose (batch-norm x :running-mean rm :running-var rv)
                    (div (sub x (reshape rm '(1 3 1))) (sqrt (add (reshape rv '(1 3 1)) 1e-5)))))
      (batch-norm x :running-mean rm :running-var rv :training t :momentum 0.5)
      (let ((mu (mean x :axis '(0 2))) (uv (var x :axis '(0 2))))
        (is (allclose rm (add (mul (tensor '(0.0 1.0 2.0) :dtype 'f64) 0.5) (mul mu 0.5)) :rtol 1e-12))
        (is (allclose rv (add (mul (tensor '(1.0 4.0 0.25) :dtype 'f64) 0.5) (mul uv 0.5)) :rtol 1e-12))))
    (is-error type-error (batch-norm x :running-mean (zeros '(3))))
    ;; instance-norm: each sample and channel over its length.
    (let ((y (instance-norm x :weight w :bias b)))
      (is (allclose (slice y 1 2) (add (mul (tensor (standardize (tl (slice x 1 2))) :dtype 'f64) -1.0) 1.0) :rtol 1e-10)))
    (is-error shape-error (instance-norm (ones '(2 3))))
    ;; group-norm with 1 group is a layer norm over all but the batch; with C groups, an
    ;; instance norm.
    (is (allclose (group-norm x 1) (layer-norm x :axis '(1 2)) :rtol 1e-12))
    (is (allclose (group-norm x 3 :weight w :bias b) (instance-norm x :weight w :bias b) :rtol 1e-12))
    (is-error shape-error (group-norm x 2))
    ;; rms-norm: x / sqrt(mean(x^2) + eps), eps the dtype's epsilon by default.
    (let ((row (tl (slice x 0 0))))
      (is (allclose (slice (rms-norm x) 0 0)
                    (let ((ms (/ (apply #'+ (mapcar (lambda (v) (* v v)) row)) 2)))
                      (mapcar (lambda (v) (/ v (sqrt (+ ms 2.220446049250313e-16)))) row))
                    :rtol 1e-12)))
    (is (allclose (rms-norm x :axis '(1 2) :weight (tensor '((2.0 2.0) (2.0 2.0) (2.0 2.0)) :dtype 'f64) :eps 0.1)
                  (mul 2.0 (div x (sqrt (add (mean (mul x x) :axis '(1 2) :keepdim t) 0.1)))))))
  ;; The layers compute the same as the functions.
  (let ((x (randn '(5 4 3))))
    (is (allclose ((nn:group-norm 2 4) x) (group-norm x 2) :atol 1e-6))
    (is (allclose ((nn:rms-norm 3) x) (rms-norm x :eps 1e-6) :atol 1e-6))
    (let ((bn (nn:batch-norm 4)))
      (is (allclose (funcall bn x) (batch-norm x) :atol 1e-6))))
  (let ((w (randn '(3))) (b (randn '(3))))
    (is (grad-check (lambda (x w b) (batch-norm x :weight w :bias b)) (randn '(4 3 2)) w b))
    (is (grad-check (lambda (x w b) (instance-norm x :weight w :bias b)) (randn '(2 3 4)) w b))
    (is (grad-check (lambda (x w b) (group-norm x 3 :weight w :bias b)) (randn '(2 3 2 2)) w b))
    (is (grad-check (lambda (x w) (rms-norm x :weight w :eps 1e-6)) (randn '(2 3)) w))))

(deftest cosine-similarities
  ;; Orthogonal, parallel, opposite and zero rows (the zero row gives 0, as PyTorch's).
  (let ((a (tensor '((1.0 0.0) (2.0 2.0) (1.0 2.0) (0.0 0.0))))
        (b (tensor '((0.0 3.0) (1.0 1.0) (-2.0 -4.0) (1.0 1.0)))))
    (is (allclose (cosine-similarity a b) '(0.0 1.0 -1.0 0.0) :atol 1e-6))
    (is (allclose (cosine-similarity a b :axis 0) (list 0.0 (/ -6.0 (sqrt 216.0))) :atol 1e-6)))
  (let* ((a (randn '(3 5) :dtype 'f64)) (b (randn '(1 5) :dtype 'f64))
         (brow (car (tl b))))
    ;; Broadcast B against every row of A, against the formula.
    (is (allclose (cosine-similarity a b)
                  (mapcar (lambda (r)
                            (/ (apply #'+ (mapcar #'* r brow))
                               (* (sqrt (apply #'+ (mapcar #'* r r))) (sqrt (apply #'+ (mapcar #'* brow brow))))))
                          (tl a))
                  :rtol 1e-12))
    (is (equal (shape (cosine-similarity (randn '(2 3 4)) (randn '(2 3 4)) :axis -1)) '(2 3)))
    (is (grad-check (lambda (a b) (cosine-similarity a b)) a b)))
  ;; The gradient at a zero vector is finite.
  (let ((g (second ((value-and-grad (lambda (a b) (sum (cosine-similarity a b))))
                    (tensor '((0.0 0.0))) (tensor '((1.0 2.0)))))))
    (is (not (item (any (isnan (first g))))))))

;;; --- interpolate -----------------------------------------------------------------------

(defun bilinear-ref (img out-h out-w align)
  ;; torch's bilinear resize of a list-of-rows image, by the formula, in Lisp floats.
  (let* ((in-h (length img)) (in-w (length (car img))))
    (flet ((src (o in out)
             (if align
                 (if (> out 1) (* o (/ (float (- in 1)) (- out 1))) 0.0)
                 (max 0.0 (- (* (+ o 0.5) (/ (float in) out)) 0.5))))
           (px (r c) (nth c (nth r img))))
      (loop for i from 0 below out-h
            collect (loop for j from 0 below out-w
                          collect (let* ((y (src i in-h out-h)) (x (src j in-w out-w))
                                         (y0 (min (floor y) (- in-h 1))) (x0 (min (floor x) (- in-w 1)))
                                         (y1 (min (+ y0 1) (- in-h 1))) (x1 (min (+ x0 1) (- in-w 1)))
                                         (dy (- y y0)) (dx (- x x0)))
                                    (+ (* (- 1 dy) (- 1 dx) (px y0 x0)) (* (- 1 dy) dx (px y0 x1))
                                       (* dy (- 1 dx) (px y1 x0)) (* dy dx (px y1 x1)))))))))

(deftest interpolation
  (let ((img (tensor '((((1.0 2.0) (3.0 4.0)))))))
    (is (equal (tl (interpolate img :scale-factor 2))
               '((((1.0 1.0 2.0 2.0) (1.0 1.0 2.0 2.0) (3.0 3.0 4.0 4.0) (3.0 3.0 4.0 4.0))))))
    ;; torch.nn.functional.interpolate(img, size=4, mode='bilinear')
    (is (allclose (interpolate img :size 4 :mode :bilinear)
                  '((((1.0 1.25 1.75 2.0) (1.5 1.75 2.25 2.5) (2.5 2.75 3.25 3.5) (3.0 3.25 3.75 4.0))))))
    ;; ... align_corners=True
    (is (allclose (interpolate img :size 3 :mode :bilinear :align-corners t)
                  '((((1.0 1.5 2.0) (2.0 2.5 3.0) (3.0 3.5 4.0))))))
    (is-error type-error (interpolate img :size 3 :align-corners t))
    (is-error type-error (interpolate img))
    (is-error shape-error (interpolate (ones '(2 2)) :size 3)))
  ;; Nearest: source floor(i * in / out), down and up, integers kept.
  (let ((row (reshape (arange 12) '(1 1 3 4))))
    (is (equal (tl (interpolate row :size '(5 3)))
               '((((0 1 2) (0 1 2) (4 5 6) (4 5 6) (8 9 10))))))
    (is (equal (shape (interpolate row :scale-factor '(1.5 0.5))) '(1 1 4 2))))
  ;; Bilinear against the formula, up and down, both corner conventions.
  (let* ((x (randn '(2 1 3 5) :dtype 'f64)) (img (car (car (tl x)))))
    (dolist (sz '((4 7) (2 3) (6 5)))
      (dolist (align '(nil t))
        (is (allclose (slice (interpolate x :size sz :mode :bilinear :align-corners align) 0 0)
                      (bilinear-ref img (first sz) (second sz) align) :rtol 1e-12)))))
  (is (grad-check (lambda (x) (interpolate x :size '(4 5) :mode :bilinear)) (randn '(1 2 3 2))))
  (is (grad-check (lambda (x) (interpolate x :size '(3 3) :mode :bilinear :align-corners t)) (randn '(1 1 2 4))))
  (is (grad-check (lambda (x) (interpolate x :scale-factor 2)) (randn '(1 1 2 3)))))

;;; --- losses ----------------------------------------------------------------------------

(deftest regression-losses
  (let ((p (tensor '(0.0 0.5 2.0 -3.0))) (y (tensor '(0.0 0.0 0.0 0.0))))
    ;; d = 0, 0.5, 2, -3 with beta 1: 0, 0.125, 1.5, 2.5
    (is (allclose (nn:smooth-l1-loss p y :reduction :none) '(0.0 0.125 1.5 2.5)))
    (is (allclose (nn:smooth-l1-loss p y) 1.03125))
    ;; beta 2: 0, 0.0625, 1.0, 2.0
    (is (allclose (nn:smooth-l1-loss p y :beta 2.0 :reduction :sum) 3.0625))
    (is (allclose (nn:smooth-l1-loss p y :beta 0.0 :reduction :none) '(0.0 0.5 2.0 3.0)))
    ;; Huber with delta 2: 0, 0.125, 2.0, 4.0 (delta times smooth L1 with beta delta)
    (is (allclose (nn:huber-loss p y :delta 2.0 :reduction :none) '(0.0 0.125 2.0 4.0)))
    (is (allclose (nn:huber-loss p y) (nn:smooth-l1-loss p y)))
    (is-error shape-error (nn:huber-loss p (ones '(3))))
    (is-error type-error (nn:huber-loss p y :reduction :max)))
  (let ((p (randn '(3 4))) (y (randn '(3 4))))
    (is (grad-check (lambda (p y) (nn:smooth-l1-loss p y :beta 0.5 :reduction :none)) p y))
    (is (grad-check (lambda (p y) (nn:huber-loss p y :delta 0.7)) p y))))

(defun log-softmax-row (row)
  (let ((lse (log (apply #'+ (mapcar #'exp row))))) (mapcar (lambda (v) (- v lse)) row)))

(defun ce-ref (rows targets &key weights (ignore -100) (smoothing 0.0))
  ;; PyTorch's cross_entropy (mean) by its formula, over lists.
  (let ((total 0.0) (wsum 0.0) (c (length (car rows))))
    (loop for row in rows for y in targets
          do (unless (= y ignore)
               (let* ((lp (log-softmax-row row))
                      (w (lambda (k) (if weights (nth k weights) 1.0)))
                      (nll (* -1 (funcall w y) (nth y lp)))
                      (smooth (* -1 (loop for k from 0 below c sum (* (funcall w k) (nth k lp))))))
                 (setq total (+ total (* (- 1 smoothing) nll) (* (/ smoothing c) smooth)))
                 (setq wsum (+ wsum (funcall w y))))))
    (/ total wsum)))

(deftest cross-entropies
  ;; F.cross_entropy([[1., 2., 3.]], [0]) = 2.4076
  (is (allclose (nn:cross-entropy (tensor '((1.0 2.0 3.0))) (tensor '(0))) 2.4076059644 :rtol 1e-6))
  ;; Unbatched: (C) logits and a 0-d target.
  (is (allclose (nn:cross-entropy (tensor '(1.0 2.0 3.0)) (tensor 0)) 2.4076059644 :rtol 1e-6))
  (let* ((logits (randn '(6 4) :dtype 'f64)) (rows (tl logits))
         (y '(0 3 -100 1 3 2)) (yt (tensor y)) (w '(1.0 0.5 2.0 0.25)) (wt (tensor w :dtype 'f64)))
    (is (allclose (nn:cross-entropy logits yt :ignore-index -100) (ce-ref rows y) :rtol 1e-12))
    (is (allclose (nn:cross-entropy logits yt :ignore-index -100 :weight wt) (ce-ref rows y :weights w) :rtol 1e-12))
    (is (allclose (nn:cross-entropy logits yt :ignore-index -100 :weight wt :label-smoothing 0.2)
                  (ce-ref rows y :weights w :smoothing 0.2) :rtol 1e-12))
    (is (allclose (nn:cross-entropy logits yt :ignore-index -100 :label-smoothing 0.1)
                  (ce-ref rows y :smoothing 0.1) :rtol 1e-12))
    ;; :none gives one loss per row (0 where ignored); :sum adds them.
    (let ((none (nn:cross-entropy logits yt :ignore-index -100 :reduction :none)))
      (is (equal (shape none) '(6)))
      (is (= (nth 2 (tl none)) 0.0))
      (is (allclose (sum none) (nn:cross-entropy logits yt :ignore-index -100 :reduction :sum))))
    ;; nll of log-softmax is cross-entropy.
    (is (allclose (nn:nll (log-softmax logits :axis 1) yt :ignore-index -100 :weight wt)
                  (ce-ref rows y :weights w) :rtol 1e-12))
    (is-error index-error (nn:cross-entropy logits yt))      ; -100 is not a class without ignore-index
    (is-error shape-error (nn:cross-entropy logits yt :weight (ones '(3)))))
  ;; (N C d1 d2) logits with (N d1 d2) targets: the same as the rows (N d1 d2) x C.
  (let* ((logits (randn '(2 3 2 2) :dtype 'f64))
         (y (randint 0 3 '(2 2 2)))
         (flat (reshape (permute logits 0 2 3 1) '(8 3))))
    (is (allclose (nn:cross-entropy logits y) (nn:cross-entropy flat (reshape y '(8))) :rtol 1e-12))
    (is (equal (shape (nn:cross-entropy logits y :reduction :none)) '(2 2 2)))
    (is-error shape-error (nn:cross-entropy logits (randint 0 3 '(2 2)))))
  ;; Probabilities as targets: -sum p log softmax, averaged over the batch.
  (let* ((logits (randn '(3 4) :dtype 'f64)) (p (softmax (randn '(3 4) :dtype 'f64))))
    (is (allclose (nn:cross-entropy logits p) (div (neg (sum (mul p (log-softmax logits)))) 3) :rtol 1e-12))
    (is (grad-check (lambda (x) (nn:cross-entropy x p :label-smoothing 0.1)) logits)))
  (let ((y (tensor '(2 0 -1 1))) (w (tensor '(0.3 1.0 2.0) :dtype 'f64)))
    (is (grad-check (lambda (x) (nn:cross-entropy x y :ignore-index -1 :weight w :label-smoothing 0.2)) (randn '(4 3))))
    (is (grad-check (lambda (x) (nn:cross-entropy x (tensor '((0 2) (1 1))))) (randn '(2 3 2))))))

;;; --- recurrent layers and attention ----------------------------------------------------

(defun field (m name) (cdr (assoc name (model-fields m))))

(defun unrolled (cells xs state lstm)
  ;; The cells run by hand: for each step, each layer on the one below; returns
  ;; (outputs finals).
  (let ((st (or state (make-list (length cells) nil))) (outs nil))
    (dolist (x xs)
      (let ((input x) (next nil))
        (loop for c in cells for s in st
              do (let ((r (funcall c input s)))
                   (push r next)
                   (setq input (if lstm (first r) r))))
        (setq st (reverse next))
        (push input outs)))
    (list (reverse outs) st)))

(deftest recurrent-layers
  (let* ((m (nn:rnn 3 4 :num-layers 2))
         (x (randn '(5 2 3)))
         (r (funcall m x))
         (ref (unrolled (field m 'cells) (loop for i from 0 below 5 collect (slice x i)) nil nil)))
    (is (equal (shape (car r)) '(5 2 4)))
    (is (equal (shape (cdr r)) '(2 2 4)))
    (is (allclose (car r) (stack (first ref)) :atol 1e-6))
    (is (allclose (cdr r) (stack (second ref)) :atol 1e-6))
    ;; An initial state, and 4 parameters per layer.
    (let* ((h0 (randn '(2 2 4)))
           (ref (unrolled (field m 'cells) (loop for i from 0 below 5 collect (slice x i)) (list (slice h0 0) (slice h0 1)) nil)))
      (is (allclose (car (funcall m x h0)) (stack (first ref)) :atol 1e-6)))
    (is (= (length (parameters m)) 8))
    (is (equal (mapcar #'car (named-parameters m))
               '("cells.0.weight-ih" "cells.0.weight-hh" "cells.0.bias-ih" "cells.0.bias-hh"
                 "cells.1.weight-ih" "cells.1.weight-hh" "cells.1.bias-ih" "cells.1.bias-hh"))))
  ;; GRU, batch first: output (batch seq hidden).
  (let* ((m (nn:gru 3 2 :batch-first t :num-layers 2))
         (x (randn '(2 4 3)))
         (r (funcall m x))
         (ref (unrolled (field m 'cells) (loop for i from 0 below 4 collect (slice x t i)) nil nil)))
    (is (equal (shape (car r)) '(2 4 2)))
    (is (allclose (car r) (stack (first ref) :axis 1) :atol 1e-6))
    (is (allclose (cdr r) (stack (second ref)) :atol 1e-6)))
  ;; LSTM: (output . (h_n c_n)); unbatched input (seq in) too.
  (let* ((m (nn:lstm 3 2))
         (x (randn '(4 1 3)))
         (r (funcall m x))
         (ref (unrolled (field m 'cells) (loop for i from 0 below 4 collect (slice x i)) nil t)))
    (is (allclose (car r) (stack (first ref)) :atol 1e-6))
    (is (allclose (first (cdr r)) (stack (mapcar #'first (second ref))) :atol 1e-6))
    (is (allclose (second (cdr r)) (stack (mapcar #'second (second ref))) :atol 1e-6))
    (is (allclose (car (funcall m (reshape x '(4 3)))) (reshape (car r) '(4 2)) :atol 1e-6))
    (is (equal (mapcar #'shape (cdr (funcall m (reshape x '(4 3))))) '((1 2) (1 2)))))
  (is-error shape-error (funcall (nn:rnn 3 4) (randn '(5 2 2))))
  ;; Gradients reach every layer's weights through time.
  (let* ((m (nn:lstm 2 3 :num-layers 2))
         (loss (sum (car (funcall m (randn '(3 2 2)))))))
    (backward loss)
    (is (every (lambda (p) (and (grad p) (> (item (sum (abs (grad p)))) 0))) (parameters m)))))

(deftest attention-keywords
  ;; :causal and :mask may follow the query alone (issue 19: they were bound to KEY and VALUE).
  (let* ((m (nn:multihead-attention 4 2))
         (x (randn '(2 3 4)))
         (causal (funcall m x :causal t)))
    (is (allclose causal (funcall m x x x :causal t)))
    (is (allclose causal (funcall m x :mask (tril (ones '(3 3) :dtype 'bool)))))
    (is (not (allclose causal (funcall m x))))
    ;; The first position sees only itself: changing later positions leaves it alone.
    (let ((x2 (cat (list (slice x t '(0 1)) (randn '(2 2 4))) :axis 1)))
      (is (allclose (slice (funcall m x2 :causal t) t 0) (slice causal t 0) :atol 1e-6)))
    (is-error type-error (funcall m x :causl t))
    (is-error type-error (funcall m x x x x))))

(run-tests)
