;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 25: member, assoc, find, ... take :test as Common Lisp does; the old positional test
;;; is refused with a message saying what to write, never read as something else.
;; expect: positional-test.lisp:7:3: eval error: member: the test is a keyword argument, as in Common Lisp: write (member ... :test #<builtin equal>), not a positional test

(defun has-name (name names)
  (member name names #'equal))

(has-name "b" '("a" "b"))
