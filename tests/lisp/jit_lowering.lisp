;;; Lowering's decisions as golden text (issue 20): for each kernel, the opts the CPU's lowering
;;; chooses (codegen/opts.h; kernels->text) -- register tiles and packed panels for matmuls,
;;; output-row accumulation for column sums, lanes for float maxes, none for elementwise work --
;;; and the loop IR of a small matmul and a row sum under opts given by hand. A change to those choices shows here as a
;;; diff to review.
(require (quote nn))
(manual-seed 7)
(defun input (shape) (realize (rand shape)))

(defun starts-with (prefix line)
  (and (>= (length line) (length prefix)) (string= prefix (subseq line 0 (length prefix)))))

;; The schedule line and the opts of each kernel, without the loop IR.
(defun show (name x)
  (format t "~a:~%" name)
  (with-input-from-string (in (kernels->text x))
    (loop for line = (read-line in nil nil)
          while line
          when (or (starts-with "opts:" line)
                   (and (starts-with "kernel " line) (digit-char-p (char line 7))))
            do (format t "  ~a~%" line))))

(show "matmul 8x12 @ 12x16 (right operand packed whole)" (matmul (input '(8 12)) (input '(12 16))))
(show "matmul 96x768 @ 768x256 (a panel per column block)" (matmul (input '(96 768)) (input '(768 256))))
(show "matmul 48x768 @ 768x256 (fewer than 64 rows: the tiles read the operand in place)"
      (matmul (input '(48 768)) (input '(768 256))))
(show "matmul 4x768 @ 768x256 (fewer rows than a tile: accumulates in the output rows)"
      (matmul (input '(4 768)) (input '(768 256))))
(show "batched matmul" (matmul (input '(3 8 16)) (input '(3 16 32))))
(show "linear layer with relu (the epilogue in the tile)"
      (relu (+ (matmul (input '(16 64)) (input '(64 32))) (input '(32)))))
(show "matmul by a transposed operand" (matmul (input '(16 64)) (transpose (input '(32 64)))))
(show "column sum (accumulates in the output row)" (sum (input '(64 48)) :axis 0))
(show "a batch sum of a gradient (no product: streams its rows, no register tile)"
      (sum (input '(16 128 512)) :axis 0 :keepdim t))
(show "a sum over two axes (a partial sum per pass of the inner loop)" (sum (input '(4 64 48)) :axis '(1 2)))
(show "softmax (one row kernel: lanes in the max's pass)" (softmax (input '(16 64)) :axis -1))
(show "a row max too short for lanes" (amax (input '(16 12)) :axis -1))
(show "elementwise over contiguous axes (one merged loop)" (add (mul (input '(2 50 40)) (input '(2 50 40))) 1.0))
(show "elementwise with a transposed operand (its axes do not merge)"
      (add (input '(2 50 40)) (transpose (input '(2 40 50)) 1 2)))
(show "conv2d" (conv2d (input '(2 3 8 8)) (input '(4 3 3 3)) :padding 1))
;; bf16 products sum in f32 and store bf16: a decode step's matrix-vector product accumulates
;; its f32 row in scratch; 16 rows take the packed tile, whose packing converts each panel once.
(defun bf (shape) (realize (cast (rand shape) 'bf16)))
(show "bf16 matrix-vector product with a bias (interchanged, its f32 row in scratch)"
      (add (matmul (bf '(1 768)) (bf '(768 256))) (bf '(256))))
(show "bf16 matmul of 16 rows (packed, not read in place)" (matmul (bf '(16 768)) (bf '(768 256))))

;; A 4x6 @ 6x8 matmul's plain nest (i0 rows, i1 columns, i2 the sum), then under opts given
;; by hand: columns split by 4, the inner 4 unrolled into four accumulators.
(defvar a (input '(4 6)))
(defvar b (input '(6 8)))
(princ (kernels->text (matmul a b) :opts nil))
(princ (kernels->text (matmul a b) :opts '((split 1 4) (upcast 4))))
(princ (kernels->text (matmul a b) :opts "(split 0 2) (swap 3)"))
;; A row sum of 10 in 4 lanes: two blocks of 4 (i2), the 2 left over (i3) into lane 0, then
;; the lanes combined by halves.
(princ (kernels->text (sum (input '(3 10)) :axis 1) :opts '((lanes 1 4))))

;; Opts that do not apply are errors naming the opt.
(dolist (opts '("(split 2 4)" "(upcast 0)" "(swap 2)" "(pack -1 2)" "(tile 1 4)" "(lanes 0 4)" "(lanes 2 1)"))
  (handler-case (kernels->text (matmul a b) :opts opts)
    (error (e) (format t "~a: ~a~%" opts e))))

;; A row kernel keeps the terms of its last sum in a local row when its output computes them
;; again (softmax: exp(x - max)), and not otherwise (log-softmax's output needs only the sum).
(defun keeps-a-row (x) (if (search "local " (kernels->text x)) t nil))
(format t "softmax keeps its exps in a local row: ~a~%" (keeps-a-row (softmax (input '(16 64)) :axis -1)))
(format t "log-softmax keeps none: ~a~%" (not (keeps-a-row (log-softmax (input '(16 64)) :axis -1))))
