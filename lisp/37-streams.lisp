;;; SPDX-License-Identifier: Apache-2.0
;;; String input streams, as in Common Lisp (issue 25): make-string-input-stream,
;;; with-input-from-string, and read-line, read-char, peek-char, unread-char, read and listen
;;; on them. The stream designators t and nil mean standard input. String output streams
;;; (make-string-output-stream, get-output-stream-string) are built in: the printing functions
;;; write to them.

(defstruct (string-input-stream (:constructor %make-string-input-stream (chars position end))
                                (:conc-name %sis-) (:predicate %string-input-stream-p) (:copier nil))
  chars      ; the string's characters, a vector (indexing a string is linear in the index)
  position   ; index of the next character
  end        ; index after the last character to read
  (open t))

(defun make-string-input-stream (string &optional (start 0) end)
  "(make-string-input-stream STRING [START [END]]) is a stream that reads the characters of
STRING from START below END (default: its length).
  (let ((s (make-string-input-stream \"abcd\" 1 3)))
    (list (read-char s) (read-char s) (read-char s nil :eof)))  ; => (#\\b #\\c :eof)"
  (unless (stringp string)
    (error 'type-error "make-string-input-stream: argument 1 must be a string, got ~s" string))
  (let* ((chars (coerce string 'vector))
         (end (or end (length chars))))
    (unless (and (integerp start) (integerp end) (<= 0 start end (length chars)))
      (error 'index-error "make-string-input-stream: bounds ~s and ~s do not fit a string of length ~d"
             start end (length chars)))
    (%make-string-input-stream chars start end)))

(defmacro with-input-from-string ((var string &key (start 0) end index) &body body)
  "(with-input-from-string (VAR STRING &key :start :end :index) BODY...) evaluates BODY with
VAR bound to a string input stream over STRING; afterwards the place INDEX, when given, is set
to the index of the first character not read.
  (with-input-from-string (s \"hello world\") (read s))  ; => hello"
  (if index
      `(let ((,var (make-string-input-stream ,string ,start ,end)))
         (unwind-protect (progn ,@body)
           (setf ,index (%sis-position ,var))))
      `(let ((,var (make-string-input-stream ,string ,start ,end))) ,@body)))

(defun streamp (x)
  "(streamp X) is true for streams: string input and string output streams. (t and nil are
designators of the standard streams, not streams.)
  (list (streamp (make-string-input-stream \"x\")) (streamp (make-string-output-stream)) (streamp \"x\"))  ; => (t t nil)"
  (or (%string-input-stream-p x) (%output-stream-p x)))

(defun output-stream-p (x)
  "(output-stream-p X) is true when X is a stream that can be written to (a string output stream).
  (list (output-stream-p (make-string-output-stream)) (output-stream-p (make-string-input-stream \"x\")))  ; => (t nil)"
  (%output-stream-p x))

(defun input-stream-p (x)
  "(input-stream-p X) is true when X is a stream that can be read from (a string input stream).
  (input-stream-p (make-string-input-stream \"x\"))  ; => t"
  (%string-input-stream-p x))

(defun open-stream-p (stream)
  "(open-stream-p STREAM) is true when STREAM is a stream that has not been closed.
  (let ((s (make-string-input-stream \"x\")))
    (list (open-stream-p s) (progn (close s) (open-stream-p s))))  ; => (t nil)"
  (or (and (%string-input-stream-p stream) (%sis-open stream)) (%output-stream-p stream)))

(defun close (stream &key abort)
  "(close STREAM) closes STREAM; reading from it afterwards is an error. Returns t.
  (let ((s (make-string-input-stream \"abc\")))
    (list (close s) (handler-case (read-char s) (stream-error () 'closed))))  ; => (t closed)"
  abort
  (when (%string-input-stream-p stream) (setf (%sis-open stream) nil))
  t)

(defun %input-stream (fn stream)
  (cond ((%string-input-stream-p stream)
         (unless (%sis-open stream)
           (error 'stream-error "~a: the stream is closed" fn))
         stream)
        ((or (eq stream t) (null stream)) nil)
        (t (error 'type-error "~a: ~s is not an input stream" fn stream))))

(defun %end-of-file (fn stream eof-error-p eof-value)
  (if eof-error-p
      (error 'end-of-file :stream stream :message (format nil "~a: end of file on ~s" fn stream))
      eof-value))

(defun read-char (&optional stream (eof-error-p t) eof-value recursive-p)
  "(read-char [STREAM [EOF-ERROR-P [EOF-VALUE]]]) reads the next character of STREAM. At the
end, an end-of-file error, or EOF-VALUE when EOF-ERROR-P is nil.
  (with-input-from-string (s \"hi\") (list (read-char s) (read-char s) (read-char s nil :eof)))  ; => (#\\h #\\i :eof)"
  recursive-p
  (let ((s (%input-stream "read-char" stream)))
    (unless s (error 'stream-error "read-char: reading characters from standard input is not supported"))
    (let ((pos (%sis-position s)))
      (if (< pos (%sis-end s))
          (progn (setf (%sis-position s) (+ pos 1))
                 (aref (%sis-chars s) pos))
          (%end-of-file "read-char" s eof-error-p eof-value)))))

(defun unread-char (char &optional stream)
  "(unread-char CHAR [STREAM]) puts back CHAR, the last character read from STREAM.
  (with-input-from-string (s \"ab\")
    (let ((c (read-char s))) (unread-char c s) (list c (read-char s))))  ; => (#\\a #\\a)"
  (let ((s (%input-stream "unread-char" stream)))
    (when s
      ;; As in Common Lisp, only the character just read can go back.
      (unless (and (> (%sis-position s) 0)
                   (eql char (aref (%sis-chars s) (- (%sis-position s) 1))))
        (error 'stream-error "unread-char: ~s is not the last character read from the stream" char))
      (setf (%sis-position s) (- (%sis-position s) 1)))
    nil))

(defun %whitespace-char-p (c)
  (member c '(#\Space #\Tab #\Newline #\Return #\Page) :test #'eql))

(defun peek-char (&optional peek-type stream (eof-error-p t) eof-value recursive-p)
  "(peek-char [PEEK-TYPE [STREAM [EOF-ERROR-P [EOF-VALUE]]]]) is the next character of STREAM,
left unread. PEEK-TYPE t first skips whitespace; a character skips up to that character.
  (with-input-from-string (s \"abc\") (list (peek-char nil s) (read-char s)))  ; => (#\\a #\\a)
  (with-input-from-string (s \"   x\") (peek-char t s))  ; => #\\x
  (with-input-from-string (s \"key=value\") (peek-char #\\= s) (read-char s) (read-line s))  ; => \"value\""
  recursive-p
  (let ((s (%input-stream "peek-char" stream)))
    (unless s (error 'stream-error "peek-char: reading characters from standard input is not supported"))
    (let ((chars (%sis-chars s))
          (end (%sis-end s)))
      (loop
        (let ((pos (%sis-position s)))
          (when (>= pos end) (return (%end-of-file "peek-char" s eof-error-p eof-value)))
          (let ((c (aref chars pos)))
            (if (cond ((null peek-type) t)
                      ((eq peek-type t) (not (%whitespace-char-p c)))
                      (t (eql c peek-type)))
                (return c)
                (setf (%sis-position s) (+ pos 1)))))))))

(defvar *%read-stdin-line* read-line "The builtin that reads a line of standard input.")

(defun read-line (&optional stream (eof-error-p t) eof-value recursive-p)
  "(read-line [STREAM [EOF-ERROR-P [EOF-VALUE]]]) reads a line of STREAM (default: standard
input) without its newline. The second value is true when the line ended at the end of the
input rather than with a newline. At the end, an end-of-file error, or EOF-VALUE when
EOF-ERROR-P is nil; (read-line) with no argument returns nil at the end of standard input.
  (with-input-from-string (s (format nil \"one~%two\"))
    (list (read-line s) (read-line s) (read-line s nil :eof)))  ; => (\"one\" \"two\" :eof)
  (with-input-from-string (s \"last\") (multiple-value-list (read-line s)))  ; => (\"last\" t)"
  recursive-p
  (let ((s (%input-stream "read-line" stream)))
    (if (null s)
        (let ((line (funcall *%read-stdin-line*)))
          (cond (line (values line nil))
                ((and stream eof-error-p) (%end-of-file "read-line" stream t nil))
                (t (values eof-value t))))
        (let* ((chars (%sis-chars s))
               (start (%sis-position s))
               (end (%sis-end s)))
          (if (>= start end)
              (values (%end-of-file "read-line" s eof-error-p eof-value) t)
              (let ((newline (position #\Newline chars :start start :end end)))
                (setf (%sis-position s) (if newline (+ newline 1) end))
                (values (coerce (subseq chars start (or newline end)) 'string)
                        (null newline))))))))

(defun listen (&optional stream)
  "(listen [STREAM]) is true when a character can be read from STREAM now.
  (with-input-from-string (s \"a\") (list (listen s) (read-char s) (listen s)))  ; => (t #\\a nil)"
  (let ((s (%input-stream "listen" stream)))
    (and s (< (%sis-position s) (%sis-end s)))))

(defun read (&optional stream (eof-error-p t) eof-value recursive-p)
  "(read [STREAM [EOF-ERROR-P [EOF-VALUE]]]) reads the next form from the string input stream
STREAM. At the end, an end-of-file error, or EOF-VALUE when EOF-ERROR-P is nil.
  (with-input-from-string (s \"(1 2) foo\") (list (read s) (read s) (read s nil :eof)))  ; => ((1 2) foo :eof)"
  recursive-p
  (let ((s (%input-stream "read" stream)))
    (unless s (error 'stream-error "read: reading forms from standard input is not supported"))
    (peek-char t s nil nil)
    (let ((start (%sis-position s))
          (end (%sis-end s)))
      (if (>= start end)
          (%end-of-file "read" s eof-error-p eof-value)
          (multiple-value-bind (form used)
              (read-from-string (coerce (subseq (%sis-chars s) start end) 'string))
            (setf (%sis-position s) (+ start used))
            form)))))
