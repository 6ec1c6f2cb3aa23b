(defvar *full* nil)
(handler-case (loop (push (make-list 1000) *full*)) (error (e) (length *full*)))
(let ((f 'x)) (dotimes (i 1000 f) (setq f (list 'let '((x x)) f))))
(setq *full* nil)
