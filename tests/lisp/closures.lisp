;;; SPDX-License-Identifier: Apache-2.0
;;; Functions and closures: lambda lists, counters, captured bindings, local functions and combinators.

(defun show (label value) (format t "~a: ~s~%" label value))

;; Lambda lists.
(defun opt (a &optional (b 10) (c (* b 2) c-given))
  (list a b c c-given))
(show "&optional defaults" (list (opt 1) (opt 1 2) (opt 1 2 3)))
(defun kw (&key (a 1) (b 2 b-given) ((:cee c) 3))
  (list a b b-given c))
(show "&key defaults" (kw))
(show "&key given" (kw :b 5 :cee 9))
(show "&key first occurrence wins" (kw :a 1 :a 2))
(show "&key in any order" (kw :cee 'x :a 'y))
(defun allow (&key a &allow-other-keys) a)
(show "&allow-other-keys" (allow :z 1 :a 2))
(show ":allow-other-keys t" (kw :zz 1 :allow-other-keys t))
(defun rst (a &rest more) (list a more))
(show "&rest" (list (rst 1) (rst 1 2 3)))
(show "&rest and &key" (funcall (lambda (&rest all &key x) (list all x)) :x 1))
(defun dotted (a . more) (list a more))
(show "dotted parameter list" (dotted 1 2 3))
(defun aux (x &aux (y (* x 2)) z) (list x y z))
(show "&aux" (aux 4))
(defun documented (x) "Returns X unchanged." x)
(show "docstring" (documentation 'documented))
(show "docstring is not the body" (documented 7))
(show "immediate lambda" ((lambda (x y) (+ x y)) 2 3))

;; Closures keep their own state.
(defun make-counter (&optional (start 0))
  (let ((n start))
    (lambda () (setq n (+ n 1)))))
(let ((c1 (make-counter)) (c2 (make-counter 100)))
  (funcall c1)
  (funcall c1)
  (show "two counters" (list (funcall c1) (funcall c2) (funcall c1))))
(defun make-account (balance)
  (list (lambda (amount) (setq balance (+ balance amount)))
        (lambda () balance)))
(let* ((account (make-account 10)) (deposit (first account)) (read (second account)))
  (funcall deposit 5)
  (funcall deposit 20)
  (show "closures share a binding" (funcall read)))
(show "closure sees later assignment" (let ((x 1)) (let ((f (lambda () x))) (setq x 2) (funcall f))))
(defun adder (n) (lambda (x) (+ x n)))
(show "adder" (mapcar (adder 10) '(1 2 3)))

;; Each dolist iteration has its own binding, so each closure keeps its own element.
(let ((fns nil))
  (dolist (x '(a b c)) (push (lambda () x) fns))
  (show "dolist closures" (mapcar #'funcall (reverse fns))))
(let ((fns nil))
  (dolist (x '(1 2 3))
    (let ((y (* x 10))) (push (lambda () (list x y)) fns)))
  (show "dolist with inner let" (mapcar #'funcall (reverse fns))))
(show "mapcar closures" (mapcar #'funcall (mapcar (lambda (i) (lambda () (* i i))) '(1 2 3))))
(let ((fns nil))
  (dotimes (i 3) (let ((j i)) (push (lambda () j) fns)))
  (show "dotimes with a fresh let" (mapcar #'funcall (reverse fns))))
;; A closure that mutates its captured variable.
(let ((fns nil))
  (dolist (x '(1 2))
    (push (lambda () (setq x (* x 100))) fns))
  (show "mutating captured dolist vars" (list (mapcar #'funcall fns) (mapcar #'funcall fns))))

;; Local functions.
(show "labels recursion"
      (labels ((fact (n) (if (= n 0) 1 (* n (fact (- n 1))))))
        (fact 10)))
(show "labels mutual recursion"
      (labels ((ev (n) (if (= n 0) t (od (- n 1))))
               (od (n) (if (= n 0) nil (ev (- n 1)))))
        (list (ev 10) (od 7) (ev 7))))
(show "flet" (flet ((sq (x) (* x x))) (sq 5)))
(defun twice (x) (* 2 x))
(show "flet body sees the global, not itself"
      (flet ((twice (x) (* 100 x)) (use (x) (twice x))) (list (twice 1) (use 1))))
(show "letrec" (letrec ((fib (lambda (n) (if (< n 2) n (+ (funcall fib (- n 1)) (funcall fib (- n 2)))))))
                 (funcall fib 15)))
(show "labels capturing an outer variable"
      (let ((scale 3))
        (labels ((walk (l) (if l (cons (* scale (car l)) (walk (cdr l))) nil)))
          (walk '(1 2 3)))))

;; Higher-order functions.
(defun my-map (f list) (if list (cons (funcall f (car list)) (my-map f (cdr list))) nil))
(show "passing #'name" (my-map #'1+ '(1 2 3)))
(show "passing a lambda" (my-map (lambda (x) (list x)) '(a b)))
(defun my-filter (pred list)
  (let ((out nil))
    (dolist (x list (reverse out)) (when (funcall pred x) (push x out)))))
(show "filter" (my-filter #'oddp '(1 2 3 4 5)))
(show "function returning a function" (funcall (funcall (lambda (a) (lambda (b) (list a b))) 1) 2))
(show "apply with a closure" (apply (adder 5) '(10)))
(show "sort with a closure" (let ((target 5)) (sort (list 1 9 4 6) (lambda (a b) (< (abs (- a target)) (abs (- b target)))))))
(show "identity" (mapcar #'identity '(1 2)))

;; Combinators.
(show "compose" (funcall (compose #'1+ #'abs) -5))
(show "compose three" (funcall (compose #'list #'1+ #'abs) -3))
(show "compose none" (funcall (compose) 'same))
(show "complement" (list (funcall (complement #'evenp) 3) (remove-if (complement #'evenp) '(1 2 3 4))))
(show "constantly" (list (funcall (constantly 7)) (funcall (constantly 7) 1 2 3) (mapcar (constantly 0) '(a b))))

;; Functions are values: stored in variables, lists and hash tables.
(defvar *ops* (list (cons 'add #'+) (cons 'mul #'*) (cons 'neg (lambda (x) (- x)))))
(show "table of functions"
      (list (funcall (cdr (assoc 'add *ops*)) 2 3)
            (funcall (cdr (assoc 'mul *ops*)) 2 3)
            (funcall (cdr (assoc 'neg *ops*)) 2)))
(show "functionp" (mapcar #'functionp (list #'car (lambda ()) 'car 1)))
(show "calling a variable holding a function" (let ((f #'list)) (f 1 2)))
(show "a local holding a function wins over the global of its name (issue 25)"
      (let ((list (lambda (&rest xs) (length xs)))) (list 1 2 3)))
