;;; SPDX-License-Identifier: Apache-2.0
;;; tagbody and go, prog and prog*. A tagbody becomes a loop over its segments (the forms
;;; between tags) that a go re-enters at the segment of its tag: go sets the next segment and
;;; returns from the current one. go forms are found lexically in the body by a walk that skips
;;; quoted data and the tags a nested tagbody defines itself.

(defun %tagbody-walk (form tags jump)
  "(%tagbody-walk FORM TAGS JUMP) is FORM with each (go TAG), TAG in TAGS, replaced by
(funcall JUMP TAG)'s form."
  (cond ((atom form) form)
        ((eq (car form) 'quote) form)
        ((and (eq (car form) 'go) (consp (cdr form)) (member (cadr form) tags))
         (funcall jump (cadr form)))
        ((eq (car form) 'tagbody)
         (let ((own (remove-if-not (lambda (x) (or (symbolp x) (integerp x))) (cdr form))))
           (cons 'tagbody
                 (%tagbody-walk-list (cdr form) (remove-if (lambda (tag) (member tag own)) tags) jump))))
        (t (%tagbody-walk-list form tags jump))))

(defun %tagbody-walk-list (forms tags jump)
  (cond ((null forms) nil)
        ((atom forms) forms)
        (t (cons (%tagbody-walk (car forms) tags jump)
                 (%tagbody-walk-list (cdr forms) tags jump)))))

(defmacro tagbody (&rest body)
  "(tagbody {TAG | FORM}...) evaluates the FORMs in order; (go TAG) inside them, at any depth
of the code (closures too), continues after TAG. A TAG is a symbol or an integer. Returns nil.
  (let ((n 0) (out nil))
    (tagbody
     again (push n out) (incf n) (when (< n 3) (go again)))
    out)  ; => (2 1 0)"
  (let* ((tags (remove-if-not (lambda (x) (or (symbolp x) (integerp x))) body))
         (next (gensym "next"))
         (outer (gensym "tagbody"))
         (segment (gensym "segment"))
         (segments (list (list 0)))  ; reversed list of (INDEX FORM...), reversed forms
         (index 0))
    (unless tags
      (return-from tagbody `(progn ,@body nil)))
    (dolist (item body)
      (if (or (symbolp item) (integerp item))
          (progn (setq index (+ index 1))
                 (push (list index) segments))
          (push item (cdr (car segments)))))
    (let* ((tag-index (let ((i 0)) (mapcar (lambda (tag) (setq i (+ i 1)) (cons tag i)) tags)))
           (jump (lambda (tag)
                   `(progn (setq ,next ,(cdr (assoc tag tag-index)))
                           (return-from ,segment nil))))
           (last-index index))
      `(let ((,next 0))
         (block ,outer
           (while t
             (block ,segment
               (case ,next
                 ,@(mapcar (lambda (seg)
                             (let ((i (car seg)))
                               `(,i ,@(%tagbody-walk-list (reverse (cdr seg)) tags jump)
                                    ,(if (= i last-index)
                                         `(return-from ,outer nil)
                                         `(setq ,next ,(+ i 1))))))
                           (reverse segments))))))))))

(defmacro go (tag)
  "(go TAG) continues after TAG in the lexically enclosing tagbody (or prog).
  (let ((i 0)) (tagbody top (incf i) (when (< i 5) (go top))) i)  ; => 5"
  (error 'control-error "go: no tag ~s is visible in an enclosing tagbody" tag))

(defmacro prog (bindings &body body)
  "(prog (VAR | (VAR INIT)...) {TAG | FORM}...) is a let around a tagbody inside a block nil:
return leaves it with a value.
  (prog ((i 0) (sum 0)) next (when (> i 4) (return sum)) (incf sum i) (incf i) (go next))  ; => 10"
  `(block nil (let ,bindings (tagbody ,@body))))

(defmacro prog* (bindings &body body)
  "(prog* (VAR | (VAR INIT)...) {TAG | FORM}...) is prog with the bindings made in sequence.
  (prog* ((x 2) (y (* x 10))) (return (+ x y)))  ; => 22"
  `(block nil (let* ,bindings (tagbody ,@body))))
