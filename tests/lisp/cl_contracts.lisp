;;; SPDX-License-Identifier: Apache-2.0
;;; Functions with Common Lisp's names keep Common Lisp's contracts (issue 25, "Same name,
;;; different contract"): destructive list functions, keyword arguments of the sequence
;;; functions, string-trim's bag, documentation, funcall of a symbol, locals named like
;;; functions, and special forms that no definition may replace. Each line printed here
;;; was wrong, or an error, before.

(defun show (label value) (format t "~a: ~s~%" label value))
(defmacro fails (form)
  `(handler-case (progn ,form "no error")
     (program-error (e) (format nil "program-error: ~a" (condition-message e)))
     (type-error (e) (format nil "type-error: ~a" (condition-message e)))
     (index-error (e) (format nil "index-error: ~a" (condition-message e)))
     (error (e) (format nil "error: ~a" (condition-message e)))))

;; Destructive list functions: nconc splices, the others reuse cells; callers use the result.
(let ((a (list 1 2)) (b (list 3)))
  (show "nconc returns" (nconc a b))
  (show "nconc changed its first list" a)
  (show "nconc shares the last list" (eq (cddr a) b)))
(let* ((l (list 1 2 3)) (r (nreverse l)))
  (show "nreverse" r)
  (show "nreverse reuses the cells" (eq (car (last r)) 1)))
(let ((v (vector 1 2 3)))
  (show "nreverse vector in place" (list (eq (nreverse v) v) v)))
(let* ((l (list 1 2 1 3 1)) (d (delete 1 l)))
  (show "delete" d)
  (show "delete reuses cells" (eq d (cdr l))))
(show "delete :count" (delete 1 (list 1 2 1 3 1) :count 2))
(show "delete :from-end :count" (delete 1 (list 1 2 1 3 1) :from-end t :count 1))
(show "delete-if" (delete-if #'evenp (list 1 2 3 4)))
(show "delete vector" (delete 2 (vector 1 2 3)))
(let ((c (cons 1 2)))
  (show "rplaca returns the cons" (eq (rplaca c 'a) c))
  (show "rplacd" (rplacd c 'b)))

;; Keyword arguments; the default test is eql (numbers by type and value, strings by identity).
(show "member :test" (member 2.0 '(1 2 3) :test #'=))
(show "member eql default" (list (member '(1) '((1))) (member 2.0 '(1 2)) (member 2 '(1 2 3))))
(show "member :key" (member 2 '((1 a) (2 b)) :key #'car))
(show "member :test-not" (member 1 '(1 1 2 1) :test-not #'eql))
(show "member-if" (member-if #'evenp '(1 3 4 5)))
(show "assoc :test" (assoc "b" '(("a" . 1) ("b" . 2)) :test #'string=))
(show "assoc eql default" (assoc "b" '(("a" . 1) ("b" . 2))))
(show "assoc :key" (assoc 3 '((1 . a) (2 . b)) :key #'1+))
(show "rassoc" (rassoc 'b '((1 . a) (2 . b))))
(show "assoc-if" (assoc-if #'stringp '((1 . a) ("x" . b))))
(show "find :from-end" (find 2 '((2 a) (3 b) (2 c)) :key #'car :from-end t))
(show "find :start :end" (list (find 1 '(1 2 1 2) :start 1) (find 1 '(1 2 1 2) :start 1 :end 2)))
(show "find-if-not" (find-if-not #'numberp '(1 2 x 3)))
(show "find in a vector" (find 3 #(1 2 3)))
(show "find :key symbol" (find 2 '((1) (2)) :key 'car))
(show "position :from-end" (position 1 '(1 2 1 3) :from-end t))
(show "position :start" (position #\a "banana" :start 2))
(show "position-if :key" (position-if #'evenp '((1) (3) (4)) :key #'car))
(show "position in a string" (list (position #\n "banana") (position "an" "banana")))
(show "count :key" (count 2 '((1) (2) (2)) :key #'car))
(show "count-if :start" (count-if #'oddp '(1 2 3 4 5) :start 1))
(show "count in a string" (count #\a "banana"))
(show "remove :count" (remove 1 '(1 2 1 3 1) :count 2))
(show "remove :from-end :count" (remove 1 '(1 2 1 3 1) :count 1 :from-end t))
(show "remove :start :end" (remove 1 '(1 1 1 1) :start 1 :end 3))
(show "remove :test-not" (remove 3 '(1 3 5 3) :test-not #'eql))
(show "remove-if :key" (remove-if #'evenp '((1) (2) (3)) :key #'car))
(show "remove from a string" (remove #\a "banana"))
(show "remove-if-not :count" (remove-if-not #'evenp '(1 2 3 4 5) :count 1))
(show "substitute :key" (substitute 'x 1 '((1) (2) (1)) :key #'car))
(show "substitute :count :from-end" (substitute 'x 1 '(1 2 1 3 1) :count 1 :from-end t))
(show "substitute-if" (substitute-if 0 #'minusp '(1 -2 3 -4)))
(show "substitute in a string" (substitute #\o #\a "banana"))
(show "remove-duplicates keeps the last" (remove-duplicates '(a b a c b)))
(show "remove-duplicates :from-end keeps the first" (remove-duplicates '(a b a c b) :from-end t))
(show "remove-duplicates :test" (remove-duplicates '("a" "b" "a") :test #'string=))
(show "remove-duplicates :key" (remove-duplicates '((1 x) (2 y) (1 z)) :key #'car))
(show "remove-duplicates of a string" (remove-duplicates "banana"))
(show "delete-duplicates" (delete-duplicates (list 1 2 1 2 3)))
(show "union :test" (union '("a" "b") '("b" "c") :test #'equal))
(show "intersection :key" (intersection '((1 a) (2 b)) '((2 c) (3 d)) :key #'car))
(show "set-difference :test" (set-difference '(1 2 3 4) '(2 4) :test #'=))
(show "search" (list (search "lo" "hello") (search '(2 3) '(1 2 3 2 3)) (search '(2 3) '(1 2 3 2 3) :from-end t)))
(show "search :start2" (search '(1) '(1 2 1) :start2 1))
(show "search :test :key" (search '("B") '("a" "b") :test #'string= :key #'string-downcase))
(show "mismatch" (list (mismatch '(1 2 3) '(1 2 4)) (mismatch '(1 2) '(1 2)) (mismatch "abc" "abd") (mismatch '(1 2) '(1 2 3))))
(show "mismatch :from-end" (mismatch '(1 2 3) '(0 2 3) :from-end t))
(show "pushnew :test" (let ((l (list "a"))) (pushnew "a" l :test #'equal) (pushnew "b" l :test #'equal) l))

;; The old positional test is refused, saying what to write.
(show "positional test" (fails (member 2 '(1 2) #'=)))
(show "positional test in assoc" (fails (assoc 2 '((2 . b)) #'=)))
(show "unknown keyword" (fails (find 1 '(1) :tset #'eql)))
(show "keyword with no value" (fails (find 1 '(1) :test)))
(show "both tests" (fails (member 1 '(1) :test #'eql :test-not #'eql)))
(show ":end out of range" (fails (position 1 '(1 2) :end 3)))

;; funcall, apply and the sequence functions take a symbol naming a global function.
(defun twice (x) (* 2 x))
(show "funcall symbol" (funcall 'car '(1 2)))
(show "apply symbol" (apply 'twice '(5)))
(show "apply symbol with args" (apply '+ 1 2 '(3 4)))
(defun tail-funcall (f x) (funcall f x))
(show "funcall symbol in tail position" (tail-funcall 'cadr '(1 2)))
(show "mapcar symbol" (mapcar 'car '((1) (2))))
(show "remove-if symbol" (remove-if 'evenp '(1 2 3)))

;; A local variable named like a global function: when it holds no function, a call through
;; its name reaches the global function; a local holding a function is called.
(show "let list list" (let ((list '(1 2))) (list list (length list))))
(defun shadow-params (list string) (list (car list) string))
(show "parameter named list" (shadow-params '(a b) "s"))
(show "local non-function, no global" (fails (let ((nope 3)) (nope 1))))

;; A local variable does not hide a global macro in operator position (as in Common Lisp);
;; a local function (flet, labels, or a let of a lambda expression) does.
(show "let when, macro still expands" (let ((when 1)) (when t 2)))
(defun param-named-unless (unless) (unless (> unless 5) unless))
(show "parameter named unless" (param-named-unless 3))
(show "flet hides a macro" (flet ((when (x y) (list x y))) (when 1 2)))
(show "labels hides a macro" (labels ((unless (n) (if (> n 0) (unless (- n 1)) :done))) (unless 3)))
(show "let of a lambda hides a macro" (let ((when (lambda (x) (* x 2)))) (when 4)))
(show "macro again outside the flet" (list (flet ((when (x) x)) (when 7)) (when t 8)))

;; Special forms cannot be redefined by defun, defmacro or defmodel.
(show "defun block" (fails (defun block (x) x)))
(show "defmacro if" (fails (defmacro if (x) x)))
(show "defmodel let" (fails (eval '(defmodel let (x) ((y x)) () y))))
(show "special-operator-p" (list (special-operator-p 'if) (special-operator-p 'when)))

;; string-trim and friends take the bag first; a bag is a string or a sequence of characters.
;; With one argument they trim whitespace.
(show "string-trim bag" (string-trim "-*" "*-ab-c-*"))
(show "string-left-trim" (string-left-trim " x" "x x hi x"))
(show "string-right-trim" (string-right-trim '(#\. #\!) "hi!.!"))

;; documentation with a doc-type, as in Common Lisp.
(defun documented (x) "(documented X) is X." x)
(defvar *documented* 1 "A documented variable.")
(show "documentation 'function" (documentation 'documented 'function))
(show "documentation 'variable" (list (documentation '*documented* 'variable) (documentation 'documented 'variable)))
