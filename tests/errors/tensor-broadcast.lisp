;;; SPDX-License-Identifier: Apache-2.0
;;; Elementwise operands that do not broadcast.
;; expect: tensor-broadcast.lisp:5:1: shape error: add: shapes (2 3) and (4 3) do not broadcast (axis -2: 2 vs 4)

(+ (zeros '(2 3)) (zeros '(4 3)))
