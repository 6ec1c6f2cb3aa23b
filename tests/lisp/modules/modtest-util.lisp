;;; SPDX-License-Identifier: Apache-2.0
;;; A module for tests/lisp/modules.lisp: string helpers, required by modtest-greeting.lisp.

(format t "  loading util from ~a~%" (car (last (string-split *load-file* "/"))))

(defun shout (text) (concat (string-upcase text) "!"))

(provide 'modtest-util)
