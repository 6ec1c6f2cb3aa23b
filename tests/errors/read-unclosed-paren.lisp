;;; SPDX-License-Identifier: Apache-2.0
;;; A definition whose opening parenthesis is never closed: the error points at that parenthesis.
;; expect: read-unclosed-paren.lisp:7:1: read error: unbalanced parenthesis: '(' opened here is never closed
;; expect: (defun area (w h)

(print 'before)
(defun area (w h)
  (* w h)
