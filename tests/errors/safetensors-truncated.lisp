;;; SPDX-License-Identifier: Apache-2.0
;;; A safetensors file cut inside its header: the 8-byte length points past the end.
;; expect: safetensors-truncated.lisp:11:1: eval error: load-safetensors: "
;; expect: -cut.safetensors" is truncated: header length says 64 bytes, file has 30 after the length

(defvar *path* (format nil "~a/tl-safetensors-~a-cut.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-safetensors (list (cons "weight" (ones '(2 2)))) *path*)
(let ((bytes (read-file *path*)))
  (write-file *path* (subseq bytes 0 38)))
(load-safetensors *path*)
