(define-condition my-error (error) ())
(handler-case (error 'my-error "mine ~a" 5) (my-error (c) (condition-type c)))
(ignore-errors (/ 1 0))
