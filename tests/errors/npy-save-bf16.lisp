;;; SPDX-License-Identifier: Apache-2.0
;;; NPY has no bfloat16 type: saving one asks for a cast.
;; expect: npy-save-bf16.lisp:9:1: dtype error: save-npy: "
;; expect: -bf16.npy" cannot hold bf16 data: NPY has no such type;
;; expect: cast the tensor first, e.g. (cast x 'f32)

(defvar *path* (format nil "~a/tl-npy-~a-bf16.npy" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-npy (ones '(2 2) :dtype 'bf16) *path*)
