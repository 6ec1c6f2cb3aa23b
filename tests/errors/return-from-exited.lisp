;;; SPDX-License-Identifier: Apache-2.0
;;; A closure that returns from a block which has already been exited.
;; expect: return-from-exited.lisp:8:17: eval error: return-from done: the block has already been exited
;; expect: in use-it called at return-from-exited.lisp:13:1

(defun make-escape ()
  (block done
    (lambda (v) (return-from done v))))

(defun use-it ()
  (list (funcall (make-escape) 5)))

(use-it)
