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
;; Results stay on the device until the host reads them: a loop of in-place updates copies
;; nothing back, and reading an element brings the whole buffer over once.
(defun downloads () (getf (device-memory) :downloads))
(defvar w (to-device (zeros '(1000))))
(defvar before (downloads))
(dotimes (i 100) (realize (prim:assign w (+ w 1.0))))
(defvar y (realize (* w 3.0)))
(print (- (downloads) before))                  ; 0
(print (list (aref w 0) (aref w 999) (aref y 5)))
(print (- (downloads) before))                  ; 2: w, then y
(print (getf (device-memory) :download-bytes))
;; A device-only result read after its device was left: still there.
(defvar z (realize (+ w 0.5)))
(use-backend 'cpu)
(print (aref z 0))
(use-backend 'cpu)
(print (device-memory))
