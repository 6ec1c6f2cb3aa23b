;;; SPDX-License-Identifier: Apache-2.0
;;; linalg: dense linear algebra, as torch.linalg has it. (require 'linalg)
;;;
;;; Solve, inverse, determinants, Cholesky, QR, symmetric eigendecomposition and SVD run
;;; LAPACK (OpenBLAS's, loaded when first used) as external kernels: on the cpu device and its
;;; simulated GPUs as `extern` nodes of the graph, on ref in the reference executor. They work
;;; on the last two axes, batched over the leading ones, in f32 and f64, and have gradients
;;; (the standard formulas, PyTorch's conventions). A singular matrix, one that is not
;;; positive definite, or an algorithm that does not converge is an error naming the function,
;;; never a NaN written silently. Everything else (lstsq, pinv, matrix-norm) is built on them.

(defun linalg:%check (name a &key square (min-rank 2))
  ;; A float matrix (batch): f32 or f64, at least MIN-RANK axes, square when asked.
  (unless (tensorp a)
    (error 'type-error "~a: expected a tensor, got ~s" name a))
  (unless (member (dtype a) '(f32 f64))
    (error 'dtype-error "~a: needs an f32 or f64 tensor, got ~a (cast it first: (cast x 'f32))" name (dtype a)))
  (when (< (ndim a) min-rank)
    (error 'shape-error "~a: expected a matrix (at least ~a axes), got shape ~a" name min-rank (shape a)))
  (when (and square (not (equal (nth (- (ndim a) 1) (shape a)) (nth (- (ndim a) 2) (shape a)))))
    (error 'shape-error "~a: expected square matrices, got shape ~a" name (shape a)))
  a)

(defun linalg:%mt (x)
  ;; X with its last two axes swapped.
  (transpose x -2 -1))

(defun linalg:%rows (a) (nth (- (ndim a) 2) (shape a)))
(defun linalg:%cols (a) (nth (- (ndim a) 1) (shape a)))
(defun linalg:%batch (a) (butlast (shape a) 2))

(defun linalg:%extern (kernel a out-last &rest more)
  ;; The external kernel KERNEL on A (and MORE), whose output has A's batch axes and then
  ;; OUT-LAST (a list of sizes).
  (prim:extern kernel (cons (contiguous a) (mapcar #'contiguous more)) (dtype a)
               (append (linalg:%batch a) out-last)))

(defun linalg:%last-range (x start end)
  ;; X's elements [START, END) along its last axis.
  (apply #'slice x (append (make-list (- (ndim x) 1) :initial-element t) (list (list start end)))))

(defun linalg:%part (packed start shp)
  ;; The elements [START, START + numel SHP) of PACKED's last axis, as SHP per batch element.
  (reshape (linalg:%last-range packed start (+ start (%numel-of shp))) (append (butlast (shape packed)) shp)))

(defun linalg:%diag (x)
  ;; The diagonal of each matrix of X (... N N) as (... N).
  (sum (mul x (eye (linalg:%cols x) :dtype (dtype x))) :axis -1))

(defun linalg:%diag-embed (v)
  ;; (... N) as diagonal matrices (... N N).
  (mul (unsqueeze v -1) (eye (car (last (shape v))) :dtype (dtype v))))

(defun linalg:%sym (x)
  ;; The symmetric part of each matrix.
  (mul (add x (linalg:%mt x)) 0.5))

(defun linalg:%vector-rhs-p (a b)
  ;; Whether B is a vector (or a batch of them) rather than matrices, as PyTorch decides: one
  ;; axis, or A's shape without its last axis.
  (or (= (ndim b) 1) (and (= (ndim b) (- (ndim a) 1)) (equal (shape b) (butlast (shape a))))))

(defun linalg:solve (a b)
  "(linalg:solve A B) X with A X = B: A (... N N), B (... N K) or a vector (... N); batch axes
broadcast (B is a vector when it has one axis or A's shape without the last). An LU factorization with partial pivoting (LAPACK getrf/getrs); a singular A is an
error.
  (to-list (linalg:solve (tensor '((2.0 0.0) (0.0 4.0))) (tensor '(2.0 2.0))))  ; => (1.0 0.5)"
  (linalg:%check "linalg:solve" a :square t)
  (linalg:%check "linalg:solve" b :min-rank 1)
  (unless (eq (dtype a) (dtype b))
    (error 'dtype-error "linalg:solve: A is ~a but B is ~a" (dtype a) (dtype b)))
  (let* ((vector (linalg:%vector-rhs-p a b))
         (b2 (if vector (unsqueeze b -1) b))
         (n (linalg:%rows a)))
    (unless (equal (linalg:%rows b2) n)
      (error 'shape-error "linalg:solve: A ~a has ~a rows but B ~a has ~a" (shape a) n (shape b) (linalg:%rows b2)))
    (let* ((batch (broadcast-shapes (linalg:%batch a) (linalg:%batch b2)))
           (a3 (broadcast-to a (append batch (list n n))))
           (b3 (broadcast-to b2 (append batch (list n (linalg:%cols b2)))))
           (x (with-custom-grad ((va a3) (vb b3))
                (linalg:%extern "linalg-solve" va (list n (linalg:%cols vb)) vb)
                (g y)
                (let ((gb (linalg:solve (linalg:%mt va) g)))
                  (list (neg (matmul gb (linalg:%mt y))) gb)))))
      (if vector (squeeze x -1) x))))

(defun linalg:inv (a)
  "(linalg:inv A) The inverse of each square matrix of A (... N N); a singular one is an error.
  (allclose (linalg:inv (tensor '((2.0 0.0) (0.0 4.0)))) '((0.5 0.0) (0.0 0.25)))  ; => t"
  (linalg:%check "linalg:inv" a :square t)
  (with-custom-grad ((va a))
    (linalg:%extern "linalg-inv" va (list (linalg:%rows va) (linalg:%rows va)))
    (g y)
    (let ((yt (linalg:%mt y)))
      (list (neg (matmul yt (matmul g yt)))))))

(defun linalg:%lu-det (a)
  ;; (... 3): the sign, log|det| and det of each matrix, from one LU factorization. The
  ;; gradient of log|det| is A^-T, of det det(A) A^-T (the sign has none).
  (with-custom-grad ((va a))
    (linalg:%extern "linalg-lu-det" va '(3))
    (g y)
    (let ((coefficient (add (linalg:%last-range g 1 2) (mul (linalg:%last-range g 2 3) (linalg:%last-range y 2 3)))))
      (list (mul (unsqueeze coefficient -1) (linalg:%mt (linalg:inv va)))))))

(defun linalg:det (a)
  "(linalg:det A) The determinant of each square matrix of A (... N N), from its LU
factorization. The gradient is det(A) A^-T, so it needs A invertible (PyTorch's too is
unstable near singular matrices).
  (item (linalg:det (tensor '((2.0 1.0) (0.0 3.0)))))  ; => 6.0
  (item (linalg:det (tensor '((0.0 1.0) (1.0 0.0)))))  ; => -1.0"
  (linalg:%check "linalg:det" a :square t)
  (squeeze (linalg:%last-range (linalg:%lu-det a) 2 3) -1))

(defun linalg:slogdet (a)
  "(linalg:slogdet A) (SIGN LOGABSDET): the sign of each determinant (-1, 0 or 1) and the
logarithm of its absolute value, which neither overflows nor underflows where the determinant
would. A singular matrix gives sign 0 and -inf. LOGABSDET's gradient is A^-T.
  (mapcar #'item (linalg:slogdet (tensor '((-2.0 0.0) (0.0 3.0)) :dtype 'f64)))  ; => (-1.0 1.791759469228055)"
  (linalg:%check "linalg:slogdet" a :square t)
  (let ((p (linalg:%lu-det a)))
    (list (detach (squeeze (linalg:%last-range p 0 1) -1)) (squeeze (linalg:%last-range p 1 2) -1))))

(defun linalg:cholesky (a &key upper)
  "(linalg:cholesky A &key upper) The lower-triangular L with A = L L^T for each symmetric
positive-definite matrix of A (... N N), read from A's lower triangle (as PyTorch does);
:upper t gives U = L^T, with A = U^T U. A matrix that is not positive definite is an error
naming the leading minor that is not. Gradients are symmetric.
  (to-list (linalg:cholesky (tensor '((4.0 2.0) (2.0 5.0)))))  ; => ((2.0 0.0) (1.0 2.0))"
  (linalg:%check "linalg:cholesky" a :square t)
  (let ((l (with-custom-grad ((va a))
             (linalg:%extern "linalg-cholesky" va (list (linalg:%rows va) (linalg:%rows va)))
             (g l)
             ;; gA = L^-T Phi(L^T gL) L^-1, Phi: the lower triangle with its diagonal halved;
             ;; then its symmetric part.
             (let* ((p (matmul (linalg:%mt l) g))
                    (phi (sub (tril p) (mul (linalg:%diag-embed (linalg:%diag p)) 0.5)))
                    (linv (linalg:inv l))
                    (ga (matmul (linalg:%mt linv) (matmul phi linv))))
               (list (linalg:%sym ga))))))
    (if upper (linalg:%mt l) l)))

(defun linalg:qr (a &key (mode 'reduced))
  "(linalg:qr A &key (mode 'reduced)) (Q R) with A = Q R for each matrix of A (... M N): Q
(... M K) with orthonormal columns and R (... K N) upper triangular, K = min(M, N)
(Householder reflections, LAPACK geqrf/orgqr). MODE 'r gives (nil R). Gradients when M >= N.
  (let* ((a (tensor '((3.0 1.0) (4.0 2.0) (0.0 5.0)) :dtype 'f64)) (qr (linalg:qr a)))
    (list (shape (first qr)) (shape (second qr)) (allclose (matmul (first qr) (second qr)) a)))  ; => ((3 2) (2 2) t)"
  (linalg:%check "linalg:qr" a)
  (unless (member mode '(reduced r))
    (error 'value-error "linalg:qr: mode must be reduced or r, got ~s" mode))
  (let* ((m (linalg:%rows a)) (n (linalg:%cols a)) (k (min m n))
         (packed-of (lambda (x) (linalg:%extern "linalg-qr" x (list (+ (* m k) (* k n))))))
         (grad-of (lambda (g packed)
                    ;; g: the gradients of Q and R packed as the result is. With M = R gR^T - gQ^T Q,
                    ;; gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) + tril(M, -1)^T.
                    (let* ((q (linalg:%part packed 0 (list m k)))
                           (r (linalg:%part packed (* m k) (list k n)))
                           (gq (linalg:%part g 0 (list m k)))
                           (gr (linalg:%part g (* m k) (list k n)))
                           (mm (sub (matmul r (linalg:%mt gr)) (matmul (linalg:%mt gq) q)))
                           (c (add (tril mm) (linalg:%mt (tril mm -1))))
                           (b (add gq (matmul q c))))
                      (when (< m n)
                        (error 'value-error "linalg:qr: the gradient needs M >= N, got a ~a x ~a matrix" m n))
                      (list (linalg:%mt (linalg:solve r (linalg:%mt b)))))))
         (packed (with-custom-grad ((va a)) (funcall packed-of va) (g y) (funcall grad-of g y)))
         (r (linalg:%part packed (* m k) (list k n))))
    (list (if (eq mode 'r) nil (linalg:%part packed 0 (list m k))) r)))

(defun linalg:eigh (a)
  "(linalg:eigh A) (EIGENVALUES EIGENVECTORS) of each symmetric matrix of A (... N N), read
from A's lower triangle: the eigenvalues ascending (... N) and the eigenvectors as the columns
of (... N N) (LAPACK syevd). Each eigenvector's sign is LAPACK's choice. Gradients are
symmetric and need distinct eigenvalues when the eigenvectors are used.
  (to-list (first (linalg:eigh (tensor '((2.0 0.0) (0.0 1.0))))))  ; => (1.0 2.0)
  (allclose (first (linalg:eigh (tensor '((2.0 1.0) (1.0 2.0))))) '(1.0 3.0))  ; => t"
  (linalg:%check "linalg:eigh" a :square t)
  (let* ((n (linalg:%rows a))
         (packed (with-custom-grad ((va a))
                   (linalg:%extern "linalg-eigh" va (list (+ n (* n n))))
                   (g y)
                   ;; gA = V (diag(gL) + F o (V^T gV)) V^T, F_ij = 1 / (L_j - L_i) off the diagonal.
                   (let* ((l (linalg:%part y 0 (list n)))
                          (v (linalg:%part y n (list n n)))
                          (gl (linalg:%part g 0 (list n)))
                          (gv (linalg:%part g n (list n n)))
                          (diff (sub (unsqueeze l -2) (unsqueeze l -1)))
                          (off (sub 1.0 (eye n :dtype (dtype l))))
                          (f (div off (add diff (eye n :dtype (dtype l)))))
                          (inner (add (linalg:%diag-embed gl) (mul f (matmul (linalg:%mt v) gv)))))
                     (list (linalg:%sym (matmul v (matmul inner (linalg:%mt v)))))))))
    (list (linalg:%part packed 0 (list n)) (linalg:%part packed n (list n n)))))

(defun linalg:eigvalsh (a)
  "(linalg:eigvalsh A) The eigenvalues of each symmetric matrix of A (... N N), ascending.
  (to-list (linalg:eigvalsh (tensor '((2.0 0.0) (0.0 -1.0)))))  ; => (-1.0 2.0)"
  (first (linalg:eigh a)))

(defun linalg:svd (a &key (full-matrices t))
  "(linalg:svd A &key (full-matrices t)) (U S VH) with A = U diag(S) VH for each matrix of A
(... M N): S (... K) descending, K = min(M, N); U (... M M) and VH (... N N), or with
:full-matrices nil (the reduced form) U (... M K) and VH (... K N) (LAPACK gesdd). As in
PyTorch, gradients need the reduced form (or only S) and distinct singular values.
  (to-list (second (linalg:svd (tensor '((3.0 0.0) (0.0 -4.0))))))  ; => (4.0 3.0)"
  (linalg:%check "linalg:svd" a)
  (let* ((m (linalg:%rows a)) (n (linalg:%cols a)) (k (min m n))
         (uc (if full-matrices m k)) (vr (if full-matrices n k))
         (kernel (if full-matrices "linalg-svd-full" "linalg-svd"))
         (packed (with-custom-grad ((va a))
                   (linalg:%extern kernel va (list (+ (* m uc) k (* vr n))))
                   (g y)
                   (let ((u (linalg:%part y 0 (list m uc)))
                         (s (linalg:%part y (* m uc) (list k)))
                         (vh (linalg:%part y (+ (* m uc) k) (list vr n)))
                         (gu (linalg:%part g 0 (list m uc)))
                         (gs (linalg:%part g (* m uc) (list k)))
                         (gvh (linalg:%part g (+ (* m uc) k) (list vr n))))
                     (list (linalg:%svd-grad u s vh gu gs gvh full-matrices))))))
    (list (linalg:%part packed 0 (list m uc))
          (linalg:%part packed (* m uc) (list k))
          (linalg:%part packed (+ (* m uc) k) (list vr n)))))

(defun linalg:%svd-grad (u s vh gu gs gvh full)
  ;; Townsend's formula for the reduced SVD: with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal,
  ;; gA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
  ;;      + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T).
  ;; With full matrices only gS may be nonzero.
  (let* ((k (car (last (shape s))))
         (dt (dtype s))
         (gv (linalg:%mt gvh))
         (v (linalg:%mt vh)))
    (if full
        (progn
          (when (or (> (item (amax (abs gu))) 0) (> (item (amax (abs gvh))) 0))
            (error 'value-error "linalg:svd: the gradient of U or VH needs :full-matrices nil"))
          (let ((ur (slice u t (list 0 k))) (vr (slice vh (list 0 k))))
            (matmul ur (matmul (linalg:%diag-embed gs) vr))))
        (let* ((s2 (mul s s))
               (diff (sub (unsqueeze s2 -2) (unsqueeze s2 -1)))
               (eye-k (eye k :dtype dt))
               (f (div (sub 1.0 eye-k) (add diff eye-k)))
               (ut-gu (matmul (linalg:%mt u) gu))
               (vt-gv (matmul (linalg:%mt v) gv))
               (j (mul f (sub ut-gu (linalg:%mt ut-gu))))
               (kk (mul f (sub vt-gv (linalg:%mt vt-gv))))
               (sd (linalg:%diag-embed s))
               (sinv (linalg:%diag-embed (reciprocal s)))
               (core (add (add (matmul j sd) (linalg:%diag-embed gs)) (matmul sd kk)))
               (m (linalg:%rows u)) (n (linalg:%cols vh))
               (term (matmul u (matmul core vh)))
               (term-u (matmul (sub (eye m :dtype dt) (matmul u (linalg:%mt u))) (matmul gu (matmul sinv vh))))
               (term-v (matmul u (matmul sinv (matmul (linalg:%mt gv) (sub (eye n :dtype dt) (matmul v vh)))))))
          (add (add term term-u) term-v)))))

(defun linalg:svdvals (a)
  "(linalg:svdvals A) The singular values of each matrix of A, descending.
  (to-list (linalg:svdvals (tensor '((0.0 2.0) (1.0 0.0)))))  ; => (2.0 1.0)"
  (second (linalg:svd a :full-matrices nil)))

(defun linalg:pinv (a &key rtol)
  "(linalg:pinv A &key rtol) The Moore-Penrose pseudo-inverse of each matrix of A (... M N),
(... N M), from its SVD: singular values at most RTOL times the largest count as zero (RTOL
defaults to max(M, N) times the dtype's epsilon, as in PyTorch).
  (to-list (linalg:pinv (tensor '((2.0 0.0) (0.0 0.0)))))  ; => ((0.5 0.0) (0.0 0.0))"
  (linalg:%check "linalg:pinv" a)
  (destructuring-bind (u s vh) (linalg:svd a :full-matrices nil)
    (let* ((eps (if (eq (dtype a) 'f64) 2.220446049250313e-16 1.1920929e-07))
           (tol (mul (amax s :axis -1 :keepdim t)
                     (or rtol (* (max (linalg:%rows a) (linalg:%cols a)) eps))))
           (sinv (where (gt s tol) (reciprocal (where (gt s tol) s (ones-like s))) (zeros-like s))))
      (matmul (linalg:%mt vh) (mul (unsqueeze sinv -1) (linalg:%mt u))))))

(defun linalg:lstsq (a b)
  "(linalg:lstsq A B) The least-squares solution X minimizing |A X - B| for A (... M N) of full
rank and B (... M K) or a vector (... M): through A's QR factorization when M >= N, and the
minimum-norm solution through A^T's when M < N.
  (to-list (linalg:lstsq (tensor '((1.0 0.0) (0.0 1.0) (0.0 0.0))) (tensor '(1.0 2.0 3.0))))  ; => (1.0 2.0)"
  (linalg:%check "linalg:lstsq" a)
  (linalg:%check "linalg:lstsq" b :min-rank 1)
  (let* ((vector (linalg:%vector-rhs-p a b))
         (b2 (if vector (unsqueeze b -1) b))
         (m (linalg:%rows a)) (n (linalg:%cols a)))
    (unless (equal (linalg:%rows b2) m)
      (error 'shape-error "linalg:lstsq: A ~a has ~a rows but B ~a has ~a" (shape a) m (shape b) (linalg:%rows b2)))
    (let ((x (if (>= m n)
                 (destructuring-bind (q r) (linalg:qr a)
                   (linalg:solve r (matmul (linalg:%mt q) b2)))
                 (destructuring-bind (q r) (linalg:qr (linalg:%mt a))
                   (matmul q (linalg:solve (linalg:%mt r) b2))))))
      (if vector (squeeze x -1) x))))

(defun linalg:matrix-norm (a &key (ord 'fro) (keepdim nil))
  "(linalg:matrix-norm A &key (ord 'fro) keepdim) A norm of each matrix of A (... M N): ORD
'fro (Frobenius), 'nuc (the sum of the singular values), 2 and -2 (the largest and smallest
singular value), 1 and -1 (the largest and smallest column sum of absolute values), 'inf and
'-inf (the same over rows).
  (item (linalg:matrix-norm (tensor '((3.0 0.0) (0.0 4.0)))))  ; => 5.0
  (item (linalg:matrix-norm (tensor '((3.0 0.0) (0.0 4.0))) :ord 'nuc))  ; => 7.0"
  (linalg:%check "linalg:matrix-norm" a)
  (let ((v (cond ((eq ord 'fro) (sqrt (sum (mul a a) :axis '(-2 -1))))
                 ((eq ord 'nuc) (sum (linalg:svdvals a) :axis -1))
                 ((eql ord 2) (amax (linalg:svdvals a) :axis -1))
                 ((eql ord -2) (amin (linalg:svdvals a) :axis -1))
                 ((eql ord 1) (amax (sum (abs a) :axis -2) :axis -1))
                 ((eql ord -1) (amin (sum (abs a) :axis -2) :axis -1))
                 ((eq ord 'inf) (amax (sum (abs a) :axis -1) :axis -1))
                 ((eq ord '-inf) (amin (sum (abs a) :axis -1) :axis -1))
                 (t (error 'value-error "linalg:matrix-norm: ord must be fro, nuc, 2, -2, 1, -1, inf or -inf, got ~s" ord)))))
    (if keepdim (unsqueeze (unsqueeze v -1) -1) v)))

(defun linalg:vector-norm (x &key (ord 2) axis keepdim)
  "(linalg:vector-norm X &key (ord 2) axis keepdim) The ORD-norm of X's elements (all of them,
or along AXIS, an axis or a list): (sum |x|^ORD)^(1/ORD) for a positive number ORD, the
largest |x| for 'inf, the smallest for '-inf, the count of nonzeros for 0, as
torch.linalg.vector_norm.
  (item (linalg:vector-norm (tensor '(3.0 -4.0))))  ; => 5.0
  (item (linalg:vector-norm (tensor '(3.0 -4.0)) :ord 1))  ; => 7.0
  (to-list (linalg:vector-norm (tensor '((3.0 4.0) (-1.0 0.0))) :ord 'inf :axis 1))  ; => (4.0 1.0)"
  (unless (tensorp x) (error 'type-error "linalg:vector-norm: expected a tensor, got ~s" x))
  (let ((a (abs (%float-tensor x))))
    (cond ((eq ord 'inf) (amax a :axis axis :keepdim keepdim))
          ((eq ord '-inf) (amin a :axis axis :keepdim keepdim))
          ((and (numberp ord) (= ord 0)) (sum (cast (ne a 0.0) (dtype a)) :axis axis :keepdim keepdim))
          ((and (numberp ord) (= ord 1)) (sum a :axis axis :keepdim keepdim))
          ((and (numberp ord) (= ord 2)) (sqrt (sum (mul a a) :axis axis :keepdim keepdim)))
          ((and (numberp ord) (> ord 0))
           (pow (sum (pow a (float ord)) :axis axis :keepdim keepdim) (/ 1.0 ord)))
          (t (error 'value-error "linalg:vector-norm: ord must be a positive number, 0, inf or -inf, got ~s" ord)))))

(defun linalg:matrix-rank (a &key rtol)
  "(linalg:matrix-rank A &key rtol) The rank of each matrix of A (... M N), as i64: how many
singular values exceed RTOL times the largest (RTOL defaults to max(M, N) times the dtype's
epsilon, as in PyTorch).
  (item (linalg:matrix-rank (tensor '((1.0 2.0) (2.0 4.0)))))  ; => 1
  (item (linalg:matrix-rank (eye 3)))  ; => 3"
  (linalg:%check "linalg:matrix-rank" a)
  (let* ((s (linalg:svdvals (detach a)))
         (eps (if (eq (dtype a) 'f64) 2.220446049250313e-16 1.1920929e-07))
         (tol (mul (amax s :axis -1 :keepdim t) (or rtol (* (max (linalg:%rows a) (linalg:%cols a)) eps)))))
    (sum (cast (gt s tol) 'i64) :axis -1)))

(defun linalg:cond (a &key (ord 2))
  "(linalg:cond A &key (ord 2)) The condition number of each matrix of A: for ORD 2 (and -2)
the ratio of the largest singular value to the smallest (and its inverse), for the other
matrix norms |A| |A^-1| (square invertible A), as torch.linalg.cond.
  (item (linalg:cond (tensor '((2.0 0.0) (0.0 0.5)))))  ; => 4.0
  (item (linalg:cond (tensor '((2.0 0.0) (0.0 0.5))) :ord 1))  ; => 4.0"
  (linalg:%check "linalg:cond" a)
  (if (member ord '(2 -2))
      (let* ((s (linalg:svdvals a))
             (ratio (div (amax s :axis -1) (amin s :axis -1))))
        (if (eql ord 2) ratio (reciprocal ratio)))
      (mul (linalg:matrix-norm a :ord ord) (linalg:matrix-norm (linalg:inv a) :ord ord))))

(defun linalg:matrix-power (a n)
  "(linalg:matrix-power A N) A multiplied by itself N times for each square matrix of A (N an
integer: 0 gives the identity, a negative N the power of the inverse), by repeated squaring.
  (to-list (linalg:matrix-power (tensor '((1.0 1.0) (0.0 1.0))) 3))  ; => ((1.0 3.0) (0.0 1.0))
  (allclose (linalg:matrix-power (tensor '((2.0 0.0) (0.0 4.0))) -2) '((0.25 0.0) (0.0 0.0625)))  ; => t"
  (linalg:%check "linalg:matrix-power" a :square t)
  (unless (integerp n) (error 'type-error "linalg:matrix-power: N must be an integer, got ~s" n))
  (let ((base (if (< n 0) (linalg:inv a) a))
        (k (abs n))
        (result nil))
    (if (= k 0)
        (add (zeros-like a) (eye (linalg:%rows a) :dtype (dtype a)))
        (progn
          (loop while (> k 0)
                do (when (oddp k) (setq result (if result (matmul result base) base)))
                   (setq k (floor k 2))
                   (when (> k 0) (setq base (matmul base base))))
          result))))

(provide 'linalg)
