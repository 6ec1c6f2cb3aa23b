;;; SPDX-License-Identifier: Apache-2.0
;;; TRIANGLE (Gabriel): all solutions of the 15-hole triangle peg solitaire from hole 5
;;; (board search from move 22). Vector reads and writes, deep backtracking, consing of
;;; the answers. Prints the number of solutions and the last one found.
(defun make-vec (n init)
  (coerce (make-list n :initial-element init) 'vector))

(defvar *board* (make-vec 16 1))
(defvar *sequence* (make-vec 14 0))
(defvar *a* (coerce '(1 2 4 3 5 6 1 3 6 2 5 4 11 12 13 7 8 4 4 7 11 8 12 13 6 10 15 9 14 13
                      13 14 15 9 10 6 6) 'vector))
(defvar *b* (coerce '(2 4 7 5 8 9 3 6 10 5 9 8 12 13 14 8 9 5 2 4 7 5 8 9 3 6 10 5 9 8
                      12 13 14 8 9 5 5) 'vector))
(defvar *c* (coerce '(4 7 11 8 12 13 6 10 15 9 14 13 13 14 15 9 10 6 1 2 4 3 5 6 1 3 6 2 5 4
                      11 12 13 7 8 4 4) 'vector))
(defvar *answer* ())
(defvar *final* ())

(defun last-position ()
  (do ((i 1 (1+ i)))
      ((= i 16) 0)
    (when (eq 1 (aref *board* i))
      (return i))))

(defun try-move (i depth)
  (cond ((= depth 14)
         (let ((lp (last-position)))
           (unless (member lp *final*)
             (push lp *final*)))
         (push (cdr (coerce *sequence* 'list)) *answer*)
         t)
        ((and (eq 1 (aref *board* (aref *a* i)))
              (eq 1 (aref *board* (aref *b* i)))
              (eq 0 (aref *board* (aref *c* i))))
         (setf (aref *board* (aref *a* i)) 0)
         (setf (aref *board* (aref *b* i)) 0)
         (setf (aref *board* (aref *c* i)) 1)
         (setf (aref *sequence* depth) i)
         (do ((j 0 (1+ j))
              (depth (1+ depth)))
             ((or (= j 36) (try-move j depth)) ()))
         (setf (aref *board* (aref *a* i)) 1)
         (setf (aref *board* (aref *b* i)) 1)
         (setf (aref *board* (aref *c* i)) 0)
         ())))

(defun gogogo (i)
  (setq *answer* () *final* ())
  (dotimes (k 16) (setf (aref *board* k) 1))
  (setf (aref *board* 5) 0)
  (try-move i 1)
  (length *answer*))

(defun main (iterations)
  (let ((sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (gogogo 22))))
    (format t "~a ~a ~a~%" sum *final* (car *answer*))))

(main 1)
