;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19, "every op that takes an axis takes it the same way (:axis)": each public op
;;; with an axis called with :axis (a negative one too), against known values or the older
;;; positional form, which still works where it was documented.

(require 'nn)
(defun tl (x) (to-list x))

(defvar m (tensor '((3 1 2) (0 5 4))))            ; (2 3), i32
(defvar f (tensor '((3.0 1.0 2.0) (0.0 5.0 4.0))))

(deftest reductions
  (is (equal (tl (sum m :axis 1)) '(6 9)))
  (is (equal (tl (sum m :axis -2)) '(3 6 6)))
  (is (equal (tl (prod m :axis 0)) '(0 5 8)))
  (is (equal (tl (mean f :axis 1)) '(2.0 3.0)))
  (is (equal (tl (amax m :axis 1)) '(3 5)))
  (is (equal (tl (max m :axis 1)) '(3 5)))
  (is (equal (tl (amin m :axis 0)) '(0 1 2)))
  (is (equal (tl (min m :axis 0)) '(0 1 2)))
  (is (equal (tl (argmax m :axis 1)) '(0 1)))
  (is (equal (tl (argmin m :axis -1)) '(1 0)))
  (is (allclose (var f :axis 1) '(1.0 7.0)))
  (is (allclose (std f :axis 1 :correction 0) (list (sqrt (/ 2.0 3)) (sqrt (/ 14.0 3)))))
  (is (allclose (logsumexp f :axis 0) (log (add (exp (tensor '(3.0 1.0 2.0))) (exp (tensor '(0.0 5.0 4.0)))))))
  (is (equal (tl (any (gt m 4) :axis 1)) '(nil t)))
  (is (equal (tl (all (gt m 0) :axis 1)) '(t nil)))
  (is (allclose (norm f :axis 1 :p 1) '(6.0 9.0)))
  (is (equal (shape (sum m :axis '(0 1) :keepdim t)) '(1 1))))

(deftest scans-and-normalizations
  (is (equal (tl (cumsum m :axis 1)) '((3 4 6) (0 5 9))))
  (is (equal (tl (cumprod m :axis 0)) '((3 1 2) (0 5 8))))
  (is (allclose (sum (softmax f :axis 0) :axis 0) '(1.0 1.0 1.0)))
  (is (allclose (log-softmax f :axis 1) (log (softmax f :axis 1))))
  (is (allclose (mean (layer-norm f :axis 1) :axis 1) '(0.0 0.0) :atol 1e-6))
  (is (allclose (rms-norm f :axis 0) (div f (sqrt (add (mean (mul f f) :axis 0 :keepdim t) 1.1920929e-07))) :rtol 1e-5))
  (is (allclose (cosine-similarity f f :axis 1) '(1.0 1.0))))

(deftest joins-and-splits
  (is (equal (shape (cat (list m m) :axis 1)) '(2 6)))
  (is (equal (shape (cat (list m m) :axis -2)) '(4 3)))
  (is (equal (shape (stack (list m m) :axis 2)) '(2 3 2)))
  (is (equal (mapcar #'shape (split m '(1 2) :axis 1)) '((2 1) (2 2))))
  (is (equal (mapcar #'tl (chunk m 3 :axis -1)) '(((3) (0)) ((1) (5)) ((2) (4)))))
  (is (equal (tl (repeat (tensor '((1 2))) 2 :axis 0)) '((1 2) (1 2)))))

(deftest sorting-and-indexing
  (is (equal (tl (first (sort m :axis 0))) '((0 1 2) (3 5 4))))
  (is (equal (tl (argsort m :axis 1 :descending t)) '((0 2 1) (1 2 0))))
  (is (equal (tl (first (topk m 1 :axis 0))) '((3 5 4))))
  (is (equal (tl (index-select m (tensor '(2 0)) :axis 1)) '((2 3) (4 0))))
  (is (equal (tl (gather m (tensor '((1) (2))) :axis 1)) '((1) (4))))
  (is (equal (tl (gather m 1 (tensor '((1) (2))))) '((1) (4))))            ; the older form
  (is (equal (tl (scatter (zeros-like m) (tensor '((2) (0))) (tensor '((7) (8))) :axis 1))
             '((0 0 7) (8 0 0))))
  (is (equal (tl (scatter-add (zeros-like m) (tensor '((1 1))) (tensor '((7 8))) :axis 0))
             '((0 0 0) (7 8 0))))
  (is (equal (tl (scatter-add (zeros-like m) (tensor '((1 1))) (tensor '((7 8))) :axis 1))
             '((0 15 0) (0 0 0)))))

(deftest views
  (let ((x (reshape (arange 24) '(2 3 4))))
    (is (equal (shape (unsqueeze x :axis 1)) '(2 1 3 4)))
    (is (equal (shape (unsqueeze x 1)) '(2 1 3 4)))
    (is (equal (shape (squeeze (unsqueeze x 0) :axis 0)) '(2 3 4)))
    (is (equal (tl (flip (tensor '((1 2) (3 4))) :axis 1)) '((2 1) (4 3))))
    ;; transpose: two axes, positionally or as a list after :axis.
    (is (equal (shape (transpose x :axis '(0 2))) '(4 3 2)))
    (is (equal (tl (transpose x :axis '(0 2))) (tl (transpose x 0 2))))
    (is (equal (tl (transpose x :axis '(-1 -2))) (tl (transpose x))))
    (is (equal (shape (transpose x 0)) '(4 3 2)))
    (is-error type-error (transpose x :axis 1))
    (is-error type-error (transpose x 0 1 2))
    ;; flatten: a range of axes, positionally or as :start and :end.
    (is (equal (shape (flatten x :start 1)) '(2 12)))
    (is (equal (shape (flatten x :end 1)) '(6 4)))
    (is (equal (shape (flatten x :start 0 :end -1)) '(24)))
    (is (equal (shape (flatten x 1)) '(2 12)))
    (is (equal (shape (flatten x 0 1)) '(6 4)))
    (is (equal (flatten '(1 (2 (3)) nil)) '(1 2 3)))
    (is-error type-error (flatten x :axis 1))
    (is (equal (shape (funcall (nn:flatten) x)) '(2 12)))
    (is (equal (shape (funcall (nn:flatten :start 0 :end 1) x)) '(6 4)))
    (is (equal (shape (funcall (nn:flatten 0 1) x)) '(6 4)))
    (is-error index-error (transpose x :axis '(0 3)))
    (is-error index-error (sum x :axis 3))))

(run-tests)
