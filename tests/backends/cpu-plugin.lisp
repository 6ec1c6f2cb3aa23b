;;; SPDX-License-Identifier: Apache-2.0
;;; A runtime file for the CPU backend built as a plugin library (libtensorlisp-cpu.so, next
;;; to tlisp): used by tests/lisp-plugin.
(defbackend cpu-plugin
  :library "tensorlisp-cpu"
  :target :host
  :doc "The CPU backend, loaded with dlopen.")
