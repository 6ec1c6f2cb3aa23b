(defun fact (n) (if (< n 2) 1 (* n (fact (- n 1)))))
(fact 20)
(defun deep (n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))
(deep 100000)
