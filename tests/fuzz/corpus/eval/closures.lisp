(let ((counter 0))
  (defun bump () (setq counter (+ counter 1))))
(bump) (bump)
(funcall (lambda (&optional (a 1) &rest r &key b) (list a r b)) 5 :b 6)
