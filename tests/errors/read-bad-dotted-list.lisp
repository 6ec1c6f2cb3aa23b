;;; SPDX-License-Identifier: Apache-2.0
;;; More than one form after the dot of a dotted list.
;; expect: read-bad-dotted-list.lisp:5:24: read error: more than one form after '.' in a dotted list

(defvar *pair* '(a . b c))
