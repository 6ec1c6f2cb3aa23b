;;; SPDX-License-Identifier: Apache-2.0
;;; Loading an .npy file cut short inside its data: the message gives both byte counts.
;; expect: npy-truncated.lisp:11:1: eval error: load-npy: "
;; expect: -truncated.npy" is truncated: header says 24 bytes of data, file has 10

(defvar *path* (format nil "~a/tl-npy-~a-truncated.npy" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(save-npy (zeros '(2 3)) *path*)
(let ((bytes (read-file *path*)))
  (write-file *path* (subseq bytes 0 (- (length bytes) 14))))
(load-npy *path*)
