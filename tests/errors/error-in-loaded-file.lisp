;;; SPDX-License-Identifier: Apache-2.0
;;; An error in a function from a loaded file is located in that file; the backtrace leads back here.
;; expect: files/shapes.lisp:8:16: eval error: unknown shape triangle
;; expect:     (otherwise (error "unknown shape ~s" (car shape)))))
;; expect: in total-area called at error-in-loaded-file.lisp:9:8

(load "files/shapes.lisp")
(print (total-area '((square 2) (circle 1))))
(print (total-area '((square 2) (triangle 3))))
