;;; SPDX-License-Identifier: Apache-2.0
;;; The op fuzzer (issue 19): random graphs of primitive ops over every dtype (f64, f32, f16,
;;; bf16, i64, i32, i16, i8, u32, u8, bool) and every op group (unary, binary, where, reduce,
;;; movement, cast, copy, gather and scatter-add), realized on the current device and on the reference executor; and
;;; random smooth f64 graphs whose gradients are checked against finite differences; and value
;;; graphs again whose float leaves are read from quantized blocks (q8_0 or q4_0, through a
;;; shrink and a reshape of the blocks: views of quantized data, dequantized where read); and
;;; complex graphs (c64, c128), values against the reference and gradients against finite
;;; differences; and attention-shaped graphs, values and (every other one) the gradients a
;;; training step computes, against the reference. A disagreement is shrunk to a smallest graph that still fz-disagrees and
;;; printed as Lisp (a complex one is printed whole).
;;;   build/tlisp tests/lisp/tensor_fuzz_ops.lisp [--graphs N] [--grad-graphs N]
;;;                                               [--quantized-graphs N] [--complex-graphs N]
;;;                                               [--complex-grad-graphs N] [--attention-graphs N]
;;;                                               [--seed S] [--beam N [--beam-budget S]]
;;; With --beam N the device's kernels are beam-searched (jit-beam N, every kernel, at most
;;; --beam-budget seconds each, 0.2 by default): the values of the kernels the search chose are
;;; compared with the reference's, and the search's candidates that computed other values than
;;; the heuristics' kernel are counted (each is a bug in a lowering pass).
;;; ctest runs it on every device (cpu, devmem, the simulated GPUs) with the defaults.

(load "data/grad_check.lisp")

(defvar *graphs* (command-line-option "--graphs" 300))
(defvar *grad-graphs* (command-line-option "--grad-graphs" 40))
(defvar *quantized-graphs* (command-line-option "--quantized-graphs" 60))
(defvar *quantized-leaves* nil "True while float leaves are read from quantized blocks.")
(defvar *seed* (command-line-option "--seed" 19))
(defvar *device* (device))
(defvar *beam* (command-line-option "--beam" 0))
(defvar *beam-counts* (list 0 0 0) "Kernels searched, candidates timed, candidates that disagreed.")
(when (> *beam* 0) (jit-beam *beam* (command-line-option "--beam-budget" 0.2) 0))

