;; What the scheduler fuses, as kernel counts: elementwise chains are one kernel; elementwise
;; work feeds the reduce that consumes it; elementwise work on a reduce's result (a bias, a
;; scale) runs in the reduce's kernel; and a reduce whose result is broadcast back over its
;; rows runs inside the consumer's kernel, one pass per row (layer-norm: one kernel; softmax:
;; one too, computing exp(x - max) in the sum's pass and again in the writing pass, from the
;; row in cache, rather than storing it between two kernels).

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
(format t "layer-norm rows have mean 0: ~a, variance 1: ~a~%"
        (< (abs (item (mean (mean ln :axis 1)))) 1e-5)
        (< (abs (- (item (mean (var ln :axis 1 :correction 0))) 1.0)) 1e-3))

;; A kernel compiled for a symbolic dimension serves every value of it: the second batch size
;; compiles nothing.
(defun compiled () (getf (jit-stats) :kernels-compiled))
(defvar x3 (realize (randn '(3 16))))
(defvar x5 (realize (randn '(5 16))))
(defvar b3 (symbolic-shape x3 '(batch 16)))
(defvar b5 (symbolic-shape x5 '(batch 16)))
(realize (relu (* b3 2.0)))
(defvar before (compiled))
(defvar r5 (realize (relu (* b5 2.0))))
(format t "kernels compiled for a new batch size: ~a~%" (- (compiled) before))
(format t "result shape: ~a, equal to the concrete computation: ~a~%" (shape r5)
        (equal (to-list r5) (to-list (relu (* x5 2.0)))))

;; The same graph structure on new data reuses the whole schedule (no scheduling, lowering or
;; kernel lookup): the second and third (* x 2) + 1 below, and the second and third random
;; draws too (the generator's key is data, not a constant in the graph).
(defun plan-hits () (getf (jit-stats) :plan-hits))
(defvar hits-before (plan-hits))
(dotimes (i 3) (realize (+ (* (realize (randn '(8 8))) 2.0) 1.0)))
(format t "schedules reused: ~a~%" (- (plan-hits) hits-before))

;; Several tensors realized together share their work: three reductions of one softmax run
;; the softmax once.
(defvar xs (realize (randn '(64 256))))
(defvar sm (softmax xs :axis 1))
(defvar runs-before (getf (jit-stats) :kernels-run))
(defvar outs (realize-all (list (sum sm :axis 1) (amax sm :axis 1) (mean sm))))
(format t "realize-all of three reductions of a softmax: ~a kernels~%" (- (getf (jit-stats) :kernels-run) runs-before))
(defvar sm2 (softmax (realize (prim:copy xs)) :axis 1))  ; new nodes: computed again, one by one
(format t "the same values as one by one: ~a~%"
        (every #'identity (mapcar (lambda (a b) (allclose a b))
                                  outs (list (sum sm2 :axis 1) (amax sm2 :axis 1) (mean sm2)))))

;; A kernel that recomputes row reduces inline (a normalization: x - mean over var) is not
;; stored in the order a permuted view of it is read: its loops are the rows'. (This raised an
;; internal error in lowering: "unexpected op reduce inside the kernel".)
(defvar hn (realize (randn '(3 32))))
(defvar normed (let* ((mu (mean hn :axis -1 :keepdim t)) (c (sub hn mu)) (v (mean (mul c c) :axis -1 :keepdim t)))
                 (div c v)))
(defvar rows (prim:permute (prim:reshape normed '(3 32 1)) '(0 2 1)))
(defvar rmax (max rows :axis -1 :keepdim t))
(defvar fused (realize (add (mul rows rmax) rmax)))
(format t "a permuted view of row-normalized values, with its row max: ~a~%"
        (allclose fused (let ((r (reshape (realize normed) '(3 1 32))))
                          (add (mul r (max r :axis -1 :keepdim t)) (max r :axis -1 :keepdim t)))))
