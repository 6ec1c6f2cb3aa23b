;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: Ctrl-C during a long realize stops it between two kernels (tests/cli/interrupt.sh
;;; sends SIGINT a second in): 2,000 matmuls of 1024 x 1024, far longer than that anywhere.
(defvar a (realize (mul (randn '(1024 1024)) 0.03)))
(defvar x a)
(dotimes (i 2000) (setq x (matmul x a)))
(format t "ready~%")
(defvar t0 (get-internal-real-time))
(handler-case (progn (realize x) (format t "finished (not interrupted)~%"))
  (interrupt (e) (format t "caught: ~a~%" (condition-message e))))
(format t "still alive: ~a~%" (item (sum (ones '(3)))))
