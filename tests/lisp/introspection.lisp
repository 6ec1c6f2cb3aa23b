;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 25/26: what the REPL and the manual know of a name. Special forms describe their syntax;
;;; builtins say where they are defined relative to the source tree (not the build machine's
;;; absolute path); apropos-list and apropos find definitions by name; %definition is what the
;;; manual reads.
(format t "~a~%" (subseq (describe-string 'if) 0 (position #\Newline (describe-string 'if))))
(format t "usage shown: ~a~%" (and (search "usage: (if TEST THEN [ELSE])" (describe-string 'if)) t))
(format t "documentation of a special form: ~a~%" (and (stringp (documentation 'let* 'function)) t))
(format t "not a variable: ~a~%" (documentation 'let* 'variable))
(format t "~s~%" (getf (%definition 'unwind-protect) :kind))
(format t "a builtin's file: ~a~%" (getf (%definition 'car) :file))
(format t "describe says so: ~a~%" (and (search "defined at src/eval/builtins_list.cpp:" (describe-string 'car)) t))
(format t "a library function's file: ~a~%" (getf (%definition 'softmax) :file))
(format t "~s~%" (apropos-list "unwind-pro"))
(format t "~s~%" (apropos-list 'cumsum))
(format t "nothing: ~s~%" (apropos-list "no-such-name-anywhere"))
(format t "undefined: ~s~%" (%definition 'no-such-name-anywhere))
(apropos "cumsum")
(format t "ensure-directories-exist: ~a~%"
        (let* ((dir (format nil "~a/tl-dirs-~a/a/b/" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time))))
          (ensure-directories-exist dir)
          (write-file (concat dir "f") "x")
          (prog1 (read-file (concat dir "f")) (delete-file (concat dir "f")))))
