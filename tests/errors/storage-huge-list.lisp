;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: a list larger than memory is refused before anything is allocated.
;; expect: storage-huge-list.lisp:7:11: eval error: make-list: 100000000000 elements need 4.4 TiB, more than the memory limit allows
;; expect: in grow called at storage-huge-list.lisp:9:1

(defun grow (n)
  (length (make-list n)))

(grow 100000000000)
