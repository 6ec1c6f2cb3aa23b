;;; SPDX-License-Identifier: Apache-2.0
;;; Saving an alist whose value is not a tensor names the entry.
;; expect: safetensors-not-a-tensor.lisp:8:1: eval error: save-safetensors:
;; expect: the value for "bias" must be a tensor, got (1 2 3)

(defvar *path* (format nil "~a/tl-safetensors-~a-value.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-safetensors (list (cons "weight" (ones '(2 2)))
                        (cons "bias" '(1 2 3)))
                  *path*)
