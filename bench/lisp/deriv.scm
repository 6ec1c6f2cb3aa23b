;;; SPDX-License-Identifier: Apache-2.0
;;; DERIV (Gabriel): the same program as deriv.lisp.
(define (deriv-aux a)
  (list '/ (deriv a) a))

(define (deriv a)
  (cond ((not (pair? a)) (if (eq? a 'x) 1 0))
        ((eq? (car a) '+) (cons '+ (map deriv (cdr a))))
        ((eq? (car a) '-) (cons '- (map deriv (cdr a))))
        ((eq? (car a) '*) (list '* a (cons '+ (map deriv-aux (cdr a)))))
        ((eq? (car a) '/)
         (list '-
               (list '/ (deriv (cadr a)) (caddr a))
               (list '/ (cadr a) (list '* (caddr a) (caddr a) (deriv (caddr a))))))
        (else 'error)))

(define (main iterations)
  (let ((expr '(+ (* 3 x x) (* a x x) (* b x) 5)))
    (let loop ((i 0) (result #f))
      (if (< i iterations)
          (let ((r (deriv expr)))
            (deriv expr)
            (deriv expr)
            (deriv expr)
            (deriv expr)
            (loop (+ i 1) r))
          (begin (display result) (newline))))))

(main 60000)
