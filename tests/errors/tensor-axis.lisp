;;; SPDX-License-Identifier: Apache-2.0
;;; A reduction axis out of range.
;; expect: tensor-axis.lisp:5:1: eval error: sum: axis 3 out of range for a tensor with 2 dimensions

(sum (zeros '(2 3)) :axis 3)
