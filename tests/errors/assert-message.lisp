;;; SPDX-License-Identifier: Apache-2.0
;;; A failing assert with a message and format arguments.
;; expect: assert-message.lisp:7:3: eval error: port must be below 65536, got 70000
;; expect: in open-port called at assert-message.lisp:10:1

(defun open-port (port)
  (assert (< port 65536) "port must be below 65536, got ~a" port)
  port)

(open-port 70000)
