;;; SPDX-License-Identifier: Apache-2.0
;;; Regression tests for bugs found while testing the Lisp core (issue #2), one deftest each.

(deftest loop-shadowed-function-names
  ;; A local variable named like a function the expansion calls must not capture the call.
  (is (equal (funcall (lambda (list) (loop for x in list collect x)) '(1 2 3)) '(1 2 3)))
  (is (equal (funcall (lambda (v length) (loop for x across v collect x)) #(1 2) 3) '(1 2)))
  (is (equal (funcall (lambda (car cdr) (let ((acc nil)) (dolist (x car acc) (push x acc)))) '(1 2) 0)
             '(2 1))))

(deftest loop-into-variables
  (is (= (loop for x in '(3 9 2) maximize x into v finally (return v)) 9))
  (is (= (loop for x in '(3 9 2) minimize x into v finally (return v)) 2))
  (is (equal (loop for x in '(1 2) collect x into cell finally (return cell)) '(1 2)))
  (is (= (loop for x in '(1 2 3) summing x into s finally (return s)) 6))
  (is (= (loop for x in '(1 2 3) counting (oddp x) into n finally (return n)) 2)))

(deftest loop-several-collects
  (is (equal (loop for x in '(1 2) collect x collect (* x 10)) '(1 10 2 20)))
  (is (equal (loop for x in '(1 2 3) when (evenp x) collect 'even else collect 'odd) '(odd even odd)))
  (is (equal (loop for x in '(1 2) collect x append (list 'a 'b)) '(1 a b 2 a b))))

(deftest loop-by-destructuring-named-hash
  (is (equal (loop for x in '(1 2 3 4 5) by #'cddr collect x) '(1 3 5)))
  (is (equal (loop for (a b) in '((1 2) (3 4)) collect (+ a b)) '(3 7)))
  (is (equal (loop for (k . v) in '((a . 1) (b . 2)) collect v) '(1 2)))
  (is (= (loop named outer for i from 0 do (when (= i 3) (return-from outer (* i 10)))) 30))
  (let ((h (make-hash-table)))
    (setf (gethash 'a h) 1 (gethash 'b h) 2)
    (is (equal (loop for k being the hash-keys of h collect k) '(a b)))
    (is (= (loop for v being each hash-values of h sum v) 3)))
  (is-error program-error (macroexpand '(loop for)))
  (is-error program-error (macroexpand '(loop for x frobnicate 3))))

(deftest return-from-captured-block
  ;; The closure returns from the activation it captured, not the innermost one.
  (labels ((g (n k)
             (if (= n 0)
                 (progn (funcall k) 'not-reached)
                 (list 'inner (g (- n 1) (lambda () (return-from g n)))))))
    (is (equal (g 2 nil) '(inner 1))))
  (let ((escape (block done (lambda (v) (return-from done v)))))
    (is-error control-error (funcall escape 5))))

(deftest places-evaluate-subforms-once
  (let ((i 0) (v (vector 0 0 0)))
    (incf (aref v (incf i)))
    (is (= i 1))
    (is (equalp-vector v #(0 1 0))))
  (let ((i 0) (cells (list (list 1) (list 2))))
    (push 'x (nth (incf i) cells))
    (is (= i 1))
    (is (equal cells '((1) (x 2)))))
  (let ((h (make-hash-table)))
    (incf (gethash 'k h 0))
    (incf (gethash 'k h 0) 5)
    (is (= (gethash 'k h) 6))))

(defun equalp-vector (a b) (equal (coerce a 'list) (coerce b 'list)))

(deftest nested-backquote
  (let ((x '(1 2)))
    (is (equal ``(a ,@,x) '`(a ,@(1 2))))
    (is (equal `#(1 ,(car x)) #(1 1)))
    (is (equal `#(1 2) #(1 2)))
    (is (equal `(#(1 2)) '(#(1 2))))))

(defvar *special* 'global)
(defun read-special () *special*)

(deftest special-parameters-and-let*
  (is (equal (funcall (lambda (*special*) (list *special* (read-special))) 'arg) '(arg arg)))
  (is (equal (let* ((*special* 'a) (y *special*) (z (read-special))) (list y z)) '(a a)))
  (is (eq (read-special) 'global)))

(deftest compose-case-defvar
  (is (= (funcall (compose #'1+ #'+) 1 2) 4))
  (is (null (case 'x (x))))
  (is (null (case 'y (x 1) (otherwise))))
  (defvar *never-bound*)
  (is (not (boundp '*never-bound*))))

(deftest exit-is-not-caught
  ;; (exit) ends the program even inside a handler for every condition.
  (is (eq (handler-case 'fine (condition () 'caught)) 'fine)))

(deftest format-fresh-line-and-fixed
  (is (equal (format nil "~f" 1e-5) "0.00001"))
  (is (equal (format nil "~f" 2) "2.0"))
  (is (equal (format nil "a~&b~&~&c") (format nil "a~%b~%c"))))

(deftest circular-lists
  (let ((x (list 1 2 3)))
    (setf (cdr (cddr x)) x)
    (is-error type-error (length x))
    ;; Issue 19: cycles print with labels, as Common Lisp prints them under *print-circle*.
    (is (equal (prin1-to-string x) "#1=(1 2 3 . #1#)"))))

(deftest destructuring-bind-checks-shape
  (is-error program-error (destructuring-bind (a b c) '(1 2) (list a b c)))
  (is-error program-error (destructuring-bind (a) '(1 2) a))
  (is (equal (destructuring-bind (a (b &optional (c 9)) &key d) '(1 (2) :d 4) (list a b c d))
             '(1 2 9 4)))
  ;; An arity error inside the body is reported as itself.
  (is-error arity-error (destructuring-bind (a) '(1) (car a a))))

(deftest condition-location-when-caught
  (let ((c (handler-case (error "boom") (error (e) e))))
    (is (stringp (condition-location c)))
    (is (string-contains (condition-location c) "regressions.lisp:"))))

(deftest docstring-after-declare
  (defun documented-after-declare (x) (declare (ignore x)) "The doc." 5)
  (is (equal (documentation 'documented-after-declare) "The doc."))
  (is (= (documented-after-declare 1) 5)))

(deftest special-forms-win-over-locals
  ;; loop expands into block: a local variable named block must not capture it.
  (defun count-with-block-variable ()
    (let ((block 2)) (loop while (< block 4) do (incf block)) block))
  (is (= (count-with-block-variable) 4))
  (is (eq (let ((if 1)) (if (= if 1) 'yes 'no)) 'yes)))

(deftest vectors-inside-backquoted-lists
  ;; The vector's expansion left temporaries among the list's segments: (b c) was called.
  (is (equal (prin1-to-string (let ((n 3)) `(a #((b c)) ,n #(,(+ n 1) x)))) "(a #((b c)) 3 #(4 x))")))

(deftest printing-survives-a-collection
  ;; Printing a list of lazy tensors realizes them, and a realize may collect: the collector
  ;; must not take the printer's marks for its own and free the tensors (a use-after-free
  ;; under ASan; found while testing sort, issue 19).
  (defoptimizer collect-while-printing (neg ?x) :when (progn (gc) nil) => ?x)
  (unwind-protect
       (let ((pair (list (neg (tensor '(1.0 2.0))) (list (neg (tensor '(3.0 4.0)))))))
         (is (equal (prin1-to-string pair) "(#<tensor f32 (2) [-1. -2.]> (#<tensor f32 (2) [-3. -4.]>))")))
    (optimizer-disable 'collect-while-printing)))

(run-tests)
