;;; SPDX-License-Identifier: Apache-2.0
;;; A token that starts like a number but is not one.
;; expect: read-bad-number.lisp:7:17: read error: bad number syntax '1.5.2'
;; expect:   (list version 1.5.2))

(defun version ()
  (list version 1.5.2))
