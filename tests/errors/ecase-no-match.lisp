;;; SPDX-License-Identifier: Apache-2.0
;;; ecase with no matching clause names the key and the clauses' keys.
;; expect: ecase-no-match.lisp:8:3: eval error: ecase: blue matches none of (red green)
;; expect: in color-code called at ecase-no-match.lisp:13:9
;; expect: in paint called at ecase-no-match.lisp:15:1

(defun color-code (c)
  (ecase c
    (red 1)
    (green 2)))

(defun paint (c)
  (list (color-code c)))

(paint 'blue)
