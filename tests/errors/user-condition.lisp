;;; SPDX-License-Identifier: Apache-2.0
;;; A user-defined condition type that no handler catches (the handler-case is for another type).
;; expect: user-condition.lisp:10:3: eval error: config-error: missing key "port" in app.conf
;; expect: in load-config called at user-condition.lisp:13:18

(define-condition config-error (error))
(define-condition network-error (error))

(defun load-config (name)
  (error 'config-error "missing key ~s in ~a" "port" name))

(handler-case
    (print (list (load-config "app.conf")))
  (network-error () (print 'not-this-handler)))
