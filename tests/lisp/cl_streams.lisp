;;; SPDX-License-Identifier: Apache-2.0
;;; String input streams (issue 25): make-string-input-stream, with-input-from-string,
;;; read-line, read-char, peek-char, unread-char, read, listen; and string output streams:
;;; make-string-output-stream, get-output-stream-string, and the printing functions writing to
;;; them. Each line matches SBCL 2.2 (with *print-case* :downcase).

(defun show (label value) (format t "~a: ~s~%" label value))

(show "read-line"
      (with-input-from-string (s (format nil "first line~%second~%~%last"))
        (list (read-line s) (read-line s) (read-line s) (read-line s))))
(show "second value: no newline at the end"
      (with-input-from-string (s (format nil "a~%b"))
        (list (multiple-value-list (read-line s)) (multiple-value-list (read-line s)))))
(show "eof value"
      (with-input-from-string (s "x")
        (list (read-line s nil :eof) (read-line s nil :eof))))
(show "eof error"
      (with-input-from-string (s "")
        (handler-case (read-line s) (end-of-file () :end-of-file))))
(show "eof error is a stream-error"
      (with-input-from-string (s "")
        (handler-case (read-char s) (stream-error (e) (typep e 'end-of-file)))))
(show "read-char"
      (with-input-from-string (s "héllo")
        (list (read-char s) (char-code (read-char s)) (read-char s) (read-char s) (read-char s)
              (read-char s nil :done))))
(show "peek-char does not consume"
      (with-input-from-string (s "ab") (list (peek-char nil s) (read-char s) (read-char s))))
(show "peek-char t skips whitespace"
      (with-input-from-string (s (format nil "   ~%  x y")) (list (peek-char t s) (read-char s))))
(show "peek-char up to a character"
      (with-input-from-string (s "abc;def") (list (peek-char #\; s) (read-line s))))
(show "peek-char at the end" (with-input-from-string (s "") (peek-char nil s nil :none)))
(show "unread-char"
      (with-input-from-string (s "xy")
        (let ((c (read-char s))) (unread-char c s) (list (read-char s) (read-char s)))))
(show "lines in a loop"
      (with-input-from-string (s (format nil "1 one~%2 two~%3 three~%"))
        (loop for line = (read-line s nil nil) while line collect (length line))))
(show "characters in a loop"
      (with-input-from-string (s "a b")
        (loop for c = (read-char s nil nil) while c collect (char-code c))))
(show ":start and :end"
      (with-input-from-string (s "0123456789" :start 2 :end 5)
        (list (read-line s) (read-line s nil :eof))))
(show ":index"
      (let ((i 0))
        (with-input-from-string (s "abc def" :index i) (read-char s) (read-char s))
        i))
(show "read"
      (with-input-from-string (s "(1 2) foo \"str\" 42")
        (list (read s) (read s) (read s) (read s) (read s nil :eof))))
(show "read then read-line"
      (with-input-from-string (s (format nil "12 rest of line~%next"))
        (list (read s) (read-line s) (read-line s))))
(show "make-string-input-stream"
      (let ((s (make-string-input-stream "one two" 4)))
        (list (read-line s) (listen s))))
(show "listen" (let ((s (make-string-input-stream "a"))) (list (listen s) (read-char s) (listen s))))
(show "streamp" (let ((s (make-string-input-stream "a"))) (list (streamp s) (input-stream-p s) (streamp "a"))))
(show "close" (let ((s (make-string-input-stream "a"))) (list (open-stream-p s) (close s) (open-stream-p s))))
(show "string output stream"
      (let ((s (make-string-output-stream)))
        (format s "~a-~d" 'x 42)
        (princ "b" s) (prin1 "c" s) (terpri s) (write-string "d" s) (write-line "e" s)
        (write-char #\f s) (fresh-line s) (fresh-line s) (format s "~&g~%")
        ;; (newlines shown as |: SBCL prints them raw inside ~s)
        (list (substitute #\| #\Newline (get-output-stream-string s)) (get-output-stream-string s))))
(show "get-output-stream-string empties the stream"
      (let ((s (make-string-output-stream)))
        (princ 1 s)
        (let ((a (get-output-stream-string s)))
          (princ 2 s)
          (list a (get-output-stream-string s)))))
(show "output to a stream is not standard output"
      (let ((s (make-string-output-stream)))
        (list (with-output-to-string (o) (princ "in" s) (princ "out" o)) (get-output-stream-string s))))
(show "output streams"
      (let ((s (make-string-output-stream)))
        (list (streamp s) (output-stream-p s) (open-stream-p s) (input-stream-p s))))
(show "two streams at once"
      (let ((a (make-string-output-stream)) (b (make-string-output-stream)))
        (dotimes (i 3) (princ i a) (princ (* 10 i) b))
        (list (get-output-stream-string a) (get-output-stream-string b))))
(show "*standard-output* bound to a string stream"
      (let ((s (make-string-output-stream)))
        (let ((*standard-output* s))
          (princ "a") (format t "~a" 1) (write-string "w") (terpri) (prin1 "q"))
        (substitute #\| #\Newline (get-output-stream-string s))))
(show "nested bindings"
      (let ((outer (make-string-output-stream)) (inner (make-string-output-stream)))
        (let ((*standard-output* outer))
          (princ 1)
          (let ((*standard-output* inner)) (princ 2))
          (princ 3))
        (list (get-output-stream-string outer) (get-output-stream-string inner))))
(show "format nil is still a string"
      (let ((*standard-output* (make-string-output-stream))) (format nil "~a" 5)))
(show "*error-output*"
      (list (streamp *error-output*) (output-stream-p *error-output*) (input-stream-p *error-output*)
            (with-output-to-string (o) (format *error-output* "") (princ "" *error-output*))
            (finish-output) (force-output *error-output*)))
(show "with-output-to-string binds a stream"
      (let ((seen nil))
        (list (with-output-to-string (s)
                (setq seen (list (streamp s) (output-stream-p s) (open-stream-p s)))
                (write-string "a" s) (format s "~a" 1) (write-char #\b s) (prin1 "q" s))
              seen)))
