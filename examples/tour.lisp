;;; SPDX-License-Identifier: Apache-2.0
;;; A short tour of TensorLisp the language: run it with `tlisp examples/tour.lisp`.

(format t "TensorLisp tour~%===============~%")

;; Functions, with optional and keyword parameters and docstrings.
(defun greet (name &key (greeting "Hello") (punctuation "!"))
  "(greet NAME &key GREETING PUNCTUATION) builds a greeting."
  (format nil "~a, ~a~a" greeting name punctuation))
(format t "~a~%" (greet "world"))
(format t "~a~%" (greet "Lisp" :greeting "Welcome" :punctuation "."))

;; Recursion, and tail calls that run in constant stack.
(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(format t "fib(25) = ~d~%" (fib 25))
(defun sum-to (n &optional (acc 0)) (if (= n 0) acc (sum-to (- n 1) (+ acc n))))
(format t "sum of 1..1000000 by tail recursion = ~d~%" (sum-to 1000000))

;; Closures.
(defun make-counter ()
  (let ((count 0))
    (lambda () (setq count (+ count 1)))))
(let ((c (make-counter)))
  (funcall c)
  (funcall c)
  (format t "a counter called three times says ~d~%" (funcall c)))

;; loop, with its accumulation clauses.
(format t "squares of the odd numbers below 10: ~a~%"
        (loop for i from 1 below 10 when (oddp i) collect (* i i)))
(format t "sum of 1..100 = ~d, largest square below 500 = ~d~%"
        (loop for i from 1 to 100 sum i)
        (loop for i from 1 while (< (* i i) 500) maximize (* i i)))

;; Macros: a while-like loop that counts.
(defmacro repeat-times ((var n) &body body)
  `(dotimes (,var ,n) ,@body))
(repeat-times (i 3) (format t "  iteration ~d~%" i))

;; Hash tables: count words.
(let ((counts (make-hash-table)))
  (dolist (word (string-split "the quick brown fox jumps over the lazy dog the end"))
    (setf (gethash word counts) (+ 1 (gethash word counts 0))))
  (format t "\"the\" appears ~d times among ~d distinct words~%"
          (gethash "the" counts) (hash-table-count counts)))

;; Sorting with a key.
(format t "words by length: ~a~%"
        (sort (list "banana" "fig" "cherry" "kiwi") #'< :key #'length))

;; Conditions: errors are values you can catch.
(define-condition insufficient-funds (error))
(defun withdraw (balance amount)
  (if (> amount balance)
      (error 'insufficient-funds "cannot withdraw ~d from a balance of ~d" amount balance)
      (- balance amount)))
(format t "withdraw 30 from 100: ~d~%" (withdraw 100 30))
(handler-case (withdraw 100 300)
  (insufficient-funds (e) (format t "caught: ~a~%" (condition-message e))))
(handler-case (car 42)
  (type-error (e) (format t "caught a type error: ~a~%" (condition-message e))))

;; Special variables are bound dynamically.
(defvar *indent* 0)
(defun show (text) (format t "~a~a~%" (make-string-of *indent* " ") text))
(defun make-string-of (n s) (let ((out "")) (dotimes (i n out) (setq out (concat out s)))))
(show "top level")
(let ((*indent* 4)) (show "indented by a dynamic binding"))
(show "back at top level")

(format t "done.~%")

;;; Tensors: lazy graphs of primitive ops, computed when printed.
(manual-seed 0)
(format t "~%softmax of a 4x10 normal sample, rows sum to 1:~%~a~%" (softmax (randn '(4 10)) :axis 1))
(format t "row sums: ~a~%" (to-list (sum (softmax (randn '(4 10)) :axis 1) :axis 1)))
(format t "matmul: ~a~%" (to-list (matmul (tensor '((1 2) (3 4))) (tensor '((5 6) (7 8))))))

;;; They run on a device: by default the CPU JIT, which fuses each computation into few
;;; kernels (--device ref runs the reference executor instead).
(let ((x (realize (randn '(64 128)))))
  (format t "on ~a: softmax is ~a kernels, layer-norm ~a, a 2-layer MLP ~a~%" (device)
          (kernel-count (softmax x :axis 1)) (kernel-count (layer-norm x))
          (kernel-count (matmul (relu (matmul x (randn '(128 32)))) (randn '(32 10))))))
