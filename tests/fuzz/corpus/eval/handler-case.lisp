(handler-case (error "boom ~a" 1) (error (c) (condition-message c)))
(handler-case (car 5) (type-error () :t))
(unwind-protect (+ 1 2) (print 3))
(block out (return-from out 4))
