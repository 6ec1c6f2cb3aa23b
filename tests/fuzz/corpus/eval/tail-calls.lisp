(defun loop-n (n acc) (if (= n 0) acc (loop-n (- n 1) (+ acc 1))))
(loop-n 100000 0)
