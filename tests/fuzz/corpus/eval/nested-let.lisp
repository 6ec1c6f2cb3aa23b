(let ((x 1)) (let* ((y x) (z y)) (let ((x z)) (list x y z))))
(eval (let ((f 'x)) (dotimes (i 1000 (list 'let '((x 1)) f)) (setq f (list 'let '((x x)) f)))))
