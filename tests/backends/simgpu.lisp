;;; SPDX-License-Identifier: Apache-2.0
;;; A simulated NVIDIA GPU for the tuner's tests: the CPU backend's SIMT simulator
;;; (sim=nvptx) described as a GPU backend of its own, with a search space of block and
;;; thread-group sizes.
;;;
;;;   TENSORLISP_PATH=tests/backends TENSORLISP_DEVICE=simgpu TENSORLISP_TUNE=1 tlisp f.lisp

(defbackend simgpu
  :library "builtin"
  :target :nvptx
  :options "sim=nvptx"
  :limits (:max-threads-per-block 1024 :shared-memory-per-block 49152)
  :search (:block (32 64 128) :group (64 0 32 128))
  :doc "The CPU backend's simulated NVIDIA GPU, with a search space for the tuner.")
