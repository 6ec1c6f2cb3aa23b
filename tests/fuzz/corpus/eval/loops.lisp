(let ((s 0)) (dotimes (i 100) (setq s (+ s i))) s)
(loop for x in '(1 2 3) collect (* x x))
(let ((i 0)) (while (< i 10) (setq i (1+ i))) i)
(loop)
