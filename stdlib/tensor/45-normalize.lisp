;;; SPDX-License-Identifier: Apache-2.0
;;; Normalizations as functions (batch, instance, group and RMS norm; layer-norm is in
;;; 40-reduce), which the nn layers call, and cosine similarity.

(defun %channel-shape (x)
  ;; The shape (1 C 1 ...) that broadcasts a per-channel vector over X (batch C ...).
  (cons 1 (cons (second (tensor-shape x)) (make-list (- (ndim x) 2) 1))))

(defun %check-channels-first (fn x)
  (unless (and (tensorp x) (>= (ndim x) 2))
    (error 'shape-error "~a: expected an input of shape (batch channels ...), got ~s" fn
           (if (tensorp x) (tensor-shape x) x))))

(defun %affine-channels (y weight bias)
  ;; Y scaled by WEIGHT and shifted by BIAS (per channel, either may be nil).
  (let* ((cs (%channel-shape y))
         (y (if weight (mul y (reshape weight cs)) y)))
    (if bias (add y (reshape bias cs)) y)))

;;; (no-grad is defined later, in 90-autograd: this file turns tracking off by hand.)
(defun %update-running (running-mean running-var mu var count momentum)
  ;; r <- (1 - MOMENTUM) r + MOMENTUM s in place, with the unbiased variance, untracked.
  (let ((c (car (tensor-shape running-mean)))
        (was (%set-grad-enabled nil)))
    (unwind-protect
         (realize-all
          (list (prim:assign running-mean
                             (add (mul running-mean (- 1 momentum))
                                  (mul (cast (reshape (detach mu) c) (tensor-dtype running-mean)) momentum)))
                (prim:assign running-var
                             (add (mul running-var (- 1 momentum))
                                  (mul (cast (reshape (detach var) c) (tensor-dtype running-var))
                                       (* momentum (/ count (max 1 (- count 1)))))))))
      (%set-grad-enabled was))))

