;;; SPDX-License-Identifier: Apache-2.0
;;; Two tensors whose byte ranges overlap are refused, naming both.
;; expect: safetensors-overlap.lisp:16:1: eval error: load-safetensors: "
;; expect: -overlap.safetensors" has tensors "a" and "b" whose data overlap

(defvar *path* (format nil "~a/tl-safetensors-~a-overlap.safetensors"
                       (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(defun le64 (n)
  (apply #'concat (loop for i below 8 collect (code-char (logand (ash n (* -8 i)) 255)))))
(defvar *header*
  (concat "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
          "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}"))
(write-file *path* (concat (le64 (length *header*)) *header* "0123456789ab"))

(load-safetensors *path*)
