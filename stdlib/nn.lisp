;;; SPDX-License-Identifier: Apache-2.0
;;; nn: layers and losses, as models over the tensor library. (require 'nn)
;;; Initializations follow PyTorch's documented defaults.

(require 'data)

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
both initialized uniformly in +-1/sqrt(IN) as in PyTorch.
  (shape ((nn:linear 4 3) (zeros '(2 4))))  ; => (2 3)"
  (x)
  (nn:%check-last-axis (format nil "nn:linear (~a -> ~a)" in out) x in)
  (let ((y (matmul x weight))) (if bias (add y bias) y)))

(defmodel nn:sequential (&rest layers)
  ((layers layers))
  "(nn:sequential LAYER...) Calls the layers in order, each on the previous one's result.
  (shape ((nn:sequential (nn:linear 4 8) #'relu (nn:linear 8 2)) (zeros '(5 4))))  ; => (5 2)"
  (x)
  (dolist (l layers) (setq x (funcall l x)))
  x)

;;; --- convolution and pooling -----------------------------------------------------------

(defun nn:%kernel-text (kernel)
  (string-join (mapcar (lambda (k) (format nil "~a" k)) kernel) "x"))

(defun nn:%check-channels (layer x rank channels)
  ;; X must be (batch CHANNELS spatial...) with RANK spatial axes.
  (unless (and (tensorp x) (= (ndim x) (+ rank 2)) (dim= (second (shape x)) channels))
    (error 'shape-error "~a: expected an input of shape (batch ~a ~a), got ~s" layer channels
           (%spatial-names rank) (if (tensorp x) (shape x) x))))

(defun nn:%uniform-param (shape bound)
  ;; A parameter of SHAPE drawn uniformly from [-BOUND, BOUND), as PyTorch initializes
  ;; convolutions and linear layers.
  (nn:%param (uniform shape :low (- bound) :high bound)))

(defun nn:%conv-bound (channels groups kernel)
  ;; 1/sqrt(fan-in) for a convolution whose kernel reads CHANNELS/GROUPS channels.
  (/ 1.0 (sqrt (* (/ channels groups) (apply #'* kernel)))))

(defmodel nn:conv2d (in out kernel-size &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv2d "kernel-size" kernel-size 2))
   (bound (nn:%conv-bound in groups kernel))
   (weight (nn:%uniform-param (append (list out (/ in groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv2d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv2d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
A 2-d convolution layer on (batch IN height width) inputs, with weight (OUT IN/groups kh kw)
and bias initialized uniformly in +-1/sqrt(fan-in), as in PyTorch.
  (shape ((nn:conv2d 1 8 3) (zeros '(2 1 28 28))))  ; => (2 8 26 26)"
  (x)
  (nn:%check-channels name x 2 in)
  (conv2d x weight :bias bias :stride stride :padding padding :dilation dilation :groups groups))

(defmodel nn:conv1d (in out kernel-size &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv1d "kernel-size" kernel-size 1))
   (bound (nn:%conv-bound in groups kernel))
   (weight (nn:%uniform-param (append (list out (/ in groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv1d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv1d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
A 1-d convolution layer on (batch IN length) inputs, initialized as in PyTorch.
  (shape ((nn:conv1d 3 8 3 :padding 1) (zeros '(2 3 10))))  ; => (2 8 10)"
  (x)
  (nn:%check-channels name x 1 in)
  (conv1d x weight :bias bias :stride stride :padding padding :dilation dilation :groups groups))

(defmodel nn:conv-transpose2d (in out kernel-size &key (stride 1) (padding 0) (output-padding 0)
                                  (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv-transpose2d "kernel-size" kernel-size 2))
   (bound (nn:%conv-bound out groups kernel))
   (weight (nn:%uniform-param (append (list in (/ out groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv-transpose2d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv-transpose2d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (output-padding 0) (dilation 1)
(groups 1) (bias t)) A transposed 2-d convolution layer, weight (IN OUT/groups kh kw),
initialized as in PyTorch.
  (shape ((nn:conv-transpose2d 4 2 2 :stride 2) (zeros '(1 4 3 3))))  ; => (1 2 6 6)"
  (x)
  (nn:%check-channels name x 2 in)
  (conv-transpose2d x weight :bias bias :stride stride :padding padding :output-padding output-padding
                    :dilation dilation :groups groups))

(defmodel nn:conv3d (in out kernel-size &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv3d "kernel-size" kernel-size 3))
   (bound (nn:%conv-bound in groups kernel))
   (weight (nn:%uniform-param (append (list out (/ in groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv3d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv3d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (dilation 1) (groups 1) (bias t))
A 3-d convolution layer on (batch IN depth height width) inputs, weight (OUT IN/groups kd kh
kw), initialized as in PyTorch.
  (shape ((nn:conv3d 2 4 3 :padding 1) (zeros '(1 2 4 5 6))))  ; => (1 4 4 5 6)"
  (x)
  (nn:%check-channels name x 3 in)
  (conv3d x weight :bias bias :stride stride :padding padding :dilation dilation :groups groups))

(defmodel nn:conv-transpose1d (in out kernel-size &key (stride 1) (padding 0) (output-padding 0)
                                  (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv-transpose1d "kernel-size" kernel-size 1))
   (bound (nn:%conv-bound out groups kernel))
   (weight (nn:%uniform-param (append (list in (/ out groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv-transpose1d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv-transpose1d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (output-padding 0) (dilation 1)
(groups 1) (bias t)) A transposed 1-d convolution layer, weight (IN OUT/groups k).
  (shape ((nn:conv-transpose1d 4 2 2 :stride 2) (zeros '(1 4 3))))  ; => (1 2 6)
  (mapcar #'car (named-parameters (nn:conv-transpose1d 4 2 2)))  ; => (\"weight\" \"bias\")"
  (x)
  (nn:%check-channels name x 1 in)
  (conv-transpose1d x weight :bias bias :stride stride :padding padding :output-padding output-padding
                    :dilation dilation :groups groups))

(defmodel nn:conv-transpose3d (in out kernel-size &key (stride 1) (padding 0) (output-padding 0)
                                  (dilation 1) (groups 1) (bias t))
  ((kernel (%tuple 'nn:conv-transpose3d "kernel-size" kernel-size 3))
   (bound (nn:%conv-bound out groups kernel))
   (weight (nn:%uniform-param (append (list in (/ out groups)) kernel) bound))
   (bias (when bias (nn:%uniform-param (list out) bound)))
   (name (format nil "nn:conv-transpose3d (~a -> ~a, ~a)" in out (nn:%kernel-text kernel))))
  "(nn:conv-transpose3d IN OUT KERNEL-SIZE &key (stride 1) (padding 0) (output-padding 0) (dilation 1)
(groups 1) (bias t)) A transposed 3-d convolution layer, weight (IN OUT/groups kd kh kw).
  (shape ((nn:conv-transpose3d 4 2 2 :stride 2) (zeros '(1 4 2 3 3))))  ; => (1 2 4 6 6)"
  (x)
  (nn:%check-channels name x 3 in)
  (conv-transpose3d x weight :bias bias :stride stride :padding padding :output-padding output-padding
                    :dilation dilation :groups groups))

(defmodel nn:max-pool1d (kernel-size &key stride (padding 0) (dilation 1))
  ()
  "(nn:max-pool1d KERNEL-SIZE &key stride (padding 0) (dilation 1)) 1-d max pooling as a layer.
  (shape ((nn:max-pool1d 2) (zeros '(1 3 8))))  ; => (1 3 4)"
  (x) (max-pool1d x kernel-size :stride stride :padding padding :dilation dilation))

(defmodel nn:max-pool3d (kernel-size &key stride (padding 0) (dilation 1))
  ()
  "(nn:max-pool3d KERNEL-SIZE &key stride (padding 0) (dilation 1)) 3-d max pooling as a layer.
  (shape ((nn:max-pool3d 2) (zeros '(1 1 4 4 4))))  ; => (1 1 2 2 2)"
  (x) (max-pool3d x kernel-size :stride stride :padding padding :dilation dilation))

(defmodel nn:avg-pool1d (kernel-size &key stride (padding 0) (count-include-pad t))
  ()
  "(nn:avg-pool1d KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) 1-d average pooling as a layer.
  (to-list ((nn:avg-pool1d 2) (tensor '(((1.0 3.0 5.0 7.0))))))  ; => (((2.0 6.0)))"
  (x) (avg-pool1d x kernel-size :stride stride :padding padding :count-include-pad count-include-pad))

(defmodel nn:avg-pool3d (kernel-size &key stride (padding 0) (count-include-pad t))
  ()
  "(nn:avg-pool3d KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) 3-d average pooling as a layer.
  (shape ((nn:avg-pool3d 2) (zeros '(1 1 4 4 4))))  ; => (1 1 2 2 2)"
  (x) (avg-pool3d x kernel-size :stride stride :padding padding :count-include-pad count-include-pad))

(defmodel nn:adaptive-avg-pool2d (size)
  ()
  "(nn:adaptive-avg-pool2d SIZE) Adaptive average pooling to SIZE (an integer or (h w)) as a layer.
  (shape ((nn:adaptive-avg-pool2d 7) (zeros '(2 3 10 9))))  ; => (2 3 7 7)"
  (x) (adaptive-avg-pool2d x size))

(defmodel nn:adaptive-max-pool2d (size)
  ()
  "(nn:adaptive-max-pool2d SIZE) Adaptive max pooling to SIZE (an integer or (h w)) as a layer.
  (shape ((nn:adaptive-max-pool2d '(2 3)) (zeros '(1 3 10 9))))  ; => (1 3 2 3)"
  (x) (adaptive-max-pool2d x size))

(defmodel nn:max-pool2d (kernel-size &key stride (padding 0) (dilation 1))
  ()
  "(nn:max-pool2d KERNEL-SIZE &key stride (padding 0) (dilation 1)) Max pooling as a layer.
  (shape ((nn:max-pool2d 2) (zeros '(1 1 4 4))))  ; => (1 1 2 2)"
  (x) (max-pool2d x kernel-size :stride stride :padding padding :dilation dilation))

(defmodel nn:avg-pool2d (kernel-size &key stride (padding 0) (count-include-pad t))
  ()
  "(nn:avg-pool2d KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) Average pooling as a layer.
  (to-list ((nn:avg-pool2d 2) (reshape (arange 16.0) 1 1 4 4)))  ; => ((((2.5 4.5) (10.5 12.5))))"
  (x) (avg-pool2d x kernel-size :stride stride :padding padding :count-include-pad count-include-pad))

(defmodel nn:flatten (&rest args)
  ((start-end (%args-or-keys 'nn:flatten "[START END] or :start START :end END" args '(:start :end) '(1 -1))))
  "(nn:flatten [START END]) Flattens axes START..END (by default all but the batch axis); also
(nn:flatten :start START :end END).
  (shape ((nn:flatten) (zeros '(2 3 4))))  ; => (2 12)"
  (x) (flatten x :start (first start-end) :end (second start-end)))

(defmodel nn:relu () () "(nn:relu) ReLU as a layer.
  (to-list ((nn:relu) (tensor '(-1.0 1.0))))  ; => (0.0 1.0)" (x) (relu x))

;;; --- normalization ---------------------------------------------------------------------

(defmodel nn:batch-norm (features &key (eps 1e-5) (momentum 0.1) (affine t))
  ((weight (when affine (nn:%param (ones (list features)))))
   (bias (when affine (nn:%param (zeros (list features)))))
   (running-mean (realize (zeros (list features))))
   (running-var (realize (ones (list features))))
   (name (format nil "nn:batch-norm (~a)" features)))
  "(nn:batch-norm FEATURES &key (eps 1e-5) (momentum 0.1) (affine t)) Batch normalization of
(batch FEATURES ...) inputs over every axis but the features'. In training mode it uses the
batch's statistics and updates the running mean and (unbiased) variance with MOMENTUM; in
evaluation mode it uses the running statistics. As PyTorch's BatchNorm1d/2d/3d.
  (shape ((nn:batch-norm 3) (randn '(4 3 5 5))))  ; => (4 3 5 5)
  (let ((bn (nn:batch-norm 2)))
    (funcall bn (tensor '((4.0 8.0) (6.0 12.0))))
    (to-list (cdr (assoc \"running-mean\" (nn:state bn) :test #'equal))))  ; => (0.5 1.0)"
  (x)
  (unless (and (tensorp x) (>= (ndim x) 2) (dim= (second (shape x)) features))
    (error 'shape-error "~a: expected an input of shape (batch ~a ...), got ~s" name features
           (if (tensorp x) (shape x) x)))
  (if (training-p self)
      (batch-norm x :running-mean running-mean :running-var running-var :weight weight :bias bias
                    :training t :momentum momentum :eps eps)
      (batch-norm x :running-mean running-mean :running-var running-var :weight weight :bias bias
                    :eps eps)))

(defun nn:%norm-shape (shape)
  (if (integerp shape) (list shape) shape))

(defun nn:%check-trailing (layer x shp)
  (let ((s (and (tensorp x) (shape x))))
    (unless (and s (>= (length s) (length shp)) (%dims= (last s (length shp)) shp))
      (error 'shape-error "~a: expected an input of shape (... ~a), got ~s" layer
             (string-join (mapcar (lambda (d) (format nil "~a" d)) shp) " ") (if (tensorp x) s x)))))

(defmodel nn:layer-norm (shape &key (eps 1e-5) (elementwise-affine t) (bias t))
  ((shp (nn:%norm-shape shape))
   (weight (when elementwise-affine (nn:%param (ones shp))))
   (bias (when (and elementwise-affine bias) (nn:%param (zeros shp)))))
  "(nn:layer-norm SHAPE &key (eps 1e-5) (elementwise-affine t) (bias t)) Layer normalization
over the last axes (SHAPE, an integer or a list), with a learned scale and shift.
  (shape ((nn:layer-norm 4) (zeros '(2 4))))  ; => (2 4)"
  (x)
  (nn:%check-trailing "nn:layer-norm" x shp)
  (let* ((axes (loop for a from (- (ndim x) (length shp)) below (ndim x) collect a))
         (y (layer-norm x :axis axes :eps eps))
         (y (if weight (mul y weight) y)))
    (if bias (add y bias) y)))

(defmodel nn:rms-norm (shape &key (eps 1e-6) (elementwise-affine t))
  ((shp (nn:%norm-shape shape))
   (weight (when elementwise-affine (nn:%param (ones shp)))))
  "(nn:rms-norm SHAPE &key (eps 1e-6) (elementwise-affine t)) Root-mean-square normalization
over the last axes: x / sqrt(mean(x^2) + EPS), times a learned scale.
  (shape ((nn:rms-norm 4) (randn '(2 3 4))))  ; => (2 3 4)
  (to-list ((nn:rms-norm 2 :eps 0.0) (tensor '((2.0 -2.0)))))  ; => ((1.0 -1.0))"
  (x)
  (nn:%check-trailing "nn:rms-norm" x shp)
  (rms-norm x :axis (loop for a from (- (ndim x) (length shp)) below (ndim x) collect a)
              :weight weight :eps eps))

(defmodel nn:group-norm (groups channels &key (eps 1e-5) (affine t))
  ((weight (when affine (nn:%param (ones (list channels)))))
   (bias (when affine (nn:%param (zeros (list channels)))))
   (check (unless (and (integerp groups) (> groups 0) (= 0 (mod channels groups)))
            (error 'shape-error "nn:group-norm: ~a groups must divide ~a channels" groups channels))))
  "(nn:group-norm GROUPS CHANNELS &key (eps 1e-5) (affine t)) Group normalization of
(batch CHANNELS ...) inputs: each group of CHANNELS/GROUPS channels is normalized over its
channels and spatial axes, then scaled and shifted per channel.
  (shape ((nn:group-norm 2 4) (randn '(2 4 3 3))))  ; => (2 4 3 3)"
  (x)
  (unless (and (tensorp x) (>= (ndim x) 2) (dim= (second (shape x)) channels))
    (error 'shape-error "nn:group-norm (~a groups, ~a channels): expected an input of shape (batch ~a ...), got ~s"
           groups channels channels (if (tensorp x) (shape x) x)))
  (group-norm x groups :weight weight :bias bias :eps eps))

;;; --- embeddings and dropout ------------------------------------------------------------

(defmodel nn:embedding (count dim &key padding-idx)
  ((weight (nn:%param (if padding-idx
                          (where (reshape (equals (arange count) padding-idx) count 1) 0.0 (randn (list count dim)))
                          (randn (list count dim))))))
  "(nn:embedding COUNT DIM &key padding-idx) A table of COUNT vectors of length DIM (initialized
from N(0, 1)); called with integer indices of any shape it gives their vectors, shape
(... DIM). The PADDING-IDX row starts at zero and gets no gradient (its vector is still
returned for that index, as PyTorch's).
  (shape ((nn:embedding 10 4) (tensor '(1 2 3))))  ; => (3 4)"
  (indices)
  (unless (and (tensorp indices) (not (dtype-float-p (dtype indices))))
    (error 'type-error "nn:embedding (~a x ~a): expected a tensor of integer indices, got ~s" count dim
           (if (tensorp indices) (dtype indices) indices)))
  ;; The padding row reads as it is (zeros unless set) and gets no gradient, as in PyTorch;
  ;; masking the one-hot rows instead zeroed the output (issue 19).
  (let ((w (if padding-idx
               (where (reshape (equals (arange count) padding-idx) count 1) (detach weight) weight)
               weight))
        (ix (%index-tensor 'nn:embedding indices)))
    (%check-indices 'nn:embedding ix count nil)
    ;; An indexed load of the rows: it costs what copying them costs, and its gradient adds
    ;; each row's gradient into the table's row (a scatter-add).
    (reshape (%select-along w (reshape ix (list (numel ix))) 0) (append (shape ix) (list dim)))))

(defmodel nn:dropout (&optional (p 0.5))
  ((check (unless (and (numberp p) (<= 0 p) (< p 1))
            (error 'type-error "nn:dropout: the probability must be in [0, 1), got ~s" p))))
  "(nn:dropout [P]) In training mode, zeroes each element with probability P (default 0.5)
and scales the rest by 1/(1-P); in evaluation mode, the identity.
  (shape ((nn:dropout 0.5) (zeros '(2 3))))  ; => (2 3)"
  (x)
  (if (and (training-p self) (> p 0))
      (mul x (div (cast (ge (rand (shape x)) p) (dtype x)) (- 1 p)))
      x))

;;; --- recurrent cells -------------------------------------------------------------------

(defun nn:%cell-weight (rows hidden gates)
  ;; A weight (ROWS GATES*HIDDEN), or a bias (GATES*HIDDEN) when ROWS is nil, uniform in
  ;; +-1/sqrt(HIDDEN) as PyTorch initializes its recurrent layers. One field per tensor, so
  ;; that each is named after its field (weight-ih, not params.0).
  (let ((b (/ 1.0 (sqrt hidden))) (width (* gates hidden)))
    (nn:%param (uniform (if rows (list rows width) (list width)) :low (- b) :high b))))

(defun nn:%cell-input (layer x in)
  (nn:%check-last-axis layer x in)
  (unless (<= 1 (ndim x) 2)
    (error 'shape-error "~a: expected an input of shape (batch ~a) or (~a), got ~s" layer in in (shape x))))

(defun nn:%hidden-or-zeros (h x hidden)
  (or h (zeros (if (= (ndim x) 1) (list hidden) (list (first (shape x)) hidden)) :dtype (dtype x))))

(defun nn:%affine (x w b) (if b (add (matmul x w) b) (matmul x w)))

(defmodel nn:rnn-cell (in hidden &key (bias t) (nonlinearity :tanh))
  ((weight-ih (nn:%cell-weight in hidden 1)) (weight-hh (nn:%cell-weight hidden hidden 1))
   (bias-ih (when bias (nn:%cell-weight nil hidden 1))) (bias-hh (when bias (nn:%cell-weight nil hidden 1)))
   (name (format nil "nn:rnn-cell (~a -> ~a)" in hidden)))
  "(nn:rnn-cell IN HIDDEN &key (bias t) (nonlinearity :tanh)) An Elman RNN cell:
h' = act(x W_ih + b_ih + h W_hh + b_hh), act tanh or :relu. Called with X (batch IN) and an
optional H (batch HIDDEN), zeros by default; returns h'.
  (shape ((nn:rnn-cell 3 5) (zeros '(2 3))))  ; => (2 5)"
  (x &optional h)
  (nn:%cell-input name x in)
  (let* ((h (nn:%hidden-or-zeros h x hidden))
         (pre (add (nn:%affine x weight-ih bias-ih) (nn:%affine h weight-hh bias-hh))))
    (if (eq nonlinearity :relu) (relu pre) (tanh pre))))

(defmodel nn:gru-cell (in hidden &key (bias t))
  ((weight-ih (nn:%cell-weight in hidden 3)) (weight-hh (nn:%cell-weight hidden hidden 3))
   (bias-ih (when bias (nn:%cell-weight nil hidden 3))) (bias-hh (when bias (nn:%cell-weight nil hidden 3)))
   (name (format nil "nn:gru-cell (~a -> ~a)" in hidden)))
  "(nn:gru-cell IN HIDDEN &key (bias t)) A gated recurrent unit cell, gates (r z n) as in
PyTorch: r = sig(..), z = sig(..), n = tanh(x W_in + b_in + r (h W_hn + b_hn)),
h' = (1 - z) n + z h. Called with X and an optional H; returns h'.
  (shape ((nn:gru-cell 3 5) (zeros '(2 3))))  ; => (2 5)"
  (x &optional h)
  (nn:%cell-input name x in)
  (let* ((h (nn:%hidden-or-zeros h x hidden))
         (gi (chunk (nn:%affine x weight-ih bias-ih) 3 :axis -1))
         (gh (chunk (nn:%affine h weight-hh bias-hh) 3 :axis -1))
         (r (sigmoid (add (first gi) (first gh))))
         (z (sigmoid (add (second gi) (second gh))))
         (n (tanh (add (third gi) (mul r (third gh))))))
    (add (mul (sub 1 z) n) (mul z h))))

(defmodel nn:lstm-cell (in hidden &key (bias t))
  ((weight-ih (nn:%cell-weight in hidden 4)) (weight-hh (nn:%cell-weight hidden hidden 4))
   (bias-ih (when bias (nn:%cell-weight nil hidden 4))) (bias-hh (when bias (nn:%cell-weight nil hidden 4)))
   (name (format nil "nn:lstm-cell (~a -> ~a)" in hidden)))
  "(nn:lstm-cell IN HIDDEN &key (bias t)) A long short-term memory cell, gates (i f g o) as in
PyTorch: c' = f c + i g, h' = o tanh(c'). Called with X and an optional STATE, a list (H C)
(zeros by default); returns the list (h' c').
  (mapcar #'shape ((nn:lstm-cell 3 5) (zeros '(2 3))))  ; => ((2 5) (2 5))"
  (x &optional state)
  (nn:%cell-input name x in)
  (let* ((h (nn:%hidden-or-zeros (first state) x hidden))
         (c (nn:%hidden-or-zeros (second state) x hidden))
         (gates (chunk (add (nn:%affine x weight-ih bias-ih) (nn:%affine h weight-hh bias-hh)) 4 :axis -1))
         (i (sigmoid (first gates))) (f (sigmoid (second gates)))
         (g (tanh (third gates))) (o (sigmoid (fourth gates)))
         (c2 (add (mul f c) (mul i g))))
    (list (mul o (tanh c2)) c2)))

;;; --- recurrent layers over sequences ---------------------------------------------------

(defun nn:%steps (name x in batch-first)
  ;; X (seq batch IN), (batch seq IN) when BATCH-FIRST, or unbatched (seq IN), as the list
  ;; of its time steps, each (batch IN) or (IN).
  (unless (and (tensorp x) (<= 2 (ndim x) 3) (dim= (car (last (shape x))) in))
    (error 'shape-error "~a: expected an input of shape ~a or (seq ~a), got ~s" name
           (if batch-first (format nil "(batch seq ~a)" in) (format nil "(seq batch ~a)" in)) in
           (if (tensorp x) (shape x) x)))
  (let ((axis (if (and batch-first (= (ndim x) 3)) 1 0)))
    (loop for i from 0 below (nth axis (shape x))
          collect (if (= axis 1) (slice x t i) (slice x i)))))

;; The layer models below keep their cells in two fields: CELLS, the forward direction's cell
;; of each layer, and REVERSE-CELLS, the backward direction's (nil unless bidirectional),
;; so the parameters are named cells.L.weight-ih and reverse-cells.L.weight-ih.

(defun nn:%run-direction (cell steps state lstm)
  ;; CELL over STEPS from STATE: the list (OUTPUTS FINAL), OUTPUTS the h of every step.
  (let ((outs nil))
    (dolist (s steps)
      (setq state (funcall cell s state))
      (push (if lstm (first state) state) outs))
    (list (reverse outs) state)))

(defun nn:%run-recurrent (self cells reverse-cells x state batch-first lstm dropout)
  ;; CELLS (one per layer) over the time steps of X: each layer's outputs are the next one's
  ;; inputs (through dropout in training, but after the last). With REVERSE-CELLS (the
  ;; bidirectional case) each layer also runs its reverse cell from the last step to the
  ;; first, and its output at a step is the two directions' h joined on the feature axis.
  ;; STATE is nil (zeros), a tensor (layers*directions batch hidden), directions
  ;; innermost, or, for an LSTM, a list (H0 C0) of such. Returns (OUTPUT . FINAL) as
  ;; PyTorch: OUTPUT the last layer's output at every step, FINAL the last h of every layer
  ;; and direction, in the same order as STATE (for an LSTM, the list (H_N C_N)).
  (let* ((in (first (shape (cdr (assoc 'weight-ih (model-fields (car cells)))))))
         (steps (nn:%steps (model-name self) x in batch-first))
         (directions (if reverse-cells 2 1))
         (entries (* directions (length cells)))
         (entry-state (lambda (i) (if lstm
                                      (and state (list (slice (first state) i) (slice (second state) i)))
                                      (and state (slice state i)))))
         (finals nil))
    (when (null steps)
      (error 'shape-error "~a: the input has no time steps" (model-name self)))
    (dolist (s (if lstm state (and state (list state))))
      (unless (and (tensorp s) (= (ndim s) (ndim x)) (dim= (first (shape s)) entries))
        (error 'shape-error "~a: expected an initial state with ~a entries on its first axis (~a layers x ~a directions) and the input's rank, got ~s"
               (model-name self) entries (length cells) directions (if (tensorp s) (shape s) s))))
    (loop for cell in cells for l from 0
          do (when (and (> l 0) dropout (training-p self) (> dropout 0))
               (setq steps (mapcar (lambda (s) (mul s (div (cast (ge (rand (shape s)) dropout) (dtype s)) (- 1 dropout))))
                                   steps)))
             (let ((fwd (nn:%run-direction cell steps (funcall entry-state (* directions l)) lstm)))
               (push (second fwd) finals)
               (if (null reverse-cells)
                   (setq steps (first fwd))
                   (let ((bwd (nn:%run-direction (nth l reverse-cells) (reverse steps)
                                                 (funcall entry-state (+ (* 2 l) 1)) lstm)))
                     (push (second bwd) finals)
                     (setq steps (mapcar (lambda (f b) (cat (list f b) :axis -1))
                                         (first fwd) (reverse (first bwd))))))))
    (let ((finals (reverse finals)))
      (cons (stack steps :axis (if (and batch-first (= (ndim x) 3)) 1 0))
            (if lstm
                (list (stack (mapcar #'first finals)) (stack (mapcar #'second finals)))
                (stack finals))))))

(defun nn:%recurrent-cells (make in hidden layers bidirectional)
  ;; One cell per layer; above the first, a layer's input is the layer below's output, both
  ;; directions' when BIDIRECTIONAL.
  (loop for l from 0 below layers
        collect (funcall make (if (= l 0) in (if bidirectional (* 2 hidden) hidden)) hidden)))

(defmodel nn:rnn (in hidden &key (num-layers 1) (nonlinearity :tanh) (bias t) batch-first (dropout 0.0)
                     bidirectional)
  ((make (lambda (i h) (nn:rnn-cell i h :bias bias :nonlinearity nonlinearity)))
   (cells (nn:%recurrent-cells make in hidden num-layers bidirectional))
   (reverse-cells (when bidirectional (nn:%recurrent-cells make in hidden num-layers t))))
  "(nn:rnn IN HIDDEN &key (num-layers 1) (nonlinearity :tanh) (bias t) batch-first (dropout 0)
bidirectional) An Elman RNN over whole sequences, NUM-LAYERS nn:rnn-cells stacked, as
PyTorch's RNN. Called with X (seq batch IN), (batch seq IN) when BATCH-FIRST, or (seq IN),
and an optional H0 (num-layers*D batch HIDDEN), zeros by default; returns (OUTPUT . H_N):
OUTPUT the last layer's output at every step, (seq batch D*HIDDEN) (batch first when
BATCH-FIRST), H_N each layer's last state, (num-layers*D batch HIDDEN). D is 2 when
BIDIRECTIONAL, else 1: each layer then also runs a second cell (in the field
reverse-cells) from the last step to the first, its output at each step is the forward and
backward h joined on the feature axis, the layers above the first take 2*HIDDEN inputs,
and H0 and H_N hold layer 0 forward, layer 0 backward, layer 1 forward, ... DROPOUT
applies to the outputs of every layer but the last in training mode.
  (let ((r ((nn:rnn 3 5) (zeros '(7 2 3))))) (list (shape (car r)) (shape (cdr r))))  ; => ((7 2 5) (1 2 5))"
  (x &optional h0)
  (nn:%run-recurrent self cells reverse-cells x h0 batch-first nil dropout))

(defmodel nn:gru (in hidden &key (num-layers 1) (bias t) batch-first (dropout 0.0) bidirectional)
  ((make (lambda (i h) (nn:gru-cell i h :bias bias)))
   (cells (nn:%recurrent-cells make in hidden num-layers bidirectional))
   (reverse-cells (when bidirectional (nn:%recurrent-cells make in hidden num-layers t))))
  "(nn:gru IN HIDDEN &key (num-layers 1) (bias t) batch-first (dropout 0) bidirectional) A GRU
over whole sequences, NUM-LAYERS nn:gru-cells stacked, as PyTorch's GRU: called and
returning as nn:rnn (BIDIRECTIONAL too).
  (let ((r ((nn:gru 3 5 :bidirectional t) (zeros '(7 2 3)))))
    (list (shape (car r)) (shape (cdr r))))  ; => ((7 2 10) (2 2 5))"
  (x &optional h0)
  (nn:%run-recurrent self cells reverse-cells x h0 batch-first nil dropout))

(defmodel nn:lstm (in hidden &key (num-layers 1) (bias t) batch-first (dropout 0.0) bidirectional)
  ((make (lambda (i h) (nn:lstm-cell i h :bias bias)))
   (cells (nn:%recurrent-cells make in hidden num-layers bidirectional))
   (reverse-cells (when bidirectional (nn:%recurrent-cells make in hidden num-layers t))))
  "(nn:lstm IN HIDDEN &key (num-layers 1) (bias t) batch-first (dropout 0) bidirectional) An
LSTM over whole sequences, NUM-LAYERS nn:lstm-cells stacked, as PyTorch's LSTM. Called with
X as nn:rnn and an optional STATE, a list (H0 C0) of (num-layers*D batch HIDDEN) tensors;
returns (OUTPUT . (H_N C_N)), OUTPUT (seq batch D*HIDDEN). BIDIRECTIONAL as for nn:rnn.
  (let ((r ((nn:lstm 3 5 :num-layers 2) (zeros '(7 2 3)))))
    (list (shape (car r)) (mapcar #'shape (cdr r))))  ; => ((7 2 5) ((2 2 5) (2 2 5)))"
  (x &optional state)
  (nn:%run-recurrent self cells reverse-cells x state batch-first t dropout))

;;; --- attention -------------------------------------------------------------------------

(defun nn:attention (q k v &key causal mask)
  "(nn:attention Q K V &key causal mask) Scaled dot-product attention over the last two axes:
softmax(Q K^T / sqrt(d) + MASK) V. CAUSAL hides later positions; MASK is a boolean tensor
(true where attention is allowed) or an additive float tensor, broadcast to the scores.
  (shape (nn:attention (randn '(2 5 8)) (randn '(2 7 8)) (randn '(2 7 4))))  ; => (2 5 4)
  (let ((v (tensor '((1.0 2.0) (3.0 4.0)))))
    (to-list (nn:attention (zeros '(2 2)) (randn '(2 2)) v :causal t)))  ; => ((1.0 2.0) (2.0 3.0))"
  (let* ((d (car (last (shape q))))
         (scores (mul (matmul q (transpose k)) (/ 1.0 (sqrt d))))
         (lq (nth (- (ndim scores) 2) (shape scores))) (lk (car (last (shape scores)))))
    (when causal
      (setq scores (where (tril (ones (list lq lk) :dtype 'bool) (- lk lq)) scores (- inf))))
    (when mask
      (setq scores (if (eq (dtype mask) 'bool) (where mask scores (- inf)) (add scores mask))))
    (matmul (softmax scores :axis -1) v)))

(defmodel nn:multihead-attention (embed heads &key (bias t))
  ((check (unless (and (integerp heads) (> heads 0) (= 0 (mod embed heads)))
            (error 'shape-error "nn:multihead-attention: ~a heads must divide the embedding size ~a" heads embed)))
   (bound (sqrt (/ 6.0 (+ embed (* 3 embed)))))
   (in-weight (nn:%param (uniform (list embed (* 3 embed)) :low (- bound) :high bound)))
   (in-bias (when bias (nn:%param (zeros (list (* 3 embed))))))
   (out-weight (nn:%param (uniform (list embed embed) :low (- (/ 1.0 (sqrt embed))) :high (/ 1.0 (sqrt embed)))))
   (out-bias (when bias (nn:%param (zeros (list embed)))))
   (name (format nil "nn:multihead-attention (~a, ~a heads)" embed heads)))
  "(nn:multihead-attention EMBED HEADS &key (bias t)) Multi-head attention as PyTorch's
MultiheadAttention (batch first, projections initialized alike). Called with QUERY
(batch lq EMBED) and optional KEY and VALUE (batch lk EMBED; default QUERY, i.e. self-
attention), and :causal t or :mask (see nn:attention, per head or broadcast), which may
follow QUERY alone: (m x :causal t); returns (batch lq EMBED).
  (shape ((nn:multihead-attention 8 2) (zeros '(2 5 8)) :causal t))  ; => (2 5 8)"
  (query &rest args)
  ;; KEY and VALUE are optional and :causal and :mask keywords may follow the query alone
  ;; (&optional before &key would bind (m x :causal t)'s :causal to KEY; issue 19).
  (let* ((given (loop while (and args (not (keywordp (car args)))) collect (pop args)))
         (causal (getf args :causal)) (mask (getf args :mask))
         (key (or (first given) query)) (value (or (second given) key)))
    (when (or (> (length given) 2) (oddp (length args))
              (set-difference (loop for k in args by #'cddr collect k) '(:causal :mask)))
      (error 'type-error "~a: expected (QUERY [KEY [VALUE]] &key causal mask), got ~s" name (cons 'query (append given args))))
    (dolist (x (list query key value))
      (unless (and (tensorp x) (= (ndim x) 3) (dim= (third (shape x)) embed))
        (error 'shape-error "~a: expected inputs of shape (batch seq ~a), got ~s" name embed (if (tensorp x) (shape x) x))))
    (let* ((w (chunk in-weight 3 :axis 1))
           (b (if in-bias (chunk in-bias 3) (list nil nil nil)))
           (hd (/ embed heads)))
      (flet ((heads-of (x w b)
               (let ((p (nn:%affine x w b)) (s (shape x)))
                 ;; (batch seq embed) -> (batch heads seq hd)
                 (permute (reshape p (first s) (second s) heads hd) 0 2 1 3))))
        (let* ((o (nn:attention (heads-of query (first w) (first b))
                                (heads-of key (second w) (second b))
                                (heads-of value (third w) (third b))
                                :causal causal :mask mask))
               (s (shape query))
               (o (reshape (permute o 0 2 1 3) (first s) (second s) embed)))
          (nn:%affine o out-weight out-bias))))))

;;; --- losses ----------------------------------------------------------------------------

(defun nn:mse (prediction target)
  "(nn:mse PREDICTION TARGET) The mean squared error.
  (item (nn:mse (tensor '(1.0 2.0)) (tensor '(1.0 4.0))))  ; => 2.0"
  (mean (square (sub prediction target))))

(defun nn:l1 (prediction target)
  "(nn:l1 PREDICTION TARGET) The mean absolute error.
  (item (nn:l1 (tensor '(1.0 2.0)) (tensor '(1.0 4.0))))  ; => 1.0"
  (mean (abs (sub prediction target))))

(defun nn:%classes-last (fn x targets)
  ;; X (batch C d...) or (C) as (... C), the class axis last, checked against integer
  ;; TARGETS of shape (batch d...) or (), or float targets of X's shape (probabilities).
  (unless (and (tensorp x) (>= (ndim x) 1))
    (error 'shape-error "~a: expected logits of shape (batch classes ...) or (classes), got ~s" fn
           (if (tensorp x) (shape x) x)))
  (let* ((s (shape x))
         (want (if (= (length s) 1) nil (cons (first s) (cddr s))))
         (ts (and (tensorp targets) (shape targets))))
    (unless (and (tensorp targets)
                 (if (dtype-float-p (dtype targets)) (%dims= ts s) (%dims= ts want)))
      (error 'shape-error "~a: targets of shape ~s for logits of shape ~s (expected class indices of shape ~s, or probabilities of the logits' shape)"
             fn (if (tensorp targets) ts targets) s want))
    (if (= (length s) 1) x (permute x (append '(0) (loop for a from 2 below (length s) collect a) '(1))))))

(defun nn:%class-loss (fn logp targets weight ignore-index smoothing reduction)
  ;; The (weighted, smoothed) negative log-likelihood of TARGETS under LOGP (... C), as
  ;; PyTorch's nll_loss and cross_entropy: per element
  ;;   (1 - e) w[y] (-logp[y]) + e/C sum_c w[c] (-logp[c]),  0 where y is IGNORE-INDEX,
  ;; and the :mean of those is their sum over the sum of w[y] of the elements not ignored.
  (let* ((classes (car (last (shape logp))))
         (w (and weight (cast weight (dtype logp))))
         (e (or smoothing 0.0))
         (wlogp (if w (mul logp w) logp)))
    (when (and w (not (equal (shape w) (list classes))))
      (error 'shape-error "~a: a class weight of shape ~s for ~a classes" fn (shape w) classes))
    (if (dtype-float-p (dtype targets))
        ;; Probabilities: no per-element weight to average by; the mean is over elements.
        (let* ((p (if (> e 0) (add (mul (cast targets (dtype logp)) (- 1.0 e)) (/ e classes)) targets))
               (l (neg (sum (mul wlogp p) :axis -1))))
          (when ignore-index
            (error 'type-error "~a: :ignore-index needs class indices, not probabilities" fn))
          (nn:%reduce-loss fn l reduction))
        (let* ((ignored (if ignore-index (equals targets ignore-index) (zeros-like targets :dtype 'bool)))
               (hot (one-hot (where ignored 0 targets) classes :dtype (dtype logp)))
               (picked (neg (sum (mul wlogp hot) :axis -1)))
               (l (if (> e 0)
                      (add (mul picked (- 1.0 e)) (mul (neg (sum wlogp :axis -1)) (/ e classes)))
                      picked))
               (l (where ignored 0.0 l)))
          (if (eq reduction :mean)
              (div (sum l) (sum (where ignored 0.0 (if w (sum (mul hot w) :axis -1) 1.0))))
              (nn:%reduce-loss fn l reduction))))))

(defun nn:cross-entropy (logits targets &key weight ignore-index (label-smoothing 0.0) (reduction :mean))
  "(nn:cross-entropy LOGITS TARGETS &key weight ignore-index (label-smoothing 0) (reduction :mean))
The cross-entropy of LOGITS (batch C d...), or (C), against integer class TARGETS
(batch d...), or (), as PyTorch's CrossEntropyLoss: WEIGHT (shape (C)) weighs each class,
and :mean is then the weighted mean (divided by the summed weights of the targets);
targets equal to IGNORE-INDEX count for nothing; LABEL-SMOOTHING e mixes the one-hot
target with the uniform distribution (e/C each). TARGETS may also be class probabilities
of LOGITS' shape (a float tensor). REDUCTION is :mean, :sum or :none (the loss per element,
shape (batch d...)).
  (item (nn:cross-entropy (tensor '((0.0 0.0))) (tensor '(1))))"
  (let ((x (nn:%classes-last 'nn:cross-entropy logits targets)))
    (nn:%class-loss 'nn:cross-entropy (log-softmax x :axis -1) targets weight ignore-index label-smoothing reduction)))

(defun nn:nll (log-probs targets &key weight ignore-index (reduction :mean))
  "(nn:nll LOG-PROBS TARGETS &key weight ignore-index (reduction :mean)) The negative
log-likelihood of integer class TARGETS (batch d...) under LOG-PROBS (batch C d...), as
PyTorch's NLLLoss (WEIGHT, IGNORE-INDEX and REDUCTION as in nn:cross-entropy).
  (item (nn:nll (tensor '((-1.0 -2.0) (-3.0 -0.5))) (tensor '(0 1))))  ; => 0.75"
  (let ((x (nn:%classes-last 'nn:nll log-probs targets)))
    (nn:%class-loss 'nn:nll x targets weight ignore-index 0.0 reduction)))

(defun nn:smooth-l1-loss (prediction target &key (beta 1.0) (reduction :mean))
  "(nn:smooth-l1-loss PREDICTION TARGET &key (beta 1) (reduction :mean)) As PyTorch's
SmoothL1Loss: with d = PREDICTION - TARGET, 0.5 d^2 / BETA where |d| < BETA, else
|d| - 0.5 BETA (BETA 0 gives the L1 loss).
  (item (nn:smooth-l1-loss (tensor '(0.0 0.0)) (tensor '(0.5 3.0)) :beta 2.0))  ; => 1.03125"
  (nn:%check-same-shape 'nn:smooth-l1-loss prediction target)
  (let* ((d (sub prediction target)) (a (abs d)))
    (nn:%reduce-loss 'nn:smooth-l1-loss
                     (if (<= beta 0) a (where (lt a beta) (div (mul (mul d d) 0.5) beta) (sub a (* 0.5 beta))))
                     reduction)))

(defun nn:huber-loss (prediction target &key (delta 1.0) (reduction :mean))
  "(nn:huber-loss PREDICTION TARGET &key (delta 1) (reduction :mean)) As PyTorch's HuberLoss:
with d = PREDICTION - TARGET, 0.5 d^2 where |d| < DELTA, else DELTA (|d| - 0.5 DELTA);
DELTA times the smooth L1 loss with beta DELTA.
  (item (nn:huber-loss (tensor '(0.0 0.0)) (tensor '(0.5 3.0))))  ; => 1.3125"
  (nn:%check-same-shape 'nn:huber-loss prediction target)
  (let* ((d (sub prediction target)) (a (abs d)))
    (nn:%reduce-loss 'nn:huber-loss
                     (where (lt a delta) (mul (mul d d) 0.5) (mul (sub a (* 0.5 delta)) delta))
                     reduction)))

;;; --- losses (continued) -------------------------------------------------------------

(defun nn:%check-same-shape (fn a b)
  (unless (and (tensorp a) (%dims= (shape a) (shape (%as-tensor b))))
    (error 'shape-error "~a: prediction of shape ~s and target of shape ~s differ" fn
           (if (tensorp a) (shape a) a) (shape (%as-tensor b)))))

(defun nn:%reduce-loss (fn l reduction)
  (case reduction
    (:mean (mean l))
    (:sum (sum l))
    (:none l)
    (t (error 'type-error "~a: reduction must be :mean, :sum or :none, got ~s" fn reduction))))

(defun nn:binary-cross-entropy (probs targets &key weight (reduction :mean))
  "(nn:binary-cross-entropy PROBS TARGETS &key weight (reduction :mean)) The binary
cross-entropy of probabilities PROBS against TARGETS in [0, 1], each log clamped at -100 as
PyTorch's BCELoss does; WEIGHT scales each element.
  (format nil \"~,4f\" (item (nn:binary-cross-entropy (tensor '(0.5 0.5)) (tensor '(1.0 0.0)))))  ; => \"0.6931\""
  (nn:%check-same-shape 'nn:binary-cross-entropy probs targets)
  ;; The gradient is PyTorch's, (p - t) / max(p (1 - p), 1e-12): finite at p = 0 and 1,
  ;; where differentiating the clamped logs gives 0 * inf = NaN (issue 19).
  (let* ((p (%float-tensor probs))
         (tg (%as-tensor targets (tensor-dtype p)))
         (l (with-custom-grad ((p p) (tg tg))
                (nn:%bce-terms p tg)
              (g) (let ((lp (maximum (log p) -100.0)) (lq (maximum (log (sub 1 p)) -100.0)))
                    (list (mul g (div (sub p tg) (maximum (mul p (sub 1 p)) 1e-12)))
                          (mul g (sub lq lp)))))))
    (nn:%reduce-loss 'nn:binary-cross-entropy (if weight (mul l weight) l) reduction)))

(defun nn:%bce-terms (p tg)
  (let ((lp (maximum (log p) -100.0)) (lq (maximum (log (sub 1 p)) -100.0)))
    (neg (add (mul tg lp) (mul (sub 1 tg) lq)))))

(defun nn:binary-cross-entropy-with-logits (logits targets &key (reduction :mean))
  "(nn:binary-cross-entropy-with-logits LOGITS TARGETS &key (reduction :mean)) Binary
cross-entropy of sigmoid(LOGITS) against TARGETS, computed stably:
max(x, 0) - x t + log1p(exp(-|x|)).
  (let ((loss (nn:binary-cross-entropy-with-logits (tensor '(0.0 0.0)) (tensor '(1.0 0.0)))))
    (format nil \"~,4f\" (item loss)))  ; => \"0.6931\""
  (nn:%check-same-shape 'nn:binary-cross-entropy-with-logits logits targets)
  (nn:%reduce-loss 'nn:binary-cross-entropy-with-logits
                   (let ((x (%float-tensor logits)))
                     ;; where(x < 0, 0, x) and -|x| both take the x >= 0 branch at 0, so the
                     ;; gradient there is sigmoid(0) - t (relu and abs would give -t).
                     (add (sub (where (lt x 0) 0 x) (mul x targets)) (log1p (exp (%neg-abs x)))))
                   reduction))

(defun nn:kl-div (log-probs targets &key (reduction :mean) log-target)
  "(nn:kl-div LOG-PROBS TARGETS &key (reduction :mean) log-target) The Kullback-Leibler
divergence of TARGETS (probabilities, or log-probabilities with :log-target t) from the
distribution whose log-probabilities are LOG-PROBS, pointwise t (log t - x) (0 where t = 0),
as PyTorch's KLDivLoss. REDUCTION is :mean (over elements), :batchmean (sum / batch size),
:sum or :none.
  (item (nn:kl-div (log (tensor '(0.5 0.5))) (tensor '(0.5 0.5))))  ; => 0.0"
  (nn:%check-same-shape 'nn:kl-div log-probs targets)
  (let ((l (if log-target
               (mul (exp targets) (sub targets log-probs))
               (where (gt targets 0) (mul targets (sub (log (maximum targets 1e-38)) log-probs)) 0.0))))
    (if (eq reduction :batchmean)
        (div (sum l) (first (shape log-probs)))
        (nn:%reduce-loss 'nn:kl-div l reduction))))

;;; --- evaluation ------------------------------------------------------------------------

(defun nn:accuracy (model x y &key (batch-size 1000))
  "(nn:accuracy MODEL X Y &key (batch-size 1000)) The fraction of the rows of X whose largest
output of MODEL is at the class in Y, computed in evaluation mode and batches of BATCH-SIZE;
MODEL's mode is restored.
  (let ((x (tensor '((1.0 0.0) (0.0 1.0) (3.0 2.0) (0.0 5.0)))))
    (nn:accuracy (nn:sequential) x (tensor '(0 1 1 1))))  ; => 0.75"
  (let ((was (training-p model)) (right 0))
    (eval! model)
    (unwind-protect
         (no-grad
           (dolist (rows (data:batch-indices (first (shape x)) batch-size))
             (let ((xb (take-rows x rows)) (yb (take-rows y rows)))
               (setq right (+ right (item (sum (cast (equals (argmax (funcall model xb) :axis 1) yb) 'i32))))))))
      (when was (train! model)))
    (/ right (float (first (shape y))))))

(defun nn:check-loss (loss step &optional (what "the loss"))
  "(nn:check-loss LOSS STEP [WHAT]) LOSS as a number; an arithmetic-error naming STEP when it
is NaN or infinite, so a diverging run stops where it diverged.
  (nn:check-loss (tensor 0.25) 1)  ; => 0.25
  (handler-case (nn:check-loss (/ 0.0 0.0) 7) (arithmetic-error () :diverged))  ; => :diverged"
  (let ((l (if (tensorp loss) (item loss) loss)))
    (when (or (/= l l) (= l inf) (= l (- inf)))
      (error 'arithmetic-error "~a became ~a at step ~a" what l step))
    l))

;;; --- a training loop ----------------------------------------------------------------------

(defun nn:fit (model opt x y &key (epochs 1) (batch-size 128) (seed 0) (loss #'nn:cross-entropy)
                               test-x test-y checkpoint plot)
  "(nn:fit MODEL OPT X Y &key (epochs 1) (batch-size 128) (seed 0) (loss #'nn:cross-entropy)
test-x test-y checkpoint plot) Trains MODEL on the rows of X with targets Y: EPOCHS passes in
shuffled batches (the order depends on SEED and the epoch), each step LOSS of (MODEL XB) and
YB, backward, and a step of optimizer OPT, captured with jit so its kernels replay. Prints a
progress bar (loss, rows per second) and after each epoch its time and, given TEST-X and
TEST-Y, the test accuracy; a NaN loss stops it with the step number. Saves MODEL and OPT to
the CHECKPOINT file at the end when given. With PLOT, a file name such as \"train.svg\", draws
the loss curve there (and the test accuracy in train-accuracy.svg) after each epoch, with
plot:history. Returns the last epoch's test accuracy (or nil).
  (let* ((x (randn '(16 4))) (y (cast (gt (sum x :axis 1) 0) 'i32)) (m (nn:linear 4 2))
         (before (item (nn:cross-entropy (funcall m x) y))))
    (with-output-to-string (*standard-output*) (nn:fit m (optim:sgd (parameters m) :lr 0.5) x y :batch-size 8))
    (< (item (nn:cross-entropy (funcall m x) y)) before))  ; => t"
  (let* ((train-step (jit (lambda (xb yb)
                            (let ((l (funcall loss (funcall model xb) yb)))
                              (optim:zero-grad! opt)
                              (step! opt (backward l))))))
         (n (first (shape x))) (step 0) (accuracy nil) (losses nil) (accuracies nil))
    (when plot (require 'plot))
    (train! model)
    (dotimes (epoch epochs)
      (let ((start (/ (get-internal-real-time) 1e9)) (done 0) (l nil))
        (data:do-batches (xb yb x y :size batch-size :shuffle t :seed (+ (* 1000 seed) epoch))
          (setq l (funcall train-step xb yb))
          (setq done (+ done (first (shape xb))) step (+ step 1))
          (when (or (= 0 (mod step 50)) (= done n))
            (let ((value (nn:check-loss l step)))
              (push (list step value) losses)
              (data:progress (format nil "epoch ~a" (+ epoch 1)) done n start (format nil "loss ~,4f" value)))))
        (let ((seconds (- (/ (get-internal-real-time) 1e9) start)))
          (if test-x
              (progn
                (setq accuracy (* 100 (nn:accuracy model test-x test-y)))
                (push (list (+ epoch 1) accuracy) accuracies)
                (format t "epoch ~a: ~,1f s, test accuracy ~,2f%~%" (+ epoch 1) seconds accuracy))
              (format t "epoch ~a: ~,1f s~%" (+ epoch 1) seconds))
          (when plot
            (plot:history plot (list :loss (reverse losses) :test-accuracy (reverse accuracies)))))))
    (when checkpoint
      (nn:save model checkpoint :optimizer opt)
      (format t "saved ~a~%" checkpoint))
    accuracy))

;;; --- checkpoints -----------------------------------------------------------------------

(defun nn:state (model)
  "(nn:state MODEL) MODEL's named tensors: its parameters and its buffers (tensors it keeps
without gradients, such as batch-norm's running statistics), as an alist of dotted names.
  (mapcar #'car (nn:state (nn:batch-norm 2)))  ; => (\"weight\" \"bias\" \"running-mean\" \"running-var\")"
  (named-tensors model))

(defun nn:save (model file &key optimizer)
  "(nn:save MODEL FILE &key optimizer) Saves MODEL's parameters and buffers, and OPTIMIZER's
state when given, to the safetensors FILE.
  (let ((m (nn:linear 2 3)) (file \"/tmp/tl-doc-nn-save.safetensors\"))
    (nn:save m file :optimizer (optim:sgd (parameters m)))
    (mapcar #'car (load-safetensors file)))  ; => (\"weight\" \"bias\" \"optim.step\" \"optim.lr\")"
  (save-safetensors (append (nn:state model) (when optimizer (optim:state optimizer model)))
                    file))

(defun nn:load (model file &key optimizer)
  "(nn:load MODEL FILE &key optimizer) Loads MODEL's parameters and buffers (and OPTIMIZER's
state) from FILE, saved by nn:save. Names or shapes that do not match are reported together.
  (let ((a (nn:linear 2 3)) (b (nn:linear 2 3)))
    (nn:save a \"/tmp/tl-doc-nn-load.safetensors\")
    (nn:load b \"/tmp/tl-doc-nn-load.safetensors\")
    (equal (mapcar (lambda (p) (to-list (cdr p))) (nn:state a))
           (mapcar (lambda (p) (to-list (cdr p))) (nn:state b))))  ; => t
  (handler-case (nn:load (nn:linear 2 4) \"/tmp/tl-doc-nn-load.safetensors\")
    (file-error () :mismatch))  ; => :mismatch"
  (let* ((saved (load-safetensors file))
         (problems nil)
         (wanted (append (nn:state model)
                         (when optimizer (optim:state optimizer model)))))
    (dolist (p wanted)
      (let ((v (cdr (assoc (car p) saved :test #'equal))))
        (cond ((null v) (push (format nil "~a is missing" (car p)) problems))
              ((not (equal (shape v) (shape (cdr p))))
               (push (format nil "~a is ~s in the file but ~s in the model" (car p) (shape v) (shape (cdr p))) problems)))))
    (dolist (s saved)
      (unless (assoc (car s) wanted :test #'equal)
        (push (format nil "~a is in the file but not in the model" (car s)) problems)))
    (when problems
      (error 'file-error "nn:load: ~a does not match ~a: ~a" file (model-name model)
             (string-join (reverse problems) "; ")))
    (no-grad
      (realize-all (mapcar (lambda (p) (prim:assign (cdr p) (cast (cdr (assoc (car p) saved :test #'equal)) (dtype (cdr p)))))
                           wanted)))
    (when optimizer (optim:%loaded optimizer saved))
    model))

(provide 'nn)
