;;; SPDX-License-Identifier: Apache-2.0
;;; A block comment that is never closed.
;; expect: read-unclosed-comment.lisp:6:1: read error: block comment starting here is never closed

(print 'before)
#| this comment
   runs to the end of the file
