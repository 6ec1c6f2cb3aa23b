;;; SPDX-License-Identifier: Apache-2.0
;;; The CPU backend: kernels compiled by LLVM for the host's vector extensions, linked by the
;;; ORC JIT, run on a thread pool over all cores (TENSORLISP_THREADS or :options "threads=N"
;;; to change). Its library is built into TensorLisp.

(defbackend cpu
  :library "builtin"
  :target :host
  ;; With tuning on ((use-backend 'cpu :tune t) or TENSORLISP_TUNE=1), the first run of each
  ;; matmul-like kernel times a register tile of every size :tile-rows x :tile-cols that divides
  ;; its output (each a list of opts, shown by TENSORLISP_DEBUG=1) and keeps the fastest; the
  ;; choice is kept in the kernel disk cache. Without tuning: 6 x 16 (AVX2) or 6 x 64 (AVX-512), or
  ;; the nearest that fits.
  :search (:tile-rows (4 6 3 2 8) :tile-cols (16 32 48 64 8))
  :doc "The host CPU through LLVM's ORC JIT.")
