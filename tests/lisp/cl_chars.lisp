;;; SPDX-License-Identifier: Apache-2.0
;;; Characters (issue 25): #\ syntax, Unicode code points, char/schar, case, comparison,
;;; classes, digits, names, ~c, and strings as sequences of characters. Lines match SBCL 2.2
;;; except where SBCL names a character (#\LATIN_SMALL_LETTER_E_WITH_ACUTE, #\  for
;;; space) where we print it (#\é, #\Space), type-of (standard-char there), and errors.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "reader" (list #\a #\Z #\Space #\Newline #\Tab #\( #\; #\space #\NEWLINE))
(show "unicode" (list #\é #\λ (char-code #\λ) (code-char 233) (char "日本語" 1) (length "日本語") (reverse "héllo") (subseq "héllo" 1 3)))
(show "princ" (format nil "~a|~a|~a" #\a #\Space #\λ))
(show "characterp" (list (characterp #\a) (characterp "a") (characterp 97)))
(show "char schar" (list (char "hello" 1) (schar "hello" 4)))
(show "char-code code-char" (list (char-code #\A) (code-char 97) (char-code #\Newline)))
(show "case" (list (char-upcase #\a) (char-downcase #\A) (char-upcase #\1) (char-upcase #\é) (char-downcase #\Λ)))
(show "compare" (list (char= #\a #\a) (char= #\a #\A) (char-equal #\a #\A) (char< #\a #\b #\c) (char< #\a #\c #\b) (char/= #\a #\b #\a) (char>= #\c #\b #\b) (char-lessp #\a #\B)))
(show "predicates" (list (alpha-char-p #\a) (alpha-char-p #\1) (alphanumericp #\1) (upper-case-p #\A) (lower-case-p #\A) (both-case-p #\a) (both-case-p #\1) (graphic-char-p #\a) (graphic-char-p #\Newline)))
(show "digits" (list (digit-char-p #\7) (digit-char-p #\a) (digit-char-p #\f 16) (digit-char 7) (digit-char 11 16) (digit-char 11)))
(show "names" (list (char-name #\Space) (char-name #\a) (name-char "Newline") (name-char "bogus")))
(show "eql equal" (list (eql #\a #\a) (equal "ab" (coerce (list #\a #\b) 'string)) (equalp #\a #\A) (eq (char "a" 0) #\a)))
(show "type-of" (type-of #\a))
(show "strings are sequences" (list (elt "abc" 0) (aref "abc" 2) (coerce "abc" 'list) (coerce '(#\x #\y) 'string) (coerce #(#\p #\q) 'string)))
(show "sequence functions" (list (position #\b "abc") (find #\c "abc") (count #\a "banana") (remove #\a "banana") (substitute #\o #\a "banana") (position-if #'digit-char-p "ab3d") (remove-if-not #'alpha-char-p "a1b2")))
(show "map over a string" (mapcar #'char-upcase (coerce "abc" 'list)))
(show "loop across" (loop for c across "hey" collect (char-code c)))
(show "every some" (list (every #'alpha-char-p "abc") (some #'digit-char-p "ab3")))
(show "make-string" (list (make-string 3 :initial-element #\z) (make-string 2 :initial-element #\é)))
(show "string of char" (list (string #\a) (character "b") (character 'c)))
(show "format ~c" (format nil "~c ~:c ~@c ~@c" #\a #\Space #\b #\Space))
(show "sort chars" (sort (coerce "hello" 'list) #'char<))
(show "string-trim chars" (string-trim '(#\Space #\-) "- x -"))
(show "char-code error" (handler-case (char-code 5) (type-error (e) (condition-message e))))
(show "char index error" (handler-case (char "abc" 3) (error (e) (condition-message e))))
(show "char= error" (handler-case (char= #\a "a") (type-error (e) (condition-message e))))
(show "code-char error" (handler-case (code-char -1) (type-error (e) (condition-message e))))
