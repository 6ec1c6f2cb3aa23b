;;; SPDX-License-Identifier: Apache-2.0
;;; Looking at running code, as Common Lisp programmers do (issue 25): trace and untrace,
;;; pprint (a pretty printer for code and data), and setf of symbol-function.

(defsetf symbol-function (name) (value) `(progn (setf (symbol-value ,name) ,value) ,value))
(defsetf fdefinition (name) (value) `(progn (setf (symbol-value ,name) ,value) ,value))

;;; --- trace ---------------------------------------------------------------------------------

(defvar *%traced* nil "The traced functions: (NAME ORIGINAL WRAPPER) each.")
(defvar *%trace-depth* 0 "How deeply traced calls are nested now.")

(defun %trace-indent (depth)
  (make-string (* 2 (+ depth 1)) :initial-element #\Space))

(defun %trace-1 (name)
  (unless (and (symbolp name) (fboundp name) (functionp (symbol-value name)))
    (error 'type-error "trace: ~s is not the name of a global function (macros and special forms cannot be traced)"
           name))
  (unless (assoc name *%traced*)
    (let* ((original (symbol-value name))
           (wrapper (lambda (&rest args)
                      (let ((depth *%trace-depth*))
                        (format t "~a~a: ~s~%" (%trace-indent depth) depth (cons name args))
                        (let ((values (let ((*%trace-depth* (+ depth 1)))
                                        (multiple-value-list (apply original args)))))
                          (format t "~a~a: ~a returned~{ ~s~}~%" (%trace-indent depth) depth name values)
                          (values-list values))))))
      (push (list name original wrapper) *%traced*)
      (setf (symbol-value name) wrapper)))
  name)

(defun %untrace-1 (name)
  (let ((entry (assoc name *%traced*)))
    (when entry
      ;; Only when the name still holds the wrapper: a redefinition since stays.
      (when (eq (symbol-value name) (third entry)) (setf (symbol-value name) (second entry)))
      (setq *%traced* (remove entry *%traced*))))
  name)

(defmacro trace (&rest names)
  "(trace NAME...) From now on each call of the global functions NAMEs prints its arguments,
and its return prints the values, indented by how deeply traced calls nest; (untrace NAME...)
stops it. With no NAMEs, the list of traced functions.
  (progn (defun doc-ex-fact (n) (if (< n 2) 1 (* n (doc-ex-fact (- n 1)))))
         (trace doc-ex-fact)
         (prog1 (with-output-to-string (s) (doc-ex-fact 2)) (untrace doc-ex-fact)))  ; => \"  0: (doc-ex-fact 2)\\n    1: (doc-ex-fact 1)\\n    1: doc-ex-fact returned 1\\n  0: doc-ex-fact returned 2\\n\""
  (if names
      `(mapcar #'%trace-1 ',names)
      `(mapcar #'first *%traced*)))

(defmacro untrace (&rest names)
  "(untrace NAME...) Stops tracing NAMEs; with none, every traced function. Returns the names.
  (progn (defun doc-ex-inc (n) (+ n 1)) (trace doc-ex-inc) (untrace doc-ex-inc) (trace))  ; => nil"
  (if names
      `(mapcar #'%untrace-1 ',names)
      `(mapcar #'%untrace-1 (mapcar #'first *%traced*))))

;;; --- pprint --------------------------------------------------------------------------------

(defvar *print-right-margin* 80
  "The width pprint fits its output into, in characters.
  (let ((*print-right-margin* 20)) (with-output-to-string (s) (pprint '(list 1 2 3 4 5 6 7 8 9))))  ; => \"\\n(list 1 2 3 4 5 6 7\\n      8 9)\"")

(defvar *%pprint-body-forms*
  '((defun . 2) (defmacro . 2) (defmodel . 2) (lambda . 1) (named-lambda . 2) (let . 1) (let* . 1)
    (flet . 1) (labels . 1) (macrolet . 1) (when . 1) (unless . 1) (dolist . 1) (dotimes . 1)
    (do . 2) (do* . 2) (block . 1) (progn . 0) (prog1 . 1) (handler-case . 1) (unwind-protect . 1)
    (with-output-to-string . 1) (destructuring-bind . 2) (multiple-value-bind . 2) (loop . 0)
    (case . 1) (typecase . 1) (cond . 0) (defvar . 1) (defparameter . 1) (defstruct . 1)
    (tagbody . 0) (catch . 1) (restart-case . 1) (define . 1))
  "Operators whose forms pprint lays out as a head of N arguments, then a body indented by 2.")

(defun %pprint (x column out)
  ;; Writes X starting at COLUMN (where the cursor is) into the string stream OUT.
  (let ((flat (prin1-to-string x))
        (margin *print-right-margin*))
    (if (or (atom x) (<= (+ column (length flat)) margin) (not (listp (cdr (last x)))))
        (write-string flat out)
        (let* ((head (car x))
               (body (and (symbolp head) (cdr (assoc head *%pprint-body-forms*)))))
          (cond
            ((and (eq head 'quote) (consp (cdr x)) (null (cddr x)))
             (write-string "'" out)
             (%pprint (cadr x) (+ column 1) out))
            (body
             ;; (OP HEAD-ARGS... then each body form on its own line, indented 2.
             (write-string "(" out)
             (let ((col (+ column 1)) (items x) (n 0))
               (loop while (and items (<= n body))
                     do (let ((s (prin1-to-string (car items))))
                          (when (> n 0) (write-string " " out) (incf col))
                          (if (<= (+ col (length s)) margin)
                              (progn (write-string s out) (incf col (length s)))
                              (%pprint (car items) col out))
                          (pop items) (incf n)))
               (dolist (form items)
                 (write-string (string #\Newline) out)
                 (write-string (make-string (+ column 2) :initial-element #\Space) out)
                 (%pprint form (+ column 2) out)))
             (write-string ")" out))
            ((symbolp head)
             ;; (OP ARG1 then the other arguments aligned under ARG1 when they do not fit.
             (let* ((name (prin1-to-string head))
                    (col (+ column 2 (length name)))
                    (line col))
               (format out "(~a " name)
               (loop for rest on (cdr x)
                     for first = t then nil
                     do (let ((s (prin1-to-string (car rest))))
                          (cond (first (%pprint (car rest) col out) (setq line (+ col (length s))))
                                ((<= (+ line 1 (length s)) margin)
                                 (write-string " " out) (write-string s out) (incf line (+ 1 (length s))))
                                (t (write-string (string #\Newline) out)
                                   (write-string (make-string col :initial-element #\Space) out)
                                   (%pprint (car rest) col out)
                                   (setq line (+ col (length s)))))))
               (write-string ")" out)))
            (t
             ;; A list of data: as many elements on a line as fit, the next lines under the first.
             (write-string "(" out)
             (let ((line (+ column 1)))
               (loop for rest on x
                     for first = t then nil
                     do (let ((s (prin1-to-string (car rest))))
                          (cond (first (%pprint (car rest) line out) (incf line (length s)))
                                ((<= (+ line 1 (length s)) margin)
                                 (write-string " " out) (write-string s out) (incf line (+ 1 (length s))))
                                (t (write-string (string #\Newline) out)
                                   (write-string (make-string (+ column 1) :initial-element #\Space) out)
                                   (%pprint (car rest) (+ column 1) out)
                                   (setq line (+ column 1 (length s))))))))
             (write-string ")" out)))))))

(defun pprint (x &optional stream)
  "(pprint X [STREAM]) Prints X as code is laid out: on a new line, each form that does not
fit in *print-right-margin* broken over lines, the bodies of defun, let, when and the like
indented by 2. Returns no value. STREAM is accepted for Common Lisp's sake (output goes where
printing goes: standard output, or the string of with-output-to-string).
  (with-output-to-string (s)
    (let ((*print-right-margin* 30))
      (pprint '(defun add1 (x) (let ((y (+ x 1))) (print y) y)))))  ; => \"\\n(defun add1 (x)\\n  (let ((y (+ x 1)))\\n    (print y)\\n    y))\""
  (declare (ignore stream))
  (terpri)
  (write-string (with-output-to-string (out) (%pprint x 0 out)))
  (values))

;;; --- room ----------------------------------------------------------------------------------

(defun %resident-bytes ()
  ;; The process's resident memory from /proc/self/status (Linux), or nil.
  (let ((text (ignore-errors (read-file "/proc/self/status"))))
    (when text
      (let ((at (search "VmRSS:" text)))
        (when at
          (let ((kb (ignore-errors (parse-integer (subseq text (+ at 6) (position #\Newline text :start at))
                                                  :junk-allowed t))))
            (and kb (* kb 1024))))))))

(defun room (&optional detail)
  "(room) prints how much memory the Lisp heap and the tensors use, and the process's
resident memory; returns nil. DETAIL is accepted for Common Lisp's (room t), and ignored.
  (null (with-output-to-string (s) (room)))  ; => nil"
  (let ((heap (gc-stats))
        (rss (%resident-bytes)))
    (format t "Lisp heap: ~:d objects in ~:d bytes; ~:d collection~:p so far; ~:d bytes of tensor data ~
               held by live objects at the last one~%"
            (getf heap :objects) (getf heap :bytes) (getf heap :collections) (getf heap :held))
    (when (fboundp 'tensor-stats)
      (let ((ts (tensor-stats)))
        (format t "Tensors on ~a: ~:d bytes in use (peak ~:d, ~:d more pooled for reuse); ~:d bytes realized in all~%"
                (getf ts :device) (getf ts :bytes-in-use) (getf ts :peak-bytes) (getf ts :pooled-bytes)
                (getf ts :realized-bytes))))
    (when rss (format t "Resident memory of the process: ~:d bytes~%" rss))
    nil))
