;;; SPDX-License-Identifier: Apache-2.0
;;; Shared by the gradient tests: value-and-grad against central finite differences in f64.

(defun with-element (x i delta)
  ;; X (f64) with its flat element I moved by DELTA.
  (let ((flat (to-list (reshape x (list (numel x))))))
    (setf (nth i flat) (+ (nth i flat) delta))
    (reshape (tensor flat :dtype 'f64) (shape x))))

(defun numeric-grads (f inputs weight)
  ;; d/d inputs of sum(f(inputs) * weight), by central differences.
  (let ((eps 1e-6))
    (mapcar (lambda (k)
              (let ((x (nth k inputs)) (out nil))
                (dotimes (i (numel x))
                  (flet ((at (delta)
                           (let ((args (copy-list inputs)))
                             (setf (nth k args) (with-element x i delta))
                             (item (sum (mul (apply f args) weight))))))
                    (setq out (cons (/ (- (at eps) (at (- eps))) (* 2 eps)) out))))
                (reshape (tensor (reverse out) :dtype 'f64) (shape x))))
            (let ((ks nil)) (dotimes (k (length inputs)) (setq ks (cons k ks))) (reverse ks)))))

(defun grad-check (f &rest inputs)
  ;; The gradients value-and-grad computes for F at INPUTS agree with finite differences;
  ;; on a mismatch, prints the largest difference per input.
  (let* ((inputs (mapcar (lambda (x) (cast x 'f64)) inputs))
         (out (apply f inputs))
         (weight (add (rand (shape out) :dtype 'f64) 0.5))
         ;; An input no gradient reaches (only through a comparison, say) has gradient 0.
         (analytic (mapcar (lambda (g x) (or g (zeros-like x)))
                           (second (apply (value-and-grad (lambda (&rest xs) (sum (mul (apply f xs) weight)))) inputs))
                           inputs))
         (numeric (numeric-grads f inputs weight))
         (ok (every #'identity (mapcar (lambda (a n) (allclose a n :rtol 1e-5 :atol 1e-7)) analytic numeric))))
    (unless ok
      (format t "grad-check: largest differences ~s~%"
              (mapcar (lambda (a n) (item (amax (abs (sub a n))))) analytic numeric)))
    ok))
