;;; SPDX-License-Identifier: Apache-2.0
;;; Rules for GPU backends (:backend :gpu matches CUDA, HIP and the simulator).
;;;
;;; A reduce with few outputs runs on a GPU as one thread group per output: one block, on one
;;; multiprocessor, however long the reduce. A full sum of 4096x4096 then reads 64 MiB at a
;;; single multiprocessor's bandwidth. Split into chunks, the same reduce is two kernels: the
;;; first reduces each chunk in a group of its own (hundreds of groups, every multiprocessor
;;; busy), the second combines the chunks' results.

(defoptimizer-set gpu "Schedules for GPUs: long reduces with few outputs split across blocks.")

(defun %reduce-split (shape axes)
  "(%reduce-split SHAPE AXES) For a reduce over AXES of SHAPE: how many chunks to split the
reduce into, or nil. Splits when there are at most 64 outputs and at least 65,536 elements per
output, into a power of two of chunks that divides the reduce: at most 1024, at most 2048
chunks in all, each at least 4,096 elements long (16 per thread of a 256-thread group)."
  (when (every #'integerp shape)
    (let ((outputs 1) (size 1) (chunks 1))
      (dotimes (i (length shape))
        (if (member i axes)
            (setq size (* size (nth i shape)))
            (setq outputs (* outputs (nth i shape)))))
      (when (and (<= outputs 64) (>= size 65536))
        (loop (let ((next (* chunks 2)))
                (if (and (zerop (mod size next)) (>= (/ size next) 4096) (<= next 1024) (<= (* outputs next) 2048))
                    (setq chunks next)
                    (return))))
        (when (>= chunks 8) chunks)))))

(defun %split-reduce (kind x axes &optional chunks)
  ;; The reduce's axes moved last (a view), then split into (CHUNKS, SIZE/CHUNKS): each chunk
  ;; reduced, then the chunks; the result reshaped to the reduce's own shape (size 1 at AXES).
  ;; f16 and bf16 sums and products keep their partial results in f32.
  (let ((narrow (and (member (dtype x) '(f16 bf16)) (not (eq kind :max)))))
    (if narrow
        (prim:cast (%split-reduce kind (prim:cast x 'f32) axes chunks) (dtype x))
        (%split-reduce-as-is kind x axes (or chunks (%reduce-split (shape x) axes))))))

(defun %split-reduce-as-is (kind x axes chunks)
  (let* ((shape (shape x))
         (rank (length shape))
         (kept (loop for i below rank unless (member i axes) collect i))
         (kept-sizes (mapcar (lambda (i) (nth i shape)) kept))
         (size (apply #'* (mapcar (lambda (i) (nth i shape)) axes)))
         (moved (prim:permute x (append kept axes)))
         (split (prim:reshape moved (append kept-sizes (list chunks (/ size chunks)))))
         (n (length kept))
         (partial (prim:reduce kind split (list (+ n 1))))
         (total (prim:reduce kind partial (list n))))
    (prim:reshape total (loop for i below rank collect (if (member i axes) 1 (nth i shape))))))

(defoptimizer split-long-reduce
  "A reduce with few outputs and a long reduce runs as two: each of many chunks reduced by a
thread group of its own, then the chunks' results (see %reduce-split)."
  (reduce ?kind ?x ?axes) :set gpu :backend :gpu
  :when (%reduce-split (shape ?x) ?axes)
  => (%split-reduce ?kind ?x ?axes))
