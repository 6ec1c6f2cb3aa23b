;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: a reshape whose element count wrapped int64 (to 4 here) passed the count check
;;; and read out of bounds; the shape is now checked before its dimensions are multiplied.
;; expect: shape-overflow-reshape.lisp:6:1: shape error: reshape: shape (4611686018427387905 4) has too many elements (f32 data of more than 2^63 bytes)

(reshape (zeros '(4)) '(4611686018427387905 4))
