;;; SPDX-License-Identifier: Apache-2.0
;;; A module for tests/lisp/modules.lisp whose loading fails, so require does not mark it loaded.

(format t "  loading broken~%")
(defun broken-helper () 'defined-before-the-error)
(error "broken module: ~a" "deliberate failure")
