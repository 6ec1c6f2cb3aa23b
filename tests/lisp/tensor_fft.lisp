;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, Fourier transforms: fft, ifft, rfft, irfft, fft2, fftn and the short-time
;;; transforms against values worked by hand and against a direct O(n^2) sum written here, for
;;; lengths that take each path (one DFT matmul, Cooley-Tukey steps, a prime length through
;;; Bluestein's convolution, rfft's half-length packing); round trips; norms; gradients
;;; against central differences in f64; the errors. (tests/python/test_complex_fft.py checks
;;; the same against torch.fft.) Runs on cpu, ref, the device-memory cpu and the simulated GPU.

(manual-seed 68)
(defun tl (x) (to-list x))

(defun direct-dft (xs sign)
  ;; The DFT of the list XS of (re . im) pairs by its definition, in double precision.
  (let ((n (length xs)))
    (loop for k below n
          collect (let ((re 0.0) (im 0.0))
                    (loop for x in xs for j from 0
                          do (let* ((a (/ (* sign 2 pi (mod (* j k) n)) n)) (c (cos a)) (s (sin a)))
                               (setq re (+ re (- (* (car x) c) (* (cdr x) s)))
                                     im (+ im (+ (* (car x) s) (* (cdr x) c))))))
                    (cons re im)))))

(defun pairs-close (got want tol)
  (every (lambda (g w) (and (approx= (car g) (car w) tol) (approx= (cdr g) (cdr w) tol))) got want))

