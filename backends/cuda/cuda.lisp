;;; SPDX-License-Identifier: Apache-2.0
;;; The CUDA backend: NVIDIA GPUs through the CUDA Driver API. Its library,
;;; libtensorlisp-cuda.so, loads the driver (libcuda.so.1) only when this backend is used, so
;;; TensorLisp builds and runs where there is none. Kernels are PTX from LLVM's NVPTX target,
;;; for the device's compute capability (sm_80 PTX for newer GPUs, which the driver compiles
;;; for them); each output element is a thread (blocks of :block threads).
;;;
;;;   (use-backend 'cuda)                             ; device 0
;;;   (use-backend 'cuda :options "device=1 block=128")

(defbackend cuda
  :library "tensorlisp-cuda"
  :target :nvptx
  :options "block=256"
  ;; What every NVIDIA GPU since sm_50 allows; the library reads the device's own values.
  :limits (:max-threads-per-block 1024 :warp-size 32 :max-grid-x 2147483647
           :shared-memory-per-block 49152)
  ;; The kernel shapes the transforms may choose from (block size in threads).
  :search (:block (64 128 256 512 1024))
  :doc "NVIDIA GPUs through the CUDA Driver API (PTX from LLVM's NVPTX target).")
