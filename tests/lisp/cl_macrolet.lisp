;;; SPDX-License-Identifier: Apache-2.0
;;; macrolet and symbol-macrolet (issue 25). Each line matches SBCL 2.2 (with *print-case*
;;; :downcase).

(defun show (label value) (format t "~a: ~s~%" label value))

;; macrolet: local macros with full lambda lists.
(show "simple" (macrolet ((twice (x) `(* 2 ,x))) (twice 21)))
(show "&body and destructuring"
      (macrolet ((with-pair (((a b) pair) &body body) `(destructuring-bind (,a ,b) ,pair ,@body)))
        (with-pair ((x y) (list 1 2)) (+ x y))))
(show "&optional and &key"
      (macrolet ((opt (a &optional (b 10) &key (c 100)) `(list ,a ,b ,c)))
        (list (opt 1) (opt 1 2) (opt 1 2 :c 3))))
(show "several definitions"
      (macrolet ((inc (x) `(+ ,x 1)) (dec (x) `(- ,x 1))) (list (inc 5) (dec 5))))
(show "expands inside a function"
      (progn (defun sum-squares (items)
               (macrolet ((sq (x) `(let ((v ,x)) (* v v))))
                 (let ((sum 0)) (dolist (i items sum) (incf sum (sq i))))))
             (sum-squares '(1 2 3))))
(show "sees the variables of its expansion site"
      (let ((n 5)) (macrolet ((add-n (x) `(+ ,x n))) (add-n 1))))
(show "an inner macrolet shadows an outer one"
      (macrolet ((m () :outer))
        (list (m) (macrolet ((m () :inner)) (m)) (m))))
(defun gather (&rest xs) xs)
(show "a local macro hides a global function"
      (list (gather 1 2) (macrolet ((gather (&rest xs) `(vector ,@xs))) (gather 1 2))))
(show "flet hides a local macro"
      (macrolet ((f () :macro)) (flet ((f () :function)) (f))))
(show "a macro expanding into another"
      (macrolet ((a (x) `(b ,x)) (b (x) `(list :b ,x))) (a 1)))
(show "only within its body" (macrolet ((only-here () 1)) (fboundp 'only-here)))
(show "computes at expansion time"
      (macrolet ((const-sum (&rest xs) (apply #'+ xs))) (const-sum 1 2 3 4)))

;; symbol-macrolet: symbols that stand for forms, also as places.
(show "simple" (symbol-macrolet ((x 42)) x))
(show "stands for a place"
      (let ((cell (list 1 2)))
        (symbol-macrolet ((head (car cell)))
          (setq head 10)
          (incf head 5)
          (push 0 (cdr cell))
          (list head cell))))
(show "setf of a symbol macro"
      (let ((v (vector 1 2 3)))
        (symbol-macrolet ((mid (aref v 1))) (setf mid :x) v)))
(show "a let shadows it"
      (symbol-macrolet ((x :macro)) (list x (let ((x :variable)) x) x)))
(show "a parameter shadows it"
      (symbol-macrolet ((x :macro)) (funcall (lambda (x) x) :param)))
(show "evaluated each time"
      (let ((count 0))
        (symbol-macrolet ((next (incf count)))
          (list next next next))))
(show "nested"
      (symbol-macrolet ((a 1))
        (symbol-macrolet ((b (+ a 10)))
          (list a b (symbol-macrolet ((a 100)) b)))))
(show "with macrolet"
      (symbol-macrolet ((x 3))
        (macrolet ((m () 'x)) (m))))
