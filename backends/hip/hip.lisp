;;; SPDX-License-Identifier: Apache-2.0
;;; The HIP backend: AMD GPUs through ROCm's HIP runtime. Its library, libtensorlisp-hip.so,
;;; loads the runtime (libamdhip64.so) only when this backend is used. Kernels are code objects
;;; from LLVM's AMDGPU target for the architecture named by the arch option, linked by ld.lld;
;;; each output element is a thread, in blocks of 256.
;;;
;;;   (use-backend 'hip)                               ; device 0, gfx90a (MI200)
;;;   (use-backend 'hip :options "arch=gfx1100")       ; an RX 7900
;;;   (use-backend 'hip :tune t)                       ; or TENSORLISP_TUNE=1: times :search

(defbackend hip
  :library "tensorlisp-hip"
  :target :amdgpu
  :options "arch=gfx90a"
  :limits (:max-threads-per-block 1024 :wavefront-size 64 :shared-memory-per-block 65536)
  ;; Kernels with a thread per output are compiled for blocks of 256; the tuner (:tune t)
  ;; tries these thread-group sizes for a reduce split across a group (0: not split).
  :search (:block (256) :group (256 64 128 512 1024 0))
  :doc "AMD GPUs through ROCm's HIP runtime (code objects from LLVM's AMDGPU target).")
