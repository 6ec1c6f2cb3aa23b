;;; SPDX-License-Identifier: Apache-2.0
;;; setf of a call that is not a known place.
;; expect: eval error: setf: (point-x p) is not a place I know how to set (use defsetf) (while expanding macro setf)

(defun point-x (p) (car p))

(defun move (p)
  (setf (point-x p) 10))
