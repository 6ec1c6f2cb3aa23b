;;; SPDX-License-Identifier: Apache-2.0
;;; Convolutions and pooling: known values, agreement with a direct formulation (a sum of
;;; shifted, strided slices) over strides, paddings, dilations and groups, shape errors, and
;;; gradients against finite differences in f64.

(defun tl (x) (to-list x))

(defun ref-conv2d (x w &key bias (stride 1) (padding 0) (dilation 1) (groups 1))
  ;; Cross-correlation written independently of conv2d: for each kernel offset, a strided
  ;; slice of the padded input contracted with that offset's weights, per group.
  (let* ((s (if (integerp stride) (list stride stride) stride))
         (d (if (integerp dilation) (list dilation dilation) dilation))
         (p (if (integerp padding) (list padding padding) padding))
         (xp (pad x (list (list (first p) (first p)) (list (second p) (second p)))))
         (c (second (shape x))) (oc (first (shape w)))
         (kh (third (shape w))) (kw (fourth (shape w)))
         (h (third (shape xp))) (wd (fourth (shape xp)))
         (oh (+ (floor (- h (* (first d) (- kh 1)) 1) (first s)) 1))
         (ow (+ (floor (- wd (* (second d) (- kw 1)) 1) (second s)) 1))
         (cg (/ c groups)) (og (/ oc groups))
         (outs nil))
    (dotimes (g groups)
      (let ((acc nil))
        (dotimes (i kh)
          (dotimes (j kw)
            (let* ((r0 (* i (first d))) (c0 (* j (second d)))
                   (patch (slice xp t (list (* g cg) (* (+ g 1) cg))
                                 (list r0 (+ r0 (* (- oh 1) (first s)) 1) (first s))
                                 (list c0 (+ c0 (* (- ow 1) (second s)) 1) (second s))))
                   (wij (slice w (list (* g og) (* (+ g 1) og)) t i j))
                   (term (einsum "bchw,oc->bohw" patch wij)))
              (setq acc (if acc (add acc term) term)))))
        (push acc outs)))
    (let ((y (cat (reverse outs) :axis 1)))
      (if bias (add y (reshape bias oc 1 1)) y))))

