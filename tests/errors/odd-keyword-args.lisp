;;; SPDX-License-Identifier: Apache-2.0
;;; Keyword arguments must come in pairs.
;; expect: odd-keyword-args.lisp:7:1: eval error: make-point: keyword arguments must come in pairs, got an odd number

(defun make-point (&key (x 0) (y 0))
  (list x y))
(make-point :x 1 :y)
