;;; SPDX-License-Identifier: Apache-2.0
;;; A reshape to a different element count.
;; expect: tensor-reshape.lisp:5:1: shape error: reshape: cannot reshape (2 3) (6 elements) to (4 2) (8 elements)

(reshape (zeros '(2 3)) '(4 2))
