;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, complex tensors: c64 and c128 from pairs, parts and data; printing; promotion;
;;; arithmetic, exp, log, sqrt (its branch cut), abs, angle, polar, pow, sin, cos against values
;;; NumPy computed; views, reductions and matmul; gradients of every function against central
;;; differences in c128 (PyTorch's convention: dL/dX + i dL/dY) and one against torch.autograd;
;;; npy and safetensors files; the errors. Runs on cpu, ref, the device-memory cpu and the
;;; simulated GPU.

(defun tl (x) (to-list x))

(defun pairs-close (got want &optional (tol 1e-5))
  ;; GOT, a list of (re . im) pairs (or nested lists of them), within TOL of WANT's.
  (cond ((and (consp got) (numberp (car got)) (numberp (cdr got)))
         (and (approx= (car got) (car want) tol) (approx= (cdr got) (cdr want) tol)))
        ((and (null got) (null want)) t)
        ((and (consp got) (consp want) (= (length got) (length want)))
         (every (lambda (g w) (pairs-close g w tol)) got want))
        (t nil)))

(defvar *a* (tensor '((1 . 2) (3 . -1))))
(defvar *b* (tensor '((0 . 1) (2 . 2))))

;;; --- making them -----------------------------------------------------------------------------

(deftest creation
  (is (eq (dtype *a*) 'c64))
  (is (equal (shape *a*) '(2)))
  (is (equal (tl *a*) '((1.0 . 2.0) (3.0 . -1.0))))
  (is (equal (tl (tensor '((1 . 2) 3) :dtype 'c128)) '((1.0 . 2.0) (3.0 . 0.0))))
  (is (eq (dtype (tensor '(1 2) :dtype 'c128)) 'c128))
  (is (equal (tl (tensor '(1 2) :dtype 'c64)) '((1.0 . 0.0) (2.0 . 0.0))))
  (is (equal (tl (complex (tensor '(1.0 2.0)) (tensor '(3.0 -4.0)))) '((1.0 . 3.0) (2.0 . -4.0))))
  (is (eq (dtype (complex (tensor '(1.0) :dtype 'f64) 0)) 'c128))
  (is (equal (tl (complex (tensor '(1.0 2.0)) 5)) '((1.0 . 5.0) (2.0 . 5.0))))
  (is (equal (tl (view-as-real *a*)) '((1.0 2.0) (3.0 -1.0))))
  (is (equal (tl (view-as-complex (tensor '((1.0 2.0) (3.0 -4.0))))) '((1.0 . 2.0) (3.0 . -4.0))))
  (is (equal (shape (view-as-real (zeros '(4 5) :dtype 'c128))) '(4 5 2)))
  (is (equal (tl (zeros '(2) :dtype 'c64)) '((0.0 . 0.0) (0.0 . 0.0))))
  (is (equal (tl (ones '(1) :dtype 'c128)) '((1.0 . 0.0))))
  (is (equal (tl (full '(2) 3 :dtype 'c64)) '((3.0 . 0.0) (3.0 . 0.0))))
  (is (equal (tl (cast (tensor '(1 2)) 'c64)) '((1.0 . 0.0) (2.0 . 0.0))))
  (is (eq (dtype (cast *a* 'c128)) 'c128))
  (is (equal (tl (cast (cast *a* 'c128) 'c64)) (tl *a*)))
  (is (equal (item (sum *a*)) '(4.0 . 1.0)))
  (is (equal (aref *b* 1) '(2.0 . 2.0)))
  (is (= (ndim (zeros '(3 4) :dtype 'c64)) 2))
  (is (= (numel (zeros '(3 4) :dtype 'c64)) 12))
  (is (complex-p *a*))
  (is (not (complex-p (tensor '(1.0)))))
  (is (dtype-complex-p 'c128))
  (is (not (dtype-float-p 'c64)))
  (is (= (dtype-size 'c64) 8))
  (is (= (dtype-size 'c128) 16))
  (is (equal (item (tensor '(1 . 2))) '(1.0 . 2.0)))
  (is (equal (shape (tensor '(1 . 2) :dtype 'c128)) nil))
  ;; Random complex numbers as torch.rand/randn: parts uniform in [0, 1); a complex normal of
  ;; variance 1 (each part 1/2).
  (let ((u (rand '(4000) :dtype 'c64)) (n (randn '(4000) :dtype 'c128)))
    (is (eq (dtype u) 'c64))
    (is (and (>= (item (amin (real u))) 0.0) (< (item (amax (imag u))) 1.0)))
    (is (< (abs (- (item (mean (imag u))) 0.5)) 0.03))
    (is (eq (dtype (randn-like n)) 'c128))
    (is (< (abs (- (item (mean (square (abs n)))) 1.0)) 0.08))
    (is (< (abs (- (item (mean (square (real n)))) 0.5)) 0.05))))

(deftest printing
  (is (string= (prin1-to-string *a*) "#<tensor c64 (2) [1.+2.j 3.-1.j]>"))
  (is (string= (prin1-to-string (tensor '((0.5 . -0.25)))) "#<tensor c64 (1) [0.5000-0.2500j]>"))
  (is (string= (prin1-to-string (sum *a*)) "#<tensor c64 () 4.+1.j>")))

(deftest promotion
  (is (eq (dtype (add *a* (tensor '(1.0 2.0) :dtype 'f64))) 'c128))
  (is (eq (dtype (add *a* (tensor '(1 2)))) 'c64))
  (is (eq (dtype (mul *a* 2.5)) 'c64))
  (is (eq (dtype (add (cast *a* 'c128) *a*)) 'c128))
  (is (eq (promote-types 'c64 'f64) 'c128))
  (is (eq (promote-types 'c64 'i64) 'c64))
  (is (eq (promote-types 'f16 'c64) 'c64))
  (is (eq (result-dtype *a* 1.5) 'c64))
  (is (equal (tl (add *a* 1)) '((2.0 . 2.0) (4.0 . -1.0))))
  (is (equal (tl (add (tensor '(10.0 20.0)) *a*)) '((11.0 . 2.0) (23.0 . -1.0)))))

;;; --- arithmetic and functions, against NumPy -------------------------------------------------

(deftest arithmetic
  (is (equal (tl (add *a* *b*)) '((1.0 . 3.0) (5.0 . 1.0))))
  (is (equal (tl (sub *a* *b*)) '((1.0 . 1.0) (1.0 . -3.0))))
  (is (equal (tl (mul *a* *b*)) '((-2.0 . 1.0) (8.0 . 4.0))))
  (is (equal (tl (neg *a*)) '((-1.0 . -2.0) (-3.0 . 1.0))))
  (is (pairs-close (tl (div *a* *b*)) '((2.0 . -1.0) (0.5 . -1.0))))
  (is (equal (tl (div *a* 2)) '((0.5 . 1.0) (1.5 . -0.5))))
  (is (pairs-close (tl (reciprocal *a*)) '((0.2 . -0.4) (0.3 . 0.1))))
  (is (pairs-close (tl (pow *a* -1)) '((0.2 . -0.4) (0.3 . 0.1))))
  (is (equal (tl (pow *a* 2)) '((-3.0 . 4.0) (8.0 . -6.0))))
  (is (equal (tl (square *a*)) '((-3.0 . 4.0) (8.0 . -6.0))))
  (is (equal (tl (conj *a*)) '((1.0 . -2.0) (3.0 . 1.0))))
  (is (equal (tl (real *a*)) '(1.0 3.0)))
  (is (equal (tl (imag *a*)) '(2.0 -1.0)))
  (is (equal (tl (real (tensor '(1.5 2.5)))) '(1.5 2.5)))
  (is (equal (tl (equals *a* (tensor '((1 . 2) (3 . 1))))) '(t nil)))
  (is (equal (tl (ne *a* *a*)) '(nil nil)))
  (is (equal (tl (where (tensor '(t nil)) *a* *b*)) '((1.0 . 2.0) (2.0 . 2.0))))
  (is (allclose (mul *a* (reciprocal *a*)) (tensor '((1 . 0) (1 . 0)))))
  (is (not (allclose *a* *b*))))

(deftest functions
  (is (pairs-close (tl (exp *a*)) '((-1.13120438 . 2.47172667) (10.85226191 . -16.90139654))))
  (is (pairs-close (tl (log *a*)) '((0.80471896 . 1.10714872) (1.15129255 . -0.32175055))))
  (is (pairs-close (tl (sqrt *a*)) '((1.27201965 . 0.78615138) (1.7553173 . -0.28484878))))
  (is (pairs-close (tl (pow *a* 0.5)) '((1.27201965 . 0.78615138) (1.7553173 . -0.28484878))))
  (is (pairs-close (tl (sin *a*)) '((3.16577851 . 1.95960104) (0.21775955 . 1.16344036))))
  (is (pairs-close (tl (cos *a*)) '((2.03272301 . -3.0518978) (-1.52763825 . 0.1658444))))
  (is (pairs-close (tl (sinh *a*)) '((-0.48905626 . 1.40311925) (5.41268092 . -8.47164545))))
  (is (pairs-close (tl (cosh *a*)) '((-0.64214812 . 1.06860742) (5.43958099 . -8.42975108))))
  (is (pairs-close (tl (tanh (tensor '((1 . 2) (3 . -1) (30 . 1)) :dtype 'c128)))
                   '((1.16673626 . -0.2434582) (1.00205499 . -0.00451714) (1.0 . 0.0)) 1e-7))
  (is (allclose (abs *a*) (tensor '(2.23606798 3.16227766))))
  (is (allclose (angle *a*) (tensor '(1.10714872 -0.32175055))))
  (is (allclose (angle (tensor '(-2.0 0.0 3.0))) (tensor (list pi 0.0 0.0))))
  (is (pairs-close (tl (polar (tensor '(2.0)) (tensor '(1.0)))) '((1.08060461 . 1.68294197))))
  (is (pairs-close (tl (sign *a*)) '((0.4472136 . 0.89442719) (0.9486833 . -0.31622777))))
  (is (equal (tl (sign (zeros '(1) :dtype 'c64))) '((0.0 . 0.0))))
  ;; The branch cut: sqrt(-4 + 0i) = 2i, sqrt(-4 - 0i) = -2i, sqrt(0) = 0; log 0 = -inf.
  (is (equal (tl (sqrt (tensor '((-4 . 0) (-4 . -0.0) (0 . 0))))) '((0.0 . 2.0) (0.0 . -2.0) (0.0 . 0.0))))
  (is (equal (car (item (log (zeros '() :dtype 'c64)))) (- inf)))
  ;; |z| neither overflows nor underflows in between.
  (is (approx= (item (abs (tensor '((3e30 . 4e30))))) 5e30 1e-6))
  (is (approx= (item (abs (tensor '((3e-30 . 4e-30))))) 5e-30 1e-6))
  (is (equal (tl (abs (tensor (list (cons inf 1.0) (cons 0.0 0.0))))) (list inf 0.0)))
  (is (equal (tl (isnan (tensor (list (cons nan 0.0) '(1.0 . 2.0))))) '(t nil)))
  (is (equal (tl (isinf (tensor (list (cons 0.0 (- inf)) '(1.0 . 2.0))))) '(t nil)))
  (is (pairs-close (tl (exp (tensor '((0 . 1)) :dtype 'c128))) (list (cons (cos 1.0) (sin 1.0))) 1e-12))
  ;; The branch cut's lower side: -1 - 0i has angle -pi and log -pi i, as NumPy and PyTorch.
  (is (approx= (item (angle (tensor (list (cons -1.0 -0.0))))) (- pi) 1e-6))
  (is (pairs-close (list (item (log (tensor (list (cons -1.0 -0.0)))))) (list (cons 0.0 (- pi))) 1e-6))
  (is (equal (tl (atan2 (tensor '(-0.0 0.0 0.0)) (tensor '(-1.0 -0.0 0.0))))
             (tl (tensor (list (- pi) pi 0.0)))))
  ;; 0^y as PyTorch: 1, 0 for Re y > 0, inf + nan i for Re y < 0, nan + nan i on the axis.
  (let ((p (tl (pow (zeros '(4) :dtype 'c64) (tensor '((0 . 0) (2.5 . 0) (-1.5 . 0) (0 . 1)))))))
    (is (equal (subseq p 0 2) '((1.0 . 0.0) (0.0 . 0.0))))
    (is (and (equal (car (third p)) inf) (/= (cdr (third p)) (cdr (third p)))))
    (is (and (/= (car (fourth p)) (car (fourth p))) (/= (cdr (fourth p)) (cdr (fourth p))))))
  ;; var, std and norm of complex values are real: of |x|.
  (let ((v (tensor '((1 . 2) (3 . -4) (0 . 0.5)))))
    (is (approx= (item (var v)) 12.083333 1e-5))
    (is (eq (dtype (var v)) 'f32))
    (is (approx= (item (std v :correction 0)) (sqrt (* (/ 2.0 3.0) 12.083333)) 1e-5))
    (is (approx= (item (norm v)) 5.5 1e-6))
    (is (approx= (item (norm v :p 1)) (+ (sqrt 5) 5 0.5) 1e-6))))

;;; --- shapes, reductions, matmul ------------------------------------------------------------

(deftest views-and-reductions
  (let ((m (tensor '(((1 . 1) (2 . 0) (0 . 3)) ((4 . -1) (5 . 5) (6 . 0))))))
    (is (equal (shape m) '(2 3)))
    (is (equal (tl (transpose m)) '(((1.0 . 1.0) (4.0 . -1.0)) ((2.0 . 0.0) (5.0 . 5.0)) ((0.0 . 3.0) (6.0 . 0.0)))))
    (is (equal (tl (reshape m '(3 2))) '(((1.0 . 1.0) (2.0 . 0.0)) ((0.0 . 3.0) (4.0 . -1.0)) ((5.0 . 5.0) (6.0 . 0.0)))))
    (is (equal (tl (sum m :axis 1)) '((3.0 . 4.0) (15.0 . 4.0))))
    (is (equal (tl (sum m :axis 0 :keepdim t)) '(((5.0 . 0.0) (7.0 . 5.0) (6.0 . 3.0)))))
    (is (equal (tl (mean m :axis 0)) '((2.5 . 0.0) (3.5 . 2.5) (3.0 . 1.5))))
    (is (equal (tl (flip m 1)) '(((0.0 . 3.0) (2.0 . 0.0) (1.0 . 1.0)) ((6.0 . 0.0) (5.0 . 5.0) (4.0 . -1.0)))))
    (is (equal (tl (cat (list *a* *b*))) '((1.0 . 2.0) (3.0 . -1.0) (0.0 . 1.0) (2.0 . 2.0))))
    (is (equal (shape (stack (list *a* *b*))) '(2 2)))
    (is (equal (tl (broadcast-to *a* '(2 2))) '(((1.0 . 2.0) (3.0 . -1.0)) ((1.0 . 2.0) (3.0 . -1.0)))))
    (is (equal (tl (index-select m (tensor '(2 0)) :axis 1)) '(((0.0 . 3.0) (1.0 . 1.0)) ((6.0 . 0.0) (4.0 . -1.0)))))
    (is (equal (tl (unsqueeze *a* 0)) '(((1.0 . 2.0) (3.0 . -1.0)))))))

(deftest matmul-of-complex
  ;; (1+i 2; 3i 4-i) (1; i) = (1+3i; -1+3i... ) computed by hand: row 1: (1+i) + 2i = 1+3i;
  ;; row 2: 3i + (4-i) i = 3i + 4i + 1 = 1+7i.
  (let ((m (tensor '(((1 . 1) (2 . 0)) ((0 . 3) (4 . -1)))))
        (v (tensor '((1 . 0) (0 . 1)))))
    (is (equal (tl (matmul m v)) '((1.0 . 3.0) (1.0 . 7.0))))
    (is (equal (tl (matmul m (tensor '((1.0) (0.0))))) '(((1.0 . 1.0)) ((0.0 . 3.0)))))
    (is (equal (tl (matmul (tensor '((0.0 1.0))) m)) '(((0.0 . 3.0) (4.0 . -1.0)))))
    (is (eq (dtype (matmul m (tensor '((1.0) (0.0)) :dtype 'f64))) 'c128))
    (is (pairs-close (tl (dot *a* *b*)) '(6.0 . 5.0)))))

;;; --- gradients -------------------------------------------------------------------------------

(defvar *w* (tensor '((0.3 . -0.7) (1.1 . 0.4) (-0.5 . 0.2)) :dtype 'c128))
(defvar *z* (tensor '((1 . 2) (3 . -1) (-0.5 . 0.25)) :dtype 'c128))
(defvar *c* (tensor '((0.5 . 1) (-2 . 1) (1 . 1)) :dtype 'c128))

(defun real-loss (y)
  ;; A real function that reaches both parts of every element of Y.
  (let ((p (mul y (broadcast-to *w* (shape y)))))
    (add (sum (real p)) (mul 0.5 (sum (imag p))))))

(defun grad-error (f)
  ;; The largest difference between backward's gradient of (real-loss (F Z)) and central
  ;; differences over each part of each element of Z.
  (let* ((x (requires-grad! (tensor (tl *z*) :dtype 'c128)))
         (loss (lambda (zz) (real-loss (funcall f zz)))))
    (backward (funcall loss x))
    (let ((g (tl (view-as-real (grad x)))) (base (tl (view-as-real *z*))) (eps 1e-6) (worst 0.0))
      (dotimes (i 3 worst)
        (dotimes (k 2)
          (let ((plus (copy-tree base)) (minus (copy-tree base)))
            (setf (nth k (nth i plus)) (+ (nth k (nth i plus)) eps))
            (setf (nth k (nth i minus)) (- (nth k (nth i minus)) eps))
            (let ((fd (/ (- (item (funcall loss (view-as-complex (tensor plus :dtype 'f64))))
                            (item (funcall loss (view-as-complex (tensor minus :dtype 'f64)))))
                         (* 2 eps))))
              (setq worst (max worst (abs (- fd (nth k (nth i g)))))))))))))

(deftest gradients-against-differences
  (dolist (case (list (cons 'mul (lambda (x) (mul x *c*)))
                      (cons 'add (lambda (x) (add (mul x 2.0) *c*)))
                      (cons 'div (lambda (x) (div *c* x)))
                      (cons 'div-real (lambda (x) (div x 3.0)))
                      (cons 'exp #'exp) (cons 'log #'log) (cons 'sqrt #'sqrt)
                      (cons 'sin #'sin) (cons 'cos #'cos) (cons 'tanh #'tanh)
                      (cons 'abs (lambda (x) (abs x))) (cons 'angle (lambda (x) (angle x)))
                      (cons 'conj #'conj) (cons 'sign #'sign)
                      (cons 'pow (lambda (x) (pow x 2.5))) (cons 'pow-3 (lambda (x) (pow x -3)))
                      (cons 'real (lambda (x) (mul (real x) (imag x))))
                      (cons 'matmul (lambda (x) (matmul (matmul (reshape x '(3 1)) (reshape *c* '(1 3))) x)))
                      (cons 'sum (lambda (x) (mul (sum x) x)))
                      (cons 'mean (lambda (x) (sub x (mean x))))
                      (cons 'views (lambda (x) (add (flip x 0) (cat (list (slice x '(0 1)) (reshape (transpose (reshape (slice x '(1 3)) '(1 2))) '(2)))))))))
    (is (< (grad-error (cdr case)) 1e-7) (format nil "gradient of ~a" (car case)))))

(deftest gradient-as-pytorch
  ;; torch: z.grad after (exp(z) w).real.sum() + 0.5 (exp(z) w).imag.sum()
  (let ((z (requires-grad! (tensor (tl *z*) :dtype 'c128))))
    (backward (real-loss (exp z)))
    (is (eq (dtype (grad z)) 'c128))
    (is (pairs-close (tl (grad z)) '((2.1575 . -0.8379) (11.5727 . 23.5997) (-0.3026 . -0.2044)) 1e-4)))
  ;; A complex loss with its gradient V stands for Re(sum(conj(V) Z)).
  (let ((z (requires-grad! (tensor '((1 . 1) (2 . -1))))))
    (backward (mul z (tensor '((0 . 1) (1 . 0)))) (tensor '((1 . 0) (0 . 1))))
    (is (equal (tl (grad z)) '((0.0 . -1.0) (0.0 . 1.0)))))
  (let ((z (requires-grad! (tensor '((1 . 1))))))
    (is-error dtype-error (backward (sum z))))
  ;; value-and-grad makes complex arguments leaves too: d|z|/dz = z/|z|.
  (let ((r (funcall (value-and-grad (lambda (z) (sum (abs z)))) (tensor '((3 . 4))))))
    (is (pairs-close (tl (first (second r))) '((0.6 . 0.8)) 1e-6))))

;;; --- jit --------------------------------------------------------------------------------------

(deftest jit-capture
  ;; A complex argument and complex results keep their type through a trace and its replays,
  ;; and a real call of the same function is a different trace.
  (let ((f (jit (lambda (z w) (list (mul z w) (sum z) (abs z))))))
    (dotimes (i 3)
      (let ((r (funcall f *a* *b*)))
        (is (equal (tl (first r)) '((-2.0 . 1.0) (8.0 . 4.0))))
        (is (equal (item (second r)) '(4.0 . 1.0)))
        (is (allclose (third r) (tensor '(2.23606798 3.16227766)))))))
  (let ((g (jit (lambda (x) (mul x 2.0)))))
    (is (equal (tl (funcall g (tensor '(1.0 2.0)))) '(2.0 4.0)))
    (is (equal (tl (funcall g (tensor '((1.0 . 2.0) (3.0 . 4.0))))) '((2.0 . 4.0) (6.0 . 8.0))))
    (is (equal (tl (funcall g (tensor '(1.0 2.0)))) '(2.0 4.0)))))

;;; --- files -----------------------------------------------------------------------------------

(deftest files
  (let ((m (tensor '(((1 . 1) (2 . 0) (0 . 3)) ((4 . -1) (5 . 5) (6 . 0.5))))))
    (save-npy m "/tmp/tl-complex-test.npy")
    (is (tensor-equal (load-npy "/tmp/tl-complex-test.npy") m))
    (is (eq (dtype (load-npy "/tmp/tl-complex-test.npy")) 'c64))
    (save-npy (cast m 'c128) "/tmp/tl-complex-test.npy")
    (is (eq (dtype (load-npy "/tmp/tl-complex-test.npy")) 'c128))
    (is (equal (tl (load-npy "/tmp/tl-complex-test.npy")) (tl m)))
    (save-npy (transpose m) "/tmp/tl-complex-test.npy")
    (is (equal (tl (load-npy "/tmp/tl-complex-test.npy")) (tl (transpose m))))
    (save-safetensors (list (cons "z" m) (cons "r" (tensor '(1.0)))) "/tmp/tl-complex-test.safetensors")
    (let ((back (load-safetensors "/tmp/tl-complex-test.safetensors")))
      (is (equal (tl (cdr (assoc "z" back :test #'string=))) (tl m)))
      (is (eq (dtype (cdr (assoc "z" back :test #'string=))) 'c64)))
    (is (equal (second (assoc "z" (safetensors-header "/tmp/tl-complex-test.safetensors") :test #'string=)) 'c64))
    (is-error dtype-error (save-safetensors (list (cons "z" (cast m 'c128))) "/tmp/tl-complex-test.safetensors"))))

;;; --- optimizers ------------------------------------------------------------------------------

(deftest optimizers-on-complex-parameters
  ;; A complex parameter steps as its parts, as PyTorch's optimizers do: three steps of
  ;; minimizing sum |z - c|^2 give torch.optim's values.
  (require 'optim)
  (let ((c (tensor '((0.5 . -1.0) (2.0 . 0.0)))))
    (let* ((z (requires-grad! (tensor '((1.0 . 2.0) (-0.5 . 0.25)))))
           (opt (optim:adam (list z) :lr 0.1)))
      (dotimes (i 3) (optim:zero-grad! opt) (step! opt (backward (sum (square (abs (sub z c)))))))
      (is (eq (dtype z) 'c64))
      (is (pairs-close (tl z) '((0.7049 . 1.7004) (-0.2005 . -0.0302)) 1e-3)))
    (let* ((z (requires-grad! (tensor '((1.0 . 2.0) (-0.5 . 0.25)))))
           (opt (optim:sgd (list z) :lr 0.1 :momentum 0.9)))
      (dotimes (i 3) (optim:zero-grad! opt) (step! opt (backward (sum (square (abs (sub z c)))))))
      (is (pairs-close (tl z) '((0.5310 . -0.8140) (1.8450 . 0.0155)) 1e-3)))))

;;; --- errors ----------------------------------------------------------------------------------

(deftest errors
  (is-error dtype-error (cast *a* 'f32))
  (is-error dtype-error (prim:sqrt *a*))
  (is-error dtype-error (prim:add *a* (tensor '(1.0 2.0))))
  (is-error dtype-error (amax *a*))
  (is-error dtype-error (prod *a*))
  (is-error dtype-error (lt *a* *b*))
  (is-error dtype-error (imag (tensor '(1.0))))
  (is-error dtype-error (complex *a* 1.0))
  (is-error dtype-error (tensor '((1 . 2)) :dtype 'f32))
  (is-error dtype-error (view-as-complex (tensor '(1 2))))
  (is-error shape-error (view-as-complex (tensor '(1.0 2.0 3.0))))
  (is-error dtype-error (view-as-real (tensor '(1.0))))
  (is-error dtype-error (relu *a*))
  (is-error dtype-error (floor *a*))
  (is-error dtype-error (round *a*))
  (is-error dtype-error (trunc *a*))
  (is-error dtype-error (ceil *a*))
  (is-error dtype-error (erf *a*))
  (is-error dtype-error (gelu *a*))
  (is-error dtype-error (take-rows (tensor '(((1 . 2)))) '(0)))
  (is-error dtype-error (save-gguf (list (cons "z" *a*)) "/tmp/tl-complex-test.gguf")))

(run-tests)
