;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: member on a circular list used to spin forever; now it names the list.
;; expect: circular-list-member.lisp:9:3: eval error: member: argument 2 is a circular list: #1=(a b . #1#)
;; expect: in find-c called at circular-list-member.lisp:11:1

(defparameter *ring* (list 'a 'b))
(setf (cdr (cdr *ring*)) *ring*)
(defun find-c ()
  (member 'c *ring*))

(find-c)
