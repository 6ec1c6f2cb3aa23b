;;; SPDX-License-Identifier: Apache-2.0
;;; Loading a file that is not an .npy file at all.
;; expect: npy-not-npy.lisp:9:1: eval error: load-npy: "
;; expect: -not.npy" is not an NPY file: it does not start with \x93NUMPY

(defvar *path* (format nil "~a/tl-npy-~a-not.npy" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(write-file *path* "a,b,c\n1,2,3\n")
(load-npy *path*)
