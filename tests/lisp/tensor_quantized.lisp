;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 27, quantized weights: the q8_0 and q4_0 block formats. Blocks written by hand from
;;; GGUF's definition and read back (load-gguf :quantized t), quantize against a Lisp
;;; transcription of the reference quantizer, matmuls and gathers that read the blocks inside
;;; their kernels against the same products of the dequantized weights, gradients through them,
;;; and the errors. Runs on cpu, ref, the device-memory cpu and the simulated GPU.

(manual-seed 27)
(defun tl (x) (to-list x))

;;; --- blocks by hand --------------------------------------------------------------------------

(defun le-bytes (n count)
  ;; N as COUNT little-endian bytes.
  (loop for i below count collect (logand (ash n (* -8 i)) 255)))

(defun gguf-bytes (name ggml-type dims data)
  ;; A GGUF version 3 file holding one tensor NAME of ggml type GGML-TYPE, dimensions DIMS
  ;; (fastest first, as the file stores them) and DATA, a list of bytes.
  (let* ((head (append (map 'list #'char-code "GGUF") (le-bytes 3 4) (le-bytes 1 8) (le-bytes 0 8)
                       (le-bytes (length name) 8) (map 'list #'char-code name)
                       (le-bytes (length dims) 4) (loop for d in dims append (le-bytes d 8))
                       (le-bytes ggml-type 4) (le-bytes 0 8)))
         (pad (mod (- (length head)) 32)))
    (append head (make-list pad :initial-element 0) data)))

