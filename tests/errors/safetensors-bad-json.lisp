;;; SPDX-License-Identifier: Apache-2.0
;;; A trailing comma in the header: the JSON reader is strict and says where it stopped.
;; expect: safetensors-bad-json.lisp:13:1: eval error: safetensors-metadata: "
;; expect: -json.safetensors" has a malformed header: expected a string key at byte 25 of the header

(defvar *path* (format nil "~a/tl-safetensors-~a-json.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(defun le64 (n)
  (apply #'concat (loop for i below 8 collect (code-char (logand (ash n (* -8 i)) 255)))))
(defvar *header* "{\"__metadata__\":{\"a\":\"b\",}}")
(write-file *path* (concat (le64 (length *header*)) *header*))

(safetensors-metadata *path*)
