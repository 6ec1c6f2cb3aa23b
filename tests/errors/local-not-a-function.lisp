;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 25: calling a local variable that holds no function, and names no global function,
;;; says which variable it was.
;; expect: local-not-a-function.lisp:7:3: eval error: cannot call 3: it is the value of the local variable scale, not a function

(defun apply-scale (scale x)
  (scale x))

(apply-scale 3 4)
