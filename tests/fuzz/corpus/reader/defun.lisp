(defun f (x &optional (y 2) &rest r &key z)
  "doc" (list x y r z))
