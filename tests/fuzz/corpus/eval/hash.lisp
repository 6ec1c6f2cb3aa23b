(let ((h (make-hash-table)))
  (setf (gethash '(1 2) h) 'a)
  (gethash (list 1 2) h))
(make-hash-table :test 'eq)
