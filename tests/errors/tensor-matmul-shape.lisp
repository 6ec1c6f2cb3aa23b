;;; SPDX-License-Identifier: Apache-2.0
;;; A matmul of mismatched shapes names both shapes and the user's call.
;; expect: tensor-matmul-shape.lisp:8:3: shape error: matmul: inner dimensions differ, (3 4) x (5 6)
;; expect: in layer called at tensor-matmul-shape.lisp:10:1

(defun layer (x w)
  (relu
  (matmul x w)))

(layer (zeros '(3 4)) (zeros '(5 6)))
