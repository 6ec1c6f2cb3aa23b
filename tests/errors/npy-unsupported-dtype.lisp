;;; SPDX-License-Identifier: Apache-2.0
;;; An .npy file of uint16, which has no TensorLisp dtype: a dtype-error listing the codes.
;; expect: npy-unsupported-dtype.lisp:12:1: dtype error: load-npy: "
;; expect: -u2.npy" has dtype "<u2", which TensorLisp does not support
;; expect: (supported: |b1 |u1 |i1 <i2 <u4 <i4 <i8 <f2 <f4 <f8 <c8 <c16)

(defvar *path* (format nil "~a/tl-npy-~a-u2.npy" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-npy (tensor '(1 2 3) :dtype 'i16) *path*)
;; Same length, so the header stays well formed.
(write-file *path* (string-replace (read-file *path*) "'<i2'" "'<u2'"))
(load-npy *path*)
