(defvar *v* 1)
(defun get-v () *v*)
(let ((*v* 2)) (get-v))
(let ((*print-circle* t)) (let ((x (list 1))) (prin1-to-string (list x x))))
