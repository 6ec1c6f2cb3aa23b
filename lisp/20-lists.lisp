;;; SPDX-License-Identifier: Apache-2.0
;;; List, sequence and function utilities written in Lisp.

(defun flatten (tree)
  "(flatten TREE) is the list of the non-nil atoms of TREE, left to right.
  (flatten '(1 (2 (3 nil)) 4))  ; => (1 2 3 4)"
  (let ((out nil))
    (labels ((walk (x)
               (cond ((null x) nil)
                     ((consp x) (walk (car x)) (walk (cdr x)))
                     (t (push x out)))))
      (walk tree))
    (reverse out)))

(defun acons (key value alist)
  "(acons KEY VALUE ALIST) is ALIST with (KEY . VALUE) in front.
  (acons 'c 3 '((a . 1)))  ; => ((c . 3) (a . 1))"
  (cons (cons key value) alist))

(defun getf (plist key &optional default)
  "(getf PLIST KEY [DEFAULT]) is the value after KEY in the property list PLIST.
  (getf '(:a 1 :b 2) :b)  ; => 2"
  (let ((tail plist) (found nil) (value default))
    (while (and tail (not found))
      (when (eq (car tail) key)
        (setq found t value (cadr tail)))
      (setq tail (cddr tail)))
    value))

(defun constantly (value)
  "(constantly VALUE) is a function that ignores its arguments and returns VALUE.
  (funcall (constantly 7) 'anything)  ; => 7"
  (lambda (&rest args) value))

(defun complement (fn)
  "(complement FUNCTION) is a function returning the opposite truth of FUNCTION.
  (funcall (complement #'evenp) 3)  ; => t"
  (lambda (&rest args) (not (apply fn args))))

(defun compose (&rest fns)
  "(compose F G ...) is a function computing (F (G ...)) of its arguments.
  (funcall (compose #'1+ #'abs) -5)  ; => 6"
  (cond ((null fns) #'identity)
        ((null (cdr fns)) (car fns))
        (t (let ((f (car fns)) (g (apply #'compose (cdr fns))))
             (lambda (&rest args) (funcall f (apply g args)))))))

(defun iota (n &optional (start 0) (step 1))
  "(iota N [START [STEP]]) is the list of N numbers START, START+STEP, ...
  (iota 4)  ; => (0 1 2 3)"
  (let ((out nil) (x start))
    (dotimes (i n (reverse out))
      (push x out)
      (setq x (+ x step)))))

(defun command-line-option (name &optional default)
  "(command-line-option NAME [DEFAULT]) The argument after NAME (\"--epochs\") in *argv*, as a
number when it reads as one, else as a string; DEFAULT when NAME is absent.
  (let ((*argv* '(\"--epochs\" \"5\" \"--name\" \"run1\")))
    (list (command-line-option \"--epochs\" 10) (command-line-option \"--name\")
          (command-line-option \"--lr\" 0.5)))  ; => (5 \"run1\" 0.5)"
  (let ((tail (member name *argv* :test #'equal)))
    (cond ((null tail) default)
          ((null (cdr tail)) (error 'type-error "command line: ~a needs a value" name))
          (t (let ((v (cadr tail)))
               (handler-case (parse-number v) (error () v)))))))

(defun command-line-flag (name)
  "(command-line-flag NAME) True when NAME (\"--eval\") is in *argv*.
  (let ((*argv* '(\"--verbose\" \"x.lisp\")))
    (list (command-line-flag \"--verbose\") (command-line-flag \"--quiet\")))  ; => (t nil)"
  (if (member name *argv* :test #'equal) t nil))
