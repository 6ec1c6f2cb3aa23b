;;; SPDX-License-Identifier: Apache-2.0
;;; catch and throw (issue 25). Lines match SBCL 2.2 but for the error message.

(defun show (label value) (format t "~a: ~s~%" label value))
(show "no throw" (catch 'done 1 2 3))
(show "throw" (catch 'done 1 (throw 'done 42) 3))
(defun search-tree (x tree) (cond ((eql x tree) (throw 'found tree)) ((consp tree) (search-tree x (car tree)) (search-tree x (cdr tree)))))
(show "throw from a callee" (catch 'found (search-tree 3 '(1 (2 (3 4)))) :not-found))
(show "nested tags" (catch 'outer (list (catch 'inner (throw 'outer :from-inner)) :after)))
(show "inner same tag" (catch 'a (list (catch 'a (throw 'a 1)) 2)))
(show "values" (multiple-value-list (catch 'v (throw 'v (values 1 2 3)))))
(show "catch values" (multiple-value-list (catch 'v (floor 7 2))))
(show "unwind-protect runs" (let ((log nil)) (list (catch 'x (unwind-protect (throw 'x :thrown) (push :cleanup log))) log)))
(show "handler-case error lets it pass" (catch 'x (handler-case (throw 'x :passed) (error () :caught))))
(show "computed tag" (let ((tag (list 'k))) (catch tag (throw tag :ok))))
(show "no catch" (handler-case (throw 'nowhere 1) (control-error (e) (condition-message e))))
(show "catch over a loop" (catch 'stop (dotimes (i 10) (when (= i 4) (throw 'stop i)))))
(show "handlers do not see a throw"
      (catch 'x (handler-bind ((condition (lambda (c) c (print :seen))))
                  (handler-case (throw 'x :thrown) (condition () :caught)))))
