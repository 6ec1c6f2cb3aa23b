;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: expand to fewer dimensions (was a make-list error about a negative count).
;; expect: tensor-expand-fewer-dims.lisp:5:1: shape error: expand: cannot expand (2 3) to (3), which has fewer dimensions

(expand (ones '(2 3)) 3)
