;;; SPDX-License-Identifier: Apache-2.0
;;; STRBUILD: string building. Part 1 writes the numbers below 1000 and a comma after
;;; each to a string output stream (number printing, many small writes). Part 2 is the
;;; classic "string" test of the Gabriel-era sets (Larceny): grow a string by
;;; concatenation and substring until it is longer than 4000 characters.
;;; Checksum: the sum of all the lengths built.
(defun build (n)
  (with-output-to-string (s)
    (dotimes (i n)
      (princ i s)
      (write-char #\, s))))

(defvar *s* "abcdef")

(defun grow ()
  (setq *s* (concatenate 'string "123" *s* "456" *s* "789"))
  (setq *s* (concatenate 'string
                         (subseq *s* (floor (length *s*) 2) (length *s*))
                         (subseq *s* 0 (1+ (floor (length *s*) 2)))))
  *s*)

(defun trial (n)
  (do ()
      ((> (length *s*) n) (length *s*))
    (grow)))

(defun main (iterations)
  (let ((sum 0))
    (dotimes (i iterations)
      (setq sum (+ sum (length (build 1000))))
      (setq *s* "abcdef")
      (setq sum (+ sum (trial 4000))))
    (format t "~a~%" sum)))

(main 1000)
