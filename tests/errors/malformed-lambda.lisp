;;; SPDX-License-Identifier: Apache-2.0
;;; A parameter list entry that is not a variable name.
;; expect: malformed-lambda.lisp:5:19: eval error: scale: bad parameter 2, expected a variable name

(defun scale (x y 2)
  (* x y))
