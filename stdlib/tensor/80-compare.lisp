;;; SPDX-License-Identifier: Apache-2.0
;;; Whole-tensor comparisons, for tests and assertions.

(defun allclose (a b &key (rtol 1e-5) (atol 1e-8) (equal-nan t))
  "(allclose A B &key (rtol 1e-5) (atol 1e-8) (equal-nan t)) True when A and B (tensors,
numbers or nested lists) broadcast together and |A - B| <= ATOL + RTOL * |B| everywhere.
Equal infinities match; NaNs match each other when EQUAL-NAN.
  (allclose (tensor '(1.0 2.0)) '(1.0 2.000001))  ; => t
  (allclose (tensor '(1.0 2.0)) '(1.0 2.1))  ; => nil
  (allclose (tensor '(1.0 2.0)) '(1.0 2.1) :atol 0.2)  ; => t"
  (let* ((dt (if (or (%complexp a) (%complexp b)) 'c128 'f64))
         (ta (%as-tensor a dt)) (tb (%as-tensor b dt)))
    (handler-case (broadcast-shapes (tensor-shape ta) (tensor-shape tb))
      (shape-error () (return-from allclose nil)))
    (let* ((close (le (abs (sub ta tb)) (add atol (mul rtol (abs tb)))))
           (same (equals ta tb))
           (ok (logical-or close same))
           (ok (if equal-nan (logical-or ok (logical-and (isnan ta) (isnan tb))) ok)))
      (eq (item (amin ok)) t))))

(defun tensor-equal (a b)
  "(tensor-equal A B) True when A and B have the same shape and equal elements (NaN is never
equal).
  (tensor-equal (tensor '(1 2)) '(1 2))  ; => t
  (tensor-equal (tensor '(1 2)) (tensor '((1 2))))  ; => nil"
  (let ((ta (%as-tensor a)) (tb (%as-tensor b)))
    (and (equal (tensor-shape ta) (tensor-shape tb))
         (or (eql (numel ta) 0)
             (eq (item (amin (equals ta tb))) t)))))
