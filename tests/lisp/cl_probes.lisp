;;; SPDX-License-Identifier: Apache-2.0
;;; Probes found while writing the manual's examples (issues 25, 26): each line printed here
;;; was wrong before, and now says what SBCL says (or, for TensorLisp's own names, what the
;;; docstring says).

(defun show (label value) (format t "~a: ~s~%" label value))
(defmacro fails (form)
  `(handler-case (progn ,form "no error")
     (error (e) (format nil "~a" (condition-message e)))))

;; Strings index characters, not bytes; case folding is Unicode's.
(show "string-contains" (string-contains "héllo" "l"))
(show "string< mismatch index" (string< "é1" "é2"))
(show "string-lessp folds é/É" (string-lessp "ábc" "ÁBD"))
(show "string-equal" (string-equal "É" "é"))
(show "string-trim a bag of é" (string-trim "é" "ééaé"))
(show "string-trim keeps è" (string-trim "é" "èa"))
(show "string-trim with a list bag" (string-trim '(#\é #\Space) " éaé "))
(show "make-string of a one-character string" (make-string 2 :initial-element "é"))

;; Printer limits.
(show "*print-length* 3" (let ((*print-length* 3)) (prin1-to-string '(1 2 3 4 5))))
(show "*print-length* on a vector" (let ((*print-length* 2)) (prin1-to-string (vector 1 2 3))))
(show "*print-length* 0" (let ((*print-length* 0)) (prin1-to-string '(1))))
(show "*print-level* 2" (let ((*print-level* 2)) (prin1-to-string '(1 (2 (3 (4)))))))
(show "*print-level* 0" (let ((*print-level* 0)) (prin1-to-string '(1))))
(show "no limits" (prin1-to-string '(1 (2 (3 (4 5 6 7 8 9 10 11 12 13))))))

;; Conditions: a builtin's type error carries its datum; value-error is an error.
(show "type-error-datum" (handler-case (car 5) (type-error (e) (type-error-datum e))))
(show "type-error-expected-type" (handler-case (car 5) (type-error (e) (type-error-expected-type e))))
(show "value-error caught as error" (handler-case (error 'value-error "bad value") (error (e) (condition-message e))))
(show "restart-name" (restart-case (restart-name (first (compute-restarts))) (retry () nil)))

;; Hash tables take Common Lisp's keywords.
(show "make-hash-table :test :size" (hash-table-count (make-hash-table :test #'eq :size 10)))
(show "make-hash-table :sise" (fails (make-hash-table :sise 3)))
(show "make-hash-table :size -1" (fails (make-hash-table :size -1)))

;; Characters and streams.
(show "digit-char radix 1" (fails (digit-char 0 1)))
(show "make-keyword nil" (make-keyword nil))
(show "unread-char of another character"
      (fails (with-input-from-string (s "ab") (read-char s) (unread-char #\z s))))
(show "unread-char" (with-input-from-string (s "ab") (let ((c (read-char s))) (unread-char c s) (read-char s))))

;; (require 'data) leaves the builtin range alone.
(require 'data)
(show "range after (require 'data)" (range 1 10 3))

;; Scheme habits: named let (a loop in constant stack) and define.
(show "named let" (let loop ((i 0) (acc nil)) (if (< i 3) (loop (+ i 1) (cons i acc)) acc)))
(show "named let, a million steps" (let count ((i 0)) (if (< i 1000000) (count (+ i 1)) i)))
(show "named let inits see the outer name"
      (let ((n 5)) (let n ((k n)) (if (numberp n) (list 'outer n) (list 'inner k)))))
(show "named let with no bindings" (let again () 'done))
(show "named let, a bad binding" (fails (eval '(let lp ((1 2)) 3))))
(define (probe-square x) (* x x))
(define probe-global 10)
(show "define a function" (probe-square 7))
(show "define a variable" probe-global)
(show "define's variable binds lexically"
      (let ((f (let ((probe-global 1)) (lambda () probe-global)))) (funcall f)))
(show "define, bad form" (fails (eval '(define 3 4))))

;; return-from without unwinding (a local return), and with it: the same answers.
(defun probe-f1 (l) (dolist (x l) (when (> x 2) (return x))))
(defun probe-f2 (n)
  (block outer (dotimes (i n) (dotimes (j n) (when (= (* i j) 6) (return-from outer (list i j))))) 'none))
(defun probe-f3 (x) (if (> x 0) (return-from probe-f3 'pos)) 'nonpos)
(defun probe-f4 (x) (let ((y (* x 2))) (when (> y 10) (return-from probe-f4 (values y 'big))) (values y 'small)))
(defun probe-f5 (l) (mapcar (lambda (x) (block b (when (oddp x) (return-from b 'odd)) x)) l))
(defun probe-f6 () (let ((log nil)) (list (block b (unwind-protect (return-from b 1) (push 'cleanup log))) log)))
(defun probe-f7 (x) (block b (+ 1 (if x (return-from b 10) 2))))
(defun probe-f8 (n) (if (= n 0) (return-from probe-f8 0)) (+ 1 (probe-f8 (- n 1))))
(defun probe-f9 () (block a (block b (return-from a 'from-a)) 'after-b))
(defun probe-f10 () (let ((k 0)) (loop (incf k) (when (> k 5) (return k)))))
(defvar *probe-special* 'outer)
(defun probe-f11 () (block b (let ((*probe-special* 'inner)) (return-from b *probe-special*))))
(defun probe-f12 () (block b (handler-case (return-from b 'hc) (error () 'err))))
(defun probe-f13 () (prog ((i 0)) top (incf i) (when (< i 5) (go top)) (return i)))
(show "return from dolist" (probe-f1 '(1 2 3 4)))
(show "return-from an outer block" (probe-f2 5))
(show "return-from a function" (list (probe-f3 1) (probe-f3 -1)))
(show "return-from with two values" (list (multiple-value-list (probe-f4 7)) (multiple-value-list (probe-f4 2))))
(show "return-from inside a lambda's block" (probe-f5 '(1 2 3)))
(show "return-from through unwind-protect" (probe-f6))
(show "return-from inside an argument" (list (probe-f7 t) (probe-f7 nil)))
(show "return-from in a recursion" (probe-f8 100))
(show "return-from past an inner block" (probe-f9))
(show "return from loop" (probe-f10))
(show "return-from past a special binding" (list (probe-f11) *probe-special*))
(show "return-from inside handler-case" (probe-f12))
(show "prog, go and return" (probe-f13))
(show "the value of return goes to its own block"
      (block a (list (block b (return-from b 1)) (block c (dotimes (i 3) (return-from c i))))))

;; Arrays (one dimension), do*, typep's compound specifiers.
(show "make-array" (list (make-array 3 :initial-element 0) (make-array '(2) :initial-contents '(a b))))
(show "make-array of characters" (make-array 3 :element-type 'character :initial-element #\x))
(show "vector-push-extend and the rest"
      (let ((v (make-array 0 :fill-pointer 0 :adjustable t)))
        (vector-push-extend 1 v) (vector-push-extend 2 v)
        (list v (fill-pointer v) (svref v 1) (array-dimensions v) (array-rank v) (array-total-size v))))
(show "setf svref" (let ((v (vector 1 2))) (setf (svref v 0) 'x) v))
(show "make-array of two dimensions" (make-array '(2 3) :initial-element 0))
(show "do*" (do* ((i 0 (+ i 1)) (sq 0 (* i i))) ((= i 4) sq)))
(show "typep ranges" (list (typep 5 '(integer 0 10)) (typep 11 '(integer 0 10)) (typep 0 '(integer (0) *))
                           (typep 2.5 '(float 0.0 3.0)) (typep 7 '(mod 8)) (typep 8 '(mod 8))))
(show "typep bytes and the rest" (list (typep 255 '(unsigned-byte 8)) (typep 256 '(unsigned-byte 8))
                                       (typep -128 '(signed-byte 8)) (typep 3 'fixnum) (typep 1 'bit)
                                       (typep 4 '(satisfies evenp)) (typep #(1 2) '(vector t 2))))

;; 1+, 1-, not and null inline, with the builtin's answers where the inline path cannot go.
(show "1+ 1- not null" (list (1+ 1) (1- 1.5) (not nil) (not 0) (null nil) (null '(1))))
(show "1+ past the largest integer" (fails (1+ most-positive-fixnum)))
(show "1- of a string" (fails (1- "a")))
(show "not shadowed locally" (flet ((not (x) (list 'mine x))) (not nil)))
(show "car cdr cadr cddr eq inline"
      (list (car '(1 2)) (cdr '(1 2)) (cadr '(1 2 3)) (cddr '(1 2 3)) (car nil) (cddr '(1))
            (eq 'a 'a) (eq (list 1) (list 1))))
(show "cadr of a dotted pair" (fails (cadr '(1 . 2))))
(show "cdr of a number" (fails (cdr 5)))
;; Called through funcall and apply, the inline builtins still check their argument count.
(show "funcall of an inline builtin, arity"
      (list (fails (funcall #'1+ 5 7)) (fails (funcall #'not 1 2)) (fails (apply #'car '((1) 2)))
            (funcall #'1+ 5) (funcall #'cddr '(1 2 3)) (apply #'+ '(1 2))))
;; aref and elt of a vector inline; strings, lists, indexes out of range and tensors take the
;; builtin's path.
(show "aref elt inline"
      (let ((v (vector 'a 'b 'c)))
        (list (aref v 0) (aref v 2) (elt v 1) (elt '(x y) 1) (aref "héllo" 1) (funcall #'aref v 1)
              (aref (make-array '(2 2) :initial-contents '((1 2) (3 4))) 1 0))))
;; Nested inline calls run with no call at all; when a value does not suit them (an overflow, a
;; wrong type, an unbound variable) the builtin's own path answers.
(show "nested inline calls"
      (let ((v (vector 0 1 2)) (w (vector 2 1 0)) (k 1) (n 3))
        (list (aref v (aref w (aref v 0))) (not (> k n)) (eq 1 (aref v (aref w 1)))
              (+ (car (cdr (list 1 2))) (* k n)))))
(show "nested inline calls fall back"
      (list (fails (let ((m most-positive-fixnum)) (not (> (+ m 1) 0))))
            (fails (not (> (car (list "a")) 1)))
            (fails (aref (vector 1 2) (1+ (aref (vector 1 2) 1))))
            (let ((x 2.5)) (not (> (* x 2) 4)))))
;; Progns inside progns run in line; idle constants and variables between forms are dropped.
(show "progn in progn, do steps"
      (list (multiple-value-list (progn 1 (progn 2 (values 3 4))))
            (block nil (progn (progn 1 (return 9)) 2))
            (let ((x 0)) (while (< x 3) (setq x (1+ x)) x 7 nil) x)
            (do ((i 0 (1+ i)) (acc nil (cons i acc))) ((= i 3) acc))
            (do ((a 1 b) (b 2 a) (n 0 (1+ n))) ((= n 3) (list a b)))
            (let ((x 1) (y 2)) (progn x (progn y) (setq x 5) x (progn)))))
(show "aref out of range" (list (fails (aref (vector 1 2) 2)) (fails (aref (vector 1 2) -1))
                                (fails (elt (vector 1) 1.0)) (fails (aref '(1 2) 0))))
(show "sort with a lone :key" (fails (sort (list 3 1 2) #'< :key)))
;; Output into string streams, nested: each write goes to the stream meant, in order.
(show "nested string output"
      (list (with-output-to-string (a)
              (princ 1) (princ 2 a)
              (let ((b (with-output-to-string (b) (princ 3) (princ 4 b) (princ 5 a)))) (princ b))
              (princ 6))
            (with-output-to-string (a)
              (format a "~a-~a" 1 (with-output-to-string (b) (format b "x~a" 2) (princ "y"))) (terpri a))
            (let ((s (make-string-output-stream)))
              (princ "ab" s) (with-output-to-string (o) (princ "c" s) (princ "d")) (get-output-stream-string s))))
