;;; SPDX-License-Identifier: Apache-2.0
;;; data_offsets that disagree with the shape and dtype: both byte counts are given.
;; expect: safetensors-byte-count.lisp:14:1: eval error: load-safetensors: "
;; expect: -count.safetensors" has tensor "w" of dtype F32 and shape [2, 2] (16 bytes)
;; expect: but data_offsets [0, 12] (12 bytes)

(defvar *path* (format nil "~a/tl-safetensors-~a-count.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(defun le64 (n)
  (apply #'concat (loop for i below 8 collect (code-char (logand (ash n (* -8 i)) 255)))))
(defvar *header* "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,12]}}")
(write-file *path* (concat (le64 (length *header*)) *header* "0123456789ab"))

(load-safetensors *path*)