(deftest conv2d-known-values
  ;; 1x1x3x3 input, a 2x2 kernel of ones: each output is the sum of a 2x2 window.
  (let ((x (reshape (arange 9.0) 1 1 3 3))
        (w (ones '(1 1 2 2))))
    (is (equal (tl (conv2d x w)) '((((8.0 12.0) (20.0 24.0))))))
    (is (equal (tl (conv2d x w :padding 1 :stride 2)) '((((0.0 3.0) (9.0 24.0))))))
    (is (equal (tl (conv2d x w :bias (tensor '(1.0)))) '((((9.0 13.0) (21.0 25.0))))))
    (is (equal (tl (conv2d x w :dilation 2)) '((((16.0)))))))
  ;; A 1-d convolution: [1 2 3 4] with [1 -1] -> differences.
  (is (equal (tl (conv1d (reshape (tensor '(1.0 2.0 4.0 7.0)) 1 1 4) (reshape (tensor '(1.0 -1.0)) 1 1 2)))
             '(((-1.0 -2.0 -3.0))))))

(manual-seed 7)
(deftest conv2d-against-slices
  (let ((x (randn '(2 4 7 6))) (w (randn '(6 4 3 3))) (b (randn '(6))))
    (is (allclose (conv2d x w) (ref-conv2d x w) :atol 1e-4))
    (is (allclose (conv2d x w :bias b :padding 1) (ref-conv2d x w :bias b :padding 1) :atol 1e-4))
    (is (allclose (conv2d x w :stride 2) (ref-conv2d x w :stride 2) :atol 1e-4))
    (is (allclose (conv2d x w :stride '(2 1) :padding '(1 2)) (ref-conv2d x w :stride '(2 1) :padding '(1 2)) :atol 1e-4))
    (is (allclose (conv2d x w :dilation 2 :padding 2) (ref-conv2d x w :dilation 2 :padding 2) :atol 1e-4))
    (is (allclose (conv2d x w :stride 3 :dilation '(1 2)) (ref-conv2d x w :stride 3 :dilation '(1 2)) :atol 1e-4))
    (is (equal (shape (conv2d x w :stride 2 :padding 1)) '(2 6 4 3))))
  ;; Groups: 4 input channels in 2 groups, 6 outputs; depthwise (groups = channels).
  (let ((x (randn '(2 4 5 5))) (w (randn '(6 2 3 3))) (dw (randn '(4 1 3 3))))
    (is (allclose (conv2d x w :groups 2) (ref-conv2d x w :groups 2) :atol 1e-4))
    (is (allclose (conv2d x dw :groups 4 :padding 1) (ref-conv2d x dw :groups 4 :padding 1) :atol 1e-4)))
  ;; A kernel as large as the input, and a 1x1 kernel.
  (let ((x (randn '(1 3 4 4))))
    (is (equal (shape (conv2d x (ones '(2 3 4 4)))) '(1 2 1 1)))
    (is (allclose (conv2d x (ones '(5 3 1 1))) (expand (sum x :axis 1 :keepdim t) 1 5 4 4) :atol 1e-5))))

(deftest conv-transpose2d
  ;; The transposed convolution is the gradient of conv2d with respect to its input: check
  ;; <conv2d(x, w), y> = <x, conv-transpose2d(y, w)> for strides, paddings, dilations, groups.
  (dolist (cfg '((1 0 1 1) (2 1 1 1) (2 0 2 1) (3 1 1 2) (1 2 2 2)))
    (destructuring-bind (s p d g) cfg
      (let* ((x (randn '(2 4 8 7))) (w (randn (list 6 (/ 4 g) 3 3)))
             (y (conv2d x w :stride s :padding p :dilation d :groups g))
             (u (randn (shape y)))
             (hw (list (third (shape x)) (fourth (shape x))))
             (z (conv-transpose2d u w :stride s :padding p :dilation d :groups g))
             (zh (list (third (shape z)) (fourth (shape z))))
             ;; Output padding recovers the rows a stride > 1 drops.
             (z (conv-transpose2d u w :stride s :padding p :dilation d :groups g
                                  :output-padding (mapcar #'- hw zh))))
        (is (equal (shape z) (shape x)))
        (is (< (abs (- (item (sum (mul y u))) (item (sum (mul x z))))) 1e-2)))))
  ;; Known values: a 2x2 input spread by stride 2 under a 2x2 kernel of ones.
  (is (equal (tl (conv-transpose2d (reshape (tensor '(1.0 2.0 3.0 4.0)) 1 1 2 2) (ones '(1 1 2 2)) :stride 2))
             '((((1.0 1.0 2.0 2.0) (1.0 1.0 2.0 2.0) (3.0 3.0 4.0 4.0) (3.0 3.0 4.0 4.0))))))
  (is (equal (shape (conv-transpose2d (randn '(1 3 5 5)) (randn '(3 2 3 3)) :stride 2 :padding 1 :output-padding 1))
             '(1 2 10 10))))

(deftest pooling
  (let ((x (reshape (arange 16.0) 1 1 4 4)))
    (is (equal (tl (max-pool2d x 2)) '((((5.0 7.0) (13.0 15.0))))))
    (is (equal (tl (avg-pool2d x 2)) '((((2.5 4.5) (10.5 12.5))))))
    (is (equal (tl (max-pool2d x 3 :stride 1)) '((((10.0 11.0) (14.0 15.0))))))
    (is (equal (tl (max-pool2d x 2 :stride 1 :padding 1))
               '((((0.0 1.0 2.0 3.0 3.0) (4.0 5.0 6.0 7.0 7.0) (8.0 9.0 10.0 11.0 11.0)
                   (12.0 13.0 14.0 15.0 15.0) (12.0 13.0 14.0 15.0 15.0))))))
    (is (equal (tl (max-pool2d (neg x) 2 :padding 1)) '((((-0.0 -1.0 -3.0) (-4.0 -5.0 -7.0) (-12.0 -13.0 -15.0))))))
    ;; Zero padding counted in the mean, or not.
    (is (equal (tl (avg-pool2d (ones '(1 1 2 2)) 2 :stride 1 :padding 1))
               '((((0.25 0.5 0.25) (0.5 1.0 0.5) (0.25 0.5 0.25))))))
    (is (equal (tl (avg-pool2d (ones '(1 1 2 2)) 2 :stride 1 :padding 1 :count-include-pad nil))
               '((((1.0 1.0 1.0) (1.0 1.0 1.0) (1.0 1.0 1.0))))))
    (is (equal (tl (max-pool2d x 2 :dilation 2)) '((((10.0))))))
    (is (equal (tl (max-pool2d x 2 :dilation 2 :stride 1)) '((((10.0 11.0) (14.0 15.0))))))
    (is (equal (tl (adaptive-avg-pool2d x 1)) '((((7.5)))))))
  ;; An odd size drops the last row and column, as PyTorch does.
  (let ((x (randn '(2 3 11 11))))
    (is (equal (shape (max-pool2d x 2)) '(2 3 5 5)))
    (is (allclose (max-pool2d x 2)
                  (amax (reshape (slice x t t '(0 10) '(0 10)) 2 3 5 2 5 2) :axis '(3 5))))))

(deftest conv-errors
  (flet ((msg (thunk) (handler-case (progn (funcall thunk) "no error") (error (e) (condition-message e)))))
    (is (string-contains (msg (lambda () (conv2d (randn '(1 3 5 5)) (randn '(2 4 3 3)))))
                         "conv2d: input of shape (1 3 5 5) has 3 channels, but the weight of shape (2 4 3 3) expects 4"))
    (is (string-contains (msg (lambda () (conv2d (randn '(3 5 5)) (randn '(2 3 3 3)))))
                         "conv2d: expected an input of shape (batch channels height width), got (3 5 5)"))
    (is (string-contains (msg (lambda () (conv2d (randn '(1 3 2 2)) (randn '(2 3 3 3)))))
                         "does not fit in 2 elements"))
    (is (string-contains (msg (lambda () (conv2d (randn '(1 4 5 5)) (randn '(2 2 3 3)) :groups 3)))
                         "3 groups must divide both"))
    (is (string-contains (msg (lambda () (max-pool2d (randn '(1 1 4 4)) 2 :padding 2)))
                         "max-pool2d: padding ((2 2) (2 2)) must be at most half the kernel size (2 2)"))))

;; Gradients in f64 against central differences.
(load "data/grad_check.lisp")

(manual-seed 11)
(deftest conv-gradients
  (let ((x (randn '(2 3 5 4))) (w (randn '(4 3 3 2))) (b (randn '(4))))
    (is (grad-check (lambda (x w b) (conv2d x w :bias b)) x w b))
    (is (grad-check (lambda (x w) (conv2d x w :stride 2 :padding 1)) x w))
    (is (grad-check (lambda (x w) (conv2d x w :dilation 2 :padding '(2 1))) x (randn '(4 3 2 2))))
    (is (grad-check (lambda (x w) (conv2d x w :groups 3)) (randn '(1 3 4 4)) (randn '(3 1 2 2))))
    (is (grad-check (lambda (x w) (conv-transpose2d x w :stride 2 :padding 1)) (randn '(1 2 3 3)) (randn '(2 3 3 3))))
    (is (grad-check (lambda (x w) (conv1d x w :padding 1)) (randn '(2 3 6)) (randn '(2 3 3))))
    (is (grad-check (lambda (x) (max-pool2d x 2)) (randn '(1 2 5 4))))
    (is (grad-check (lambda (x) (max-pool2d x 3 :stride 1 :padding 1)) (randn '(1 1 4 4))))
    (is (grad-check (lambda (x) (avg-pool2d x 2 :stride 1 :padding 1 :count-include-pad nil)) (randn '(1 2 4 3))))))

(deftest three-d-one-d-and-adaptive
  ;; conv3d of a (1 1 2 2 2) block of ones with a 2x2x2 kernel of ones: one window, 8.
  (is (equal (tl (conv3d (ones '(1 1 2 2 2)) (ones '(1 1 2 2 2)))) '(((((8.0)))))))
  ;; A 3-d kernel of extent 1 along depth is conv2d on each depth slice.
  (let* ((x (randn '(1 2 3 5 5))) (w (randn '(4 2 1 3 3)))
         (y (conv3d x w :padding '(0 1 1))))
    (is (allclose (slice y t t 1) (conv2d (slice x t t 1) (reshape w '(4 2 3 3)) :padding 1) :atol 1e-5)))
  ;; conv-transpose1d is conv1d's gradient with respect to its input.
  (let* ((x (randn '(1 3 6) :dtype 'f64)) (w (randn '(2 3 3) :dtype 'f64)) (g (randn '(1 2 2) :dtype 'f64))
         (gx (first (second (funcall (value-and-grad (lambda (x) (sum (mul (conv1d x w :stride 2) g)))) x)))))
    (is (allclose gx (conv-transpose1d g w :stride 2 :output-padding 1) :atol 1e-12)))
  (is (equal (tl (max-pool1d (tensor '(((1.0 5.0 2.0 0.0 3.0)))) 2)) '(((5.0 2.0)))))
  (is (equal (shape (avg-pool3d (zeros '(1 1 4 4 4)) 2)) '(1 1 2 2 2)))
  ;; Adaptive windows of uneven sizes: [0, 3), [2, 5) of five elements (PyTorch's).
  (is (allclose (adaptive-avg-pool1d (tensor '(((1.0 2.0 3.0 4.0 9.0)))) 2) '(((2.0 5.333333)))))
  (is (allclose (adaptive-max-pool1d (tensor '(((1.0 9.0 2.0 0.0 3.0)))) 3) '(((9.0 9.0 3.0)))))
  (is (equal (shape (adaptive-avg-pool2d (zeros '(1 1 10 9)) 7)) '(1 1 7 7)))
  (is-error shape-error (conv3d (zeros '(1 2 3 3)) (zeros '(1 2 1 1 1))))
  (is-error shape-error (adaptive-avg-pool1d (zeros '(1 1 4)) 0))
  (is (grad-check (lambda (x w) (conv3d x w :stride 2 :padding 1)) (randn '(1 2 3 4 3)) (randn '(2 2 2 2 2))))
  (is (grad-check (lambda (x w) (conv-transpose3d x w :stride '(1 2 1))) (randn '(1 2 2 2 2)) (randn '(2 1 2 2 2))))
  (is (grad-check (lambda (x) (max-pool1d x 3 :stride 2 :padding 1)) (randn '(1 2 7))))
  (is (grad-check (lambda (x) (avg-pool3d x 2 :stride 1)) (randn '(1 1 3 3 3))))
  (is (grad-check (lambda (x) (adaptive-avg-pool2d x '(3 2))) (randn '(1 2 5 5))))
  (is (grad-check (lambda (x) (adaptive-max-pool1d x 3)) (randn '(1 2 7)))))

(deftest fractional-max-pooling
  ;; Samples 0.5 on a 4x4 input, 2x2 windows, 2 outputs: alpha = (4 - 2) / 1 = 2, starts
  ;; floor((0 + 0.5) 2) - floor(0.5 * 2) = 0 and the last, 4 - 2 = 2: the windows' maxima.
  (let ((x (reshape (arange 16 :dtype 'f32) '(1 1 4 4))))
    (is (equal (tl (fractional-max-pool2d x 2 :output-size 2 :samples (tensor '(((0.5 0.5))))))
               '((((5.0 7.0) (13.0 15.0))))))
    ;; 3 outputs from 4 with windows of 2: starts 0, 1, 2 whatever the sample (alpha = 1).
    (is (equal (tl (fractional-max-pool2d x 2 :output-size 3 :samples (tensor '(((0.3 0.9))))))
               '((((5.0 6.0 7.0) (9.0 10.0 11.0) (13.0 14.0 15.0)))))))
  ;; Different samples per channel give different windows; the shapes follow output-ratio.
  (is (equal (shape (fractional-max-pool2d (zeros '(2 3 10 9)) 3 :output-ratio 0.5)) '(2 3 5 4)))
  (is (equal (shape (fractional-max-pool3d (zeros '(1 2 8 6 7)) '(2 2 3) :output-size '(4 3 5))) '(1 2 4 3 5)))
  ;; Every output is one of the input's elements, and the largest of a window. (X realized: a
  ;; stride-1 max-pool2d with randn fused in is a kernel LLVM 14's NVPTX backend cannot select,
  ;; which the GPU cross-compile check would report; see the session note.)
  (let* ((x (realize (randn '(2 2 9 9)))) (y (fractional-max-pool2d x 3 :output-size 4)))
    (is (<= (item (amax y)) (item (amax x))))
    (is (>= (item (amin y)) (item (amin (max-pool2d x 3 :stride 1))))))
  (is-error shape-error (fractional-max-pool2d (zeros '(1 1 4 4)) 3 :output-size 3))
  (is-error type-error (fractional-max-pool2d (zeros '(1 1 4 4)) 2))
  (is-error shape-error (fractional-max-pool2d (zeros '(1 1 4 4)) 2 :output-size 2 :samples (tensor '((0.5 0.5)))))
  (is (grad-check (lambda (x) (fractional-max-pool2d x 2 :output-size '(3 4) :samples (tensor '(((0.2 0.7)) ((0.9 0.1))))))
                  (randn '(2 1 5 6)))))

(run-tests)
