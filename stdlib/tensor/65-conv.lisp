;;; SPDX-License-Identifier: Apache-2.0
;;; Convolutions and pooling, as windowed views: a window view is a few movement ops (no
;;; copy), so a convolution is a matmul-shaped sum over it and a pool is a reduce over it.

(defun %mapcat (fn &rest lists)
  ;; The lists FN returns for the elements of LISTS (in step), appended.
  (apply #'append (apply #'mapcar fn lists)))

(defun %tuple (fn name v n)
  ;; V as a list of N non-negative integers (an integer stands for N copies).
  (let ((l (if (integerp v) (make-list n v) v)))
    (unless (and (listp l) (= (length l) n) (every #'integerp l))
      (error 'type-error "~a: ~a must be an integer or a list of ~a integers, got ~s" fn name n v))
    l))

(defun %window-out (fn i k s d)
  ;; The number of windows of size K (dilation D) at stride S along an axis of I elements.
  (let ((span (+ (* d (- k 1)) 1)))
    (when (> span i)
      (error 'shape-error "~a: a window of ~a (kernel ~a, dilation ~a) does not fit in ~a elements" fn span k d i))
    (+ (floor (- i span) s) 1)))

(defun %set-axis-length (x axis len)
  ;; X shrunk or zero-padded at the end of AXIS to LEN elements.
  (let ((n (nth axis (tensor-shape x))))
    (cond ((< len n) (%shrink-axis x axis 0 len))
          ((> len n) (%pad-axis x axis 0 (- len n)))
          (t x))))

(defun %windows (fn x kernel stride dilation)
  "X's windows (see %window-view). Their gradient is a sum over the kernel's offsets of the
gradient's slices placed back where they were read from (col2im): one elementwise kernel
with a load per offset, where differentiating the view would sum over its repeats."
  (if (or (> (apply #'* kernel) 32)
          ;; Windows that do not overlap are a view each element appears in at most once:
          ;; differentiating it is already one load per element.
          (every #'identity (mapcar (lambda (k s d) (and (<= k s) (= d 1))) kernel stride dilation)))
      (%window-view fn x kernel stride dilation)
      (with-custom-grad ((x x))
          (%window-view fn x kernel stride dilation)
        (g) (list (%windows-grad g (tensor-shape x) kernel stride dilation)))))

(defun %place-axis (v axis o s offset len)
  ;; V's AXIS (O elements) spread S apart and moved OFFSET on, in an axis of LEN zeros.
  (when (> s 1)
    (let ((shp (tensor-shape v)))
      (setq v (prim:reshape v (append (subseq shp 0 (+ axis 1)) '(1) (subseq shp (+ axis 1)))))
      (setq v (%pad-axis v (+ axis 1) 0 (- s 1)))
      (setq v (prim:reshape v (append (subseq shp 0 axis) (list (* o s)) (subseq shp (+ axis 1)))))))
  (let* ((l (if (> s 1) (* o s) o))
         (after (- len offset l)))
    (when (< after 0)
      (setq v (%shrink-axis v axis 0 (+ l after)))
      (setq after 0))
    (%pad-axis v axis offset after)))

(defun %windows-grad (g in-shape kernel stride dilation)
  ;; The gradient of X from the gradient G of its windows (LEADING... OUT... KERNEL...).
  (let* ((n (length kernel))
         (gs (tensor-shape g))
         (nl (- (length gs) (* 2 n)))
         (out (subseq gs nl (+ nl n)))
         (offsets (list nil))
         (acc nil))
    ;; Every kernel offset (k1 ... kn).
    (dolist (k (reverse kernel))
      (setq offsets (apply #'append (mapcar (lambda (rest) (mapcar (lambda (i) (cons i rest)) (iota k))) offsets))))
    (dolist (ks offsets acc)
      (let ((v (prim:reshape (prim:shrink g (append (mapcar (lambda (d) (list 0 d)) (subseq gs 0 (+ nl n)))
                                                    (mapcar (lambda (k) (list k (+ k 1))) ks)))
                             (subseq gs 0 (+ nl n)))))
        (loop for j from 0 below n
              do (setq v (%place-axis v (+ nl j) (nth j out) (nth j stride) (* (nth j ks) (nth j dilation))
                                      (nth (+ nl j) in-shape))))
        (setq acc (if acc (prim:add acc v) v))))))

(defun %window-view (fn x kernel stride dilation)
  "The windows of X's last (length KERNEL) axes as a view of shape
(LEADING... OUT... KERNEL...), OUT being the number of windows per axis: element
(..., o1.., k1..) is X[..., o1*s1 + k1*d1, ...]. Built from expand, reshape, shrink and pad,
whose index arithmetic folds back to a linear form."
  (let* ((n (length kernel))
         (shp (tensor-shape x))
         (lead (subseq shp 0 (- (length shp) n)))
         (nl (length lead))
         (in (subseq shp nl))
         (out (mapcar (lambda (i k s d) (%window-out fn i k s d)) in kernel stride dilation)))
    (dolist (i in)
      (unless (integerp i) (error 'shape-error "~a: spatial dimensions must be integers, got ~s" fn shp)))
    (if (every #'identity (mapcar (lambda (k s d) (and (<= k s) (= d 1))) kernel stride dilation))
        ;; Windows that do not overlap: each axis splits into (OUT STRIDE), keeping KERNEL.
        (let ((v x))
          (loop for j from 0 below n
                do (setq v (%set-axis-length v (+ nl j) (* (nth j out) (nth j stride)))))
          (setq v (prim:reshape v (append lead (%mapcat (lambda (o s) (list o s)) out stride))))
          (setq v (prim:shrink v (append (mapcar (lambda (d) (list 0 d)) lead)
                                         (%mapcat (lambda (o k) (list (list 0 o) (list 0 k))) out kernel))))
          (prim:permute v (append (loop for a from 0 below nl collect a)
                                  (loop for j from 0 below n collect (+ nl (* 2 j)))
                                  (loop for j from 0 below n collect (+ nl (* 2 j) 1)))))
        ;; Overlapping windows: repeat each axis E times and read it back with a row length
        ;; of I + D, so row K starts K * D elements further on; then take every S-th element.
        (let* ((reps (mapcar (lambda (i k d) (ceiling (* k (+ i d)) i)) in kernel dilation))
               (v (prim:reshape x (append lead (%mapcat (lambda (i) (list 1 i)) in)))))
          (setq v (prim:expand v (append lead (%mapcat (lambda (e i) (list e i)) reps in))))
          (setq v (prim:reshape v (append lead (mapcar #'* reps in))))
          (setq v (prim:shrink v (append (mapcar (lambda (d) (list 0 d)) lead)
                                         (mapcar (lambda (k i d) (list 0 (* k (+ i d)))) kernel in dilation))))
          (setq v (prim:reshape v (append lead (%mapcat (lambda (k i d) (list k (+ i d))) kernel in dilation))))
          (loop for j from 0 below n
                do (setq v (%set-axis-length v (+ nl (* 2 j) 1) (* (nth j out) (nth j stride)))))
          (setq v (prim:reshape v (append lead (%mapcat (lambda (k o s) (list k o s)) kernel out stride))))
          (setq v (prim:shrink v (append (mapcar (lambda (d) (list 0 d)) lead)
                                         (%mapcat (lambda (k o) (list (list 0 k) (list 0 o) (list 0 1))) kernel out))))
          (setq v (prim:reshape v (append lead (%mapcat (lambda (k o) (list k o)) kernel out))))
          (prim:permute v (append (loop for a from 0 below nl collect a)
                                  (loop for j from 0 below n collect (+ nl (* 2 j) 1))
                                  (loop for j from 0 below n collect (+ nl (* 2 j)))))))))

(defun %spatial-pads (fn padding n)
  ;; PADDING (an integer, a list of N integers, or a list of N (before after) pairs) as pairs.
  (cond ((integerp padding) (make-list n (list padding padding)))
        ((and (listp padding) (= (length padding) n) (every #'integerp padding))
         (mapcar (lambda (p) (list p p)) padding))
        ((and (listp padding) (= (length padding) n)
              (every (lambda (p) (and (consp p) (= (length p) 2) (every #'integerp p))) padding))
         padding)
        (t (error 'type-error "~a: padding must be an integer, ~a integers or ~a (before after) pairs, got ~s"
                  fn n n padding))))

(defun %spatial-names (n)
  (nth (- n 1) '("length" "height width" "depth height width")))

(defun %conv (fn n x w bias stride padding dilation groups)
  ;; The N-d convolution (cross-correlation, as in PyTorch) of X (batch channels spatial...)
  ;; with W (out-channels channels/groups kernel...).
  (let* ((x (%float-tensor x))
         (w (%as-tensor w (tensor-dtype x))))
    (unless (= (ndim x) (+ n 2))
      (error 'shape-error "~a: expected an input of shape (batch channels ~a), got ~s" fn
             (%spatial-names n) (tensor-shape x)))
    (unless (= (ndim w) (+ n 2))
      (error 'shape-error "~a: expected a weight of shape (out-channels in-channels/groups ~a), got ~s" fn
             (nth (- n 1) '("k" "kh kw" "kd kh kw")) (tensor-shape w)))
    (let* ((xs (tensor-shape x)) (ws (tensor-shape w))
           (batch (first xs)) (c (second xs)) (oc (first ws)) (cg (second ws))
           (kernel (subseq ws 2))
           (stride (%tuple fn "stride" stride n))
           (dilation (%tuple fn "dilation" dilation n))
           (pads (%spatial-pads fn padding n)))
      (unless (and (integerp groups) (> groups 0) (integerp c) (= (mod c groups) 0) (= (mod oc groups) 0))
        (error 'shape-error "~a: ~a groups must divide both the ~a input and ~a output channels" fn groups c oc))
      (unless (= (* cg groups) c)
        (error 'shape-error "~a: input of shape ~s has ~a channels, but the weight of shape ~s expects ~a (~a per group, ~a groups)"
               fn xs c ws (* cg groups) cg groups))
      (when (some (lambda (v) (<= v 0)) (append stride dilation))
        (error 'shape-error "~a: stride and dilation must be positive, got ~s and ~s" fn stride dilation))
      (let* ((padded (prim:pad x (append '((0 0) (0 0)) pads)))
             ;; (batch c out... k...) -> (batch groups cg out... k...) -> (groups batch out... k... cg):
             ;; channels innermost, so with channels-last data (what this function returns
             ;; underneath its NCHW view) the copy below reads and writes runs of channels.
             (win (%windows fn padded kernel stride dilation))
             (out (subseq (tensor-shape win) 2 (+ 2 n)))
             (og (/ oc groups))
             (kk (* cg (apply #'* kernel)))
             (cols (prim:reshape win (append (list batch groups cg) out kernel)))
             (cols (prim:permute cols (append '(1 0) (loop for j from 0 below n collect (+ 3 j))
                                              (loop for j from 0 below n collect (+ 3 n j)) (list 2))))
             ;; (groups batch*P K) x (groups K og) -> (groups batch*P og): the batch joins
             ;; the rows, so the product is one tall matmul per group.
             (cols (prim:copy (prim:reshape cols (list groups (* batch (apply #'* out)) kk))))
             ;; (oc cg k...) -> (groups og cg k...) -> (groups k... cg og) -> (groups K og)
             (wm (prim:permute (prim:reshape w (append (list groups og cg) kernel))
                               (append '(0) (loop for j from 0 below n collect (+ 3 j)) '(2 1))))
             (wm (prim:reshape wm (list groups kk og)))
             (y (matmul cols wm))
             ;; The bias joins in the matmul's layout (an epilogue of its kernel, and its
             ;; gradient is read in the same order as the weight's).
             (y (if bias
                    (add y (prim:reshape (%as-tensor bias (tensor-dtype y)) (list groups 1 og)))
                    y))
             ;; -> (groups batch P og) -> (batch groups og P) -> (batch oc out...)
             (y (prim:reshape y (list groups batch (apply #'* out) og)))
             (y (prim:permute y '(1 0 3 2))))
        (prim:reshape y (append (list batch oc) out))))))

(defcomposite conv1d (x w &key bias (stride 1) (padding 0) (dilation 1) (groups 1))
  "(conv1d X W &key bias (stride 1) (padding 0) (dilation 1) (groups 1)) The 1-d convolution
(cross-correlation, as PyTorch's) of X (batch channels length) with W (out-channels
channels/groups k), plus BIAS (out-channels) when given.
  (to-list (conv1d (tensor '(((1.0 2.0 3.0 4.0)))) (tensor '(((1.0 1.0))))))  ; => (((3.0 5.0 7.0)))
  (shape (conv1d (zeros '(2 3 10)) (zeros '(4 3 3)) :padding 1))  ; => (2 4 10)"
  (%conv 'conv1d 1 x w bias stride padding dilation groups))

(defcomposite conv2d (x w &key bias (stride 1) (padding 0) (dilation 1) (groups 1))
  "(conv2d X W &key bias (stride 1) (padding 0) (dilation 1) (groups 1)) The 2-d convolution
(cross-correlation, as PyTorch's) of X (batch channels height width) with W (out-channels
channels/groups kh kw), plus BIAS (out-channels) when given. STRIDE, DILATION and PADDING
take an integer or one per spatial axis; PADDING may also be (before after) pairs.
  (shape (conv2d (zeros '(1 3 8 8)) (zeros '(4 3 3 3)) :padding 1))  ; => (1 4 8 8)"
  (%conv 'conv2d 2 x w bias stride padding dilation groups))

(defcomposite conv3d (x w &key bias (stride 1) (padding 0) (dilation 1) (groups 1))
  "(conv3d X W &key bias (stride 1) (padding 0) (dilation 1) (groups 1)) The 3-d convolution
(cross-correlation, as PyTorch's) of X (batch channels depth height width) with W
(out-channels channels/groups kd kh kw), plus BIAS (out-channels) when given; the keywords
as conv2d's.
  (to-list (conv3d (ones '(1 1 2 2 2)) (ones '(1 1 2 2 2))))  ; => (((((8.0)))))
  (shape (conv3d (zeros '(2 3 4 8 8)) (zeros '(5 3 3 3 3)) :padding 1 :stride '(1 2 2)))  ; => (2 5 4 4 4)"
  (%conv 'conv3d 3 x w bias stride padding dilation groups))

(defun %conv-transpose (fn n x w bias stride padding output-padding dilation groups)
  ;; The transposed N-d convolution of X (batch channels spatial...) with W (channels
  ;; out-channels/groups kernel...).
  (let* ((x (%float-tensor x))
         (w (%as-tensor w (tensor-dtype x))))
    (unless (and (= (ndim x) (+ n 2)) (= (ndim w) (+ n 2)))
      (error 'shape-error "~a: expected an input (batch channels ~a) and a weight (channels out/groups ~a), got ~s and ~s"
             fn (%spatial-names n) (nth (- n 1) '("k" "kh kw" "kd kh kw")) (tensor-shape x) (tensor-shape w)))
    (let* ((xs (tensor-shape x)) (ws (tensor-shape w))
           (c (second xs)) (ogp (second ws))
           (kernel (subseq ws 2))
           (stride (%tuple fn "stride" stride n))
           (dilation (%tuple fn "dilation" dilation n))
           (padding (%tuple fn "padding" padding n))
           (opad (%tuple fn "output-padding" output-padding n)))
      (unless (and (integerp groups) (> groups 0) (= (first ws) c) (= (mod c groups) 0))
        (error 'shape-error "~a: input of shape ~s and weight of shape ~s with ~a groups do not match" fn xs ws groups))
      (when (some (lambda (v) (<= v 0)) (append stride dilation))
        (error 'shape-error "~a: stride and dilation must be positive, got ~s and ~s" fn stride dilation))
      (loop for p in padding for k in kernel for d in dilation for op in opad for s in stride
            do (when (> p (* d (- k 1)))
                 (error 'shape-error "~a: padding ~a is larger than dilation * (kernel - 1) = ~a" fn p (* d (- k 1))))
               (when (>= op (max s d))
                 (error 'shape-error "~a: output-padding ~a must be smaller than the stride or the dilation" fn op)))
      ;; Spread X's elements STRIDE apart (zeros between), pad by dilation * (k - 1) - padding,
      ;; and correlate with the flipped kernel, channels swapped per group.
      (let* ((spread x))
        (loop for j from 0 below n for s in stride
              do (when (> s 1)
                   (let* ((axis (+ 2 j)) (len (nth axis (tensor-shape spread)))
                          (shp (tensor-shape spread))
                          (e (prim:reshape spread (append (subseq shp 0 (+ axis 1)) '(1) (subseq shp (+ axis 1)))))
                          (e (%pad-axis e (+ axis 1) 0 (- s 1)))
                          (e (prim:reshape e (append (subseq shp 0 axis) (list (* len s)) (subseq shp (+ axis 1))))))
                     (setq spread (%shrink-axis e axis 0 (+ (* (- len 1) s) 1))))))
        (let* ((pads (loop for k in kernel for d in dilation for p in padding for op in opad
                           collect (list (- (* d (- k 1)) p) (+ (- (* d (- k 1)) p) op))))
               (cg (/ c groups))
               (spatial (loop for j from 0 below n collect (+ 3 j)))
               ;; (c og k...) -> (groups cg og k...) -> (groups og cg k...) -> (oc cg k...), flipped
               (wt (prim:reshape w (append (list groups cg ogp) kernel)))
               (wt (prim:permute wt (append '(0 2 1) spatial)))
               (wt (prim:reshape wt (append (list (* groups ogp) cg) kernel)))
               (wt (prim:flip wt (mapcar #'1- spatial))))
          (%conv fn n spread wt bias 1 pads dilation groups))))))

(defcomposite conv-transpose1d (x w &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
  "(conv-transpose1d X W &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
The transposed 1-d convolution (PyTorch's ConvTranspose1d) of X (batch channels length) with W
(channels out-channels/groups k); the output length is (L - 1) * stride - 2 * padding +
dilation * (k - 1) + output-padding + 1.
  (to-list (conv-transpose1d (tensor '(((1.0 2.0)))) (tensor '(((1.0 10.0)))) :stride 2))  ; => (((1.0 10.0 2.0 20.0)))"
  (%conv-transpose 'conv-transpose1d 1 x w bias stride padding output-padding dilation groups))

(defcomposite conv-transpose2d (x w &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
  "(conv-transpose2d X W &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
The transposed 2-d convolution (the gradient of conv2d with respect to its input, as PyTorch's
ConvTranspose2d) of X (batch channels height width) with W (channels out-channels/groups kh
kw): the output is (H - 1) * stride - 2 * padding + dilation * (k - 1) + output-padding + 1
per spatial axis.
  (to-list (conv-transpose2d (tensor '((((1.0 2.0))))) (tensor '((((1.0 10.0)))))
                             :stride 2))  ; => ((((1.0 10.0 2.0 20.0))))
  (shape (conv-transpose2d (zeros '(1 4 5 5)) (zeros '(4 2 2 2)) :stride 2))  ; => (1 2 10 10)"
  (%conv-transpose 'conv-transpose2d 2 x w bias stride padding output-padding dilation groups))

(defcomposite conv-transpose3d (x w &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
  "(conv-transpose3d X W &key bias (stride 1) (padding 0) (output-padding 0) (dilation 1) (groups 1))
The transposed 3-d convolution (PyTorch's ConvTranspose3d) of X (batch channels depth height
width) with W (channels out-channels/groups kd kh kw); sizes as conv-transpose2d's.
  (shape (conv-transpose3d (zeros '(1 4 2 3 3)) (zeros '(4 2 2 2 2)) :stride 2))  ; => (1 2 4 6 6)"
  (%conv-transpose 'conv-transpose3d 3 x w bias stride padding output-padding dilation groups))

(defun %pool (fn n x kernel stride padding dilation pad-value)
  ;; The windows of X (batch channels spatial...), N spatial axes, as (WINDOWS KERNEL PADS).
  (let* ((x (%as-tensor x)))
    (unless (= (ndim x) (+ n 2))
      (error 'shape-error "~a: expected an input of shape (batch channels ~a), got ~s" fn (%spatial-names n)
             (tensor-shape x)))
    (let* ((kernel (%tuple fn "kernel size" kernel n))
           (stride (if stride (%tuple fn "stride" stride n) kernel))
           (dilation (%tuple fn "dilation" dilation n))
           (pads (%spatial-pads fn padding n)))
      (when (some (lambda (v) (<= v 0)) (append kernel stride dilation))
        (error 'shape-error "~a: kernel size, stride and dilation must be positive, got ~s, ~s and ~s" fn kernel
               stride dilation))
      (loop for p in pads for k in kernel
            do (when (> (max (first p) (second p)) (floor k 2))
                 (error 'shape-error "~a: padding ~s must be at most half the kernel size ~s" fn pads kernel)))
      (let ((padded (if (every (lambda (p) (equal p '(0 0))) pads)
                        x
                        (pad x pads :value pad-value))))
        (list (%windows fn padded kernel stride dilation) kernel pads)))))

(defun %pool-reduce (reduce win)
  ;; REDUCE over the window axes of WIN (batch c out... k...), computed channels-last: the
  ;; result is stored (batch out... c), as a convolution's output is, and viewed as NCHW.
  (let* ((n (/ (- (ndim win) 2) 2))
         (outs (loop for j from 0 below n collect (+ 2 j)))
         (ks (loop for j from 0 below n collect (+ 2 n j))))
    (prim:permute (funcall reduce (prim:permute win (append '(0) outs '(1) ks))
                           :axis (loop for j from 0 below n collect (+ 2 n j)))
                  (append '(0) (list (+ n 1)) (loop for j from 0 below n collect (+ 1 j))))))

(defun %max-pool (fn n x kernel-size stride padding dilation)
  (let ((win (%pool fn n x kernel-size stride padding dilation
                    (if (dtype-float-p (dtype x)) (- inf) -2147483648))))
    (%pool-reduce #'amax (first win))))

(defun %avg-pool (fn n x kernel-size stride padding count-include-pad)
  (destructuring-bind (win kernel pads) (%pool fn n (%float-tensor x) kernel-size stride padding 1 0)
    (let ((s (%pool-reduce #'sum win)))
      (if (or count-include-pad (every (lambda (p) (equal p '(0 0))) pads))
          (div s (apply #'* kernel))
          (let ((ones (%pool fn n (prim:const 1 (dtype s) (append '(1 1) (nthcdr 2 (shape x))))
                             kernel-size stride padding 1 0)))
            (div s (%pool-reduce #'sum (first ones))))))))

(defcomposite max-pool1d (x kernel-size &key stride (padding 0) (dilation 1))
  "(max-pool1d X KERNEL-SIZE &key stride (padding 0) (dilation 1)) The largest element of each
window of X (batch channels length); as max-pool2d.
  (to-list (max-pool1d (tensor '(((1.0 5.0 2.0 0.0 3.0)))) 2))  ; => (((5.0 2.0)))"
  (%max-pool 'max-pool1d 1 x kernel-size stride padding dilation))

(defcomposite max-pool2d (x kernel-size &key stride (padding 0) (dilation 1))
  "(max-pool2d X KERNEL-SIZE &key stride (padding 0) (dilation 1)) The largest element of each
KERNEL-SIZE window of X (batch channels height width); STRIDE defaults to KERNEL-SIZE and
padding counts as -inf.
  (shape (max-pool2d (zeros '(1 3 8 8)) 2))  ; => (1 3 4 4)"
  (%max-pool 'max-pool2d 2 x kernel-size stride padding dilation))

(defcomposite max-pool3d (x kernel-size &key stride (padding 0) (dilation 1))
  "(max-pool3d X KERNEL-SIZE &key stride (padding 0) (dilation 1)) The largest element of each
window of X (batch channels depth height width); as max-pool2d.
  (shape (max-pool3d (zeros '(1 2 4 6 6)) '(2 3 3)))  ; => (1 2 2 2 2)"
  (%max-pool 'max-pool3d 3 x kernel-size stride padding dilation))

(defcomposite avg-pool1d (x kernel-size &key stride (padding 0) (count-include-pad t))
  "(avg-pool1d X KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) The mean of each
window of X (batch channels length); as avg-pool2d.
  (to-list (avg-pool1d (tensor '(((1.0 3.0 2.0 6.0)))) 2))  ; => (((2.0 4.0)))"
  (%avg-pool 'avg-pool1d 1 x kernel-size stride padding count-include-pad))

(defcomposite avg-pool2d (x kernel-size &key stride (padding 0) (count-include-pad t))
  "(avg-pool2d X KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) The mean of each
KERNEL-SIZE window of X (batch channels height width); STRIDE defaults to KERNEL-SIZE.
Padding is zeros; with :count-include-pad nil a window's mean counts only X's elements.
  (to-list (avg-pool2d (tensor '((((1.0 2.0) (3.0 6.0))))) 2))  ; => ((((3.0))))
  (to-list (avg-pool2d (tensor '((((2.0 4.0))))) '(1 3) :stride 1 :padding '(0 1)))  ; => ((((2.0 2.0))))
  (to-list (avg-pool2d (tensor '((((2.0 4.0))))) '(1 3) :stride 1 :padding '(0 1)
                       :count-include-pad nil))  ; => ((((3.0 3.0))))"
  (%avg-pool 'avg-pool2d 2 x kernel-size stride padding count-include-pad))

(defcomposite avg-pool3d (x kernel-size &key stride (padding 0) (count-include-pad t))
  "(avg-pool3d X KERNEL-SIZE &key stride (padding 0) (count-include-pad t)) The mean of each
window of X (batch channels depth height width); as avg-pool2d.
  (to-list (avg-pool3d (reshape (arange 8 :dtype 'f32) '(1 1 2 2 2)) 2))  ; => (((((3.5)))))"
  (%avg-pool 'avg-pool3d 3 x kernel-size stride padding count-include-pad))

(defun %adaptive-axis (x axis out reduce)
  ;; X's AXIS (length L) reduced to OUT elements as PyTorch's adaptive pools do: element i is
  ;; REDUCE (#'mean or #'amax) over [floor(i L / OUT), ceil((i + 1) L / OUT)).
  (let ((l (nth axis (shape x))))
    (cond ((= l out) x)
          ((= (mod l out) 0)  ; equal windows: split the axis and reduce the inner part
           (let ((shp (shape x)))
             (funcall reduce (reshape x (append (subseq shp 0 axis) (list out (/ l out)) (nthcdr (+ axis 1) shp)))
                      :axis (+ axis 1))))
          (t (cat (loop for i from 0 below out
                           collect (let ((start (floor (* i l) out)) (end (ceiling (* (+ i 1) l) out)))
                                     (funcall reduce (%shrink-axis x axis start end) :axis axis :keepdim t)))
                     :axis axis)))))

(defun %adaptive-pool (fn n x size reduce)
  (let* ((x (if (eq reduce #'mean) (%float-tensor x) (%as-tensor x)))
         (size (%tuple fn "output size" size n)))
    (unless (= (ndim x) (+ n 2))
      (error 'shape-error "~a: expected an input of shape (batch channels ~a), got ~s" fn (%spatial-names n)
             (tensor-shape x)))
    (when (some (lambda (v) (<= v 0)) size)
      (error 'shape-error "~a: the output size must be positive, got ~s" fn size))
    (loop for j from 0 below n
          do (when (= (nth (+ 2 j) (shape x)) 0)
               (error 'shape-error "~a: the input ~s has an empty spatial axis" fn (shape x)))
             (setq x (%adaptive-axis x (+ 2 j) (nth j size) reduce)))
    x))

(defcomposite adaptive-avg-pool1d (x size)
  "(adaptive-avg-pool1d X SIZE) X (batch channels length) averaged down to SIZE elements, the
windows as PyTorch's (SIZE need not divide the length).
  (to-list (adaptive-avg-pool1d (tensor '(((1.0 2.0 3.0 4.0 5.0)))) 2))  ; => (((2.0 4.0)))"
  (%adaptive-pool 'adaptive-avg-pool1d 1 x size #'mean))

(defcomposite adaptive-avg-pool2d (x size)
  "(adaptive-avg-pool2d X SIZE) X (batch channels height width) averaged down to SIZE (an
integer or (h w)): window i of an axis of length L covers [floor(i L / SIZE), ceil((i + 1) L
/ SIZE)), as in PyTorch, so SIZE need not divide the input.
  (to-list (adaptive-avg-pool2d (tensor '((((1.0 3.0) (5.0 7.0))))) 1))  ; => ((((4.0))))
  (shape (adaptive-avg-pool2d (zeros '(2 3 8 6)) '(4 3)))  ; => (2 3 4 3)
  (shape (adaptive-avg-pool2d (zeros '(1 1 10 9)) 7))  ; => (1 1 7 7)"
  (%adaptive-pool 'adaptive-avg-pool2d 2 x size #'mean))

(defcomposite adaptive-avg-pool3d (x size)
  "(adaptive-avg-pool3d X SIZE) X (batch channels depth height width) averaged down to SIZE,
as adaptive-avg-pool2d.
  (shape (adaptive-avg-pool3d (zeros '(1 2 5 6 7)) '(2 3 4)))  ; => (1 2 2 3 4)"
  (%adaptive-pool 'adaptive-avg-pool3d 3 x size #'mean))

(defcomposite adaptive-max-pool1d (x size)
  "(adaptive-max-pool1d X SIZE) The largest element of each of SIZE windows of X (batch
channels length), the windows as adaptive-avg-pool1d's.
  (to-list (adaptive-max-pool1d (tensor '(((1.0 5.0 2.0 0.0 3.0)))) 2))  ; => (((5.0 3.0)))"
  (%adaptive-pool 'adaptive-max-pool1d 1 x size #'amax))

(defcomposite adaptive-max-pool2d (x size)
  "(adaptive-max-pool2d X SIZE) The largest element of each window of X (batch channels height
width) for an output of SIZE, the windows as adaptive-avg-pool2d's.
  (to-list (adaptive-max-pool2d (tensor '((((1.0 3.0) (5.0 7.0))))) 1))  ; => ((((7.0))))"
  (%adaptive-pool 'adaptive-max-pool2d 2 x size #'amax))

(defcomposite adaptive-max-pool3d (x size)
  "(adaptive-max-pool3d X SIZE) As adaptive-max-pool2d, for X (batch channels depth height width).
  (shape (adaptive-max-pool3d (zeros '(1 2 5 6 7)) 2))  ; => (1 2 2 2 2)"
  (%adaptive-pool 'adaptive-max-pool3d 3 x size #'amax))

;;; --- fractional max pooling ----------------------------------------------------------------

(defun %fractional-starts (u in out k)
  ;; The window starts along an axis of IN elements for OUT windows of K, from the samples U
  ;; (batch channels) in [0, 1), as PyTorch's fractional max pooling draws them: with
  ;; alpha = (IN - K) / (OUT - 1), start i = floor((i + u) alpha) - floor(u alpha), the last
  ;; IN - K. An i64 tensor (batch channels OUT).
  (let* ((shp (append (shape u) (list out)))
         (last (prim:const (- in k) 'i64 shp)))
    (if (= out 1)
        last
        (let* ((alpha (/ (float (- in k)) (- out 1)))
               (i (prim:iota shp (length (shape u)) 'f64))
               (uu (prim:expand (prim:reshape (cast u 'f64) (append (shape u) '(1))) shp))
               (s (sub (floor (mul (add i uu) alpha)) (floor (mul uu alpha))))
               (is-last (equals (prim:iota shp (length (shape u)) 'i64) (- out 1))))
          (where is-last last (cast s 'i64))))))

(defun %fractional-max-pool (fn n x kernel-size output-size output-ratio samples)
  (%refuse-complex fn x)
  (let* ((x (%as-tensor x))
         (kernel (%tuple fn "kernel size" kernel-size n)))
    (unless (= (ndim x) (+ n 2))
      (error 'shape-error "~a: expected an input of shape (batch channels ~a), got ~s" fn (%spatial-names n) (shape x)))
    (when (and output-size output-ratio)
      (error 'type-error "~a: give output-size or output-ratio, not both" fn))
    (let* ((spatial (nthcdr 2 (shape x)))
           (out (cond (output-size (%tuple fn "output size" output-size n))
                      (output-ratio
                       (let ((r (if (numberp output-ratio) (make-list n output-ratio) output-ratio)))
                         (unless (and (listp r) (= (length r) n) (every (lambda (v) (and (numberp v) (< 0 v 1))) r))
                           (error 'value-error "~a: output-ratio must be in (0, 1), got ~s" fn output-ratio))
                         (mapcar (lambda (d v) (floor (* d v))) spatial r)))
                      (t (error 'type-error "~a: give output-size or output-ratio" fn))))
           (batch (first (shape x))) (channels (second (shape x)))
           (u (if samples
                  (%as-tensor samples)
                  (rand (list batch channels n) :dtype (if (eq (dtype x) 'f64) 'f64 'f32)))))
      (loop for d in spatial for o in out for k in kernel
            do (when (or (< o 1) (< k 1) (> (+ o k -1) d))
                 (error 'shape-error "~a: ~a windows of ~a do not fit an axis of ~a (output + kernel - 1 <= input)"
                        fn o k d)))
      (unless (equal (shape u) (list batch channels n))
        (error 'shape-error "~a: the samples must be (batch channels ~a), got ~s" fn n (shape u)))
      ;; Axis by axis: gather each window's rows (start + 0 .. k-1), then the maximum over the
      ;; window axes. PyTorch's 2-d samples list width first, its 3-d ones depth first.
      (let ((g x) (wide (copy-list (shape x))))
        (dotimes (j n)
          (let* ((axis (+ 2 j))
                 (col (if (= n 2) (- 1 j) j))
                 (ui (prim:reshape (prim:shrink u (list (list 0 batch) (list 0 channels) (list col (+ col 1))))
                                   (list batch channels)))
                 (o (nth j out)) (k (nth j kernel))
                 (starts (%fractional-starts ui (nth j spatial) o k))                   ; (b c o)
                 (idx (add (prim:reshape starts (list batch channels o 1))
                           (prim:reshape (prim:iota (list k) 0 'i64) (list 1 1 1 k))))  ; (b c o k)
                 (idx-shape (append (subseq wide 0 axis) (list (* o k)) (nthcdr (+ axis 1) wide)))
                 ;; The same starts along every other spatial axis: 1s there, then expanded.
                 (idx (prim:expand (prim:reshape idx (append (list batch channels) (make-list j :initial-element 1)
                                                             (list (* o k)) (make-list (- n j 1) :initial-element 1)))
                                   idx-shape)))
            (setq g (prim:gather g idx axis))
            (setq wide idx-shape)))
        ;; (b c o1*k1 o2*k2 ...) -> (b c o1 k1 o2 k2 ...) -> the maximum over each k
        (let* ((split (append (list batch channels) (loop for o in out for k in kernel append (list o k))))
               (r (reshape g split)))
          (amax r :axis (loop for j below n collect (+ 3 (* 2 j)))))))))

(defcomposite fractional-max-pool2d (x kernel-size &key output-size output-ratio samples)
  "(fractional-max-pool2d X KERNEL-SIZE &key output-size output-ratio samples) Max pooling of X
(batch channels height width) over KERNEL-SIZE windows at pseudo-random, overlapping starts
chosen so that the output has OUTPUT-SIZE (or OUTPUT-RATIO of the input) elements, as
torch.nn.functional.fractional_max_pool2d (Graham's fractional max pooling). SAMPLES, uniform
in [0, 1) of shape (batch channels 2) (width's, then height's), fix the starts; drawn with
rand when not given. The gradient goes to each window's first maximum.
  (shape (fractional-max-pool2d (zeros '(1 3 10 10)) 3 :output-size 5))  ; => (1 3 5 5)
  (to-list (fractional-max-pool2d (reshape (arange 16 :dtype 'f32) '(1 1 4 4)) 2 :output-size 2
                                  :samples (tensor '(((0.5 0.5))))))  ; => ((((5.0 7.0) (13.0 15.0))))"
  (%fractional-max-pool 'fractional-max-pool2d 2 x kernel-size output-size output-ratio samples))

(defcomposite fractional-max-pool3d (x kernel-size &key output-size output-ratio samples)
  "(fractional-max-pool3d X KERNEL-SIZE &key output-size output-ratio samples) As
fractional-max-pool2d, for X (batch channels depth height width); SAMPLES (batch channels 3)
are depth's, height's and width's, as torch.nn.functional.fractional_max_pool3d.
  (shape (fractional-max-pool3d (zeros '(2 1 8 8 8)) 2 :output-ratio 0.5))  ; => (2 1 4 4 4)"
  (%fractional-max-pool 'fractional-max-pool3d 3 x kernel-size output-size output-ratio samples))
