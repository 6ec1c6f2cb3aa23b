;;; SPDX-License-Identifier: Apache-2.0
;;; The CPU backend: kernels compiled by LLVM for the host's vector extensions, linked by the
;;; ORC JIT, run on a thread pool over all cores (TENSORLISP_THREADS or :options "threads=N"
;;; to change). Its library is built into TensorLisp.

(defbackend cpu
  :library "builtin"
  :target :host
  :doc "The host CPU through LLVM's ORC JIT.")
