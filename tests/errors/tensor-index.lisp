;;; SPDX-License-Identifier: Apache-2.0
;;; An out-of-range index.
;; expect: tensor-index.lisp:5:1: eval error: slice: index 5 out of range for axis 0 of size 3

(slice (arange 3) 5)
