;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: zeros whose element count wrapped to 0 (2^62 * 4) made an empty tensor that hung
;;; or crashed later; now a shape-error where it is made.
;; expect: shape-overflow-zeros.lisp:6:1: shape error: const: shape (4611686018427387904 4) has too many elements (f32 data of more than 2^63 bytes)

(zeros '(4611686018427387904 4))
