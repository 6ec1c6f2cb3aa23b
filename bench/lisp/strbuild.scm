;;; SPDX-License-Identifier: Apache-2.0
;;; STRBUILD: the same program as strbuild.lisp. Part 1 writes to a string port
;;; (call-with-output-string); part 2 is string-append and substring.
(define (build n)
  (call-with-output-string
   (lambda (port)
     (do ((i 0 (+ i 1)))
         ((= i n))
       (display i port)
       (write-char #\, port)))))

(define s "abcdef")

(define (grow)
  (set! s (string-append "123" s "456" s "789"))
  (set! s (string-append
           (substring s (quotient (string-length s) 2) (string-length s))
           (substring s 0 (+ 1 (quotient (string-length s) 2)))))
  s)

(define (trial n)
  (do ()
      ((> (string-length s) n) (string-length s))
    (grow)))

(define (main iterations)
  (let loop ((i 0) (sum 0))
    (if (< i iterations)
        (let ((b (string-length (build 1000))))
          (set! s "abcdef")
          (loop (+ i 1) (+ sum b (trial 4000))))
        (begin (display sum) (newline)))))

(main 1000)
