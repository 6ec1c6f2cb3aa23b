;;; SPDX-License-Identifier: Apache-2.0
;;; Signalling a condition type that was never defined.
;; expect: unknown-condition-type.lisp:7:3: eval error: error: unknown condition type bad-config (define it with define-condition)
;; expect: in validate called at unknown-condition-type.lisp:9:1

(defun validate (config)
  (error 'bad-config "bad config ~s" config))

(validate '(:port nil))
