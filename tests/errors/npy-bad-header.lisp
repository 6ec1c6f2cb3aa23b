;;; SPDX-License-Identifier: Apache-2.0
;;; A garbled header dictionary: the message says what was expected and where.
;; expect: npy-bad-header.lisp:10:1: eval error: load-npy: "
;; expect: -header.npy" has a malformed header: expected True or False at byte 34 of the header

(defvar *path* (format nil "~a/tl-npy-~a-header.npy" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-npy (ones '(4)) *path*)
(write-file *path* (string-replace (read-file *path*) "False" "Nope!"))
(load-npy *path*)
