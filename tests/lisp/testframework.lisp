;;; SPDX-License-Identifier: Apache-2.0
;;; The test framework (deftest, is, is-error, run-tests): a passing run and a caught failing run.

(defun fact (n) (if (= n 0) 1 (* n (fact (- n 1)))))
(define-condition bad-input (error))
(defun parse-age (s)
  (let ((n (parse-number s)))
    (if (< n 0) (error 'bad-input "negative age ~a" n) n)))

(deftest arithmetic
  (is (= (+ 1 2) 3))
  (is (= (fact 10) 3628800))
  (is (< 1 2))
  (is (approx= (sqrt 2) 1.4142135623))
  (is (approx= 1e10 (+ 1e10 1) 1e-9))
  (is (not (approx= 1.0 1.1))))

(deftest lists
  (is (equal (mapcar #'1+ '(1 2 3)) '(2 3 4)))
  (is (equal (reverse '(1 2 3)) '(3 2 1)))
  (is (eq (car '(a b)) 'a))
  (is (null (member 5 '(1 2 3))))
  (is (eql 3 (length '(a b c))) "length of a three-element list"))

(deftest strings
  (is (string= (string-upcase "abc") "ABC"))
  (is (string= (format nil "~a-~a" 1 2) "1-2"))
  (is (equal (string-split "a b") '("a" "b"))))

(deftest errors
  (is-error type-error (car 5))
  (is-error division-by-zero (/ 1 0))
  (is-error arithmetic-error (/ 1 0))
  (is-error bad-input (parse-age "-3"))
  (is-error error (parse-age "-3"))
  (is-error type-error (parse-age "abc"))
  (is-error undefined-function (no-such-function))
  (is (= (parse-age "42") 42)))

;; Redefining a test replaces it (it keeps one entry).
(deftest lists
  (is (equal (mapcar #'1+ '(1 2 3)) '(2 3 4)))
  (is (equal (append '(1) '(2)) '(1 2)))
  (is (equal (sort (list 3 1 2) #'<) '(1 2 3))))

(format t "run-tests returned ~s~%" (run-tests))
(format t "running one test:~%")
(run-tests 'strings)

;; A failing test: each failed check prints a line, and run-tests signals an error at the end.
(deftest broken
  (is (= (+ 2 2) 5))
  (is (equal (list 1 2) '(1 3)) "lists differ")
  (is (evenp 3))
  (is-error type-error (+ 1 2))
  (is-error type-error (/ 1 0))
  (error "this test body signals ~a" "an error"))
(format t "running a failing test:~%")
(handler-case (run-tests 'broken 'strings)
  (error (e) (format t "run-tests signalled: ~a~%" (condition-message e))))
