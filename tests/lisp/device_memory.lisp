;;; SPDX-License-Identifier: Apache-2.0
;;; A device with its own memory (the CPU backend with memory=device, as a GPU would be):
;;; to-device uploads once, kernels run on device copies, results come back, and freed
;;; outputs return to the pool.
(use-backend 'cpu :options "memory=device")
(print (device-memory))
(defvar x (to-device (ones '(1000))))
(print (getf (device-memory) :in-use))          ; x's 4000 bytes, rounded to 4096
(print (item (sum (* x 2.0))))
(dotimes (i 10) (realize (+ x 1.0)))            ; the same shape again and again: reused blocks
(print (<= (getf (device-memory) :cached) 8192))
(print (handler-case (to-device x 'cuda) (device-error (e) (condition-message e))))
(use-backend 'cpu)
(print (device-memory))
