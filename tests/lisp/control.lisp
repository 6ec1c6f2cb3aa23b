;;; SPDX-License-Identifier: Apache-2.0
;;; Control flow: conditionals, case/typecase, iteration macros, blocks and the loop macro.

(defun show (label value) (format t "~a: ~s~%" label value))

;; if, when, unless, and, or, not.
(show "if" (list (if t 'yes 'no) (if nil 'yes 'no) (if nil 'yes)))
(show "when" (list (when t 1 2) (when nil 1)))
(show "unless" (list (unless nil 1 2) (unless t 1)))
(show "and" (list (and) (and 1 2 3) (and 1 nil 3)))
(show "or" (list (or) (or nil 2 3) (or nil nil)))
(show "not" (list (not nil) (not 0)))
(show "only nil is false" (mapcar (lambda (x) (if x 'true 'false)) (list 0 "" '() nil 'nil #())))

;; cond.
(defun sign-word (n)
  (cond ((< n 0) 'negative)
        ((= n 0) 'zero)
        (t 'positive)))
(show "cond" (mapcar #'sign-word '(-5 0 5)))
(show "cond test value" (cond ((assoc 'b '((a . 1) (b . 2))))))
(show "cond no match" (cond (nil 1) ((= 1 2) 2)))
(show "cond body is a progn" (cond ((= 1 1) 'first 'last)))

;; case, ecase, typecase.
(defun kind-of-key (k)
  (case k
    ((a e i o u) 'vowel)
    (y 'sometimes)
    ((1 2 3) 'small-number)
    ((nil) 'nothing)
    (otherwise 'other)))
(show "case" (mapcar #'kind-of-key '(a y 2 nil z)))
(show "case uses eql" (list (case 2.0 (2 'int) (t 'no)) (case "a" ("a" 'str) (t 'no))))
(show "case t clause" (case 42 (1 'one) (t 'default)))
(show "case no match" (case 42 (1 'one)))
(show "ecase" (ecase 'b (a 1) (b 2)))
(defun classify (x)
  (typecase x
    (integer 'integer)
    (float 'float)
    (string 'string)
    (null 'null)
    (cons 'cons)
    (keyword 'keyword)
    (symbol 'symbol)
    (vector 'vector)
    (hash-table 'hash-table)
    (function 'function)
    (t 'other)))
(show "typecase" (mapcar #'classify (list 1 1.5 "s" nil '(1) :k 'a (vector) (make-hash-table) #'car)))
(show "typecase number/list/sequence"
      (list (typecase 5 (number 'n)) (typecase nil (list 'l)) (typecase "ab" (sequence 's))))
(show "typecase no match" (typecase 5 (string 's)))

;; progn, prog1, prog2, let, let*.
(show "progn" (progn 1 2 3))
(show "prog1" (prog1 1 2 3))
(show "prog2" (prog2 1 2 3))
(show "let is parallel" (let ((x 1) (y 2)) (let ((x y) (y x)) (list x y))))
(show "let* is sequential" (let* ((x 1) (y (+ x 1)) (z (* y 10))) (list x y z)))
(show "let without values" (let (a (b) (c 3)) (list a b c)))
(show "psetq" (let ((a 1) (b 2)) (psetq a b b a) (list a b)))

;; while, dolist, dotimes, do.
(show "while" (let ((i 0) (acc nil)) (while (< i 3) (push i acc) (setq i (+ i 1))) acc))
(show "dolist" (let ((sum 0)) (dolist (x '(1 2 3) sum) (setq sum (+ sum x)))))
(show "dolist result sees var as nil" (dolist (x '(1 2) x)))
(show "dolist default result" (dolist (x '(1 2))))
(show "dolist return" (dolist (x '(1 2 3 4)) (when (> x 2) (return (* x 100)))))
(show "dotimes" (let ((acc nil)) (dotimes (i 4 (reverse acc)) (push i acc))))
(show "dotimes result sees the count" (dotimes (i 3 i)))
(show "dotimes zero times" (let ((n 0)) (dotimes (i 0 n) (setq n 99))))
(show "do" (do ((i 0 (+ i 1)) (acc nil (cons i acc))) ((= i 4) acc)))
(show "do steps in parallel" (do ((a 1 b) (b 2 a) (n 0 (+ n 1))) ((= n 3) (list a b))))
(show "do with body" (do ((x 1) (i 0 (1+ i))) ((= i 5) x) (setq x (* x 2))))
(show "do return" (do ((i 0 (+ i 1))) (nil) (when (= i 7) (return i))))

;; block and return-from.
(show "block" (block b 1 (return-from b 2) 3))
(show "block empty" (block b))
(show "return from nil block" (block nil (return) 1))
(show "return-from through nested loops"
      (block search
        (dolist (row '((1 2) (3 4) (5 6)))
          (dolist (x row)
            (when (= x 4) (return-from search (list 'found x 'in row)))))))
(defun find-first-even (list)
  (dolist (x list)
    (when (evenp x) (return-from find-first-even x)))
  'none)
(show "return-from a function" (list (find-first-even '(1 3 6 8)) (find-first-even '(1 3))))
(show "return-from inside a lambda"
      (block outer (mapcar (lambda (x) (if (> x 1) (return-from outer 'escaped) x)) '(1 2 3))))

;; loop: plain form.
(show "simple loop" (let ((n 0)) (loop (setq n (+ n 1)) (when (> n 5) (return n)))))

;; loop: for clauses.
(show "for in" (loop for x in '(1 2 3) collect (* x x)))
(show "for on" (loop for tail on '(1 2 3) collect tail))
(show "for across vector" (loop for x across #(1 2 3) collect (* 2 x)))
(show "for across string" (loop for c across "abc" collect c))
(show "from to" (loop for i from 1 to 5 collect i))
(show "from below" (loop for i from 0 below 4 collect i))
(show "below only" (loop for i below 3 collect i))
(show "from below by" (loop for i from 0 below 10 by 3 collect i))
(show "from to by" (loop for i from 1 to 10 by 4 collect i))
(show "downto" (loop for i from 10 downto 1 by 3 collect i))
(show "downfrom" (loop for i downfrom 5 to 1 collect i))
(show "above" (loop for i from 5 above 1 collect i))
(show "upto" (loop for i from 3 upto 5 collect i))
(show "empty range" (loop for i from 5 to 1 collect i))
(show "float steps" (loop for x from 1.0 to 2.0 by 0.5 collect x))
(show "for = then" (loop for x = 1 then (* x 2) while (< x 100) collect x))
(show "for = without then recomputes" (loop for i from 1 to 3 for sq = (* i i) collect sq))
(show "parallel for clauses" (loop for x in '(a b c) for i from 0 collect (cons i x)))
(show "shortest for ends the loop" (loop for x in '(1 2 3 4) for y in '(a b) collect (list x y)))
(show "= then with in" (loop for x = 0 then (+ x 1) for y in '(a b c) collect (list x y)))
(show "as is for" (loop as i from 1 to 3 collect i))

;; loop: repeat, while, until, with, return.
(show "repeat" (loop repeat 3 collect 'hi))
(show "repeat zero" (loop repeat 0 collect 'hi))
(show "while" (loop for x in '(1 2 3 4 5) while (< x 4) collect x))
(show "until" (loop for x in '(1 2 3 4 5) until (> x 3) collect x))
(show "with" (loop with base = 10 for i from 1 to 3 collect (+ base i)))
(show "with sequential" (loop with x = 1 with y = (+ x 1) return (list x y)))
(show "with no value" (loop with x return x))
(show "return clause" (loop for i from 1 to 10 when (> (* i i) 20) return i))
(show "return form in do" (loop for i from 1 do (when (= i 4) (return (* i 10)))))

;; loop: accumulation.
(show "collect" (loop for i from 1 to 3 collect (list i)))
(show "append" (loop for x in '((1 2) (3) () (4 5)) append x))
(show "appending keeps the originals" (let ((l (list 1 2))) (loop repeat 2 append l) l))
(show "nconc" (loop for i from 1 to 3 nconc (list i i)))
(show "sum" (loop for i from 1 to 100 sum i))
(show "sum floats" (loop for x in '(0.5 0.25) sum x))
(show "count" (loop for x in '(1 2 3 4 5) count (oddp x)))
(show "maximize" (loop for x in '(3 1 4 1 5 9 2 6) maximize x))
(show "minimize" (loop for x in '(3 1 4 1 5 9 2 6) minimize x))
(show "accumulating over nothing" (list (loop for x in nil collect x) (loop for x in nil sum x)
                                        (loop for x in nil count x)))
(show "collect into"
      (loop for x in '(1 2 3 4 5 6)
            when (evenp x) collect x into evens
            else collect x into odds
            finally (return (list evens odds))))
(show "sum into" (loop for x in '(1 2 3) sum x into total finally (return (* 2 total))))
(show "count into" (loop for x in '(a nil b) count x into n finally (return n)))
(show "maximize into" (loop for x in '(5 2 8) maximize x into biggest finally (return biggest)))
(show "two intos" (loop for x in '(1 2 3) collect x into a collect (* x x) into b finally (return (list a b))))
(show "average" (loop for i below 5 sum i into total count t into n finally (return (/ total n))))

;; loop: conditional clauses.
(show "when" (loop for i from 1 to 10 when (evenp i) collect i))
(show "if ... end" (loop for i from 1 to 5 if (oddp i) collect i end))
(show "unless" (loop for x in '(1 2 3) unless (= x 2) collect x))
(show "when ... and"
      (loop for x in '(1 2 3 4)
            when (oddp x) collect x and sum x into s
            finally (format t "  (sum of odds was ~a)~%" s)))
(show "when ... else"
      (loop for x in '(1 2 3 4) when (evenp x) sum x else do (princ x)))
(show "nested when" (loop for i in '(1 2 3 4 5 6) when (evenp i) when (> i 2) collect i))
(show "when do and collect"
      (loop for i from 1 to 3 when (= i 2) do (princ "[two]") and collect i))

;; loop: always, never, thereis.
(show "always" (list (loop for x in '(1 2 3) always (< x 5)) (loop for x in '(1 9 3) always (< x 5))))
(show "never" (list (loop for x in '(1 2 3) never (> x 5)) (loop for x in '(1 9) never (> x 5))))
(show "thereis" (list (loop for x in '(1 2 3) thereis (and (> x 1) (* x 10))) (loop for x in '(1) thereis (> x 5))))
(show "always skips finally on failure"
      (loop for x in '(1 9) always (< x 5) finally (princ "[finally ran]")))

;; loop: initially, finally, do.
(show "initially and finally"
      (loop initially (princ "start ")
            for i from 1 to 3
            do (princ i) (princ " ")
            finally (princ "end") (terpri)))
(show "finally return" (loop for i from 1 to 3 finally (return (list 'done i))))
(show "doing" (loop for i from 1 to 3 doing (princ i)))
(show "while with finally" (loop for x in '(1 2 3) while (< x 3) collect x finally (princ "[fin] ")))
