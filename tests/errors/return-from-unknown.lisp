;;; SPDX-License-Identifier: Apache-2.0
;;; return-from names a block that does not enclose it (the function is named differently).
;; expect: return-from-unknown.lisp:8:7: eval error: return-from: no enclosing block named find-it

(defun find-item (x list)
  (dolist (y list)
    (when (equal x y)
      (return-from find-it y))))
