;;; SPDX-License-Identifier: Apache-2.0
;;; Loaded by tests/errors/error-in-loaded-file.lisp: a function whose error is reported in this file.

(defun area (shape)
  (case (car shape)
    (square (* (cadr shape) (cadr shape)))
    (circle (* 3.14159 (cadr shape) (cadr shape)))
    (otherwise (error "unknown shape ~s" (car shape)))))

(defun total-area (shapes)
  (reduce #'+ (mapcar #'area shapes)))
