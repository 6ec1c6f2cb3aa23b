;;; SPDX-License-Identifier: Apache-2.0
;;; Strings and format: directives, padding, the string library, conversions and symbols.

(defun show (label value) (format t "~a: ~s~%" label value))

;; format directives, each framed by brackets so padding is visible.
(format t "~~a and ~~s: [~a] [~s] [~a] [~s]~%" "hi" "hi" 'sym :kw)
(format t "lists: [~a] [~s]~%" '(1 "two" three) '(1 "two" three))
(format t "vectors: [~a] [~s]~%" (vector "a" 'b) (vector "a" 'b))
(format t "nil and t: [~a] [~s] [~a]~%" nil nil t)
(format t "~~d: [~d] [~d] [~@d] [~@d]~%" 42 -42 5 -5)
(format t "~~d pads left: [~5d] [~5d] [~2d]~%" 42 -42 12345)
(format t "~~a pads right: [~10a] [~3a]~%" "abc" "toolong")
(format t "~~@a pads left: [~10@a]~%" "abc")
(format t "~~s pads too: [~8s]~%" "ab")
(format t "~~f: [~f] [~f] [~f]~%" 1.5 2 0.1)
(format t "~~,2f: [~,2f] [~,2f] [~,2f] [~,2f]~%" 3.14159 1 2.6749 -1.006)
(format t "width and decimals: [~8,3f] [~10,2f]~%" 2.5 3.14159)
(format t "~~x ~~o ~~b: [~x] [~o] [~b] [~x] [~4x]~%" 255 8 5 -255 255)
(format t "upper-case directives: [~A] [~D] [~S]~%" "up" 3 "x")
(format t "tilde: ~~ and percent: ~%")
(format t "two newlines:~2%")
(format t "fresh line~&only one newline~&")
(format t "~&~&after a newline, ~~& does nothing~%")
(format t "a tilde at the end of a line ~
           skips the newline and the indentation~%")
(show "format nil" (format nil "~a + ~a = ~a" 1 2 (+ 1 2)))
(show "format with a string destination" (format "~a-~a" "x" "y"))
(show "extra arguments are ignored" (format nil "~a" 1 2))
(show "format returns nil with t" (format t ""))

;; Building and splitting.
(show "concat" (concat "a" "b" "c"))
(show "concat non-strings" (concat "n=" 42 ", " 'sym ", " 2.5))
(show "string-join" (string-join '("a" "b" "c") ", "))
(show "string-join default" (string-join '("x" "y")))
(show "string-join empty" (string-join nil "-"))
(show "string-join non-strings" (string-join '(1 a "b") "/"))
(show "string-split sep" (string-split "a,b,,c" ","))
(show "string-split long sep" (string-split "one::two::three" "::"))
(show "string-split whitespace" (string-split "  hello   world	tab  "))
(show "string-split no sep found" (string-split "abc" ","))
(show "string-split empty" (string-split "" ","))
(show "split then join" (string-join (string-split "a b c") "+"))

;; Searching and replacing.
(show "string-replace" (string-replace "a-b-c" "-" "+"))
(show "string-replace growing" (string-replace "aaa" "a" "aa"))
(show "string-replace longer" (string-replace "the cat sat" "at" "og"))
(show "string-replace absent" (string-replace "abc" "z" "y"))
(show "string-contains" (list (string-contains "hello" "ll") (string-contains "hello" "z") (string-contains "abc" "")))
(show "string-prefix-p" (list (string-prefix-p "he" "hello") (string-prefix-p "lo" "hello")))
(show "string-suffix-p" (list (string-suffix-p "lo" "hello") (string-suffix-p "hello!" "hello")))
(show "position in string" (position #\l "hello"))

;; Case, trimming, comparison.
(show "string-upcase" (string-upcase "Hello, World"))
(show "string-downcase" (string-downcase "Hello, World"))
(show "string-trim" (string-trim "  	x y
  "))
(show "string=" (list (string= "a" "a") (string= "a" "A") (string= 'abc "abc")))
(show "string< string>" (list (string< "abc" "abd") (string< "b" "abc") (string> "b" "a")))
(show "equal vs eq on strings" (list (equal "ab" (concat "a" "b")) (eq "ab" (concat "a" "b"))))

;; Characters are one-character strings.
(show "length" (length "hello"))
(show "aref/elt" (list (aref "hello" 1) (elt "hello" 4)))
(show "subseq" (list (subseq "hello" 1 3) (subseq "hello" 2)))
(show "reverse" (reverse "stressed"))
(show "char-code" (char-code #\A))
(show "code-char" (code-char 97))
(show "coerce to list" (coerce "abc" 'list))
(show "coerce from list" (coerce '("x" "y") 'string))
(show "caesar" (coerce (mapcar (lambda (c) (code-char (+ 1 (char-code c)))) (coerce "HAL" 'list)) 'string))

;; Conversions.
(show "parse-number" (list (parse-number "42") (parse-number " -17 ") (parse-number "2.5") (parse-number "1e3")))
(show "number-to-string" (list (number-to-string 42) (number-to-string 3.5)))
(show "string" (list (string 'sym) (string 42) (string "same")))
(show "prin1-to-string" (list (prin1-to-string "q") (prin1-to-string '(a "b"))))
(show "read-from-string" (read-from-string "(a (b . c) \"s\" 1.5)"))
(show "symbol-name" (symbol-name 'hello-world))
(show "intern" (eq (intern "hello") 'hello))
(show "make-keyword" (make-keyword "k"))
(show "string-upcase of a symbol name" (string-upcase (symbol-name 'abc)))

;; A small report built with format.
(defun report-line (name qty price)
  (format nil "~10a~5d~10,2f" name qty price))
(dolist (row '(("apple" 3 0.5) ("banana" 12 0.25) ("cherry" 100 12.126)))
  (format t "|~a|~%" (apply #'report-line row)))
