;;; SPDX-License-Identifier: Apache-2.0
;;; Discrete Fourier transforms of any length along any axis: fft, ifft, rfft, irfft, fft2,
;;; ifft2, fftn, ifftn, with NumPy's and PyTorch's conventions (X_k = sum_j x_j e^(-2 pi i jk/n),
;;; the norms "backward", "ortho" and "forward"), and the frequency helpers.
;;;
;;; How: a length n = n1 n2 splits into n1-point transforms (a matmul by the n1 x n1 DFT
;;; matrix), a twiddle multiply and n2-point transforms, recursively (Cooley-Tukey's four
;;; steps; n1 the largest factor up to 64); up to 64 points, or a prime length up to 128, is one
;;; matmul by the DFT matrix; a longer prime length is a convolution by a chirp (Bluestein),
;;; through a power-of-two transform. Every step is a matmul, a multiply or a view, so the
;;; transforms fuse and run on every device, and their gradients are the primitives'. The DFT
;;; and twiddle matrices are computed once per size and dtype (in f64) and kept.

(defvar *%fft-tables* (make-hash-table :test 'equal)
  "The DFT, twiddle and chirp tables computed so far, by (kind sizes sign dtype).
  (hash-table-p *%fft-tables*)  ; => t")

(defconstant +%fft-direct+ 64 "Lengths up to this are one DFT matmul.
  (integerp +%fft-direct+)  ; => t")

(defvar *%fft-lazy-tables* nil
  "True while an optimizer rule builds a generated transform: its tables are then graphs, not
realized (a rule runs inside a realize).
  *%fft-lazy-tables*  ; => nil")

(defun %fft-table (key make)
  ;; The realized complex tensor MAKE computes, kept under KEY (inside an optimizer rule, the
  ;; graph MAKE builds: see *%fft-lazy-tables*). (no-grad is defined after this file.)
  (or (and *%fft-lazy-tables* (funcall make))
      (gethash key *%fft-tables*)
      (let ((was (%set-grad-enabled nil)))
        (unwind-protect (setf (gethash key *%fft-tables*) (realize (funcall make)))
          (%set-grad-enabled was)))))

(defun %unit-roots (shp numer n sign dt)
  ;; exp(SIGN 2 pi i NUMER / N) for NUMER an integer tensor of shape SHP holding values in
  ;; [0, N), computed in f64 and cast to complex dtype DT. Quarter turns are exact (1, i, -1,
  ;; -i), so a transform of integers gives integers where NumPy's does.
  (let* ((angle (mul (cast numer 'f64) (/ (* sign 2 pi) n)))
         (four (prim:mul numer (prim:const 4 'i64 shp)))
         (quarter (equals (prim:mod four (prim:const n 'i64 shp)) 0))
         (q (prim:mod (prim:idiv four (prim:const n 'i64 shp)) (prim:const 4 'i64 shp)))
         (qc (where (equals q 0) 1.0 (where (equals q 2) -1.0 0.0)))
         (qs (where (equals q 1) (float sign) (where (equals q 3) (float (- sign)) 0.0)))
         (re (where quarter (cast qc 'f64) (cos angle)))
         (im (where quarter (cast qs 'f64) (sin angle))))
    (cast (complex re im) dt)))

(defun %fft-omega (rows cols n sign dt)
  ;; (ROWS COLS): element (r c) is exp(SIGN 2 pi i (r c mod N) / N).
  (%fft-table (list 'omega rows cols n sign dt)
              (lambda ()
                (let ((shp (list rows cols)))
                  (%unit-roots shp (prim:mod (prim:mul (prim:iota shp 0 'i64) (prim:iota shp 1 'i64))
                                             (prim:const n 'i64 shp))
                               n sign dt)))))

(defun %dft-right (x sign)
  ;; X (..., m) complex times the DFT matrix, as one real matmul of X's parts (..., 2m) by the
  ;; (2m 2m) matrix of 2 x 2 blocks ((Wr Wi) (-Wi Wr)): (xr + i xi)(Wr + i Wi) without
  ;; splitting X into its parts.
  (let* ((shp (shape x)) (m (car (last shp))) (dt (dtype x))
         (blocks (%fft-table (list 'blocks m sign dt)
                             (lambda ()
                               (let* ((w (%fft-omega m m m sign dt)) (wr (real w)) (wi (imag w))
                                      ;; (j c' k c): row (j, c'), column (k, c)
                                      (top (stack (list wr wi) :axis -1))          ; c' = real: (Wr Wi)
                                      (bottom (stack (list (neg wi) wr) :axis -1)) ; c' = imaginary: (-Wi Wr)
                                      (b4 (stack (list top bottom) :axis 1)))      ; (j c' k c)
                                 (reshape b4 (list (* 2 m) (* 2 m)))))))
         ;; The leading axes as rows of one 2-d product (a batched one is slower).
         (flat (reshape (view-as-real x) (list (apply #'dim* (butlast shp)) (* 2 m)))))
    (view-as-complex (reshape (matmul flat blocks) (append (butlast shp) (list m 2))))))

(defun %dft-left (x sign)
  ;; The DFT along X's next-to-last axis (X complex (... m n)): the (2m 2m) real matrix of
  ;; 2 x 2 blocks ((Wr -Wi) (Wi Wr)) times X's parts arranged (... 2m n), one real matmul.
  (let* ((shp (shape x)) (lead (butlast shp 2)) (m (nth (- (length shp) 2) shp)) (n (car (last shp)))
         (dt (dtype x)) (k (length lead))
         (blocks (%fft-table (list 'left-blocks m sign dt)
                             (lambda ()
                               (let* ((w (%fft-omega m m m sign dt)) (wr (real w)) (wi (imag w))
                                      ;; (k c j c'): row (k, c), column (j, c')
                                      (re-row (stack (list wr (neg wi)) :axis -1))
                                      (im-row (stack (list wi wr) :axis -1)))
                                 (reshape (stack (list re-row im-row) :axis 1) (list (* 2 m) (* 2 m)))))))
         (p (prim:permute (view-as-real x) (append (range k) (list k (+ k 2) (+ k 1)))))   ; (... m 2 n)
         (y (matmul blocks (reshape p (append lead (list (* 2 m) n))))))
    (view-as-complex (prim:permute (reshape y (append lead (list m 2 n))) (append (range k) (list k (+ k 2) (+ k 1)))))))

(defun %fft-factor (n)
  ;; The largest factor of N from 2 to 64 (N above 64), or nil when N is prime.
  (loop for d from (min 64 (floor n 2)) downto 2 when (= 0 (mod n d)) return d))

(defun %fft-last (x sign)
  ;; The unnormalized transform of complex X along its last axis, exp(SIGN 2 pi i jk/n).
  (let* ((shp (shape x)) (n (car (last shp))) (dt (dtype x)))
    (cond ((<= n 1) x)
          ((<= n +%fft-direct+) (%dft-right x sign))
          (t
           (let ((n1 (%fft-factor n)))
             (cond ((and (null n1) (<= n 128)) (%dft-right x sign))
                   ((null n1) (%bluestein x sign))
                   (t
                    ;; j = n2 j1 + j2 and k = k1 + n1 k2: n1-point transforms over j1, the
                    ;; twiddle exp(SIGN 2 pi i j2 k1 / n), n2-point transforms over j2.
                    (let* ((n2 (/ n n1))
                           (lead (butlast shp))
                           (x3 (reshape x (append lead (list n1 n2))))
                           (a (%dft-left x3 sign))
                           (a (mul a (%fft-omega n1 n2 n sign dt)))
                           (c (%fft-last a sign)))
                      (reshape (transpose c) (append lead (list n)))))))))))

(defun %pow2-at-least (m) (let ((p 1)) (loop while (< p m) do (setq p (* p 2))) p))

(defun %bluestein (x sign)
  ;; jk = (j^2 + k^2 - (k - j)^2) / 2, so with w_k = exp(SIGN pi i k^2 / n) the transform is
  ;; w_k sum_j (x_j w_j) conj(w_(k-j)): a convolution, done by power-of-two transforms.
  (let* ((shp (shape x)) (n (car (last shp))) (dt (dtype x))
         (m (%pow2-at-least (- (* 2 n) 1)))
         (w (%fft-table (list 'chirp n sign dt)
                        (lambda ()
                          (let ((k (prim:iota (list n) 0 'i64)))
                            (%unit-roots (list n) (prim:mod (prim:mul k k) (prim:const (* 2 n) 'i64 (list n)))
                                         (* 2 n) sign dt)))))
         ;; conj(w) at 0 .. n-1 and, wrapped, at m-n+1 .. m-1; its transform, kept.
         (bt (%fft-table (list 'chirp-spectrum n sign dt)
                         (lambda ()
                           (let* ((cw (conj w))
                                  (b (add (pad cw (list (list 0 (- m n))))
                                          (pad (flip (slice cw (list 1 n)) 0) (list (list (+ (- m n) 1) 0))))))
                             (%fft-last b -1)))))
         (a (pad (mul x w) (append (mapcar (lambda (d) '(0 0)) (butlast shp)) (list (list 0 (- m n))))))
         (conv (div (%fft-last (mul (%fft-last a -1) bt) 1) m)))
    (mul (%narrow-last conv 0 n) w)))

(defun %narrow-last (x start end)
  ;; X's last axis from START below END.
  (prim:shrink x (append (mapcar (lambda (d) (list 0 d)) (butlast (shape x))) (list (list start end)))))

(defun %fft-norm-scale (fn norm n inverse)
  ;; The factor the transform of N points is multiplied by under NORM.
  (let ((mode (cond ((null norm) 'backward)
                    ((stringp norm) (intern (string-downcase norm)))
                    ((symbolp norm) (intern (string-downcase (symbol-name norm))))
                    (t norm))))
    (cond ((eq mode 'backward) (if inverse (/ 1.0 n) nil))
          ((eq mode 'forward) (if inverse nil (/ 1.0 n)))
          ((eq mode 'ortho) (/ 1.0 (sqrt n)))
          (t (error 'value-error "~a: norm must be backward, ortho or forward, got ~s" fn norm)))))

(defun %fft-points (fn points axis)
  ;; POINTS, the length of a transform along AXIS: a positive integer, else an error.
  (cond ((not (integerp points))
         (error 'shape-error "~a: the length along axis ~a is symbolic (~a); a transform needs a concrete size"
                fn axis points))
        ((< points 1) (error 'value-error "~a: no points to transform along axis ~a" fn axis)))
  points)

(defun %fft-size (fn x axis n)
  ;; X (complex) along AXIS trimmed or zero-padded to N points (when N is given).
  (let* ((shp (shape x)) (size (nth axis shp)))
    (when n (%fft-points fn size axis))
    (cond ((null n) x)
          ((not (and (integerp n) (> n 0)))
           (error 'value-error "~a: the number of points must be a positive integer, got ~s" fn n))
          ((< n size)
           (prim:shrink x (loop for d in shp for i from 0 collect (if (= i axis) (list 0 n) (list 0 d)))))
          ((> n size)
           (prim:pad x (loop for d in shp for i from 0 collect (if (= i axis) (list 0 (- n size)) '(0 0)))))
          (t x))))

(defun %fft-axis (fn x n axis inverse norm)
  ;; The transform of X along AXIS (complex; a real X is converted), N points.
  (let* ((z (%as-complex x))
         (_ (when (= (ndim z) 0) (error 'shape-error "~a: needs a tensor of at least one axis, got a 0-d tensor" fn)))
         (ax (%axis fn axis (ndim z)))
         (z (%fft-size fn z ax n))
         (points (%fft-points fn (nth ax (shape z)) ax))
         (last-axis (- (ndim z) 1))
         (moved (if (= ax last-axis) z (transpose z ax last-axis)))
         (y (%fft-c2c moved (if inverse 1 -1)))
         (y (if (= ax last-axis) y (transpose y ax last-axis)))
         (scale (%fft-norm-scale fn norm points inverse)))
    (declare (ignore _))
    (if scale (mul y scale) y)))

(defcomposite fft (x &key n (axis -1) norm)
  "(fft X &key n (axis -1) norm) The discrete Fourier transform of X along AXIS: element k is
sum_j x_j exp(-2 pi i jk/N), for any length N (X trimmed or zero-padded to N points when
given). A real X is transformed as complex. NORM: nil or backward (no scaling), ortho
(1/sqrt N) or forward (1/N), as numpy.fft and torch.fft. Differentiable.
  (to-list (fft (tensor '(1.0 2.0 3.0 4.0))))  ; => ((10.0 . 0.0) (-2.0 . 2.0) (-2.0 . 0.0) (-2.0 . -2.0))
  (shape (fft (zeros '(3 5)) :n 8 :axis 0))  ; => (8 5)"
  (%fft-axis 'fft x n axis nil norm))

(defcomposite ifft (x &key n (axis -1) norm)
  "(ifft X &key n (axis -1) norm) The inverse transform of fft along AXIS: element k is
(1/N) sum_j x_j exp(2 pi i jk/N) (NORM as fft's: backward scales the inverse).
  (to-list (real (ifft (fft (tensor '(1.0 2.0 3.0))))))  ; => (1.0 2.0 3.0)"
  (%fft-axis 'ifft x n axis t norm))

(defun %to-last (x ax) (if (= ax (- (ndim x) 1)) x (transpose x ax (- (ndim x) 1))))

(defun %half-twiddles (n dt)
  ;; exp(-2 pi i k / N) for k = 0 .. N/2.
  (%fft-table (list 'half n dt)
              (lambda () (let ((shp (list (+ (floor n 2) 1))))
                           (%unit-roots shp (prim:iota shp 0 'i64) n -1 dt)))))

(defun %rfft-last (x)
  ;; Real X (..., N), N even, transformed (unnormalized) through one N/2-point complex
  ;; transform: z_j = x_2j + i x_2j+1 has Z = E + i O (E, O the transforms of the even and odd
  ;; samples), and X_k = E_k + w_k O_k with E_k = (Z_k + conj Z_(h-k)) / 2 and
  ;; O_k = (Z_k - conj Z_(h-k)) / 2i, for k = 0 .. h = N/2.
  (let* ((shp (shape x)) (n (car (last shp))) (h (/ n 2)) (lead (butlast shp))
         (z (view-as-complex (reshape x (append lead (list h 2)))))
         (zz (%fft-last z -1))
         (first (%narrow-last zz 0 1))
         (ext (cat (list zz first) :axis -1))
         (rev (conj (cat (list first (flip (%narrow-last zz 1 h) -1) first) :axis -1)))
         (e (mul (add ext rev) 0.5))
         (o (mul (sub ext rev) (tensor '((0.0 . -0.5)) :dtype (dtype zz)))))
    (add e (mul o (%half-twiddles n (dtype zz))))))

(defun %irfft-last (x n)
  ;; Complex X (..., N/2 + 1), N even, to the real signal (unnormalized: N/2 times the
  ;; backward irfft): Z_k = E_k + i O_k with E_k = (X_k + conj X_(h-k)) / 2 and
  ;; O_k = (X_k - conj X_(h-k)) conj(w_k) / 2 for k < h, then z = an h-point inverse
  ;; transform, whose parts are the even and odd samples.
  (let* ((h (/ n 2)) (lead (butlast (shape x))) (dt (dtype x))
         (rev (conj (flip x -1)))
         (e (mul (add x rev) 0.5))
         (o (mul (mul (sub x rev) (conj (%half-twiddles n dt))) 0.5))
         (zk (%narrow-last (add e (mul o (tensor '((0.0 . 1.0)) :dtype dt))) 0 h)))
    (reshape (view-as-real (%fft-last zk 1)) (append lead (list n)))))

;;; The transforms along the last axis, unnormalized, through FFTW's external kernels where it
;;; is loaded (support/fftw.h: the host devices; on the GPUs the rules of
;;; stdlib/optimizers/70-fft.lisp put the generated kernels in their place), else generated.
;;; The kernels' gradients are transforms too (with-custom-grad).

(defun %fftw-p () (and (%fftw-available-p) (not *%fft-lazy-tables*)))

(defun %fft-kernel (name x out-shape)
  (prim:extern name (list x) (dtype x) out-shape))

(defun %fft-c2c (z sign)
  ;; Complex Z (... n) transformed along its last axis with exp(SIGN 2 pi i jk/n).
  (if (not (%fftw-p))
      (%fft-last z sign)
      (with-custom-grad ((v z))
          (let ((parts (view-as-real v)))
            (view-as-complex (%fft-kernel (if (< sign 0) "fft-c2c" "fft-c2c-inverse") parts (shape parts))))
        (g) (list (%fft-c2c g (- sign))))))

(defun %half-weights (n k-scale dt)
  ;; (N/2 + 1) reals: 1 at the frequencies 0 and N/2 (N even), K-SCALE between.
  (let* ((h (+ (floor n 2) 1)) (inner (- h (if (evenp n) 2 1))))
    (pad (full (list inner) k-scale :dtype dt) (list (list 1 (- h 1 inner))) :value 1.0)))

(defun %r2c-generated (x)
  (let ((n (car (last (shape x)))))
    (if (and (evenp n) (> n 2))
        (%rfft-last x)
        (%narrow-last (%fft-last (%as-complex x) -1) 0 (+ (floor n 2) 1)))))

(defun %r2c (x)
  ;; Real X (... n) to its frequencies 0 .. n/2, unnormalized. Gradient: Re(sum_k G_k
  ;; exp(2 pi i jk/n)), the real inverse of G with its frequencies between 0 and n/2 halved.
  (let ((n (car (last (shape x)))))
    (if (not (%fftw-p))
        (%r2c-generated x)
        (with-custom-grad ((v x))
            (view-as-complex (%fft-kernel "fft-r2c" v (append (butlast (shape v)) (list (+ (floor n 2) 1) 2))))
          (g) (list (%c2r (mul g (%half-weights n 0.5 (%part-dtype (dtype g)))) n))))))

(defun %c2r-generated (x n)
  (if (and (evenp n) (> n 2))
      (let* ((pd (%part-dtype (dtype x)))
             ;; The imaginary parts of X_0 and X_(N/2) dropped: a real signal has none there.
             (mask (pad (ones (list (- (floor n 2) 1)) :dtype pd) '((1 1)))))
        (mul (%irfft-last (complex (real x) (mul (imag x) mask)) n) 2.0))
      ;; X_k for k > N/2 is conj(X_(N-k)), and the full inverse.
      (let* ((rest (- n (+ (floor n 2) 1)))
             (full (if (> rest 0) (cat (list x (conj (flip (%narrow-last x 1 (+ rest 1)) -1))) :axis -1) x)))
        (real (%fft-last full 1)))))

(defun %c2r (x n)
  ;; Complex X (... n/2 + 1) to the real signal of N points whose frequencies 0 .. n/2 it
  ;; holds, unnormalized (N times irfft's backward norm). Gradient: the real transform of G
  ;; with its frequencies between 0 and n/2 doubled.
  (if (not (%fftw-p))
      (%c2r-generated x n)
      (with-custom-grad ((v x))
          (%fft-kernel (if (evenp n) "fft-c2r-even" "fft-c2r-odd") (view-as-real v) (append (butlast (shape v)) (list n)))
        (g) (list (mul (%r2c g) (%half-weights n 2.0 (dtype g)))))))

(defcomposite rfft (x &key n (axis -1) norm)
  "(rfft X &key n (axis -1) norm) The transform of real X along AXIS, only the frequencies
0 .. N/2 (the rest are their conjugates): N/2 + 1 complex values.
  (to-list (rfft (tensor '(1.0 2.0 3.0 4.0))))  ; => ((10.0 . 0.0) (-2.0 . 2.0) (-2.0 . 0.0))"
  (when (%complexp x) (error 'dtype-error "rfft: needs a real tensor, got ~a (use fft)" (dtype x)))
  (let* ((tx (%float-tensor x))
         (_ (when (= (ndim tx) 0) (error 'shape-error "rfft: needs a tensor of at least one axis, got a 0-d tensor")))
         (tx (if (member (dtype tx) '(f32 f64)) tx (cast tx 'f32)))
         (ax (%axis 'rfft axis (ndim tx)))
         (sized (%fft-size 'rfft tx ax n))
         (points (%fft-points 'rfft (nth ax (shape sized)) ax))
         (y (%to-last (%r2c (%to-last sized ax)) ax))
         (scale (%fft-norm-scale 'rfft norm points nil)))
    (declare (ignore _))
    (if scale (mul y scale) y)))

(defcomposite irfft (x &key n (axis -1) norm)
  "(irfft X &key n (axis -1) norm) The real signal of N points (by default 2 (M - 1), M the
length of X along AXIS) whose rfft is X: the inverse of rfft. The imaginary parts of the
frequencies 0 and N/2, which a real signal cannot have, are ignored.
  (to-list (irfft (rfft (tensor '(1.0 2.0 3.0 4.0)))))  ; => (1.0 2.0 3.0 4.0)"
  (let* ((z (%as-complex x))
         (_ (when (= (ndim z) 0) (error 'shape-error "irfft: needs a tensor of at least one axis, got a 0-d tensor")))
         (ax (%axis 'irfft axis (ndim z)))
         (m (%fft-points 'irfft (nth ax (shape z)) ax))
         (points (or n (* 2 (- m 1))))
         (_ (unless (and (integerp points) (> points 0))
              (error 'value-error "irfft: the output must have at least one point, got ~s (input of ~a along axis ~a)"
                     points m axis)))
         (half (%fft-size 'irfft z ax (+ (floor points 2) 1)))
         (y (%to-last (%c2r (%to-last half ax) points) ax))
         (scale (%fft-norm-scale 'irfft norm points t)))
    (declare (ignore _))
    (if scale (mul y scale) y)))

(defun %fft-axes (fn x axes s default)
  ;; The axes (normalized) and their sizes (or nils) of an n-dimensional transform.
  (let* ((nd (ndim x))
         (axes (cond (axes (if (listp axes) axes (list axes)))
                     (s (loop for i from (- nd (length s)) below nd collect i))
                     (t default))))
    (when (and s (/= (length s) (length axes)))
      (error 'value-error "~a: ~a sizes for ~a axes" fn (length s) (length axes)))
    (list (mapcar (lambda (a) (%axis fn a nd)) axes) (or s (mapcar (lambda (a) nil) axes)))))

(defun %fftn (fn x s axes norm inverse default)
  (let* ((z (%as-complex x))
         (spec (%fft-axes fn z axes s (funcall default (ndim z)))))
    (loop for ax in (first spec) for n in (second spec)
          do (setq z (%fft-axis fn z n ax inverse norm)))
    z))

(defcomposite fft2 (x &key s (axes '(-2 -1)) norm)
  "(fft2 X &key s (axes '(-2 -1)) norm) The 2-d transform: fft along each of AXES (sizes S).
  (to-list (fft2 (tensor '((1.0 2.0) (3.0 4.0)))))  ; => (((10.0 . 0.0) (-2.0 . 0.0)) ((-4.0 . 0.0) (0.0 . 0.0)))"
  (%fftn 'fft2 x s axes norm nil (lambda (nd) '(-2 -1))))

(defcomposite ifft2 (x &key s (axes '(-2 -1)) norm)
  "(ifft2 X &key s (axes '(-2 -1)) norm) The inverse of fft2.
  (to-list (real (ifft2 (fft2 (tensor '((1.0 2.0) (3.0 4.0)))))))  ; => ((1.0 2.0) (3.0 4.0))"
  (%fftn 'ifft2 x s axes norm t (lambda (nd) '(-2 -1))))

(defcomposite fftn (x &key s axes norm)
  "(fftn X &key s axes norm) The n-dimensional transform: fft along each of AXES (default all
axes, or the last (length S) when S is given), to sizes S.
  (shape (fftn (zeros '(2 3 4))))  ; => (2 3 4)"
  (%fftn 'fftn x s axes norm nil (lambda (nd) (range nd))))

(defcomposite ifftn (x &key s axes norm)
  "(ifftn X &key s axes norm) The inverse of fftn.
  (to-list (real (ifftn (fftn (tensor '((1.0 2.0) (3.0 4.0)))))))  ; => ((1.0 2.0) (3.0 4.0))"
  (%fftn 'ifftn x s axes norm t (lambda (nd) (range nd))))

(defun fftfreq (n &key (d 1.0) (dtype 'f32))
  "(fftfreq N &key (d 1.0) (dtype 'f32)) The frequencies of fft's N outputs for samples D
apart: 0, 1, ..., then the negative ones, over N D.
  (to-list (fftfreq 4))  ; => (0.0 0.25 -0.5 -0.25)"
  (let ((k (loop for i below n collect (if (< i (ceiling n 2)) i (- i n)))))
    (tensor (mapcar (lambda (i) (/ (float i) (* n d))) k) :dtype dtype)))

(defun rfftfreq (n &key (d 1.0) (dtype 'f32))
  "(rfftfreq N &key (d 1.0) (dtype 'f32)) The frequencies of rfft's N/2 + 1 outputs.
  (to-list (rfftfreq 4))  ; => (0.0 0.25 0.5)"
  (tensor (loop for i from 0 to (floor n 2) collect (/ (float i) (* n d))) :dtype dtype))

(defun %fft-roll (x axes forward)
  (let ((r (%as-tensor x)))
    (dolist (ax (if axes (if (listp axes) axes (list axes)) (range (ndim r))) r)
      (let* ((a (%axis 'fftshift ax (ndim r))) (n (nth a (shape r)))
             (k (if forward (floor n 2) (- n (floor n 2)))))
        (setq r (roll r k :axis a))))))

(defcomposite roll (x shift &key axis)
  "(roll X SHIFT &key axis) X with its elements moved SHIFT places along AXIS, those that fall
off the end coming back at the start (nil: X flattened, rolled and reshaped), as torch.roll.
  (to-list (roll (tensor '(1 2 3 4 5)) 2))  ; => (4 5 1 2 3)
  (to-list (roll (tensor '((1 2) (3 4))) -1 :axis 0))  ; => ((3 4) (1 2))"
  (let ((tx (%as-tensor x)))
    (if (null axis)
        (reshape (roll (flatten tx) shift :axis 0) (shape tx))
        (let* ((a (%axis 'roll axis (ndim tx))) (n (nth a (shape tx))))
          (unless (integerp shift) (error 'type-error "roll: SHIFT must be an integer, got ~s" shift))
          (if (or (= n 0) (= (mod shift n) 0))
              tx
              (let* ((k (mod shift n))
                     (part (lambda (from to)
                             (prim:shrink tx (loop for d in (shape tx) for i from 0
                                                   collect (if (= i a) (list from to) (list 0 d)))))))
                (cat (list (funcall part (- n k) n) (funcall part 0 (- n k))) :axis a)))))))

(defun fftshift (x &key axes)
  "(fftshift X &key axes) X with the zero frequency moved to the middle of AXES (default all).
  (to-list (fftshift (tensor '(0 1 2 -2 -1))))  ; => (-2 -1 0 1 2)"
  (%fft-roll x axes t))

(defun ifftshift (x &key axes)
  "(ifftshift X &key axes) The inverse of fftshift.
  (to-list (ifftshift (tensor '(-2 -1 0 1 2))))  ; => (0 1 2 -2 -1)"
  (%fft-roll x axes nil))

;;; --- windows and short-time transforms ---------------------------------------------------------

(defun %window (fn n periodic dtype f)
  ;; F(k, N') for k below N, N' = N when PERIODIC (the window of a periodic signal, as
  ;; torch's default) else N - 1 (symmetric), as a tensor of DTYPE.
  (unless (and (integerp n) (>= n 0)) (error 'value-error "~a: the length must be a non-negative integer, got ~s" fn n))
  (let ((m (if periodic n (- n 1))))
    (tensor (if (= n 1) '(1.0) (loop for k below n collect (funcall f k m))) :dtype dtype)))

(defun hann-window (n &key (periodic t) (dtype 'f32))
  "(hann-window N &key (periodic t) (dtype 'f32)) The Hann window of N points, 0.5 - 0.5
cos(2 pi k / N) (N - 1 when not PERIODIC), as torch.hann_window.
  (to-list (hann-window 4))  ; => (0.0 0.5 1.0 0.5)"
  (%window 'hann-window n periodic dtype (lambda (k m) (- 0.5 (* 0.5 (cos (/ (* 2 pi k) m)))))))

(defun hamming-window (n &key (periodic t) (dtype 'f32))
  "(hamming-window N &key (periodic t) (dtype 'f32)) The Hamming window of N points, 0.54 -
0.46 cos(2 pi k / N), as torch.hamming_window.
  (mapcar (lambda (v) (/ (round (* v 100)) 100.0)) (to-list (hamming-window 4)))  ; => (0.08 0.54 1.0 0.54)"
  (%window 'hamming-window n periodic dtype (lambda (k m) (- 0.54 (* 0.46 (cos (/ (* 2 pi k) m)))))))

(defun blackman-window (n &key (periodic t) (dtype 'f32))
  "(blackman-window N &key (periodic t) (dtype 'f32)) The Blackman window of N points, 0.42 -
0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N), as torch.blackman_window.
  (mapcar (lambda (v) (/ (round (* v 100)) 100.0)) (to-list (blackman-window 4)))  ; => (0.0 0.34 1.0 0.34)"
  (%window 'blackman-window n periodic dtype
           (lambda (k m) (+ (- 0.42 (* 0.5 (cos (/ (* 2 pi k) m)))) (* 0.08 (cos (/ (* 4 pi k) m)))))))

(defun %stft-window (fn window win-length n-fft dt)
  ;; The window of WIN-LENGTH points (ones when nil) centered in N-FFT points, of dtype DT.
  (let* ((w (if window (cast window dt) (ones (list win-length) :dtype dt))))
    (unless (and (= (ndim w) 1) (eql (first (shape w)) win-length))
      (error 'shape-error "~a: the window must be 1-d of win-length ~a points, got shape ~s" fn win-length (shape w)))
    (if (= win-length n-fft)
        w
        (let ((left (floor (- n-fft win-length) 2)))
          (pad w (list (list left (- n-fft win-length left))))))))

(defun %stft-sizes (fn n-fft hop-length win-length)
  (unless (and (integerp n-fft) (> n-fft 0)) (error 'value-error "~a: n-fft must be a positive integer, got ~s" fn n-fft))
  (let ((hop (or hop-length (floor n-fft 4))) (win (or win-length n-fft)))
    (unless (and (integerp hop) (> hop 0)) (error 'value-error "~a: hop-length must be a positive integer, got ~s" fn hop))
    (unless (and (integerp win) (< 0 win) (<= win n-fft))
      (error 'value-error "~a: win-length must be from 1 to n-fft (~a), got ~s" fn n-fft win))
    (list hop win)))

(defun %frame-index (frames n-fft hop)
  ;; (FRAMES N-FFT): element (t j) is t HOP + j.
  (let* ((shp (list frames n-fft)) (dt (if (< (+ (* frames hop) n-fft) 2147483647) 'i32 'i64)))
    (prim:add (prim:mul (prim:iota shp 0 dt) (prim:const hop dt shp)) (prim:iota shp 1 dt))))

(defcomposite stft (x n-fft &key hop-length win-length window (center t) (pad-mode :reflect) normalized onesided)
  "(stft X N-FFT &key hop-length win-length window (center t) (pad-mode :reflect) normalized
onesided) The short-time Fourier transform of signal X (1-d, or 2-d: a batch of signals), as
torch.stft with return_complex: frames of N-FFT samples HOP-LENGTH apart (default N-FFT/4),
each multiplied by WINDOW (WIN-LENGTH points, default N-FFT, centered; default all ones) and
transformed, giving (FREQUENCIES FRAMES) complex values, N-FFT/2 + 1 frequencies for a real X
unless ONESIDED is :false (a complex X is always two-sided). CENTER pads N-FFT/2 samples on
both sides first (PAD-MODE :reflect, :constant or :replicate); NORMALIZED scales by
1/sqrt(N-FFT). Differentiable.
  (shape (stft (zeros '(100)) 16 :hop-length 4 :window (hann-window 16)))  ; => (9 26)
  (shape (stft (zeros '(2 64)) 8 :center nil))  ; => (2 5 29)"
  (let* ((tx (%as-tensor x))
         (sizes (%stft-sizes 'stft n-fft hop-length win-length))
         (hop (first sizes)) (win (second sizes))
         (one (= (ndim tx) 1)))
    (unless (member (ndim tx) '(1 2))
      (error 'shape-error "stft: X must be 1-d or 2-d (a batch of signals), got shape ~s" (shape tx)))
    (let* ((sig (if one (unsqueeze tx 0) tx))
           (complex-in (%complexp sig))
           (sig (if complex-in sig (%float-tensor sig)))
           (sig (if center
                    (let ((p (floor n-fft 2)))
                      (if complex-in
                          (complex (pad (real sig) (list (list p p)) :mode pad-mode) (pad (imag sig) (list (list p p)) :mode pad-mode))
                          (pad sig (list (list p p)) :mode pad-mode)))
                    sig))
           (len (%fft-points 'stft (second (shape sig)) (- (ndim tx) 1)))
           (_ (when (< len n-fft)
                (error 'shape-error "stft: the signal has ~a samples~a, fewer than n-fft (~a)" len
                       (if center " after padding" "") n-fft)))
           (frames (+ 1 (floor (- len n-fft) hop)))
           (batch (first (shape sig)))
           (idx (prim:expand (prim:reshape (%frame-index frames n-fft hop) (list 1 (* frames n-fft)))
                             (list batch (* frames n-fft))))
           (framed (reshape (prim:gather sig idx 1) (list batch frames n-fft)))
           (pd (if (member (dtype framed) '(f64 c128)) 'f64 'f32))
           (w (%stft-window 'stft window win n-fft pd))
           (windowed (mul framed w))
           (two-sided (or complex-in (eq onesided :false)))
           (spec (if two-sided (fft windowed) (rfft windowed)))
           (spec (if normalized (mul spec (/ 1.0 (sqrt n-fft))) spec))
           (spec (transpose spec)))
      (declare (ignore _))
      (if one (squeeze spec 0) spec))))

(defcomposite istft (z n-fft &key hop-length win-length window (center t) normalized onesided length)
  "(istft Z N-FFT &key hop-length win-length window (center t) normalized onesided length) The
inverse of stft (as torch.istft): each frame of Z (FREQUENCIES FRAMES, or a batch of them)
transformed back, multiplied by the window, overlapped and added, and divided by the summed
squared window; CENTER removes the padding stft added, LENGTH trims or pads the signal to
that many samples. A one-sided Z (N-FFT/2 + 1 frequencies, unless ONESIDED is :false) gives
a real signal, a two-sided one a complex signal.
  (let ((x (sin (mul (arange 64 :dtype 'f32) 0.3))))
    (allclose (istft (stft x 16 :window (hann-window 16)) 16 :window (hann-window 16) :length 64) x :atol 1e-5))  ; => t"
  (let* ((tz (%as-complex z))
         (sizes (%stft-sizes 'istft n-fft hop-length win-length))
         (hop (first sizes)) (win (second sizes))
         (one (= (ndim tz) 2)))
    (unless (member (ndim tz) '(2 3))
      (error 'shape-error "istft: Z must be 2-d (frequencies frames) or 3-d (a batch), got shape ~s" (shape tz)))
    (let* ((zb (if one (unsqueeze tz 0) tz))
           (freqs (nth 1 (shape zb)))
           (two-sided (eq onesided :false))
           (_ (unless (= freqs (if two-sided n-fft (+ (floor n-fft 2) 1)))
                (error 'shape-error "istft: Z has ~a frequencies; n-fft ~a needs ~a" freqs n-fft
                       (if two-sided n-fft (+ (floor n-fft 2) 1)))))
           (frames (nth 2 (shape zb)))
           (batch (first (shape zb)))
           (pd (%part-dtype (dtype zb)))
           (spec (transpose zb))                                  ; (batch frames freqs)
           (spec (if normalized (mul spec (sqrt n-fft)) spec))
           (f (if two-sided (ifft spec) (irfft spec :n n-fft)))    ; (batch frames n-fft)
           (w (%stft-window 'istft window win n-fft pd))
           (f (mul f w))
           (total (+ n-fft (* hop (- frames 1))))
           (idx (prim:reshape (%frame-index frames n-fft hop) (list 1 (* frames n-fft))))
           (flat (reshape f (list batch (* frames n-fft))))
           (sum (prim:scatter-add (prim:const 0 (dtype flat) (list batch total))
                                  (prim:expand idx (list batch (* frames n-fft))) flat 1))
           ;; The squared window, overlapped: computed once here and checked.
           (env (prim:scatter-add (prim:const 0 pd (list 1 total)) idx
                                  (reshape (expand (unsqueeze (mul w w) 0) (list frames n-fft)) (list 1 (* frames n-fft))) 1))
           (start (if center (floor n-fft 2) 0))
           (end (if length (+ start length) (if center (- total (floor n-fft 2)) total)))
           (stop (min end total))
           (_ (when (< stop start) (error 'value-error "istft: ~a frames of hop ~a leave no samples" frames hop)))
           (env-used (prim:shrink env (list '(0 1) (list start stop))))
           ;; A check a jit trace records (%guard), not a read of the data.
           (_ (unless (%guard (reshape (ge (amin env-used) 1e-11) '(1)) 'value-error
                              (format nil "istft: the window's overlap-add is zero at some sample (the window, hop-length ~a and n-fft ~a do not cover the signal)" hop n-fft))
                (error 'value-error "istft: the window's overlap-add is zero at some sample (the window, hop-length ~a and n-fft ~a do not cover the signal)"
                       hop n-fft)))
           (y (div (prim:shrink sum (list (list 0 batch) (list start stop))) env-used))
           (y (if (> end stop) (pad y (list (list 0 (- end stop)))) y)))
      (declare (ignore _))
      (if one (squeeze y 0) y))))
