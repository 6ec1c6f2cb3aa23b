(let ((x nil)) (loop (push (make-vector 100) x)))
(let ((s "ab")) (loop (setq s (concat s s))))
