;;; SPDX-License-Identifier: Apache-2.0
;;; Quantized matmuls as integer dot products (issue 27). A matmul of a few rows with q8_0 or
;;; q4_0 weights (a language model's decode step) reads the weights once per row: it is bound
;;; by memory and by the work of turning each weight into a float. On a CPU with integer dot
;;; products of bytes (AVX-512 VNNI, AVX-VNNI, AVX2) the rule below quantizes the activation the way
;;; llama.cpp does (Q8_0: int8 values with an f32 scale per 32 of the reduce axis, amax / 127),
;;; and the matmul becomes a sum of scaled products of bytes, which the CPU lowering computes
;;; with its qdot opt: four-byte integer dot products, one scale multiply per block.
;;;
;;; The result is the product of the quantized activation with the weights: it differs from
;;; the f32 activation's by the activation's rounding (relative error about 0.4% per block at
;;; most). (optimizer-disable 'quantized-dot) keeps activations in f32 (the weights are still
;;; read quantized).

(defoptimizer-set quantized-dot "Matmuls of few rows with q8_0/q4_0 weights as integer dot products
on CPUs that have them (the activation quantized to int8 per block of 32, as llama.cpp does).")

(defvar *quantized-dot-rows* 16
  "The most rows (tokens) a matmul with quantized weights may have for the quantized-dot rule
to quantize its activation; more rows take the packed register tile, which dequantizes each
panel of the weights once for all of them.
  (integerp *quantized-dot-rows*)  ; => t")

(defun %source-axis (x axis)
  "(%source-axis X AXIS) Reshape X's AXIS (of size above 1) as an axis of its source: the same
among the axes of size above 1, when the reshape only adds or drops axes of size 1; else nil."
  (let* ((out (shape x)) (in (shape (car (node-sources x))))
         (big (lambda (s) (remove-if (lambda (d) (eql d 1)) s)))
         (rank (count-if (lambda (d) (not (eql d 1))) (subseq out 0 axis))))
    (when (and (not (eql (nth axis out) 1)) (equal (funcall big out) (funcall big in)))
      (let ((seen -1))
        (dotimes (i (length in))
          (unless (eql (nth i in) 1)
            (setq seen (+ seen 1))
            (when (= seen rank) (return i))))))))

(defun %quantized-weight (y axis)
  "(%quantized-weight Y AXIS) The quantized tensor (held in memory) that float tensor Y reads
through expands, permutes, reshapes that add or drop axes of size 1, and one cast to f32
(matmul's dequantized weight, the views above or below the cast), when Y's AXIS runs along its
last axis, the one its blocks pack; or nil."
  (let ((cast nil))
    (loop
      (let ((op (node-op y)))
        (cond ((null axis) (return nil))
              ((and (eq op 'buffer) (dtype-quantized-p (dtype y)))
               (return (and cast (= axis (- (ndim y) 1)) y)))
              ((null (node-sources y)) (return nil))  ; held in memory: no views to follow
              ((eq op 'expand) (setq y (car (node-sources y))))
              ((eq op 'permute) (setq axis (nth axis (node-arg y 0)) y (car (node-sources y))))
              ((eq op 'reshape) (setq axis (%source-axis y axis) y (car (node-sources y))))
              ((and (eq op 'cast) (not cast) (dtype-quantized-p (dtype (car (node-sources y)))))
               (setq cast t y (car (node-sources y))))
              (t (return nil)))))))

(defun %qdot-plan (x y axes)
  "(%qdot-plan X Y AXES) For (reduce :sum (mul X Y) AXES): when Y is a quantized weight read
along its blocks and X a float activation of few rows, the activation's unexpanded tensor,
the reduce axis and the weight's dtype, as a list; else nil."
  (let* ((axis (and (= (length axes) 1) (car axes)))
         (w (and axis (%quantized-weight y axis)))
         (a (unexpanded x)))
    (when (and w axis (%cpu-int8-dot-p) (eq (dtype a) 'f32) (eq (dtype y) 'f32)
               (every #'integerp (shape a)) (every #'integerp (shape w)))
      (let ((k (nth axis (shape a)))
            (rows (floor (apply #'* (shape a)) (max 1 (nth axis (shape a))))))
        (when (and (eql k (nth axis (shape x)))
                   (eql k (car (last (shape w))))
                   (zerop (mod k 32))
                   (<= rows *quantized-dot-rows*))
          (list a axis (dtype w)))))))

(defun %qdot-activation (a axis shp clamp)
  "(%qdot-activation A AXIS SHP CLAMP) A quantized to int8 per block of 32 along AXIS, as two
tensors expanded to SHP: the values (a cast of int8, kept in memory) and the scales. With
CLAMP (weights of signed bytes: q8_0) the values are read as (maximum v -127), which they
are (|v| <= 127): the qdot opt then knows that no byte is -128, and multiplies the signed
weights by them in one step (the sign of one moved onto the other). Unsigned codes (q4_0's
nibbles) need no clamp, and are spared its instruction."
  (let* ((n (ndim a))
         (perm (append (loop for i below n unless (= i axis) collect i) (list axis)))
         (inverse (mapcar (lambda (i) (position i perm)) (loop for i below n collect i)))
         (p (prim:permute a perm))
         (ps (shape p))
         (k (car (last ps)))
         (blocked (append (butlast ps) (list (floor k 32) 32)))
         (xb (prim:reshape p blocked))
         (d (div (max (abs xb) :axis -1 :keepdim t) 127.0))
         (inv (where (= d 0.0) 0.0 (div 1.0 d)))
         (xi (prim:copy (cast (round (mul xb inv)) 'i8)))
         (back (lambda (v) (prim:expand (prim:permute (prim:reshape v ps) inverse) shp))))
    (list (funcall back (cast (if clamp (maximum xi -127) xi) 'f32))
          (funcall back (prim:expand d blocked)))))

(defoptimizer quantized-integer-dot
  "A matmul of few rows with q8_0/q4_0 weights on a CPU with integer dot products: the
activation quantized per block of 32 (int8 values, an f32 scale), so that the sum is of
scaled products of bytes (the CPU lowering's qdot opt). See *quantized-dot-rows*."
  (reduce :sum (mul ?x ?y) ?axes) :set quantized-dot :backend :host
  :when (%qdot-plan ?x ?y ?axes)
  => (let* ((plan (%qdot-plan ?x ?y ?axes))
            (parts (%qdot-activation (first plan) (second plan) (shape ?x) (eq (third plan) 'q8_0))))
       (prim:reduce :sum (mul (first parts) (mul (second parts) ?y)) ?axes)))
