;;; SPDX-License-Identifier: Apache-2.0
;;; A format control string with more directives than arguments.
;; expect: format-missing-argument.lisp:7:3: eval error: format: not enough arguments for directive ~a in "~a of ~a~%"
;; expect: in progress called at format-missing-argument.lisp:9:1

(defun progress (done)
  (format t "~a of ~a~%" done))

(progress 3)
