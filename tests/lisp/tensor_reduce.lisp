;;; SPDX-License-Identifier: Apache-2.0
;;; Reductions over any axes with :keepdim, against hand-computed values.

(defun tl (x) (to-list x))
(defvar m (tensor '((1.0 -2.0 3.0) (4.0 5.0 -6.0))))
(defvar cube (reshape (arange 24) '(2 3 4)))

(deftest sums-and-means
  (is (allclose (sum m) 5.0))
  (is (equal (shape (sum m)) nil))
  (is (allclose (sum m :axis 0) '(5.0 3.0 -3.0)))
  (is (allclose (sum m :axis 1) '(2.0 3.0)))
  (is (allclose (sum m :axis -1 :keepdim t) '((2.0) (3.0))))
  (is (equal (shape (sum m :axis 1 :keepdim t)) '(2 1)))
  (is (equal (tl (sum cube :axis '(0 2))) '(60 92 124)))
  (is (equal (tl (sum cube :axis '(0 2) :keepdim t)) '(((60) (92) (124)))))
  (is (equal (tl (sum (tensor '(t nil t)))) 2))                ; bools count as i32
  (is (eq (dtype (sum (tensor '(1 2) :dtype 'i8) :dtype 'i64)) 'i64))
  (is (allclose (mean m) 0.8333333333 :rtol 1e-6))
  (is (allclose (mean m :axis 0) '(2.5 1.5 -1.5)))
  (is (allclose (mean (tensor '(1 2 3 4))) 2.5))
  (is (eq (dtype (mean (tensor '(1 2)))) 'f32))
  (is (allclose (prod m :axis 1) '(-6.0 -120.0)))
  (is (equal (tl (prod (tensor '(1 2 3 4)))) 24))
  (is (allclose (sum (zeros '(0 3)) :axis 0) '(0.0 0.0 0.0)))   ; empty sum is 0
  (is (allclose (prod (zeros '(0))) 1.0))
  ;; Over an axis of length 0 the identity, at once however long the other axes (a loop over
  ;; 10^11 rows of nothing took seconds; a fuzzed GGUF's (8.9e17 0) tensor, years).
  (let ((e (realize (zeros '(100000000000 0)))))
    (is (equal (tl (sum e)) 0.0))
    (is (equal (tl (prod (cast e 'i64))) 1))
    (is (equal (tl (amax (cast e 'i16) :axis '(0 1))) -32768))
    (is (equal (tl (amax (cast e 'u8))) 0))
    (is (equal (tl (sum (realize (zeros '(3 0 100000000000))) :axis '(1 2))) '(0.0 0.0 0.0))))
  (is-error index-error (sum m :axis 2))
  (is-error index-error (sum m :axis '(0 0))))

(deftest extremes
  (is (allclose (max m) 5.0))
  (is (allclose (min m) -6.0))
  (is (allclose (max m :axis 0) '(4.0 5.0 3.0)))
  (is (allclose (min m :axis 1 :keepdim t) '((-2.0) (-6.0))))
  (is (equal (tl (amax (tensor '(3 -7 2) :dtype 'i8))) 3))
  (is (equal (tl (amin (tensor '(3 200 2) :dtype 'u8))) 2))
  (is (equal (tl (amin (tensor '(3 -7 2) :dtype 'i64))) -7))
  (is (equal (tl (amax (tensor '(nil t)))) t))
  (is (equal (tl (amin (tensor '(nil t)))) nil))
  (is (isnan (max (tensor (list 1.0 nan 3.0)))))
  (is (equal (tl (argmax m :axis 1)) '(2 1)))
  (is (equal (tl (argmin m :axis 1)) '(1 2)))
  (is (equal (tl (argmax m)) 4))                               ; in the flattened tensor
  (is (equal (tl (argmax m :axis 0 :keepdim t)) '((1 1 0))))
  (is (equal (tl (argmax (tensor '(1 3 3 2)))) 1))             ; first of equal maxima
  (is (equal (tl (argmax (tensor (list 1.0 nan 3.0)))) 1)))    ; NaN counts as the largest

(deftest spread
  ;; var with correction 1 (unbiased) by default; hand values for m.
  (is (allclose (var m) 17.366666667 :rtol 1e-6))
  (is (allclose (var m :correction 0) 14.472222222 :rtol 1e-6))
  (is (allclose (var m :axis 1) '(6.333333333 37.0) :rtol 1e-6))
  (is (allclose (std m :axis 1) (list (sqrt 6.333333333) (sqrt 37.0)) :rtol 1e-6))
  (is (allclose (std (tensor '(2.0 4.0 4.0 4.0 5.0 5.0 7.0 9.0)) :correction 0) 2.0))
  (is (allclose (var m :axis 1 :keepdim t) '((6.333333333) (37.0)) :rtol 1e-6)))

(deftest softmax-family
  (let ((x (tensor '((1.0 2.0 3.0) (1000.0 1000.0 1000.0)))))
    (is (allclose (logsumexp x :axis 1) (list (log (+ (exp 1.0) (exp 2.0) (exp 3.0))) (+ 1000.0 (log 3.0)))))
    (is (allclose (softmax x) (list (mapcar (lambda (v) (/ (exp v) (+ (exp 1.0) (exp 2.0) (exp 3.0)))) '(1.0 2.0 3.0))
                                    (list (/ 1.0 3) (/ 1.0 3) (/ 1.0 3)))))
    (is (allclose (sum (softmax x :axis 1) :axis 1) '(1.0 1.0)))
    (is (allclose (softmax x :axis 0) '((0.0 0.0 0.0) (1.0 1.0 1.0))))
    (is (allclose (log-softmax x) (log (softmax x)) :atol 1e-4))   ; f32: 1000 + log 3 keeps 4 decimals
    (is (allclose (logsumexp (tensor (list (- inf) (- inf)))) (- inf)))
    (is (allclose (logsumexp (tensor '((0.0 0.0) (0.0 0.0)))) (log 4.0)))))

(deftest cumulative
  (is (equal (tl (cumsum (tensor '(1 2 3 4)))) '(1 3 6 10)))
  (is (equal (tl (cumsum (tensor '((1 2) (3 4))) :axis 0)) '((1 2) (4 6))))
  (is (equal (tl (cumsum (tensor '((1 2) (3 4))) :axis 1)) '((1 3) (3 7))))
  (is (equal (tl (cumsum (tensor '(t t nil t)))) '(1 2 2 3))))

(deftest long-scans
  ;; Axes longer than *scan-square-limit* scan in log2(N) steps: the same values and
  ;; gradients as the square form (forced here on short axes), zeros in products included.
  (let ((*scan-square-limit* 2))
    (is (equal (tl (cumsum (tensor '(1 2 3 4 5)))) '(1 3 6 10 15)))
    (is (equal (tl (cumsum (tensor '((1 2 3) (4 5 6))) :axis 0)) '((1 2 3) (5 7 9))))
    (is (equal (tl (cumsum (tensor '((1 2 3) (4 5 6))) :axis 1)) '((1 3 6) (4 9 15))))
    (is (equal (tl (cumprod (tensor '(1.0 2.0 0.0 4.0 5.0)))) '(1.0 2.0 0.0 0.0 0.0)))
    (is (equal (tl (cumprod (tensor '(2 3 4 5 6 7 8)))) '(2 6 24 120 720 5040 40320)))
    (let ((v (requires-grad! (tensor '(2.0 0.0 5.0 3.0) :dtype 'f64))))
      (backward (sum (cumprod v)))
      (is (equal (tl (grad v)) '(1.0 42.0 0.0 0.0))))
    (let ((v (requires-grad! (tensor '(1.0 -2.0 3.0) :dtype 'f64))))
      (backward (sum (mul (cumsum v) (tensor '(1.0 10.0 100.0) :dtype 'f64))))
      (is (equal (tl (grad v)) '(111.0 110.0 100.0)))))
  ;; 3000 ones: a long axis by default; every prefix exact.
  (let ((c (cumsum (ones '(2 3000)) :axis 1)))
    (is (equal (tl (slice c t -1)) '(3000.0 3000.0)))
    (is (= (item (sum (slice c 0))) (/ (* 3000.0 3001) 2)))))

(run-tests)