(defun random-pairs (n)
  (tl (view-as-complex (randn (list n 2) :dtype 'f64))))

(deftest known-values
  (is (equal (tl (fft (tensor '(1.0 2.0 3.0 4.0)))) '((10.0 . 0.0) (-2.0 . 2.0) (-2.0 . 0.0) (-2.0 . -2.0))))
  (is (equal (tl (rfft (tensor '(1.0 2.0 3.0 4.0)))) '((10.0 . 0.0) (-2.0 . 2.0) (-2.0 . 0.0))))
  (is (equal (tl (fft (tensor '(1.0 0.0 0.0 0.0 0.0)))) '((1.0 . 0.0) (1.0 . 0.0) (1.0 . 0.0) (1.0 . 0.0) (1.0 . 0.0))))
  (is (equal (tl (fft (tensor '((0 . 1))))) '((0.0 . 1.0))))
  (is (equal (tl (fft2 (tensor '((1.0 2.0) (3.0 4.0))))) '(((10.0 . 0.0) (-2.0 . 0.0)) ((-4.0 . 0.0) (0.0 . 0.0)))))
  (is (equal (dtype (fft (tensor '(1.0 2.0)))) 'c64))
  (is (equal (dtype (fft (tensor '(1.0 2.0) :dtype 'f64))) 'c128))
  (is (equal (dtype (fft (tensor '(1 2)))) 'c64))
  (is (equal (dtype (irfft (tensor '((1 . 0) (2 . 0)) :dtype 'c128))) 'f64))
  (is (equal (tl (fftfreq 5 :d 0.1)) (tl (tensor '(0.0 2.0 4.0 -4.0 -2.0)))))
  (is (equal (tl (rfftfreq 5)) (tl (tensor '(0.0 0.2 0.4)))))
  (is (equal (tl (fftshift (tensor '((0 1 2) (3 4 5))))) '((5 3 4) (2 0 1))))
  (is (equal (tl (ifftshift (fftshift (tensor '(0 1 2 3 4))))) '(0 1 2 3 4)))
  (is (equal (tl (roll (tensor '(1 2 3 4 5)) -7)) '(3 4 5 1 2))))

(deftest against-the-definition
  ;; Each path: 1-64 points one matmul; 97 and 127 primes by one matmul; 131 and 257 primes by
  ;; Bluestein; 96, 360 and 262 (2 x 131) by Cooley-Tukey steps (4096, two levels of them, is
  ;; checked against NumPy in tests/python).
  (dolist (n '(1 2 3 7 16 64 96 97 127 131 257 262 360))
    (let* ((xs (random-pairs n))
           (x (tensor xs :dtype 'c128))
           (tol (* 1e-10 (max 1 (sqrt n)))))
      (is (pairs-close (tl (fft x)) (direct-dft xs -1) tol) (format nil "fft of ~a points" n))
      (is (pairs-close (tl (mul (ifft x) n)) (direct-dft xs 1) tol) (format nil "ifft of ~a points" n))
      (is (allclose (ifft (fft x)) x :atol 1e-12) (format nil "ifft(fft) of ~a points" n))))
  ;; f32: the same to single precision.
  (let* ((xs (random-pairs 360)) (x (tensor xs :dtype 'c64)))
    (is (pairs-close (tl (fft x)) (direct-dft xs -1) 1e-4))))

(deftest real-transforms
  (dolist (n '(1 2 3 4 9 16 30 131 1000))
    (let* ((x (randn (list 3 n) :dtype 'f64))
           (full (fft x))
           (half (rfft x)))
      (is (equal (shape half) (list 3 (+ (floor n 2) 1))))
      (is (allclose half (slice full t (list 0 (+ (floor n 2) 1)))) (format nil "rfft of ~a points" n))
      (is (allclose (irfft half :n n) x :atol 1e-12) (format nil "irfft of ~a points" n))))
  ;; The imaginary parts of X_0 and X_(N/2) do not reach the signal.
  (let ((h (tensor '((1 . 5) (2 . 1) (3 . 7)) :dtype 'c128)))
    (is (allclose (irfft h) (irfft (tensor '((1 . 0) (2 . 1) (3 . 0)) :dtype 'c128)) :atol 1e-14))
    (is (allclose (irfft h :n 5) (irfft (tensor '((1 . 0) (2 . 1) (3 . 7)) :dtype 'c128) :n 5) :atol 1e-14))))

(deftest options
  (let* ((x (randn '(4 6) :dtype 'f64)) (f (fft x)))
    (is (allclose (fft x :norm 'ortho) (div f (sqrt 6))))
    (is (allclose (fft x :norm "forward") (div f 6)))
    (is (allclose (ifft f :norm 'forward) (mul x 6)))
    ;; Parseval: an orthonormal transform keeps the sum of squares.
    (is (approx= (item (sum (square (abs (fft x :norm 'ortho))))) (item (sum (square x))) 1e-10))
    (is (allclose (fft x :axis 0) (transpose (fft (transpose x)))))
    (is (equal (shape (fft x :n 10)) '(4 10)))
    (is (allclose (fft x :n 3) (fft (slice x t '(0 3)))))
    (is (allclose (fft x :n 8 :axis 0) (fft (cat (list x (zeros '(4 6) :dtype 'f64))) :axis 0)))
    (is (allclose (fft2 x) (fft (fft x :axis 0) :axis 1)))
    (is (allclose (fftn x) (fft2 x)))
    (is (allclose (ifft2 (fft2 x)) x :atol 1e-12))
    (is (allclose (fftn (reshape x '(2 2 6)) :axes '(0 2)) (fft (fft (reshape x '(2 2 6)) :axis 0) :axis 2)))
    (is (equal (shape (fftn x :s '(3 5))) '(3 5)))))

(deftest short-time
  (let* ((x (sin (mul (arange 200 :dtype 'f64) 0.37)))
         (w (hann-window 32 :dtype 'f64))
         (s (stft x 32 :hop-length 8 :window w)))
    (is (equal (shape s) '(17 26)))
    (is (eq (dtype s) 'c128))
    ;; Frame 5 (centered: samples 5*8-16 ...) is the rfft of the windowed samples.
    (is (allclose (slice s t 5) (rfft (mul (slice x '(24 56)) w))))
    (is (allclose (istft s 32 :hop-length 8 :window w :length 200) x :atol 1e-12))
    (is (equal (shape (istft s 32 :hop-length 8 :window w)) '(200)))
    (is (allclose (istft (stft (stack (list x (neg x))) 32 :hop-length 8 :window w) 32 :hop-length 8 :window w :length 200)
                  (stack (list x (neg x))) :atol 1e-12))
    (is (equal (shape (stft x 32 :hop-length 8 :window w :onesided :false)) '(32 26)))
    (is (equal (shape (stft x 32 :center nil)) '(17 22))))
  (is (equal (tl (hann-window 4)) '(0.0 0.5 1.0 0.5)))
  (is (equal (tl (hann-window 5 :periodic nil)) '(0.0 0.5 1.0 0.5 0.0)))
  (is (equal (tl (hann-window 1)) '(1.0))))

(defun grad-error (f x)
  ;; backward's gradient of sum(F(X) * W) against central differences, X f64.
  (let* ((y0 (funcall f x))
         (w (randn (shape (if (complex-p y0) (view-as-real y0) y0)) :dtype 'f64))
         (loss (lambda (v) (let ((y (funcall f v))) (sum (mul (if (complex-p y) (view-as-real y) y) w)))))
         (leaf (requires-grad! (tensor (tl x) :dtype 'f64)))
         (eps 1e-6) (worst 0.0) (flat (tl (flatten x))))
    (backward (funcall loss leaf))
    (let ((g (tl (flatten (grad leaf)))))
      (dotimes (i (length flat) worst)
        (let ((plus (copy-list flat)) (minus (copy-list flat)))
          (setf (nth i plus) (+ (nth i plus) eps))
          (setf (nth i minus) (- (nth i minus) eps))
          (let ((fd (/ (- (item (funcall loss (reshape (tensor plus :dtype 'f64) (shape x))))
                          (item (funcall loss (reshape (tensor minus :dtype 'f64) (shape x)))))
                       (* 2 eps))))
            (setq worst (max worst (abs (- fd (nth i g)))))))))))

(deftest gradients
  (let ((x (randn '(2 12) :dtype 'f64)) (p (randn '(2 7 2) :dtype 'f64)))
    (is (< (grad-error #'fft x) 1e-7))
    (is (< (grad-error (lambda (v) (fft (view-as-complex v))) p) 1e-7))
    (is (< (grad-error (lambda (v) (ifft (view-as-complex v) :norm 'ortho)) p) 1e-7))
    (is (< (grad-error #'rfft x) 1e-7))
    (is (< (grad-error (lambda (v) (rfft v :n 9)) x) 1e-7))
    (is (< (grad-error (lambda (v) (irfft (view-as-complex v) :n 12)) p) 1e-7))
    (is (< (grad-error (lambda (v) (irfft (view-as-complex v))) p) 1e-7))
    (is (< (grad-error (lambda (v) (fft (view-as-complex v) :n 131)) (randn '(131 2) :dtype 'f64)) 1e-6))
    (is (< (grad-error (lambda (v) (stft v 8 :hop-length 2 :window (hann-window 8 :dtype 'f64))) (randn '(20) :dtype 'f64))
           1e-7))))

(deftest in-jit
  (let ((f (jit (lambda (x) (abs (rfft x))))) (x (randn '(3 64))))
    (dotimes (i 2) (is (allclose (funcall f x) (abs (rfft x)) :atol 1e-4)))))

(deftest errors
  (is-error value-error (fft (tensor '(1.0 2.0)) :n 0))
  (is-error value-error (fft (tensor '(1.0 2.0)) :norm 'sideways))
  (is-error shape-error (fft (tensor 1.0)))
  (is-error index-error (fft (tensor '(1.0 2.0)) :axis 1))
  (is-error dtype-error (rfft (tensor '((1 . 2)))))
  (is-error value-error (irfft (tensor '((1 . 0)))))
  (is-error value-error (stft (tensor '(1.0 2.0)) 0))
  (is-error value-error (stft (zeros '(64)) 8 :win-length 9))
  (is-error shape-error (stft (zeros '(4)) 16 :center nil))
  (is-error shape-error (stft (zeros '(2 2 64)) 8))
  (is-error shape-error (stft (zeros '(64)) 8 :window (ones '(7))))
  (is-error value-error (istft (stft (zeros '(64)) 8 :window (hann-window 8) :center nil) 8 :window (hann-window 8) :center nil))
  (is-error shape-error (istft (zeros '(4 3) :dtype 'c64) 8))
  (is-error value-error (fft (zeros '(4 0))))
  (is-error value-error (rfft (zeros '(2 0))))
  (is-error shape-error (fft (symbolic-shape (ones '(4 2)) '(n 2)) :axis 0))
  (is-error shape-error (rfft (symbolic-shape (ones '(4 2)) '(n 2)) :axis 0 :n 8)))

(run-tests)
