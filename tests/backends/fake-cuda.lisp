;;; SPDX-License-Identifier: Apache-2.0
;;; The CUDA backend on a fake driver (tests/backends/fake_cuda.cpp): it loads through its
;;; runtime file, queries the device, compiles PTX the driver accepts and launches with the
;;; parameters the entry declares; the fake checks launches and refuses to run them, so a
;;; launch error here means the launch got as far as the driver with the right arguments.
(use-backend 'cuda)
(format t "device: ~a~%" (device-info))
(defvar x (realize (tensor '(1.0 2.0 3.0))))
(handler-case (realize (+ x 1.0))
  (device-error (e) (format t "launch: ~a~%" (condition-message e))))
(use-backend 'cuda :tune t)
;; Tuning tries each group size of cuda.lisp's :search, which the driver refuses each time: the
;; error is the first candidate's (a group of 256 threads per output).
(handler-case (realize (sum (+ (reshape x '(3 1)) (ones '(3 1000))) :axis 1))
  (device-error (e) (format t "tuned: ~a~%" (condition-message e))))
(handler-case (realize (+ (ones '(2000 1000)) 1.0))
  (device-error (e) (format t "out of memory: ~a~%" (condition-message e))))
;; The session and the data survive both errors.
(format t "still usable: ~a~%" (to-list x))
(use-backend 'ref)
(format t "on ref: ~a~%" (to-list (+ x 1.0)))
