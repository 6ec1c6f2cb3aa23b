;; What the scheduler fuses, as kernel counts: elementwise chains are one kernel, elementwise
;; work feeds the reduce that consumes it, and each reduce ends a kernel (for now; fusing a
;; reduce with the elementwise work after it is next).

(defvar x (realize (randn '(64 128))))
(defvar w1 (realize (randn '(128 32))))
(defvar w2 (realize (randn '(32 10))))

(defun show (label tensor)
  (format t "~a: ~a~%" label (kernel-count tensor)))

(show "realized input" x)
(show "a*2 + 1" (+ (* x 2) 1))
(show "relu(a*b + c), 6 ops" (relu (+ (* x x) (exp (- x)))))
(show "transpose then add" (+ (transpose x) 1))
(show "sum of squares over rows" (sum (* x x) :axis 1))
(show "sum of everything" (sum x))
(show "softmax over the last axis" (softmax x :axis 1))
(show "layer-norm over the last axis" (layer-norm x))
(show "matmul" (matmul x w1))
(show "2-layer MLP forward" (matmul (relu (matmul x w1)) w2))
(show "MLP with bias" (+ (matmul (relu (+ (matmul x w1) 1.0)) w2) 0.5))

;; And the fused kernels compute what the reference executor does.
(defvar ln (layer-norm x))
(format t "layer-norm rows: mean ~,3f, variance ~,3f~%"
        (item (mean (sum ln :axis 1))) (item (mean (var ln :axis 1 :correction 0))))
