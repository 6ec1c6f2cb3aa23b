;;; SPDX-License-Identifier: Apache-2.0
;;; Arrays of several dimensions (issue 25): make-array with a list of dimensions, aref and
;;; setf aref with a subscript per dimension, the array-* functions, row-major access,
;;; typep, and the #nA printed form. Each line matches SBCL 2.2 (with *print-case* :downcase).

(defun show (label value) (format t "~a: ~s~%" label value))

(defvar *m* (make-array '(2 3) :initial-contents '((1 2 3) (4 5 6))))
(show "printed" *m*)
(show "princ'd" (princ-to-string (make-array '(1 2) :initial-contents '(("a" #\b)))))
(show "prin1'd" (prin1-to-string (make-array '(1 2) :initial-contents '(("a" #\b)))))
(show "aref" (list (aref *m* 0 0) (aref *m* 1 2) (aref *m* 0 2)))
(show "dimensions" (list (array-dimensions *m*) (array-rank *m*) (array-total-size *m*)
                         (array-dimension *m* 0) (array-dimension *m* 1)))
(show "setf aref"
      (let ((a (make-array '(2 2) :initial-element 0)))
        (setf (aref a 0 1) 'x (aref a 1 0) 'y)
        (incf (aref a 1 1) 5)
        a))
(show "rank 3" (make-array '(2 2 2) :initial-contents '(((1 2) (3 4)) ((5 6) (7 8)))))
(show "rank 3 element" (aref (make-array '(2 3 4) :initial-element 7) 1 2 3))
(show "rank 0" (let ((a (make-array '() :initial-element 5))) (list a (aref a) (array-rank a))))
(show "a zero dimension" (list (make-array '(0 3)) (array-total-size (make-array '(0 3)))))
(show "one dimension is a vector" (list (make-array '(3) :initial-element 1) (vectorp (make-array '(3)))))
(show "row-major"
      (list (array-row-major-index *m* 1 1) (row-major-aref *m* 4)
            (let ((a (make-array '(2 2) :initial-element 0))) (setf (row-major-aref a 3) 9) a)))
(show "in bounds" (list (array-in-bounds-p *m* 1 2) (array-in-bounds-p *m* 2 0) (array-in-bounds-p *m* 0 -1)))
(show "arrayp" (list (arrayp *m*) (arrayp (vector 1)) (arrayp "s") (arrayp '(1)) (vectorp *m*)))
(show "typep" (list (typep *m* 'array) (typep *m* '(array t (2 3))) (typep *m* '(array t (3 2)))
                    (typep *m* '(array * 2)) (typep *m* 'vector) (typep (vector 1 2) '(array t 1))))
(show "equalp" (list (equalp *m* (make-array '(2 3) :initial-contents '((1 2 3) (4 5 6))))
                     (equalp *m* (make-array '(3 2) :initial-element 1))
                     (equal *m* (make-array '(2 3) :initial-contents '((1 2 3) (4 5 6))))))
(show "contents from vectors" (make-array '(2 2) :initial-contents (vector (vector 1 2) '(3 4))))
(show "a matrix product"
      (let* ((a (make-array '(2 2) :initial-contents '((1 2) (3 4))))
             (b (make-array '(2 2) :initial-contents '((5 6) (7 8))))
             (c (make-array '(2 2) :initial-element 0)))
        (dotimes (i 2) (dotimes (j 2) (dotimes (k 2) (incf (aref c i j) (* (aref a i k) (aref b k j))))))
        c))
(show "out of range" (handler-case (aref *m* 2 0) (error () :error)))
(show "bad contents" (handler-case (make-array '(2 2) :initial-contents '((1 2) (3))) (error () :error)))
