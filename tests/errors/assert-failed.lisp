;;; SPDX-License-Identifier: Apache-2.0
;;; A failing assert shows the asserted form.
;; expect: assert-failed.lisp:7:3: eval error: assertion failed: (<= amount balance)
;; expect: in withdraw called at assert-failed.lisp:11:20

(defun withdraw (balance amount)
  (assert (<= amount balance))
  (- balance amount))

(print (withdraw 100 30))
(print (list 'left (withdraw 10 20)))
