;;; SPDX-License-Identifier: Apache-2.0
;;; An unknown keyword argument names the keywords the function accepts.
;; expect: unknown-keyword.lisp:10:9: eval error: make-point: unknown keyword argument :z; expected one of :x :y
;; expect: in origin called at unknown-keyword.lisp:12:1

(defun make-point (&key (x 0) (y 0))
  (list x y))

(defun origin ()
  (list (make-point :x 0 :z 0)))

(origin)
