;;; SPDX-License-Identifier: Apache-2.0
;;; The CUDA backend: NVIDIA GPUs through the CUDA Driver API. Its library,
;;; libtensorlisp-cuda.so, loads the driver (libcuda.so.1) only when this backend is used, so
;;; TensorLisp builds and runs where there is none. Kernels are PTX from LLVM's NVPTX target,
;;; for the device's compute capability (sm_80 PTX for newer GPUs, which the driver compiles
;;; for them); each output element is a thread (blocks of :block threads), or a reduce is
;;; split across a thread group. Kernels are timed with CUDA events.
;;;
;;;   (use-backend 'cuda)                             ; device 0
;;;   (use-backend 'cuda :options "device=1 block=128")
;;;   (use-backend 'cuda :tune t)                     ; or TENSORLISP_TUNE=1: times :search

(defbackend cuda
  :library "tensorlisp-cuda"
  :target :nvptx
  :options "block=256"
  ;; What every NVIDIA GPU since sm_50 allows. The JIT keeps thread groups and the tuner's
  ;; sizes within :max-threads-per-block and :shared-memory-per-block.
  :limits (:max-threads-per-block 1024 :warp-size 32 :max-grid-x 2147483647
           :shared-memory-per-block 49152)
  ;; The launch shapes the tuner tries on each kernel's first run: threads per block for
  ;; kernels with a thread per output, threads per group for a reduce split across a group
  ;; (0: not split). Without tuning: the :options block and groups of 256.
  :search (:block (128 256 512 1024) :group (256 128 512 1024 0))
  :doc "NVIDIA GPUs through the CUDA Driver API (PTX from LLVM's NVPTX target).")
