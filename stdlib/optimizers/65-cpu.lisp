;;; SPDX-License-Identifier: Apache-2.0
;;; Rules for the CPU backend (:backend :host: the CPU JIT, not the simulated GPUs it also runs).
;;;
;;; The CPU runs a kernel's outermost loop across its threads, in chunks that Ctrl-C can stop
;;; between. A reduce to a single value (a loss, a norm) has no such loop: it ran on one thread,
;;; and a long one could not be interrupted (issue 19). Split into chunks, as on a GPU, it is two
;;; kernels: the chunks reduced in parallel, then their results.

(defoptimizer-set cpu "Schedules for the CPU: long reduces with few outputs split across threads.")

(defun %cpu-reduce-split (shape axes)
  "(%cpu-reduce-split SHAPE AXES) For a reduce over AXES of SHAPE on the CPU: how many chunks
to split it into, or nil. Splits when there are fewer than 16 outputs and at least 2^20
elements per output, into a power of two of chunks that divides the reduce: at most 256
chunks in all, each at least 4,096 elements long."
  (when (every #'integerp shape)
    (let ((outputs 1) (size 1) (chunks 1))
      (dotimes (i (length shape))
        (if (member i axes)
            (setq size (* size (nth i shape)))
            (setq outputs (* outputs (nth i shape)))))
      (when (and (< outputs 16) (>= size 1048576))
        (loop (let ((next (* chunks 2)))
                (if (and (zerop (mod size next)) (>= (/ size next) 4096) (<= (* outputs next) 256))
                    (setq chunks next)
                    (return))))
        (when (>= chunks 8) chunks)))))

(defoptimizer split-long-reduce-cpu
  "A reduce with few outputs and at least 2^20 elements each runs as two on the CPU: chunks of
it reduced in parallel (and interruptible between chunks), then the chunks' results (see
%cpu-reduce-split)."
  (reduce ?kind ?x ?axes) :set cpu :backend :host
  :when (%cpu-reduce-split (shape ?x) ?axes)
  => (%split-reduce ?kind ?x ?axes (%cpu-reduce-split (shape ?x) ?axes)))