(defun write-bytes (path bytes)
  (write-file path (apply #'byte-string bytes))
  path)

;; q8_0, two blocks: d = 0.5 (f16 0x3800) with q_j = j - 16; d = -2 (f16 0xc000) with
;; q_j = 3j - 50. Element j of a block is d * q_j.
(defvar *q8-data*
  (append '(#x00 #x38) (loop for j below 32 collect (mod (- j 16) 256))
          '(#x00 #xc0) (loop for j below 32 collect (mod (- (* 3 j) 50) 256))))
(defvar *q8-values*
  (list (loop for j below 32 collect (* 0.5 (- j 16)))
        (loop for j below 32 collect (* -2.0 (- (* 3 j) 50)))))

;; q4_0, one block: d = 0.25 (f16 0x3400); byte j holds u_j = j in its low nibble and
;; u_{j+16} = 15 - j in its high one; element = d * (u - 8).
(defvar *q4-data* (append '(#x00 #x34) (loop for j below 16 collect (logior j (ash (- 15 j) 4)))))
(defvar *q4-values*
  (list (append (loop for j below 16 collect (* 0.25 (- j 8)))
                (loop for j below 16 collect (* 0.25 (- 7 j))))))

(deftest blocks-by-hand
  (let ((q8 (write-bytes "/tmp/tl-test-q8.gguf" (gguf-bytes "w" 8 '(32 2) *q8-data*)))
        (q4 (write-bytes "/tmp/tl-test-q4.gguf" (gguf-bytes "w" 2 '(32 1) *q4-data*))))
    (let ((w (cdr (assoc "w" (load-gguf q8 :quantized t) :test #'equal))))
      (is (eq (dtype w) 'q8_0))
      (is (equal (shape w) '(2 32)))
      (is (equal (tl w) *q8-values*))
      (is (equal (tl (dequantize w)) *q8-values*)))
    ;; Without :quantized the same values arrive as f32.
    (let ((w (cdr (assoc "w" (load-gguf q8) :test #'equal))))
      (is (eq (dtype w) 'f32))
      (is (equal (tl w) *q8-values*)))
    (let ((w (cdr (assoc "w" (load-gguf q4 :quantized t :names '("w")) :test #'equal))))
      (is (eq (dtype w) 'q4_0))
      (is (equal (tl w) *q4-values*))
      (is (equal (tl (sum w :axis 1)) (list (reduce #'+ (first *q4-values*))))))
    (is-error program-error (load-gguf q4 :quantised t))))

;;; --- quantize against the reference definition ------------------------------------------------

(defun f16 (x) (item (cast (cast (tensor x :dtype 'f32) 'f16) 'f32)))

(defun round-half-away (x) (if (minusp x) (- (floor (+ (- x) 0.5))) (floor (+ x 0.5))))

(defun q8-block (xs)
  ;; The values of the q8_0 block of the 32 floats XS, as the reference quantizer makes it.
  (let* ((amax (reduce #'max (mapcar #'abs xs))) (d (/ amax 127.0)) (id (if (zerop d) 0.0 (/ 1.0 d))))
    (mapcar (lambda (x) (* (f16 d) (round-half-away (* x id)))) xs)))

(defun q4-block (xs)
  (let* ((m (reduce (lambda (a b) (if (> (abs b) (abs a)) b a)) xs :initial-value 0.0))
         (d (/ m -8.0)) (id (if (zerop d) 0.0 (/ 1.0 d))))
    (mapcar (lambda (x) (* (f16 d) (- (min 15 (truncate (+ (* x id) 8.5))) 8))) xs)))

(defun blocks-of (row) (loop for i from 0 below (length row) by 32 collect (subseq row i (+ i 32))))

(defun max-abs-difference (a b)
  (reduce #'max (mapcar (lambda (x y) (abs (- x y))) (apply #'append a) (apply #'append b))))

(deftest quantize-matches-the-reference
  (let* ((x (randn '(3 64)))
         (rows (tl x)))
    ;; The quantizer computes in f32, this transcription in f64: equal up to f32 rounding.
    (is (< (max-abs-difference (tl (quantize x 'q8_0))
                               (mapcar (lambda (r) (apply #'append (mapcar #'q8-block (blocks-of r)))) rows))
           1e-6))
    (is (< (max-abs-difference (tl (quantize x 'q4_0))
                               (mapcar (lambda (r) (apply #'append (mapcar #'q4-block (blocks-of r)))) rows))
           1e-6)))
  ;; Exact cases: d = 1 in both formats; an all-zero block.
  (is (equal (tl (quantize (full '(1 32) 127.0) 'q8_0)) (list (make-list 32 :initial-element 127.0))))
  (is (equal (tl (quantize (full '(1 32) -8.0) 'q4_0)) (list (make-list 32 :initial-element -8.0))))
  (is (every #'zerop (tl (quantize (zeros '(32)) 'q4_0))))  ; -0.0: the scale is 0 / -8
  ;; The error bound: q8_0, half a step of the block's scale (plus the scale's f16 rounding);
  ;; q4_0, a whole step (the value of largest magnitude maps to -8, its opposite clips at 7).
  (let* ((x (randn '(8 256))) (amax (item (max (abs x)))))
    (is (< (item (max (abs (- (quantize x 'q8_0) x)))) (+ (/ amax 254) (* amax 1e-3))))
    (is (< (item (max (abs (- (quantize x 'q4_0) x)))) (+ (/ amax 8) (* amax 1e-3)))))
  ;; Integer and f64 inputs are quantized from their f32 values.
  (is (equal (tl (quantize (full '(32) 127 :dtype 'i32) 'q8_0)) (make-list 32 :initial-element 127.0)))
  (is (eq (dtype (quantize (ones '(32) :dtype 'f64) 'q4_0)) 'q4_0)))

;;; --- computing with quantized tensors ----------------------------------------------------------

(defun close-p (a b &optional (tol 1e-4))
  (< (item (max (abs (- a b)))) tol))

(deftest matmul-reads-blocks
  ;; The product with the blocks read inside the kernel against the product with the weights
  ;; dequantized into a tensor of their own first: a decode step's vector, a few rows, enough
  ;; rows for a packed tile, a batch. (With the activation in f32: quantized-dot-activation
  ;; below tests the rule that quantizes it.)
  (with-optimizers-disabled (quantized-dot) (matmul-reads-blocks-f32)))

(defun matmul-reads-blocks-f32 ()
  (dolist (fmt '(q8_0 q4_0))
    (dolist (mnk '((1 64 96) (5 32 64) (70 48 128) (1 8 32)))
      (destructuring-bind (m n k) mnk
        (let* ((w (quantize (randn (list n k)) fmt))
               (dense (realize (dequantize w)))
               (x (randn (list m k))))
          (is (close-p (matmul x (transpose w)) (matmul x (transpose dense))) (format nil "~a ~a" fmt mnk))
          (is (eq (dtype (matmul x (transpose w))) 'f32))))))
  (let* ((w (quantize (randn '(2 16 64)) 'q8_0)) (x (randn '(2 3 64))))
    (is (close-p (matmul x (transpose w 1 2)) (matmul x (transpose (realize (dequantize w)) 1 2)))))
  ;; As the right operand untransposed (blocks across the reduce: read element by element).
  (let* ((w (quantize (randn '(64 32)) 'q4_0)) (x (randn '(3 64))))
    (is (close-p (matmul x w) (matmul x (realize (dequantize w)))))))

(defun q8-activation-reference (x)
  ;; X's rows quantized per block of 32 as the quantized-dot rule does (llama.cpp's Q8_0 with
  ;; an f32 scale): d = amax / 127, values round(x / d), then read back as floats.
  (let* ((s (shape x)) (k (car (last s)))
         (xb (reshape x (append (butlast s) (list (/ k 32) 32))))
         (d (div (max (abs xb) :axis -1 :keepdim t) 127.0))
         (q (round (mul xb (where (= d 0.0) 0.0 (div 1.0 d))))))
    (reshape (mul q d) s)))

(deftest quantized-dot-activation
  ;; Few rows times q8_0/q4_0 weights: where the CPU has integer dot products (AVX-512 VNNI,
  ;; AVX-VNNI) the quantized-dot rule quantizes the activation per block of 32 and the kernel
  ;; multiplies bytes (the qdot opt); the result is the quantized activation's product with
  ;; the weights. Elsewhere (another device, another CPU, too many rows) the f32 product.
  (dolist (fmt '(q8_0 q4_0))
    (dolist (mnk '((1 96 768) (3 40 64) (16 8 32) (17 8 64)))
      (destructuring-bind (m n k) mnk
        (let* ((w (quantize (mul 0.1 (randn (list n k))) fmt))
               (dense (realize (dequantize w)))
               (x (realize (randn (list m k))))
               ;; (The reference executor runs no rules.)
               (fired (and (not (eq (device) 'ref))
                           (member 'quantized-integer-dot (optimizers-fired (matmul x (transpose w))))))
               (want (if fired (matmul (q8-activation-reference x) (transpose dense)) (matmul x (transpose dense)))))
          (is (close-p (matmul x (transpose w)) want 1e-4) (format nil "~a ~a" fmt mnk))
          ;; It fires only for few rows, and then the kernel multiplies bytes (qdot) ...
          (is (or (not fired)
                  (and (<= m *quantized-dot-rows*)
                       (search "opts: (qdot " (kernels->text (matmul (realize (randn (list m k))) (transpose w))))))
              (format nil "qdot for ~a ~a" fmt mnk))
          ;; ... and always for few rows on the CPU JIT of a CPU with integer dot products.
          (is (or fired (not (%cpu-int8-dot-p)) (> m *quantized-dot-rows*) (not (eq (device) 'cpu))
                  (getenv "TENSORLISP_DEVICE_OPTIONS"))
              (format nil "fired for ~a ~a" fmt mnk))))))
  ;; Weights reduced across their blocks (x W, W untransposed) keep the f32 activation.
  (let ((w (quantize (randn '(64 64)) 'q8_0)) (x (randn '(2 64))))
    (is (not (member 'quantized-integer-dot (optimizers-fired (matmul x w)))))
    (is (close-p (matmul x w) (matmul x (realize (dequantize w))))))
  ;; Its error is the activation's rounding: within a percent of the f32 product's scale.
  (let* ((w (quantize (mul 0.05 (randn '(256 512))) 'q8_0))
         (x (randn '(1 512)))
         (exact (with-optimizers-disabled (quantized-dot) (realize (matmul x (transpose w))))))
    (is (< (item (max (abs (sub (matmul x (transpose w)) exact)))) (* 0.01 (item (max (abs exact)))))))
  ;; A row of zeros quantizes to zeros (scale 0); NaN activations give NaN outputs.
  (let ((w (quantize (randn '(4 64)) 'q4_0)))
    (is (equal (to-list (matmul (zeros '(1 64)) (transpose w))) '((0.0 0.0 0.0 0.0))))
    (is (equal (to-list (isnan (matmul (div (zeros '(1 64)) 0.0) (transpose w)))) '((t t t t))))))

;; Products of bytes at their extremes, as the CPU's integer dot products (the qdot opt) compute
;; them: exactly, whatever the instructions. Without VNNI, AVX2's vpmaddubsw adds two products
;; of an unsigned and a signed byte into 16 bits with saturation (255 * -128 twice is -65280):
;; the kernel splits bytes above 128 into nibbles. Sums stay below 2^24: exact in f32.
(deftest integer-dots-at-the-extremes
  (dolist (case '((u8 255 i8 -128) (i8 -128 i8 -128) (u8 255 u8 255) (i8 -128 u8 255) (i8 127 i8 -128)
                  (u8 128 i8 -128) (u8 129 i8 127) (i8 -1 i8 -128)))
    (destructuring-bind (ta va tb vb) case
      (dolist (k '(32 64 96))
        ;; Row 0 all VA, row 1 VA at even positions (each pair of products holds one).
        (let* ((a (realize (tensor (list (make-list k :initial-element va)
                                         (loop for j below k collect (if (evenp j) va 0)))
                                   :dtype ta)))
               (b (realize (tensor (make-list 3 :initial-element (make-list k :initial-element vb)) :dtype tb)))
               (y (matmul (cast a 'f32) (transpose (cast b 'f32))))
               (cpu-jit (and (eq (device) 'cpu) (not (getenv "TENSORLISP_DEVICE_OPTIONS"))))
               (dots (and cpu-jit (search "(qdot " (kernels->text y)))))
          (is (or dots (not cpu-jit)) (format nil "qdot for ~a" case))
          (is (equal (to-list y) (list (make-list 3 :initial-element (float (* k va vb)))
                                       (make-list 3 :initial-element (float (/ (* k va vb) 2)))))
              (format nil "~a, k ~a" case k)))))))

(deftest clamped-integer-dots-at-the-extremes
  ;; A quantized activation is read through (maximum x -127): the bytes a signed weight's sign
  ;; moves onto, so that one Dot4 multiplies both as signed. Here -128 is there to clamp, against
  ;; the weights' extremes.
  (dolist (case '((-128 i8 -128) (-128 i8 127) (-127 i8 -128) (127 i8 -128) (-128 u8 255) (-1 i8 -128) (5 i8 -3)))
    (destructuring-bind (va tb vb) case
      (dolist (k '(32 64))
        (let* ((a (realize (tensor (list (make-list k :initial-element va)
                                         (loop for j below k collect (if (evenp j) va 0)))
                                   :dtype 'i8)))
               (b (realize (tensor (make-list 3 :initial-element (make-list k :initial-element vb)) :dtype tb)))
               (y (matmul (cast (maximum a -127) 'f32) (transpose (cast b 'f32))))
               (cpu-jit (and (eq (device) 'cpu) (not (getenv "TENSORLISP_DEVICE_OPTIONS"))))
               (clamped (max va -127)))
          (is (or (not cpu-jit) (not (eq tb 'i8)) (search "; signed; b >= -127)" (kernels->text y)))
              (format nil "signed dot4 for ~a" case))
          (is (equal (to-list y) (list (make-list 3 :initial-element (float (* k clamped vb)))
                                       (make-list 3 :initial-element (float (/ (* k clamped vb) 2)))))
              (format nil "~a, k ~a" case k)))))))

(deftest elementwise-and-gather
  (let* ((w (quantize (randn '(10 64)) 'q4_0)) (d (realize (dequantize w))))
    (is (close-p (add w 1.0) (add d 1.0)))
    (is (close-p (relu w) (relu d)))
    (is (eq (dtype (mul w (ones '(10 64) :dtype 'f64))) 'f64))
    (is (close-p (sum w :axis 0) (sum d :axis 0)))
    ;; Rows of an embedding table, dequantized where they are gathered.
    (is (close-p (index-select w (tensor '(3 0 9 3))) (index-select d (tensor '(3 0 9 3)))))
    (is (equal (shape (transpose w)) '(64 10)))
    (is (close-p (reshape w '(20 32)) (reshape d '(20 32))))))

(deftest gradients-through-quantized-weights
  ;; d/dx of sum((x W^T)^2) with W quantized, against the same with W dequantized (the
  ;; activation in f32: quantized, the forward value differs by its rounding).
  (with-optimizers-disabled (quantized-dot) (gradients-through-quantized-weights-f32)))

(defun gradients-through-quantized-weights-f32 ()
  (let* ((w (quantize (randn '(16 64)) 'q8_0))
         (d (realize (dequantize w)))
         (x (randn '(4 64))))
    (flet ((grad-of (weights)
             (let ((x (requires-grad! (realize (mul x 1.0)))))
               (backward (sum (square (matmul x (transpose weights)))))
               (grad x))))
      (is (close-p (grad-of w) (grad-of d) 1e-3)))))

(deftest quantized-errors
  (is-error shape-error (quantize (ones '(2 33)) 'q8_0))
  (is-error shape-error (quantize (tensor 1.0) 'q8_0))
  (is-error dtype-error (quantize (ones '(32)) 'f16))
  (is-error dtype-error (quantize (ones '(32)) 'q9_9))
  (is-error value-error (quantize (div (ones '(32)) (zeros '(32))) 'q8_0))
  (is-error dtype-error (cast (ones '(32)) 'q8_0))
  (is-error dtype-error (save-safetensors (list (cons "w" (quantize (ones '(32)) 'q8_0))) "/tmp/tl-test-q.safetensors"))
  (is-error dtype-error (save-npy (quantize (ones '(32)) 'q8_0) "/tmp/tl-test-q.npy"))
  (is-error dtype-error (requires-grad! (quantize (ones '(32)) 'q8_0)))
  ;; A scale past f16's range (|x| > 127 * 65504 for q8_0).
  (is-error value-error (quantize (full '(32) 1e7) 'q8_0))
  ;; Nothing but quantize makes blocks.
  (is-error dtype-error (tensor '(1.0 2.0) :dtype 'q8_0))
  (is-error dtype-error (ones '(2 32) :dtype 'q4_0))
  (is-error dtype-error (prim:iota '(32) 0 'q8_0))
  ;; Rows of blocks are copied whole; a row that is not whole blocks is refused.
  (is-error shape-error (take-rows (quantize (ones '(64)) 'q8_0) '(0 1)))
  ;; A view of blocks realized as it is would have to be computed into blocks (every device).
  (is-error dtype-error (to-list (prim:shrink (quantize (ones '(2 32)) 'q8_0) '((0 1) (0 32))))))

(deftest quantized-views-and-promotion
  (let* ((q (quantize (randn '(2 64)) 'q4_0)) (d (realize (dequantize q))))
    ;; A scalar with a quantized tensor computes in f32.
    (is (eq (result-dtype q 2) 'f32))
    (is (eq (result-dtype q 2.5 (ones 1 :dtype 'f64)) 'f64))
    ;; Views of the blocks, dequantized where read: a pad's new elements are zeros.
    (is (equal (tl (prim:cast (prim:pad q '((1 0) (0 2))) 'f32)) (tl (prim:pad d '((1 0) (0 2))))))
    (is (equal (tl (prim:cast (prim:permute q '(1 0)) 'f32)) (tl (prim:permute d '(1 0)))))
    (is (equal (tl (prim:cast (prim:flip (prim:shrink q '((0 2) (3 40))) '(0 1)) 'f32))
               (tl (prim:flip (prim:shrink d '((0 2) (3 40))) '(0 1)))))
    (is (eq (dtype (prim:permute q '(1 0))) 'q4_0))
    ;; Whole rows taken as bytes.
    (is (equal (tl (take-rows q '(1 1 0))) (tl (take-rows d '(1 1 0)))))))

(deftest save-gguf-round-trip
  ;; Tensors of every dtype GGUF holds, blocks kept, and metadata of every kind, read back.
  (let* ((path "/tmp/tl-test-save.gguf")
         (q (quantize (randn '(3 64)) 'q4_0))
         (tensors (list (cons "q8" (quantize (randn '(2 32)) 'q8_0)) (cons "q4" q)
                        (cons "f" (tensor '((1.5 2.5 3.5)))) (cons "d" (tensor '(1.0 2.0) :dtype 'f64))
                        (cons "h" (tensor '(0.5) :dtype 'f16)) (cons "i" (tensor '(-1 2) :dtype 'i64))
                        (cons "s" (tensor 7 :dtype 'i32)))))
    (save-gguf tensors path
               :metadata '(("general.architecture" . "test") ("count" . (:u32 . 12)) ("eps" . 0.5)
                           ("yes" . t) ("no" . :false) ("words" "a" "b") ("ints" 1 -2 3)
                           ("big" . 10000000000) ("typed" :f64 1.0 2.0) ("nested" ("x" "y") ("z"))))
    (let ((h (gguf-header path)))
      (is (equal (getf h :metadata)
                 '(("general.architecture" . "test") ("count" . 12) ("eps" . 0.5) ("yes" . t) ("no")
                   ("words" "a" "b") ("ints" 1 -2 3) ("big" . 10000000000) ("typed" 1.0 2.0)
                   ("nested" ("x" "y") ("z")))))
      (is (equal (mapcar #'fourth (getf h :tensors)) '("Q8_0" "Q4_0" "F32" "F64" "F16" "I64" "I32"))))
    (let ((back (load-gguf path :quantized t)))
      (is (equal (mapcar (lambda (e) (dtype (cdr e))) back) '(q8_0 q4_0 f32 f64 f16 i64 i32)))
      (is (equal (shape (cdr (assoc "s" back :test #'equal))) '(1)))  ; a 0-d tensor: one dimension
      (loop for (name . x) in tensors
            unless (equal name "s")
              do (is (equal (tl (cdr (assoc name back :test #'equal))) (tl x)) name))))
  (is-error dtype-error (save-gguf (list (cons "b" (tensor '(t nil)))) "/tmp/tl-test-x.gguf"))
  (is-error type-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("k" . #(1)))))
  (is-error type-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("k" 1 "a"))))
  (is-error value-error (save-gguf (list (cons "a" (ones 2)) (cons "a" (ones 2))) "/tmp/tl-test-x.gguf"))
  (is-error program-error (save-gguf nil "/tmp/tl-test-x.gguf" :meta nil))
  ;; Typed values are range-checked; bools are t, :false or nil; the writer owns the alignment.
  (is-error value-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("k" . (:u8 . 300)))))
  (is-error value-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("k" . (:u32 . -1)))))
  (is-error type-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("k" . (:bool . 0)))))
  (is-error value-error (save-gguf nil "/tmp/tl-test-x.gguf" :metadata '(("general.alignment" . 64))))
  (save-gguf nil "/tmp/tl-test-bools.gguf"
             :metadata '(("a" . (:bool . nil)) ("b" :false t) ("c" . nil) ("d" . (:i8 . -128)) ("e" :u16 0 65535)))
  (is (equal (getf (gguf-header "/tmp/tl-test-bools.gguf") :metadata)
             '(("a") ("b" nil t) ("c") ("d" . -128) ("e" 0 65535))))
  ;; gguf-header's metadata writes back as it reads.
  (let ((meta (getf (gguf-header "/tmp/tl-test-bools.gguf") :metadata)))
    (save-gguf nil "/tmp/tl-test-bools-2.gguf" :metadata meta)
    (is (equal (getf (gguf-header "/tmp/tl-test-bools-2.gguf") :metadata) meta))))

(run-tests)
