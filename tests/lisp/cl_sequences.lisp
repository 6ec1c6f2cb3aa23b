;;; SPDX-License-Identifier: Apache-2.0
;;; Generic sequence functions (issue 25): map, concatenate, map-into, fill, replace, setf of
;;; char/schar/aref/elt on strings, string-capitalize, parse-integer (two values). Lines
;;; match SBCL 2.2.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "map" (list (map 'string #'char-upcase "abc") (map 'list #'+ '(1 2) #(10 20 30)) (map 'vector #'identity "ab") (map nil #'identity '(1)) (map '(vector t) #'1+ '(1 2))))
(show "concatenate" (list (concatenate 'string "ab" '(#\c) #(#\d)) (concatenate 'list #(1) '(2) "x") (concatenate 'vector '(1) #(2))))
(show "concatenate is fresh" (let* ((tail (list 3)) (r (concatenate 'list '(1 2) tail))) (eq (cddr r) tail)))
(show "map-into" (let ((v (vector 1 2 3))) (list (map-into v #'* v v) v (map-into (list 0 0 0) #'+ '(1 2) '(10 20)))))
(show "fill" (list (fill (list 1 2 3) 0 :start 1) (fill (copy-seq "abcd") #\z :end 2)))
(show "replace" (list (replace (vector 1 2 3 4) '(9 8) :start1 1) (replace (copy-seq "hello") "XY" :start1 3 :start2 0 :end2 1)))
(show "setf char" (let ((s (copy-seq "hello"))) (setf (char s 0) #\j) (setf (schar s 1) #\E) (setf (elt s 4) #\λ) (setf (aref s 2) #\L) s))
(show "string-capitalize" (string-capitalize "hello BIG world-wide 3rd"))
(show "parse-integer" (list (multiple-value-list (parse-integer " 42 ")) (multiple-value-list (parse-integer "-ff" :radix 16)) (multiple-value-list (parse-integer "12abc" :junk-allowed t)) (multiple-value-list (parse-integer "abc" :junk-allowed t)) (multiple-value-list (parse-integer "x123" :start 1))))
(show "parse-integer error" (handler-case (parse-integer "12x") (parse-error () :parse-error)))
(show "parse-integer empty" (handler-case (parse-integer "  ") (parse-error () :parse-error)))
(show "map bad type" (handler-case (map 'hash-table #'identity '(1)) (type-error () :type-error)))