;;; --- a seeded generator (an LCG, as C's rand: the same graphs on every device and every run) -------

(defvar *state* *seed*)
(defun fz-rnd (n)
  "A random integer in [0, N)."
  (setq *state* (mod (+ (* *state* 1103515245) 12345) 2147483648))
  (mod (floor *state* 65536) n))
(defun fz-chance (k) (= (fz-rnd k) 0))
(defun fz-pick (l) (nth (fz-rnd (length l)) l))

;;; --- types: (dtype . shape) --------------------------------------------------------------

(defvar +floats+ '(f64 f32 f16 bf16))
(defvar +ints+ '(i64 i32 i16 i8 u32 u8))
(defun fz-float-p (dt) (member dt +floats+))
(defun fz-int-p (dt) (member dt +ints+))
(defun fz-numel-of (shp) (apply #'* shp))

(defun fz-random-shape (&optional (long t))
  ;; Axes of 1 to 4, and (when LONG) now and then a last axis of 33 to 72: long enough for the
  ;; CPU's reduce lanes (16 accumulators and a remainder) and its vectorized loops.
  (let* ((rank (fz-rnd 4))
         (shape (loop repeat rank collect (+ 1 (fz-rnd 4)))))
    (if (and long shape (fz-chance 6))
        (append (butlast shape) (list (+ 33 (fz-rnd 40))))
        shape)))

(defun fz-random-element (dt)
  (cond ((fz-float-p dt) (if (fz-chance 6) 0.0 (* (- (fz-rnd 65) 32) 0.125)))
        ((eq dt 'bool) (fz-chance 2))
        ((eq dt 'u8) (fz-rnd 256))
        ((eq dt 'i8) (- (fz-rnd 256) 128))
        ((eq dt 'u32) (fz-rnd 2000))
        (t (- (fz-rnd 2001) 1000))))

;;; Leaves are (leaf K); *leaves* holds their (dtype shape data), data as a flat list.
(defvar *leaves* nil)
(defun fz-new-leaf (dt shp)
  (let ((k (length *leaves*)))
    (setq *leaves* (append *leaves* (list (list dt shp (loop repeat (fz-numel-of shp) collect (fz-random-element dt))))))
    (list 'leaf k)))

;;; --- the random graph ----------------------------------------------------------------------
;;; fz-gen returns (FORM DTYPE SHAPE); DEPTH bounds it.

(defun fz-gen (depth dt shp)
  (if (or (<= depth 0) (fz-chance 4))
      (if (fz-chance 8)
          (list (list 'prim:const (fz-random-element dt) (list 'quote dt) (list 'quote shp)) dt shp)
          (list (fz-new-leaf dt shp) dt shp))
      (let ((choice (fz-rnd 11)))
        (cond ((= choice 0) (fz-gen-unary depth dt shp))
              ((<= choice 2) (fz-gen-binary depth dt shp))
              ((= choice 3) (fz-gen-compare depth dt shp))
              ((= choice 4) (fz-gen-where depth dt shp))
              ((= choice 5) (fz-gen-reduce depth dt shp))
              ((= choice 6) (fz-gen-cast depth dt shp))
              ((= choice 10) (fz-gen-indexed depth dt shp))
              (t (fz-gen-movement depth dt shp))))))

(defun fz-sub (depth dt shp)
  (first (if (fz-complex-p dt) (fz-gen-complex (- depth 1) dt shp) (fz-gen (- depth 1) dt shp))))

(defun fz-gen-unary (depth dt shp)
  (let ((ops (cond ((fz-float-p dt) '(prim:neg prim:recip prim:sqrt prim:exp2 prim:log2 prim:sin prim:cos prim:copy))
                   ((eq dt 'bool) '(prim:copy))
                   (t '(prim:neg prim:copy)))))
    (list (list (fz-pick ops) (fz-sub depth dt shp)) dt shp)))

(defun fz-gen-binary (depth dt shp)
  (let ((ops (cond ((fz-float-p dt) '(prim:add prim:mul prim:max))
                   ((eq dt 'bool) '(prim:and prim:or prim:xor prim:mul))
                   (t '(prim:add prim:mul prim:max prim:idiv prim:mod prim:and prim:or prim:xor)))))
    (list (list (fz-pick ops) (fz-sub depth dt shp) (fz-sub depth dt shp)) dt shp)))

(defun fz-gen-compare (depth dt shp)
  ;; A bool from two operands of another dtype, turned into DT.
  (let* ((odt (fz-pick (append +floats+ +ints+)))
         (c (list (fz-pick '(prim:cmplt prim:cmpeq)) (fz-sub depth odt shp) (fz-sub depth odt shp))))
    (list (if (eq dt 'bool) c (list 'prim:cast c (list 'quote dt))) dt shp)))

(defun fz-gen-where (depth dt shp)
  (list (list 'prim:where (fz-sub depth 'bool shp) (fz-sub depth dt shp) (fz-sub depth dt shp)) dt shp))

(defun fz-gen-reduce (depth dt shp)
  ;; Reduce an axis grown from SHP back to size 1, then drop it by a reshape.
  (if (eq dt 'bool)
      (fz-gen-binary depth dt shp)
      (let* ((axis (fz-rnd (+ (length shp) 1)))
             (wide (append (subseq shp 0 axis) (list (+ 1 (fz-rnd 4))) (subseq shp axis)))
             (kind (fz-pick (if (fz-float-p dt) '(:sum :max :prod) '(:sum :max)))))
        (list (list 'prim:reshape (list 'prim:reduce kind (fz-sub depth dt wide) (list 'quote (list axis)))
                    (list 'quote shp))
              dt shp))))

(defun fz-index-form (shp m)
  ;; An integer tensor of shape SHP with values in [-1, M]: the ends are out of range (a gather
  ;; reads 0 there, a scatter-add adds nothing). Written into the form, not a leaf, so the
  ;; gradient fuzzer's leaves stay floats.
  (list 'prim:reshape
        (list 'tensor (list 'quote (loop repeat (fz-numel-of shp) collect (- (fz-rnd (+ m 2)) 1)))
              :dtype (list 'quote (fz-pick '(i32 i64 i16))))
        (list 'quote shp)))

(defun fz-gen-indexed (depth dt shp)
  ;; A gather from a source M long along an axis, or a scatter-add of values M long there.
  (if (null shp)
      (fz-gen-binary depth dt shp)
      (let* ((axis (fz-rnd (length shp)))
             (m (+ 1 (fz-rnd 4)))
             (other (fz-replace shp axis m)))
        (if (fz-chance 2)
            (list (list 'prim:gather (fz-sub depth dt other) (fz-index-form shp m) axis) dt shp)
            (list (list 'prim:scatter-add (fz-sub depth dt shp) (fz-index-form other (nth axis shp))
                        (fz-sub depth dt other) axis)
                  dt shp)))))

(defvar +same-size+ '((f64 i64) (i64 f64) (f32 i32 u32) (i32 f32 u32) (u32 f32 i32) (f16 i16 bf16)
                       (bf16 i16 f16) (i16 f16 bf16) (i8 u8) (u8 i8)))

(defun fz-gen-cast (depth dt shp)
  ;; From a leaf of another dtype: small values, so a float converts to any integer in range;
  ;; or the bits of a leaf of another dtype of the same size (any pattern: NaNs, infinities,
  ;; subnormals); or an iota.
  (let ((k (fz-rnd 4)) (same (cdr (assoc dt +same-size+))))
    (cond ((and (= k 0) same)
           (list (list 'prim:bitcast (fz-new-leaf (fz-pick same) shp) (list 'quote dt)) dt shp))
          ((and (= k 1) shp (not (eq dt 'bool)) (not (member dt '(i8 u8))))
           (list (list 'prim:iota (list 'quote shp) (fz-rnd (length shp)) (list 'quote dt)) dt shp))
          (t
           (let* ((from (fz-pick (append +floats+ '(i32 i16 u8 bool))))
                  (from (if (and (fz-float-p from) (fz-int-p dt) (member dt '(u8 u32))) 'i32 from)))
             (list (list 'prim:cast (fz-new-leaf from shp) (list 'quote dt)) dt shp))))))

(defun fz-gen-movement (depth dt shp)
  (let ((n (length shp)) (k (fz-rnd 6)))
    (cond ((and (= k 0) (> n 1))
           ;; permute: the source has the shape permuted back
           (let* ((order (let ((o (loop for i below n collect i)) (out nil))
                           (loop while o do (let ((x (fz-pick o))) (push x out) (setq o (remove x o))))
                           out))
                  (src (mapcar (lambda (i) (nth (position i order) shp)) (loop for i below n collect i))))
             (list (list 'prim:permute (fz-sub depth dt src) (list 'quote order)) dt shp)))
          ((and (= k 1) (> n 0))
           (list (list 'prim:flip (fz-sub depth dt shp) (list 'quote (list (fz-rnd n)))) dt shp))
          ((and (= k 2) (> n 0))
           ;; shrink from a larger source
           (let* ((befores (loop repeat n collect (fz-rnd 2)))
                  (src (mapcar (lambda (d b) (+ d b (fz-rnd 2))) shp befores)))
             (list (list 'prim:shrink (fz-sub depth dt src)
                         (list 'quote (mapcar (lambda (b d) (list b (+ b d))) befores shp)))
                   dt shp)))
          ((and (= k 3) (> n 0) (> (fz-numel-of shp) 1))
           ;; pad a smaller source (an axis of size > 1 gives up its ends)
           (let* ((axis (position-if (lambda (d) (> d 1)) shp))
                  (before (fz-rnd 2))
                  (after (- 1 before))
                  (src (fz-replace shp axis (- (nth axis shp) 1)))
                  (pads (loop for i below n collect (if (= i axis) (list before after) (list 0 0)))))
             (list (list 'prim:pad (fz-sub depth dt src) (list 'quote pads)) dt shp)))
          ((and (= k 4) (> n 0))
           ;; expand an axis of size 1 (the source has 1 there)
           (let* ((axis (fz-rnd n)) (src (fz-replace shp axis 1)))
             (list (list 'prim:expand (fz-sub depth dt src) (list 'quote shp)) dt shp)))
          (t
           ;; reshape from the flattened elements
           (list (list 'prim:reshape (fz-sub depth dt (list (fz-numel-of shp))) (list 'quote shp)) dt shp)))))

(defun fz-replace (l i v) (let ((j -1)) (mapcar (lambda (x) (setq j (+ j 1)) (if (= j i) v x)) l)))

;;; --- evaluating a form on a device -----------------------------------------------------------

(defun fz-leaf-tensor (leaf)
  ;; A leaf (DTYPE SHAPE DATA) as a tensor; with *quantized-leaves* a float leaf's data is
  ;; quantized (q8_0 for an even count, q4_0 for an odd one) in one row of whole blocks,
  ;; shrunk to its count, reshaped and cast: the reference and the device read the same blocks.
  (destructuring-bind (dt shp data) leaf
    (if (and *quantized-leaves* (fz-float-p dt))
        (let* ((n (length data))
               (m (* 32 (max 1 (ceiling n 32))))
               (blocks (quantize (prim:reshape (tensor (append data (make-list (- m n) :initial-element 0.0)) :dtype 'f32)
                                               (list 1 m))
                                 (if (evenp n) 'q8_0 'q4_0))))
          (prim:cast (prim:reshape (prim:shrink blocks (list (list 0 1) (list 0 n))) shp) dt))
        (reshape (tensor data :dtype dt) shp))))

(defun fz-leaf-tensors () (mapcar #'fz-leaf-tensor *leaves*))

(defun fz-substitute-leaves (form ts)
  (cond ((and (consp form) (eq (car form) 'leaf)) (nth (second form) ts))
        ((and (consp form) (eq (car form) 'quote)) form)
        ((consp form) (mapcar (lambda (f) (fz-substitute-leaves f ts)) form))
        (t form)))

(defun fz-run-on (dev form)
  "FORM's value as a flat list on device DEV (fresh leaves, so nothing is shared with another
device's result), or (:error MESSAGE)."
  (use-backend dev)
  (prog1
      (handler-case
          (let* ((ts (fz-leaf-tensors))
                 (v (eval (fz-substitute-leaves form ts))))
            (to-list (reshape v (list (numel v)))))
        (error (e) (list :error (condition-message e))))
    (when (and (> *beam* 0) (not (eq dev 'ref)))
      (let ((s (jit-stats)))
        (setq *beam-counts* (mapcar #'+ *beam-counts*
                                    (list (getf s :kernels-searched) (getf s :search-candidates)
                                          (getf s :search-disagreed))))))))

(defun fz-tolerance (dt) (cdr (assoc dt '((f64 . 1e-9) (f32 . 2e-4) (f16 . 2e-2) (bf16 . 4e-2)))))

(defun fz-agree-p (a b dt)
  (cond ((or (eq (car a) :error) (eq (car b) :error)) (equal a b))
        ((not (= (length a) (length b))) nil)
        ((fz-float-p dt)
         (every #'identity
                (mapcar (lambda (x y)
                          ;; (A shrunk form can have another dtype than DT: booleans compare equal.)
                          (or (equal x y)
                              (and (numberp x) (numberp y)
                                   (or (and (/= x x) (/= y y))
                                       (= x y)
                                       (<= (abs (- x y)) (* (fz-tolerance dt) (+ 1 (abs y))))))))
                        a b)))
        (t (equal a b))))

(defun fz-disagrees (form dt)
  (let ((want (fz-run-on 'ref form)) (got (fz-run-on *device* form)))
    (if (or (fz-agree-p got want dt) (fz-order-explains-p form got dt)) nil (list want got))))

;;; A float sum or product's value depends on the order its terms combine in when a partial
;;; result overflows or underflows (1e38 * 1e38 * 1e-38 is inf one way, 1e38 the other), and
;;; no order is the right one: threads, lanes and a GPU's group split each choose their own.
;;; So where the device disagrees, the reference computes each sum and product reduce in the
;;; form again in every other order of its terms (the fuzzer's reduced axes hold 1 to 4),
;;; one reduce at a time: sequences of every permutation and, for 4 terms, the two pairings;
;;; agreeing with any of them is agreeing.

(defun fz-permutations (l)
  (if (null l)
      (list nil)
      (apply #'append (mapcar (lambda (x) (mapcar (lambda (p) (cons x p)) (fz-permutations (remove x l)))) l))))

(defun fz-reduces (form)
  ;; The sum and product reduce subforms of FORM.
  (remove-if-not (lambda (f) (and (eq (car f) 'prim:reduce) (member (second f) '(:sum :prod))))
                 (cons form (fz-subforms form))))

(defun fz-ref-shape (form)
  (use-backend 'ref)
  (shape (eval (fz-substitute-leaves form (fz-leaf-tensors)))))

(defun fz-permute-along (x shp axis p)
  ;; X (of shape SHP) with its elements along AXIS in the order P: a gather.
  (let* ((n (nth axis shp))
         (inner (fz-numel-of (nthcdr (+ axis 1) shp)))
         (index (loop for f below (fz-numel-of shp) collect (nth (mod (floor f inner) n) p))))
    (list 'prim:gather x (list 'prim:reshape (list 'tensor (list 'quote index) :dtype ''i64) (list 'quote shp)) axis)))

(defun fz-reorderings (r)
  ;; Forms computing reduce R with its terms in other orders.
  (let* ((kind (second r)) (x (third r)) (axis (first (second (fourth r))))
         (shp (fz-ref-shape x)) (n (nth axis shp)) (out nil))
    (when (<= 3 n 4)
      (dolist (p (cdr (fz-permutations (loop for i below n collect i))))
        (push (list 'prim:reduce kind (fz-permute-along x shp axis p) (fourth r)) out))
      (when (= n 4)
        (let ((halves (append (subseq shp 0 axis) '(2 2) (nthcdr (+ axis 1) shp))))
          (dolist (p '((0 1 2 3) (0 2 1 3)))
            (push (list 'prim:reshape
                        (list 'prim:reduce kind
                              (list 'prim:reduce kind
                                    (list 'prim:reshape (fz-permute-along x shp axis p) (list 'quote halves))
                                    (list 'quote (list (+ axis 1))))
                              (list 'quote (list axis)))
                        (list 'quote (fz-replace shp axis 1)))
                  out)))))
    out))

(defun fz-order-explains-p (form got dt)
  (and (not (eq (car got) :error))
       (some (lambda (r)
               (some (lambda (alt) (fz-agree-p got (fz-run-on 'ref (fz-replace-form form r alt)) dt))
                     (fz-reorderings r)))
             (fz-reduces form))))

;;; --- shrinking ---------------------------------------------------------------------------

(defun fz-subforms (form)
  ;; Every tensor-valued subform of FORM (its operands, recursively), outermost first.
  (if (and (consp form) (not (member (car form) '(leaf quote))))
      (let ((out nil))
        (dolist (f (cdr form))
          (when (and (consp f) (not (eq (car f) 'quote)))
            (push f out)
            (setq out (append (reverse (fz-subforms f)) out))))
        (reverse out))
      nil))

(defun fz-replace-form (form old new)
  (cond ((eq form old) new)
        ((and (consp form) (not (eq (car form) 'quote))) (mapcar (lambda (f) (fz-replace-form f old new)) form))
        (t form)))

(defun fz-shrink-form (form dt)
  "A smaller form that still disagrees: a subform replaced by one of its operands, repeatedly."
  (let ((progress t))
    (loop while progress do
      (setq progress nil)
      (block try
        (dolist (s (fz-subforms form))
          (dolist (operand (fz-subforms s))
            (when (member operand (cdr s))
              (let ((smaller (fz-replace-form form s operand)))
                (when (fz-disagrees smaller dt)
                  (setq form smaller progress t)
                  (return-from try)))))))))
  form)

;;; --- value fuzzing ------------------------------------------------------------------------

(defun fz-fuzz-values (n &optional (what "value graphs"))
  (let ((failures 0) (ops nil))
    (dotimes (i n)
      (setq *leaves* nil)
      (let* ((dt (fz-pick (append +floats+ +ints+ '(bool))))
             (g (fz-gen 4 dt (fz-random-shape)))
             (form (first g)))
        (dolist (f (cons form (fz-subforms form))) (when (consp f) (pushnew (car f) ops)))
        (let ((d (fz-disagrees form dt)))
          (when d
            (setq failures (+ failures 1))
            (let ((small (fz-shrink-form form dt)))
              (format t "graph ~a (~a): ~a and ref disagree~%  smallest: ~s~%  leaves: ~s~%  ref: ~s~%  ~a: ~s~%"
                      i dt *device* small *leaves* (first (fz-disagrees small dt)) *device* (second (fz-disagrees small dt))))))))
    (use-backend *device*)
    (format t "~a: ~a of ~a agree with the reference executor~%" what (- n failures) n)
    (let ((missing (remove-if (lambda (op) (member op ops))
                              '(prim:const prim:iota prim:bitcast prim:neg prim:recip prim:sqrt prim:exp2 prim:log2 prim:sin prim:cos prim:cast
                                prim:add prim:mul prim:idiv prim:mod prim:max prim:cmplt prim:cmpeq prim:and
                                prim:or prim:xor prim:where prim:reduce prim:reshape prim:permute prim:expand
                                prim:pad prim:shrink prim:flip prim:copy prim:gather prim:scatter-add))))
      (unless *quantized-leaves* (format t "ops not exercised: ~s~%" missing)))))

;;; --- gradient fuzzing: smooth f64 graphs against finite differences ---------------------

(defun fz-gen-smooth (depth shp)
  (if (or (<= depth 0) (fz-chance 4))
      (fz-new-leaf 'f64 shp)
      (let ((k (fz-rnd 11)) (a (fz-gen-smooth (- depth 1) shp)))
        (cond ((= k 0) (list 'prim:add a (fz-gen-smooth (- depth 1) shp)))
              ((= k 1) (list 'prim:mul a (fz-gen-smooth (- depth 1) shp)))
              ((= k 2) (list 'prim:neg a))
              ((= k 3) (list 'prim:sin a))
              ((= k 4) (list 'prim:exp2 (list 'prim:sin a)))
              ;; 1 + a^2 >= 1: recip, sqrt and log2 stay smooth
              ((= k 5) (list (fz-pick '(prim:recip prim:sqrt prim:log2))
                             (list 'prim:add (list 'prim:mul a a) (list 'prim:const 1.0 ''f64 (list 'quote shp)))))
              ((and (= k 6) (> (length shp) 1))
               (list 'prim:flip a (list 'quote (list 0))))
              ((= k 7)
               (list 'prim:reshape (list 'prim:reduce :sum
                                         (list 'prim:expand (list 'prim:reshape a (list 'quote (append shp '(1))))
                                               (list 'quote (append shp '(3))))
                                         (list 'quote (list (length shp))))
                     (list 'quote shp)))
              ((= k 9)
               (let ((axis (fz-rnd (length shp))))
                 (list 'prim:gather a (fz-index-form shp (nth axis shp)) axis)))
              ((= k 10)
               (let ((axis (fz-rnd (length shp))))
                 (list 'prim:scatter-add a (fz-index-form shp (nth axis shp)) (fz-gen-smooth (- depth 1) shp) axis)))
              (t (list 'prim:where (list 'prim:cmplt a (fz-gen-smooth (- depth 1) shp)) a (list 'prim:sin a)))))))

(defun fz-fuzz-gradients (n)
  (let ((failures 0))
    (dotimes (i n)
      (setq *leaves* nil)
      (let* ((shp (let ((s (fz-random-shape nil))) (if s s '(2))))
             (form (fz-gen-smooth 4 shp))
             (k (length *leaves*))
             (vars (loop for j below k collect (intern (format nil "X~a" j))))
             (body (let ((f form))
                     (dotimes (j k f) (setq f (fz-replace-leaf f j (nth j vars))))))
             (fn (eval (list 'lambda vars body)))
             ;; Off the grid of the value fuzzer: a comparison tie (a kink of where) would
             ;; make finite differences meaningless. Each element gets an offset of its own,
             ;; the fraction of the square root of a prime of its own, /16: square roots of
             ;; distinct primes and 1 are linearly independent over the rationals, so no sum
             ;; or difference of grid values and offsets ties (a repeated offset made two zeros
             ;; tie, seed 786; offsets k/7919 let x + 5/7919 tie with y + 2/7919 + z + 3/7919,
             ;; seed 2079).
             (used (make-hash-table))
             (offset (lambda ()
                       (when (>= (hash-table-count used) 1000) (clrhash used))  ; (never, at these sizes)
                       (let ((k (fz-rnd 1000)))
                         (loop while (gethash k used) do (setq k (fz-rnd 1000)))
                         (setf (gethash k used) t)
                         (let ((r (sqrt (nth k +fz-primes+)))) (/ (- r (floor r)) 16.0)))))
             (ts (mapcar (lambda (l)
                           (reshape (tensor (mapcar (lambda (v) (+ v (funcall offset))) (third l)) :dtype 'f64)
                                    (second l)))
                         *leaves*)))
        (unless (apply #'grad-check fn ts)
          (setq failures (+ failures 1))
          (format t "gradient graph ~a disagrees with finite differences: ~s~%  leaves: ~s~%" i form *leaves*))))
    (format t "gradient graphs: ~a of ~a agree with finite differences~%" (- n failures) n)))

(defvar +fz-primes+
  ;; The first 1000 primes (the last is 7919).
  (let ((out nil) (n 2))
    (loop while (< (length out) 1000)
          do (when (loop for p in out never (and (<= (* p p) n) (= (mod n p) 0))) (push n out))
             (setq n (+ n 1)))
    (reverse out)))

(defun fz-replace-leaf (form j var)
  (cond ((and (consp form) (eq (car form) 'leaf)) (if (= (second form) j) var form))
        ((and (consp form) (eq (car form) 'quote)) form)
        ((consp form) (mapcar (lambda (f) (fz-replace-leaf f j var)) form))
        (t form)))

;;; --- complex graphs (issue 27) ---------------------------------------------------------------
;;; Random graphs over c64 and c128 leaves: the primitives that take complex tensors (add, mul,
;;; neg, copy, where, reduce :sum, cmpeq, the movements, gather, scatter-add, casts) and the
;;; complex composites (division, exp, sqrt, conj, polar, fft and ifft along an axis), on the
;;; device against the reference executor; and smooth c128 graphs whose gradients (as their
;;; parts) are checked against finite differences. The transforms run FFTW's kernels on the
;;; CPU and the reference, the generated ones on the simulated GPUs.

(defvar *complex-graphs* (command-line-option "--complex-graphs" 60))
(defvar *complex-grad-graphs* (command-line-option "--complex-grad-graphs" 15))
(defvar +complexes+ '(c64 c128))
(defun fz-complex-p (dt) (member dt +complexes+))
(defun fz-part-of (dt) (if (eq dt 'c128) 'f64 'f32))

(defun fz-random-pair ()
  (cons (fz-random-element 'f64) (fz-random-element 'f64)))

(defun fz-new-complex-leaf (dt shp)
  (let ((k (length *leaves*)))
    (setq *leaves* (append *leaves* (list (list dt shp (loop repeat (fz-numel-of shp) collect (fz-random-pair))))))
    (list 'leaf k)))

(defun fz-gen-complex (depth dt shp)
  ;; (FORM DTYPE SHAPE) of complex DT, as fz-gen.
  (if (or (<= depth 0) (fz-chance 4))
      (if (fz-chance 8)
          (list (list 'prim:const (fz-random-element 'f64) (list 'quote dt) (list 'quote shp)) dt shp)
          (list (fz-new-complex-leaf dt shp) dt shp))
      (let ((k (fz-rnd 12))
            (sub (lambda (s) (first (fz-gen-complex (- depth 1) dt s)))))
        (cond ((= k 0)
               (let ((f (fz-pick '(prim:neg prim:copy conj exp sqrt))))
                 ;; exp of a scaled value: the graph's values grow by products
                 (list (if (eq f 'exp) (list 'exp (list 'mul 0.125 (funcall sub shp))) (list f (funcall sub shp))) dt shp)))
              ((<= k 2) (list (list (fz-pick '(prim:add prim:mul prim:mul div)) (funcall sub shp) (funcall sub shp)) dt shp))
              ((= k 3) (list (list 'prim:where
                                   (list 'prim:cmpeq (funcall sub shp) (funcall sub shp))
                                   (funcall sub shp) (funcall sub shp))
                             dt shp))
              ((= k 4)
               (let* ((axis (fz-rnd (+ (length shp) 1)))
                      (wide (append (subseq shp 0 axis) (list (+ 1 (fz-rnd 4))) (subseq shp axis))))
                 (list (list 'prim:reshape (list 'prim:reduce :sum (funcall sub wide) (list 'quote (list axis)))
                             (list 'quote shp))
                       dt shp)))
              ((= k 5)
               ;; from the other complex type, or from a real leaf, or polar of two
               (let ((j (fz-rnd 3)))
                 (cond ((= j 0)
                        (list (list 'prim:cast (fz-new-complex-leaf (if (eq dt 'c64) 'c128 'c64) shp) (list 'quote dt)) dt shp))
                       ((= j 1)
                        (list (list 'prim:cast (fz-new-leaf (fz-pick '(f64 f32 i32 bool)) shp) (list 'quote dt)) dt shp))
                       (t (list (list 'prim:cast (list 'polar (fz-new-leaf (fz-part-of dt) shp) (fz-new-leaf (fz-part-of dt) shp))
                                      (list 'quote dt))
                                dt shp)))))
              ((and (= k 6) shp)
               (list (list (fz-pick '(fft ifft)) (funcall sub shp) :axis (fz-rnd (length shp))) dt shp))
              ((and (= k 7) shp)
               (let* ((axis (fz-rnd (length shp))) (m (+ 1 (fz-rnd 4))) (other (fz-replace shp axis m)))
                 (if (fz-chance 2)
                     (list (list 'prim:gather (funcall sub other) (fz-index-form shp m) axis) dt shp)
                     (list (list 'prim:scatter-add (funcall sub shp) (fz-index-form other (nth axis shp)) (funcall sub other) axis)
                           dt shp))))
              ;; the movements (fz-sub makes their sources complex)
              (t (fz-gen-movement depth dt shp))))))

(defun fz-agree-complex-p (a b dt)
  ;; Flat lists of (re . im) pairs (or (:error ...)) within the part type's tolerance.
  (cond ((or (eq (car a) :error) (eq (car b) :error)) (equal a b))
        ((not (= (length a) (length b))) nil)
        (t (let ((tol (fz-tolerance (fz-part-of dt))))
             (every (lambda (x y)
                      (flet ((close (u v) (or (and (/= u u) (/= v v)) (= u v) (<= (abs (- u v)) (* tol (+ 1 (abs v)))))))
                        (and (close (car x) (car y)) (close (cdr x) (cdr y)))))
                    a b)))))

(defun fz-fuzz-complex (n)
  (let ((failures 0))
    (dotimes (i n)
      (setq *leaves* nil)
      (let* ((dt (fz-pick +complexes+))
             (form (first (fz-gen-complex 4 dt (fz-random-shape))))
             (want (fz-run-on 'ref form))
             (got (fz-run-on *device* form)))
        (unless (fz-agree-complex-p got want dt)
          (setq failures (+ failures 1))
          (format t "complex graph ~a (~a): ~a and ref disagree~%  form: ~s~%  leaves: ~s~%  ref: ~s~%  ~a: ~s~%"
                  i dt *device* form *leaves* want *device* got))))
    (use-backend *device*)
    (format t "complex value graphs: ~a of ~a agree with the reference executor~%" (- n failures) n)))

(defun fz-gen-complex-smooth (depth shp)
  ;; A c128 graph of smooth functions (leaves as parts, made complex inside).
  (if (or (<= depth 0) (fz-chance 4))
      (list 'view-as-complex (fz-new-leaf 'f64 (append shp '(2))))
      (let ((k (fz-rnd 9)) (a (fz-gen-complex-smooth (- depth 1) shp)))
        (cond ((= k 0) (list 'add a (fz-gen-complex-smooth (- depth 1) shp)))
              ((= k 1) (list 'mul a (fz-gen-complex-smooth (- depth 1) shp)))
              ((= k 2) (list 'conj a))
              ;; sin and exp of a scaled value: sin's cosh(imaginary part) grows as fast as exp
              ((= k 3) (list 'sin (list 'mul 0.25 a)))
              ;; a real part of at least 2: away from 0 and the branch cut, where they are singular
              ((= k 4) (list (fz-pick '(reciprocal log sqrt))
                             (list 'complex (list 'add 2.0 (list 'square (list 'real a))) (list 'imag a))))
              ((= k 5) (list 'exp (list 'mul 0.25 a)))
              ((and (= k 6) shp) (list (fz-pick '(fft ifft)) a :axis (fz-rnd (length shp))))
              ((= k 7) (list 'complex (list 'abs (list 'add a 3.0)) (list 'real a)))
              (t (list 'flip a (list 'quote (if shp (list 0) nil))))))))

(defun fz-fuzz-complex-gradients (n)
  (let ((failures 0))
    (dotimes (i n)
      (setq *leaves* nil)
      (let* ((shp (let ((s (fz-random-shape nil))) (if s s '(2))))
             (form (list 'view-as-real (fz-gen-complex-smooth 4 shp)))
             (k (length *leaves*))
             (vars (loop for j below k collect (intern (format nil "Z~a" j))))
             (body (let ((f form)) (dotimes (j k f) (setq f (fz-replace-leaf f j (nth j vars))))))
             (fn (eval (list 'lambda vars body)))
             (ts (mapcar (lambda (l) (reshape (tensor (mapcar (lambda (v) (+ v 0.0371)) (third l)) :dtype 'f64) (second l)))
                         *leaves*)))
        (unless (apply #'grad-check fn ts)
          (setq failures (+ failures 1))
          (format t "complex gradient graph ~a disagrees with finite differences: ~s~%  leaves: ~s~%" i form *leaves*))))
    (format t "complex gradient graphs: ~a of ~a agree with finite differences~%" (- n failures) n)))

;;; --- attention-shaped graphs (issue 24) -------------------------------------------------------
;;; softmax(Q K^T * scale + ...) V with random shapes (keys and widths in 16s now and then, which
;;; the CPU runs in blocks), grouped-query broadcasts, an additive bias, masks built from index
;;; comparisons (causal-like, windows, both ways round) or read from a boolean leaf, and soft
;;; caps, computed with (jit-online-softmax :always) against the reference executor.

(defvar *attention-graphs* (command-line-option "--attention-graphs" 40))

(defun fz-index-mask (lq lk)
  ;; A random comparison of the key index j against the query index i (both as columns and rows).
  (let* ((i `(reshape (arange ,lq) '(,lq 1)))
         (j `(reshape (arange ,lk) '(1 ,lk)))
         (d `(sub ,j ,i))
         (a (- (fz-rnd 9) 4)) (b (+ a (fz-rnd 8))))
    (case (fz-rnd 4)
      (0 `(le ,d ,a))
      (1 `(logical-and (ge ,d ,a) (le ,d ,b)))
      (2 `(lt ,j ,(fz-rnd (+ lk 1))))
      (t `(logical-or (gt ,d ,b) (lt (add ,j ,i) ,(fz-rnd (+ lq lk))))))))

(defun fz-gen-attention ()
  ;; (FORM DTYPE SHAPE) of one attention-shaped graph.
  (let* ((dt (if (fz-chance 4) 'f64 'f32))
         (lq (fz-pick '(1 2 3 4 5 8 12 16 32)))
         (lk (if (fz-chance 2) (fz-pick '(16 32 48 64)) (+ 1 (fz-rnd 7))))
         (d (if (fz-chance 2) 16 (+ 1 (fz-rnd 4))))
         (e (if (fz-chance 2) (fz-pick '(16 32)) (+ 1 (fz-rnd 3))))
         (b (+ 1 (fz-rnd 2))) (h (+ 1 (fz-rnd 3)))
         (gqa (fz-chance 3))
         (qs (if gqa (list b h 2 lq d) (list b h lq d)))
         (ks (if gqa (list b h 1 lk d) (list b h lk d)))
         (vs (if gqa (list b h 1 lk e) (list b h lk e)))
         (q (fz-new-leaf dt qs)) (k (fz-new-leaf dt ks)) (v (fz-new-leaf dt vs))
         (s `(mul (matmul ,q (transpose ,k)) ,(fz-pick '(0.25 0.5 1.0 3.0)))))
    (when (fz-chance 3) (setq s `(add ,s ,(fz-new-leaf dt (list lq lk)))))
    (when (fz-chance 4) (setq s `(mul (tanh (div ,s 2.0)) 2.0)))
    (case (fz-rnd 4)
      (0 (setq s `(where ,(fz-index-mask lq lk) ,s (- inf))))
      (1 (setq s `(where ,(fz-index-mask lq lk) (- inf) ,s)))
      (2 (setq s `(where ,(fz-new-leaf 'bool (list lq lk)) ,s (- inf)))))
    (list `(matmul (softmax ,s :axis -1) ,v) dt (butlast (if gqa (list b h 2 lq e) (list b h lq e)) 0))))

(defun fz-attention-grads (form dt shp)
  ;; A form for the gradients of sum(FORM * W), W a new leaf of FORM's shape, with respect to
  ;; each float leaf of FORM (q, k, v, a bias), flattened and joined: what backward computes
  ;; for a training step (recomputing the L x L matrices with :always, see recompute_softmax).
  (let* ((floats (loop for j below (length *leaves*) when (fz-float-p (first (nth j *leaves*))) collect j))
         (vars (loop for j in floats collect (intern (format nil "G~a" j))))
         (body form)
         (w (fz-new-leaf dt shp)))
    (loop for j in floats for var in vars do (setq body (fz-replace-leaf body j var)))
    `(cat (mapcar (lambda (g) (reshape g (list (numel g))))
                  (second (funcall (value-and-grad (lambda ,vars (sum (mul ,body ,w))))
                                   ,@(mapcar (lambda (j) (list 'leaf j)) floats)))))))

(defun fz-fuzz-attention (n)
  ;; Each graph's value, then its gradients (every other graph: backward compiles a dozen kernels).
  (let ((failures 0) (grads 0) (grad-failures 0) (old (jit-online-softmax :always)))
    (dotimes (i n)
      (setq *leaves* nil)
      (destructuring-bind (form dt shp) (fz-gen-attention)
        (let ((d (fz-disagrees form dt)))
          (when d
            (setq failures (+ failures 1))
            (format t "attention graph ~a (~a): ~a and ref disagree~%  form: ~s~%  leaves: ~s~%  ref: ~s~%  ~a: ~s~%"
                    i dt *device* form *leaves* (first d) *device* (second d))))
        (when (= (mod i 2) 0)
          (setq grads (+ grads 1))
          (let* ((g (fz-attention-grads form dt shp)) (d (fz-disagrees g dt)))
            (when d
              (setq grad-failures (+ grad-failures 1))
              (format t "attention gradients ~a (~a): ~a and ref disagree~%  form: ~s~%  leaves: ~s~%  ref: ~s~%  ~a: ~s~%"
                      i dt *device* g *leaves* (first d) *device* (second d)))))))
    (use-backend *device*)
    (jit-online-softmax old)
    (format t "attention graphs: ~a of ~a agree with the reference executor~%" (- n failures) n)
    (format t "attention gradients: ~a of ~a agree with the reference executor~%" (- grads grad-failures) grads)))

(fz-fuzz-values *graphs*)
(fz-fuzz-attention *attention-graphs*)
(fz-fuzz-gradients *grad-graphs*)
(let ((*quantized-leaves* t))
  (fz-fuzz-values *quantized-graphs* "value graphs over quantized leaves"))
(fz-fuzz-complex *complex-graphs*)
(fz-fuzz-complex-gradients *complex-grad-graphs*)
(when (> *beam* 0)
  (format t "beam search: ~a kernels searched, ~a candidates timed, ~a computed other values~%"
          (first *beam-counts*) (second *beam-counts*) (third *beam-counts*)))
