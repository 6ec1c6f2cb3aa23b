;;; SPDX-License-Identifier: Apache-2.0
;;; A module for tests/lisp/modules.lisp: requires util (found next to this file) and defines greet.

(format t "  loading greeting~%")
(require 'modtest-util)

(defvar *greeting-loads* 0)
(setq *greeting-loads* (+ *greeting-loads* 1))

(defun greet (name) (shout (format nil "hello, ~a" name)))

(provide 'modtest-greeting)
