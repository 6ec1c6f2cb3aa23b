;; Printing: NumPy-like layout, every dtype, elision of large tensors, special values.

;; Scalars and vectors of each dtype.
(print (tensor 3.5))
(print (tensor '(1 2 3)))
(print (tensor '(1.5 -2 3)))
(print (tensor '(0.1 100.25 -3) :dtype 'f64))
(print (tensor '(1 2.5) :dtype 'f16))
(print (tensor '(1 2.5) :dtype 'bf16))
(print (tensor '(-128 127) :dtype 'i8))
(print (tensor '(-300 300) :dtype 'i16))
(print (tensor '(-5 7) :dtype 'i64))
(print (tensor '(0 255) :dtype 'u8))
(print (tensor '(0 4000000000) :dtype 'u32))
(print (tensor '(t nil t)))
;; Special values.
(print (tensor (list inf (- inf) nan 0.0)))
(print (tensor '(1e-8 1e10)))
;; Matrices and higher rank.
(print (tensor '((1 2 3) (4 5 6))))
(print (reshape (arange 12) '(2 2 3)))
(print (tensor '((1.25 -10) (3 4))))
;; Empty tensors.
(print (zeros '(0)))
(print (zeros '(2 0)))
;; Large tensors elide the middle of each axis.
(print (arange 2000))
(print (reshape (arange 1200) '(40 30)))
;; Values nested in lists print the same way.
(print (list (tensor '(1 2)) 'x))
;; A lazy tensor prints its values (printing realizes it).
(print (+ (ones '(2 2)) 1))