(defcomposite batch-norm (x &key running-mean running-var weight bias training (momentum 0.1) (eps 1e-5))
  "(batch-norm X &key running-mean running-var weight bias training (momentum 0.1) (eps 1e-5))
X (batch C ...) normalized per channel, as torch.nn.functional.batch_norm: with TRAINING (or
without running statistics) by the batch's mean and biased variance over every axis but
the channels', else by RUNNING-MEAN and RUNNING-VAR (tensors of shape (C)); then scaled by
WEIGHT and shifted by BIAS (shape (C)) when given. In training, given running statistics
are updated in place: r <- (1 - MOMENTUM) r + MOMENTUM s, with the unbiased variance.
  (to-list (batch-norm (tensor '((1.0) (3.0))) :eps 0.0))  ; => ((-1.0) (1.0))
  (to-list (batch-norm (tensor '((2.0 5.0))) :running-mean (tensor '(1.0 1.0)) :running-var (tensor '(4.0 16.0))
                      :eps 0.0))  ; => ((0.5 1.0))"
  (%check-channels-first 'batch-norm x)
  (let* ((x (%float-tensor x))
         (cs (%channel-shape x))
         (c (second cs))
         (axes (cons 0 (loop for a from 2 below (ndim x) collect a))))
    (when (and (not training) (not (and running-mean running-var)) (or running-mean running-var))
      (error 'type-error "batch-norm: give both RUNNING-MEAN and RUNNING-VAR, or neither"))
    (%affine-channels
     (if (or training (null running-mean))
         (let* ((mu (mean x :axis axes :keepdim t))
                (d (sub x mu))
                (var (mean (mul d d) :axis axes :keepdim t)))
           (when (and training running-mean running-var)
             (%update-running running-mean running-var mu var (/ (numel x) c) momentum))
           (mul d (rsqrt (add var eps))))
         (mul (sub x (reshape running-mean cs)) (rsqrt (add (reshape running-var cs) eps))))
     weight bias)))

(defcomposite instance-norm (x &key weight bias (eps 1e-5))
  "(instance-norm X &key weight bias (eps 1e-5)) X (batch C spatial...) normalized for each
sample and channel over its spatial axes by their mean and biased variance, then scaled by
WEIGHT and shifted by BIAS (shape (C)) when given, as torch.nn.functional.instance_norm
(without running statistics).
  (to-list (instance-norm (tensor '(((1.0 3.0)))) :eps 0.0))  ; => (((-1.0 1.0)))"
  (%check-channels-first 'instance-norm x)
  (when (< (ndim x) 3)
    (error 'shape-error "instance-norm: expected an input of shape (batch channels spatial...), got ~s" (tensor-shape x)))
  (%affine-channels (layer-norm x :axis (loop for a from 2 below (ndim x) collect a) :eps eps) weight bias))

(defcomposite group-norm (x groups &key weight bias (eps 1e-5))
  "(group-norm X GROUPS &key weight bias (eps 1e-5)) X (batch C ...) normalized over each of
GROUPS groups of C/GROUPS channels (with the spatial axes) by their mean and biased
variance, then scaled by WEIGHT and shifted by BIAS (shape (C)) per channel when given, as
torch.nn.functional.group_norm.
  (to-list (group-norm (tensor '((1.0 3.0 5.0 7.0))) 2 :eps 0.0))  ; => ((-1.0 1.0 -1.0 1.0))"
  (%check-channels-first 'group-norm x)
  (let* ((s (tensor-shape x)) (c (second s)))
    (unless (and (integerp groups) (> groups 0) (integerp c) (= 0 (mod c groups)))
      (error 'shape-error "group-norm: ~a groups must divide ~a channels" groups c))
    (let ((y (reshape (layer-norm (reshape x (list (first s) groups -1)) :axis 2 :eps eps) s)))
      (%affine-channels y weight bias))))

(defcomposite rms-norm (x &key (axis -1) weight eps)
  "(rms-norm X &key (axis -1) weight eps) X / sqrt(mean(X^2) + EPS) over AXIS (an integer or
a list), times WEIGHT (shaped like those axes) when given, as torch.nn.functional.rms_norm.
EPS defaults, as there, to the machine epsilon of X's dtype.
  (to-list (rms-norm (tensor '(1.0 -1.0)) :eps 0.0))  ; => (1.0 -1.0)
  (to-list (rms-norm (tensor '(2.0 -2.0)) :weight (tensor '(0.5 2.0)) :eps 0.0))  ; => (0.5 -2.0)"
  (let* ((f (%float-tensor x))
         (eps (or eps (case (tensor-dtype f) (f64 2.220446049250313e-16) (f16 0.0009765625) (bf16 0.0078125)
                            (t 1.1920928955078125e-07))))
         (y (mul f (rsqrt (add (mean (mul f f) :axis axis :keepdim t) eps)))))
    (if weight (mul y weight) y)))

(defcomposite cosine-similarity (a b &key (axis 1) (eps 1e-8))
  "(cosine-similarity A B &key (axis 1) (eps 1e-8)) The cosine of the angle between A and B
(broadcast together) along AXIS: sum(A B) / (max(|A|, EPS) max(|B|, EPS)), as
torch.nn.functional.cosine_similarity. 0 for a zero vector, with a finite gradient.
  (item (cosine-similarity (tensor '(3.0 4.0)) (tensor '(-3.0 -4.0)) :axis 0))  ; => -1.0
  (to-list (cosine-similarity (tensor '((1.0 0.0) (0.0 2.0))) (tensor '((0.0 5.0) (0.0 1.0)))))  ; => (0.0 1.0)"
  (let* ((xs (%elementwise-args 'cosine-similarity (list (%float-tensor a) (%float-tensor b)) nil))
         (shp (broadcast-shapes (tensor-shape (first xs)) (tensor-shape (second xs))))
         (ta (broadcast-to (first xs) shp)) (tb (broadcast-to (second xs) shp))
         (ax (list (%axis 'cosine-similarity axis (length shp))))
         (na (maximum (%norm-2 ta ax) eps))
         (nb (maximum (%norm-2 tb ax) eps)))
    (sum (mul (div ta na) (div tb nb)) :axis ax)))
