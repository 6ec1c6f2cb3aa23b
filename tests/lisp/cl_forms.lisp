;;; SPDX-License-Identifier: Apache-2.0
;;; Small forms (issue 25): the, locally, declaim, eval-when, rotatef, shiftf, psetf,
;;; etypecase, ctypecase. Lines match SBCL 2.2.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "the" (the integer (+ 1 2)))
(show "locally" (locally (declare (optimize speed)) (+ 1 2)))
(declaim (optimize (speed 3)))
(show "eval-when" (list (eval-when (:compile-toplevel :load-toplevel :execute) :ran) (eval-when (:compile-toplevel) :ran)))
(show "rotatef" (let ((a 1) (b 2) (c 3)) (rotatef a b c) (list a b c)))
(show "rotatef places" (let ((v (vector 1 2 3))) (rotatef (aref v 0) (aref v 2)) v))
(show "shiftf" (let ((a 1) (b 2)) (list (shiftf a b 9) a b)))
(show "psetf" (let ((l (list 1 2))) (psetf (car l) (cadr l) (cadr l) (car l)) l))
(show "etypecase" (list (etypecase 1 (integer :int) (string :str)) (handler-case (etypecase 1.5 (integer :int) (string :str)) (type-error () :type-error))))
(show "ctypecase" (ctypecase "s" (integer :int) (string :str)))
