;;; SPDX-License-Identifier: Apache-2.0
;;; Loaded by tests/lisp/modules.lisp with a relative path; its requires search this folder.

(format t "loader: running as ~a~%" (car (last (string-split *load-file* "/"))))
(format t "first require of greeting returns ~s~%" (require 'modtest-greeting))
(format t "second require of greeting returns ~s~%" (require 'modtest-greeting))
(format t "require of util, already loaded by greeting, returns ~s~%" (require 'modtest-util))

;; A module that fails to load is not marked as loaded: requiring it again retries.
(dotimes (i 2)
  (format t "require broken: ~a~%"
          (handler-case (require 'modtest-broken) (error (e) (condition-message e)))))

'loader-result
