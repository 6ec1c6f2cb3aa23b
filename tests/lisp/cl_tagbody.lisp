;;; SPDX-License-Identifier: Apache-2.0
;;; tagbody, go, prog and prog* (issue 25). Lines match SBCL 2.2 but for the error message.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "count up" (let ((i 0) (out nil)) (tagbody top (push i out) (setq i (+ i 1)) (when (< i 3) (go top))) (list i out)))
(show "returns nil" (tagbody 1 2))
(show "skip forward" (let ((log nil)) (tagbody (push :a log) (go skip) (push :b log) skip (push :c log)) log))
(show "integer tags" (let ((n 0)) (tagbody 10 (setq n (+ n 1)) (if (< n 5) (go 10) (go 20)) 20) n))
(show "go from a closure" (let ((log nil)) (tagbody (mapc (lambda (x) (when (= x 2) (go out)) (push x log)) '(1 2 3)) out) log))
(show "nested, inner tag shadows" (let ((log nil)) (tagbody (tagbody (go a) (push :skipped log) a (push :inner-a log)) (push :after log) (go end) a (push :outer-a log) end) (reverse log)))
(show "quoted go is data" (let (x) (tagbody (setq x '(go top)) top) x))
(show "prog" (prog ((i 0) (acc nil)) loop (when (= i 3) (return (reverse acc))) (push (* i i) acc) (setq i (+ i 1)) (go loop)))
(show "prog*" (prog* ((a 1) (b (+ a 1))) (return (list a b))))
(show "prog returns nil" (prog () (+ 1 2)))
(show "go without tagbody" (handler-case (eval '(go nowhere)) (control-error (e) (condition-message e))))
(defun fact (n) (prog ((acc 1)) again (when (<= n 1) (return acc)) (setq acc (* acc n) n (- n 1)) (go again)))
(show "fact" (fact 10))
(show "no tags" (with-output-to-string (s) (tagbody (princ 1 s) (princ 2 s))))
