;;; SPDX-License-Identifier: Apache-2.0
;;; Complex tensors (c64, c128). A complex tensor is computed as its parts: (view-as-real Z)
;;; is a real tensor with one more axis of size 2, (real imaginary), NumPy's storage. The
;;; primitives that are linear in their operands (the views, add, neg, mul, sum, where,
;;; gather, scatter-add, cast between complex types) take complex tensors directly; the
;;; functions here compute the rest from the parts. Gradients flow through the parts, so the
;;; gradient of a real loss L with respect to Z = X + iY is dL/dX + i dL/dY: PyTorch's
;;; convention (the conjugate Wirtinger derivative, times 2).

(defun %complexp (x)
  "True when X is a complex tensor."
  (and (tensorp x) (dtype-complex-p (dtype x))))

(defun complex-p (x)
  "(complex-p X) True when X is a complex tensor (c64 or c128).
  (complex-p (tensor '((1 . 2))))  ; => t
  (complex-p (tensor '(1.0 2.0)))  ; => nil"
  (%complexp x))

(defun %part (z k)
  ;; Part K (0 real, 1 imaginary) of complex tensor Z: a real tensor of Z's shape.
  (let ((shp (tensor-shape z)))
    (prim:reshape (prim:shrink (view-as-real z) (append (mapcar (lambda (d) (list 0 d)) shp) (list (list k (+ k 1)))))
                  shp)))

(defun %from-parts (re im)
  ;; The complex tensor RE + i IM from real tensors of one shape and float dtype.
  (let* ((shp (tensor-shape re))
         (unit (append shp '(1)))
         (none (mapcar (lambda (d) '(0 0)) shp)))
    (view-as-complex (prim:add (prim:pad (prim:reshape re unit) (append none '((0 1))))
                               (prim:pad (prim:reshape im unit) (append none '((1 0))))))))

(defun %complex-of (dt)
  ;; The complex dtype whose parts hold DT's values.
  (cond ((dtype-complex-p dt) dt) ((eq dt 'f64) 'c128) (t 'c64)))

(defun %part-dtype (dt) (if (eq dt 'c128) 'f64 'f32))

(defun %as-complex (x)
  "X (a tensor, number or list) as a complex tensor."
  (let ((tx (%as-tensor x)))
    (if (%complexp tx) tx (prim:cast tx (%complex-of (tensor-dtype tx))))))

(defcomposite complex (re im)
  "(complex RE IM) The complex tensor RE + i IM, from real tensors or numbers (broadcast; f64
parts give c128, any other real type c64).
  (to-list (complex (tensor '(1.0 2.0)) (tensor '(3.0 -4.0))))  ; => ((1.0 . 3.0) (2.0 . -4.0))
  (dtype (complex (tensor '(1.0) :dtype 'f64) 0))  ; => c128"
  (when (or (%complexp re) (%complexp im))
    (error 'dtype-error "complex: RE and IM must be real, got ~a and ~a"
           (if (tensorp re) (dtype re) (type-of re)) (if (tensorp im) (dtype im) (type-of im))))
  (let* ((dt (result-dtype re im))
         (xs (%args2 'complex re im (if (eq dt 'f64) 'f64 'f32))))
    (%from-parts (first xs) (second xs))))

(defcomposite real (z)
  "(real Z) The real part of complex Z (a real tensor of its shape); a real Z itself.
  (to-list (real (tensor '((1 . 2) (3 . -4)))))  ; => (1.0 3.0)"
  (if (%complexp z) (%part z 0) (%as-tensor z)))

(defcomposite imag (z)
  "(imag Z) The imaginary part of complex Z (a real tensor of its shape). A real Z is an
error, as in PyTorch.
  (to-list (imag (tensor '((1 . 2) (3 . -4)))))  ; => (2.0 -4.0)"
  (unless (%complexp z)
    (error 'dtype-error "imag: needs a complex tensor (c64 or c128), got ~a" (if (tensorp z) (dtype z) z)))
  (%part z 1))

(defcomposite conj (z)
  "(conj Z) The complex conjugate, real part minus i imaginary part; a real Z itself.
  (to-list (conj (tensor '((1 . 2) (3 . -4)))))  ; => ((1.0 . -2.0) (3.0 . 4.0))"
  (if (%complexp z) (%from-parts (%part z 0) (neg (%part z 1))) (%as-tensor z)))

(defun %hypot (x y)
  ;; sqrt(X^2 + Y^2) without overflow or underflow in between: the larger magnitude m times
  ;; sqrt(1 + (small/m)^2). 0 at (0, 0) with gradient 0; inf when either is infinite.
  (let* ((ax (abs x)) (ay (abs y))
         (m (maximum ax ay))
         (zero (equals m 0))
         (safe (where zero 1 m))
         (r (mul m (sqrt (add (square (div ax safe)) (square (div ay safe))))))
         (r (where zero 0 r)))
    (where (logical-or (isinf x) (isinf y)) +inf+ r)))

(defun %complex-abs (z) (%hypot (%part z 0) (%part z 1)))

(defcomposite angle (z)
  "(angle Z) The argument of complex Z in (-pi, pi], atan2(imag, real); for a real Z, 0 where
Z >= 0 and pi where Z < 0 (NaN stays NaN), as PyTorch.
  (to-list (round (mul (angle (tensor '((0 . 1) (-1 . 0) (1 . 0)))) 1000)))  ; => (1571.0 3142.0 0.0)"
  (if (%complexp z)
      (atan2 (%part z 1) (%part z 0))
      (let ((f (%float-tensor z)))
        (where (isnan f) f (where (lt f 0) pi (mul f 0))))))

(defcomposite polar (magnitude phase)
  "(polar MAGNITUDE PHASE) The complex tensor MAGNITUDE * (cos PHASE + i sin PHASE).
  (to-list (round (real (polar (tensor '(2.0)) (tensor (list pi))))))  ; => (-2.0)"
  (let* ((dt (result-dtype magnitude phase))
         (xs (%args2 'polar magnitude phase (if (eq dt 'f64) 'f64 'f32))))
    (%from-parts (mul (first xs) (cos (second xs))) (mul (first xs) (sin (second xs))))))

(defun %complex-recip (z)
  ;; 1/Z = conj(Z) / |Z|^2, with Z scaled by its larger part first so |Z|^2 neither
  ;; overflows nor underflows (1/0 is inf or NaN, as IEEE division gives).
  (let* ((re (%part z 0)) (im (%part z 1))
         (s (maximum (abs re) (abs im)))
         (a (div re s)) (b (div im s))
         (d (mul s (add (mul a a) (mul b b)))))
    (%from-parts (div a d) (neg (div b d)))))

(defun %complex-div (a b)
  (if (%complexp b)
      (let ((xs (%args2 'div a b)))
        (mul (first xs) (%complex-recip (second xs))))
      ;; By a real divisor: each part divided, as a real division would.
      (let ((za (cast a (result-dtype a b))))
        (%from-parts (div (%part za 0) b) (div (%part za 1) b)))))

(defun %complex-exp (z)
  ;; e^x (cos y + i sin y)
  (let* ((re (%part z 0)) (im (%part z 1)) (m (exp re)))
    (%from-parts (mul m (cos im)) (mul m (sin im)))))

(defun %complex-log (z)
  ;; log|z| + i angle(z): log 0 = -inf + 0i.
  (%from-parts (log (%complex-abs z)) (atan2 (%part z 1) (%part z 0))))

(defun %complex-sqrt (z)
  ;; The principal root, its real part >= 0, and its imaginary part of the sign of Z's (a
  ;; -0 imaginary part counts as negative: the branch cut's lower side, as NumPy). With
  ;; t = sqrt((|x| + |z|) / 2): x >= 0 gives (t, y / 2t), x < 0 (|y| / 2t, +-t); no
  ;; difference of close numbers.
  (let* ((x (%part z 0)) (y (%part z 1))
         (tt (sqrt (mul 0.5 (add (abs x) (%complex-abs z)))))
         (zero (equals tt 0))
         (safe (where zero 1 tt))
         (q (where zero 0 (div y (mul 2 safe))))
         (neg-y (logical-or (lt y 0) (lt (reciprocal y) 0)))
         (pos (ge x 0)))
    (%from-parts (where pos tt (abs q))
                 (where pos q (where neg-y (neg tt) tt)))))

(defun %complex-sin (z)
  ;; sin(x + iy) = sin x cosh y + i cos x sinh y
  (let ((x (%part z 0)) (y (%part z 1)))
    (%from-parts (mul (sin x) (cosh y)) (mul (cos x) (sinh y)))))

(defun %complex-cos (z)
  ;; cos(x + iy) = cos x cosh y - i sin x sinh y
  (let ((x (%part z 0)) (y (%part z 1)))
    (%from-parts (mul (cos x) (cosh y)) (neg (mul (sin x) (sinh y))))))

(defun %complex-tanh (z)
  ;; tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); beyond |x| = 20 it is sign(x)
  ;; to double precision (where cosh 2x would overflow first).
  (let* ((x (%part z 0)) (y (%part z 1))
         (big (gt (abs x) 20.0))
         (xs (mul (where big 0.0 x) 2.0))
         (d (add (cosh xs) (cos (mul y 2.0)))))
    (%from-parts (where big (sign x) (div (sinh xs) d)) (where big 0.0 (div (sin (mul y 2.0)) d)))))

(defun %complex-pow (x y)
  ;; X^Y = exp(Y log X); 0^Y as PyTorch: 1 for Y = 0, 0 when Re Y > 0, inf + nan i when
  ;; Re Y < 0, nan + nan i otherwise.
  (let* ((xs (%args2 'pow x y)) (b (first xs)) (e (second xs))
         (zero-b (equals b 0))
         (safe (where zero-b 1 b))
         (r (%complex-exp (mul e (%complex-log safe))))
         (re (%part e 0))
         (at-zero (where (equals e 0) 1
                         (where (gt re 0) 0
                                (where (lt re 0) (complex +inf+ +nan+) (complex +nan+ +nan+))))))
    (where zero-b (cast at-zero (dtype r)) r)))

(defun %complex-sign (z)
  ;; Z / |Z| (0 at 0): PyTorch's sgn.
  (let* ((m (%complex-abs z)) (zero (equals m 0)))
    (where zero (mul z 0) (div z (cast (where zero 1 m) (dtype z))))))

(defun %complex-matmul (a b)
  ;; Four real products of the parts (a real operand: two), each the real matmul's kernel.
  (let* ((dt (result-dtype a b))
         (pd (%part-dtype dt))
         (ca (%complexp a)) (cb (%complexp b))
         (a (if ca (cast a dt) (cast a pd)))
         (b (if cb (cast b dt) (cast b pd))))
    (cond ((and ca cb)
           (let ((ar (real a)) (ai (imag a)) (br (real b)) (bi (imag b)))
             (complex (sub (matmul ar br) (matmul ai bi)) (add (matmul ar bi) (matmul ai br)))))
          (ca (complex (matmul (real a) b) (matmul (imag a) b)))
          (t (complex (matmul a (real b)) (matmul a (imag b)))))))
