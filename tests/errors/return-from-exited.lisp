;;; SPDX-License-Identifier: Apache-2.0
;;; A closure that returns from a block which has already been exited.
;; expect: eval error: return-from: the block has already been exited

(defun make-escape ()
  (block done
    (lambda (v) (return-from done v))))

(defun use-it ()
  (list (funcall (make-escape) 5)))

(use-it)
