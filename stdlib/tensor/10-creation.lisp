;;; SPDX-License-Identifier: Apache-2.0
;;; Creating tensors: constants, ranges, identity.

(defun %shape-arg (fn shp)
  (cond ((integerp shp) (list shp))
        ((listp shp) shp)
        (t (error 'type-error "~a: a shape must be a list of dimensions, got ~s" fn shp))))

(defun %value-dtype (value)
  (cond ((floatp value) 'f32) ((integerp value) 'i32) (t 'bool)))

(defcomposite full (shp value &key dtype)
  "(full SHAPE VALUE &key dtype) A tensor of SHAPE filled with VALUE (dtype from VALUE:
f32 for a float, i32 for an integer, bool for t/nil).
  (to-list (full '(2) 7))  ; => (7 7)"
  (prim:const value (if dtype (%dtype-arg 'full dtype) (%value-dtype value)) (%shape-arg 'full shp)))

(defcomposite zeros (shp &key (dtype 'f32))
  "(zeros SHAPE &key (dtype 'f32)) A tensor of SHAPE filled with 0.
  (to-list (zeros '(2 2)))  ; => ((0.0 0.0) (0.0 0.0))"
  (prim:const 0 (%dtype-arg 'zeros dtype) (%shape-arg 'zeros shp)))

(defcomposite ones (shp &key (dtype 'f32))
  "(ones SHAPE &key (dtype 'f32)) A tensor of SHAPE filled with 1.
  (to-list (ones '(2) :dtype 'i32))  ; => (1 1)"
  (prim:const 1 (%dtype-arg 'ones dtype) (%shape-arg 'ones shp)))

(defcomposite full-like (x value &key dtype)
  "(full-like X VALUE &key dtype) A tensor shaped like X filled with VALUE (X's dtype by default).
  (to-list (full-like (tensor '(1 2 3)) 7))  ; => (7 7 7)
  (to-list (full-like (tensor '(1 2)) 0.5 :dtype 'f32))  ; => (0.5 0.5)"
  (prim:const value (if dtype (%dtype-arg 'full-like dtype) (tensor-dtype x)) (tensor-shape x)))

(defcomposite zeros-like (x &key dtype)
  "(zeros-like X &key dtype) Zeros shaped like X, of X's dtype unless given.
  (to-list (zeros-like (tensor '((1 2) (3 4)))))  ; => ((0 0) (0 0))
  (tensor-dtype (zeros-like (tensor '(1 2)) :dtype 'f32))  ; => f32"
  (full-like x 0 :dtype dtype))

(defcomposite ones-like (x &key dtype)
  "(ones-like X &key dtype) Ones shaped like X, of X's dtype unless given.
  (to-list (ones-like (tensor '(1.5 2.5))))  ; => (1.0 1.0)"
  (full-like x 1 :dtype dtype))

(defcomposite arange (&rest args)
  "(arange [START] STOP [STEP] &key dtype) The 1-d tensor START, START+STEP, ... below STOP.
With one number it counts from 0. Integers give i32, any float gives f32.
  (to-list (arange 5))  ; => (0 1 2 3 4)"
  (let* ((nums (loop for a in args while (numberp a) collect a))
         (keys (nthcdr (length nums) args))
         (dtype (getf keys :dtype))
         (start (if (cdr nums) (first nums) 0))
         (stop (if (cdr nums) (second nums) (first nums)))
         (step (or (third nums) 1)))
    (when (or (null nums) (> (length nums) 3) (and keys (not (equal (remove-if-not #'keywordp keys) '(:dtype)))))
      (error 'type-error "arange: expected [START] STOP [STEP] &key dtype, got ~s" args))
    (when (= step 0) (error 'type-error "arange: step must not be zero"))
    (let* ((n (max 0 (ceiling (- stop start) step)))
           (dt (if dtype
                   (%dtype-arg 'arange dtype)
                   (if (and (integerp start) (integerp stop) (integerp step)) 'i32 'f32))))
      (prim:add (prim:mul (prim:iota (list n) 0 dt) (prim:const step dt (list n)))
                (prim:const start dt (list n))))))

(defcomposite linspace (start stop n &key (dtype 'f32))
  "(linspace START STOP N &key (dtype 'f32)) N evenly spaced values from START to STOP inclusive.
An integer DTYPE truncates the values toward zero.
  (to-list (linspace 0 1 5))  ; => (0.0 0.25 0.5 0.75 1.0)"
  (%dtype-arg 'linspace dtype)
  (when (< n 0) (error 'type-error "linspace: N must be non-negative, got ~a" n))
  (let ((step (if (> n 1) (/ (float (- stop start)) (- n 1)) 0.0))
        (ct (if (dtype-float-p dtype) dtype 'f32)))
    (prim:cast (prim:add (prim:mul (prim:iota (list n) 0 ct) (prim:const step ct (list n)))
                         (prim:const start ct (list n)))
               dtype)))

(defcomposite eye (n &rest args)
  "(eye N [M] &key (dtype 'f32)) The N x M (default N x N) identity matrix.
  (to-list (eye 2))  ; => ((1.0 0.0) (0.0 1.0))"
  (let* ((m (if (and args (not (keywordp (car args)))) (pop args) n))
         (dtype (%dtype-arg 'eye (getf args :dtype 'f32)))
         (shp (list n m)))
    (when (or (remove :dtype (remove-if-not #'keywordp args)) (oddp (length args)))
      (error 'type-error "eye: expected N [M] &key dtype, got ~s" (cons n args)))
    (prim:cast (prim:cmpeq (prim:iota shp 0 'i32) (prim:iota shp 1 'i32)) dtype)))

;;; Quantized weights: the block formats q8_0 and q4_0 (GGUF's).

(defun quantize (x format)
  "(quantize X FORMAT) X's values in the block format FORMAT, q8_0 or q4_0 (GGUF's, as
llama.cpp writes them): per block of 32 elements along the last axis (whose size must be a
multiple of 32) one f16 scale d and the values as 8-bit integers (q8_0: x = d * q, d =
max|x| / 127) or 4-bit ones (q4_0: x = d * (u - 8), d = -m / 8 for m the value of largest
magnitude): 34 or 18 bytes a block, where f32 takes 128. The result has dtype FORMAT and X's
shape. Every operation reads it as f32 (a view, a matmul, a gather of rows), each element
dequantized inside the kernel that reads it: a matmul with a quantized weight never makes an f32
copy of the weight, and one with a single row (a decode step) reads each block's scale once and
its packed values as one run. Nothing computes into a quantized tensor, and it has no gradient.
Quantizing runs on the host, once, as a weight is loaded; a non-finite value is a value-error.
load-gguf :quantized t reads Q8_0 and Q4_0 tensors as they are stored.
  (dtype (quantize (ones '(2 32)) 'q8_0))  ; => q8_0
  (item (sum (quantize (full '(1 32) 127.0) 'q8_0)))  ; => 4064.0
  (item (sum (quantize (full '(1 32) -8.0) 'q4_0)))  ; => -256.0"
  (%quantize (%as-tensor x 'f32) (%dtype-arg 'quantize format)))

(defun dequantize (x &optional (dtype 'f32))
  "(dequantize X [DTYPE]) A quantized tensor X's values as a float tensor of DTYPE (f32): a cast,
computed where it is used (any op reads a quantized tensor so already; this makes the values a
tensor of their own). Another X is cast to DTYPE.
  (to-list (dequantize (quantize (tensor '((-8.0 1.0 2.0 3.0 4.0 5.0 6.0 7.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0
                                           0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0)))
                                 'q4_0)))
  ; => ((-8.0 1.0 2.0 3.0 4.0 5.0 6.0 7.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0))"
  (prim:cast x (%dtype-arg 'dequantize dtype)))
