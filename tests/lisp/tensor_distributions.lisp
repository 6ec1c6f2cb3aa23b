;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, distributions: lgamma and digamma against values from Python's math.lgamma and
;;; torch.digamma, and their gradients; exponential, gamma, beta and Poisson samples: their
;;; ranges, means and variances against the formulas (within five standard errors, with a
;;; fixed seed), Poisson's probabilities against the exact ones, and the parameters' errors.

(load "data/grad_check.lisp")
(defun tl (x) (to-list x))
(manual-seed 27)

;; Samples per check: fewer on the reference executor, which interprets every element of
;; every random draw (the tolerances follow N).
(defvar *n* (if (eq (device) 'ref) 1000 20000))

(defun near (got want tol) (< (abs (- got want)) tol))

(defun moments (x)
  ;; (MEAN VARIANCE) of the samples X, in f64.
  (let* ((x (cast x 'f64)) (m (item (mean x))))
    (list m (item (mean (mul (sub x m) (sub x m)))))))

(defun check-moments (x mean var)
  ;; The sample mean and variance of X (N samples) within five standard errors.
  (let* ((n (numel x)) (mv (moments x)))
    (and (near (first mv) mean (* 5 (sqrt (/ var n))))
         (near (second mv) var (* 5 var (sqrt (/ 2.0 n)) 2)))))

(deftest gamma-functions
  (let ((xs (tensor '(0.1 0.5 1.0 1.5 2.5 7.0 30.0 170.5 -0.5 -2.5) :dtype 'f64)))
    (is (allclose (lgamma xs) '(2.2527126517 0.5723649429 0.0 -0.1207822376 0.2846828705 6.579251212 71.2570389672
                                704.0044277342 1.2655121235 -0.0562437165)
                  :atol 1e-9 :rtol 1e-12))
    (is (allclose (digamma xs) '(-10.4237549404 -1.963510026 -0.5772156649 0.036489974 0.7031566406 1.8727843351
                                 3.3844381327 5.1357998788 0.036489974 1.1031566406)
                  :atol 1e-9))
    ;; f32 keeps its precision.
    (is (allclose (lgamma (cast xs 'f32)) (cast (lgamma xs) 'f32) :rtol 1e-5 :atol 1e-5))
    ;; lgamma's gradient is digamma.
    (let ((pos (tensor '(0.3 1.0 2.5 9.0) :dtype 'f64)))
      (is (allclose (first (second (funcall (value-and-grad (lambda (x) (sum (lgamma x)))) pos))) (digamma pos)
                    :atol 1e-9))
      (is (grad-check #'digamma pos))))
  ;; Poles: lgamma is inf at 0 and the negative integers, digamma nan.
  (is (equal (tl (lgamma (tensor '(0.0 -1.0 -2.0)))) (list inf inf inf)))
  (is (every (lambda (v) (/= v v)) (tl (digamma (tensor '(0.0 -3.0)))))))

(deftest exponential-samples
  (let ((e (rand-exponential 2.0 :shp (list *n*))))
    (is (eq (dtype e) 'f32))
    (is (>= (item (amin e)) 0.0))
    (is (check-moments e 0.5 0.25)))
  ;; One rate per element; gradients reach the rates (d/drate of E/rate is -E/rate^2).
  (let* ((rates (tensor '(0.5 4.0) :dtype 'f64))
         (e (rand-exponential rates :shp (list *n* 2))))
    (is (eq (dtype e) 'f64))
    (is (check-moments (slice e t 0) 2.0 4.0))
    (is (check-moments (slice e t 1) 0.25 0.0625)))
  (is-error value-error (rand-exponential 0.0 :shp '(3)))
  (is-error shape-error (rand-exponential (tensor '(1.0 2.0)) :shp '(3))))

(deftest gamma-and-beta-samples
  (dolist (alpha '(0.3 1.0 2.5 40.0))
    (let ((g (rand-gamma alpha :rate 2.0 :shp (list *n*) :dtype 'f64)))
      (is (> (item (amin g)) 0.0))
      (is (check-moments g (/ alpha 2.0) (/ alpha 4.0)))))
  (let* ((a 2.0) (b 5.0) (x (rand-beta a b :shp (list *n*) :dtype 'f64)))
    (is (> (item (amin x)) 0.0))
    (is (< (item (amax x)) 1.0))
    (is (check-moments x (/ a (+ a b)) (/ (* a b) (* (+ a b) (+ a b) (+ a b 1))))))
  ;; Per-element parameters.
  (let ((g (rand-gamma (tensor '(1.0 9.0)) :shp (list *n* 2))))
    (is (check-moments (slice g t 1) 9.0 9.0)))
  (is-error value-error (rand-gamma -1.0 :shp '(2)))
  (is-error value-error (rand-beta 1.0 0.0 :shp '(2))))

(defun poisson-pmf (k lam)
  (exp (- (* k (log lam)) lam (item (lgamma (tensor (+ k 1.0) :dtype 'f64))))))

(deftest poisson-samples
  (dolist (lam '(0.5 3.0 9.5 10.0 30.0 400.0))
    (let ((k (rand-poisson lam :shp (list *n*) :dtype 'f64)))
      (is (tensor-equal k (floor k)))
      (is (>= (item (amin k)) 0.0))
      (is (check-moments k lam lam))))
  ;; The frequencies of 0..7 at rate 3 and of 25..34 at rate 30 against the probabilities
  ;; (each within five standard errors).
  (dolist (case '((3.0 0 7) (30.0 25 34)))
    (destructuring-bind (lam lo hi) case
      (let* ((n *n*) (k (rand-poisson lam :shp (list n) :dtype 'f64)))
        (loop for v from lo to hi
              do (let ((p (poisson-pmf v lam))
                       (f (/ (item (sum (cast (equals k (float v)) 'f64))) n)))
                   (is (near f p (* 5 (sqrt (/ (* p (- 1 p)) n))))))))))
  (is (equal (tl (rand-poisson (tensor '(0.0 0.0)))) '(0.0 0.0)))
  (is-error value-error (rand-poisson -1.0 :shp '(2))))

(run-tests)
