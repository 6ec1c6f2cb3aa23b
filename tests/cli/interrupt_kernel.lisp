;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: Ctrl-C inside one long kernel stops it between two chunks of its iterations
;;; (tests/cli/interrupt_kernel.sh sends SIGINT a second after the kernel starts). One matmul
;;; of 8192 x 8192 (1.1 TFLOP: several seconds even on a fast machine; 512 MiB of buffers).
(defvar a (realize (mul (randn '(8192 8192)) 0.01)))
;; Written in the same realize as the matmul: an interrupted realize writes neither.
(defvar p (realize (zeros '(4))))
(defvar q (realize (zeros '(3 4))))
(format t "ready~%")
;; Debug level 1 says on stderr when the kernel is compiled, so the driver signals while it runs.
(jit-debug 1)
(handler-case (progn (realize-all (list (prim:assign p (add p 1.0)) (matmul a a) (prim:assign (slice q 1) p)))
                     (format t "finished (not interrupted)~%"))
  (interrupt (e) (format t "caught: ~a~%" (condition-message e))))
(jit-debug 0)
;; The device works on, and the interrupted kernel's output was dropped.
(format t "still alive: ~a, written: ~a~%" (item (sum (matmul (ones '(2 3)) (ones '(3 2)))))
        (+ (item (sum p)) (item (sum q))))
