;;; SPDX-License-Identifier: Apache-2.0
;;; An fp8 tensor: a dtype-error naming the tensor and its dtype.
;; expect: safetensors-unknown-dtype.lisp:15:1: dtype error: load-safetensors: "
;; expect: -fp8.safetensors" has tensor "layer.0.w" of dtype "F8_E4M3",
;; expect: which TensorLisp does not support
;; expect: (supported: BOOL U8 I8 I16 U32 I32 I64 F16 BF16 F32 F64 C64)

(defvar *path* (format nil "~a/tl-safetensors-~a-fp8.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(defun le64 (n)
  (apply #'concat (loop for i below 8 collect (code-char (logand (ash n (* -8 i)) 255)))))
(defvar *header* "{\"layer.0.w\":{\"dtype\":\"F8_E4M3\",\"shape\":[4],\"data_offsets\":[0,4]}}")
(write-file *path* (concat (le64 (length *header*)) *header* "abcd"))

(load-safetensors *path*)
