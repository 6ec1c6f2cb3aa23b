(apply #'list 1 2 '(3 4))
(funcall #'apply #'+ '(1 2))
(apply #'max '(3 1 2))
(apply #'+ 1 2)
