;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: random numbers are a composite of integer primitives (Threefry-2x32, seeded by
;;; manual-seed), so every device draws the same numbers. This script prints them: each
;;; device variant of the test must print exactly this file's .expected.

(defun show (name x)
  (format t "~a ~a ~s~%" name (dtype x) (to-list x)))

(manual-seed 2024)
(show "rand" (rand '(2 3)))
(show "rand-f64" (rand '(4) :dtype 'f64))
(show "rand-f16" (rand '(4) :dtype 'f16))
(show "rand-bf16" (rand '(4) :dtype 'bf16))
(show "randn" (randn '(2 3)))
(show "randn-f64" (randn '(4) :dtype 'f64))
(show "randn-f16" (randn '(4) :dtype 'f16))
(show "randn-bf16" (randn '(4) :dtype 'bf16))
(show "uniform" (uniform '(4) :low -2.0 :high 3.0))
(show "uniform-bf16" (uniform '(4) :low -2.0 :high 3.0 :dtype 'bf16))
(show "normal" (normal '(4) :mean 10.0 :std 0.5))
(show "normal-f16" (normal '(4) :mean 10.0 :std 0.5 :dtype 'f16))
(show "randint" (randint -5 5 '(8)))
(show "randint-i64" (randint 0 10000000000 '(3) :dtype 'i64))
(show "randint-u8" (randint 0 256 '(6) :dtype 'u8))
(show "bernoulli" (bernoulli 0.3 :shp '(10)))
(show "bernoulli-probs" (bernoulli (tensor '(0.0 0.25 0.5 0.75 1.0)) :dtype 'i32))
(show "bernoulli-f16" (bernoulli (tensor '(0.1 0.5 0.9 0.5) :dtype 'f16) :dtype 'f16))
(show "multinomial" (multinomial (tensor '(0.1 0.0 0.5 0.4)) 8 :replacement t))
(show "multinomial-rows" (multinomial (tensor '((1 2 3 4) (4 3 2 1))) 3))
(show "multinomial-f16" (multinomial (tensor '(0.1 0.0 0.5 0.4) :dtype 'f16) 2))
(show "randperm" (randperm 10))
(show "randperm-i32" (randperm 6 :dtype 'i32))
(show "rand-like" (rand-like (zeros '(3) :dtype 'bf16)))
(show "randn-like" (randn-like (zeros '(3) :dtype 'f64)))
;; A draw inside a captured function draws fresh numbers on every call, the same on every
;; device.
(let ((f (jit (lambda (x) (+ x (randn '(3)))))))
  (show "jit-1" (funcall f (zeros '(3))))
  (show "jit-2" (funcall f (zeros '(3)))))
;; The same seed gives the same numbers again.
(manual-seed 2024)
(show "rand-again" (rand '(2 3)))
