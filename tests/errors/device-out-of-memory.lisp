;;; SPDX-License-Identifier: Apache-2.0
;;; A device whose memory runs out (the CPU backend acting as a 1 MB device): a device-error
;;; saying which kernel needed how much, and what is in use; the session goes on.
;; expect: device-out-of-memory.lisp:11:1: device error: cpu: out of device memory: the output of kernel
;; expect: (reduce f32 (3000 1 100)) needs 1.1 MiB, with 0.0 MiB in use by tensors of a 1.0 MiB device (cpu: memory-limit of 1000000 bytes reached)

(use-backend 'cpu :options "memory=device memory-limit=1000000")
(defvar a (realize (ones '(100 100))))
;; Tensors computed before the error keep their values.
(assert (= (item (sum a)) 10000.0))
(realize (matmul (ones '(3000 100)) a))
