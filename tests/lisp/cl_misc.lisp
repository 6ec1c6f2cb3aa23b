;;; SPDX-License-Identifier: Apache-2.0
;;; Small everyday functions (issue 25): fifth..tenth, the c...r family, copy-alist, bit
;;; functions, ffloor and friends, princ-to-string, write-string/-line/-char, fresh-line,
;;; symbol-function, fdefinition, compile. Output matches SBCL 2.2.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "fifth..tenth" (let ((l '(1 2 3 4 5 6 7 8 9 10))) (list (fifth l) (sixth l) (seventh l) (eighth l) (ninth l) (tenth l) (tenth '(1)))))
(show "c...r" (list (caadr '(1 (2 3))) (cadar '((1 2))) (cddar '((1 2 3))) (caaar '(((a)))) (cdadr '(1 (2 3))) (cdaar '(((a b))))))
(show "copy-alist" (let* ((a (list (cons 1 2))) (c (copy-alist a))) (list c (eq (car a) (car c)))))
(show "bits" (list (lognot 5) (logtest 4 6) (logtest 1 6) (logbitp 2 5) (logbitp 1 5) (integer-length 255) (integer-length -1) (integer-length 256)))
(show "float rounding" (list (multiple-value-list (ffloor 7 2)) (multiple-value-list (fceiling 7 2)) (multiple-value-list (fround 2.5)) (multiple-value-list (ftruncate -7 2))))
(show "to-string" (list (princ-to-string "a\"b") (write-to-string "a") (princ-to-string #\x) (write-to-string #\x)))
(write-string "write-string")
(write-char #\!)
(fresh-line)
(fresh-line)
(write-line "write-line")
(show "symbol-function" (list (eq (symbol-function 'car) #'car) (funcall (fdefinition 'list) 1) (handler-case (symbol-function 'no-such-fn) (undefined-function () :undefined))))
(show "compile" (list (funcall (compile nil (lambda (x) (* x 2))) 4) (compile 'twice (lambda (x) (* x 2))) (twice 5) (compile 'twice) (handler-case (compile 'no-such-fn) (undefined-function () :undefined))))
(show "with-output-to-string" (with-output-to-string (s) (princ "a" s) (format s "~d" 42) (prin1 "q" s) (write-char #\! s) (terpri s) (write-string "ws" s) (write-line "wl" s)))
(show "nested and empty" (list (with-output-to-string (s) (princ 1 s) (princ (with-output-to-string (t2) (princ 2 t2)) s) (princ 3 s)) (with-output-to-string (s))))
(show "output restored after an error" (handler-case (with-output-to-string (s) (princ "lost" s) (error "boom")) (error () :error)))
(show "stream argument error" (handler-case (princ 1 5) (type-error (e) (condition-message e))))
