;;; SPDX-License-Identifier: Apache-2.0
;;; A jit function whose realize fails while it is traced, and which catches that error itself,
;;; runs uncaptured: a replay would run the failed plan again (here: on a device whose memory
;;; runs out), which the traced call never got past.
(use-backend 'cpu :options "memory=device memory-limit=1000000")
(defvar a (realize (ones '(100 100))))
(defvar calls 0)
(defun risky (x)
  (setq calls (+ calls 1))
  (list (handler-case (progn (realize (matmul (ones '(3000 100)) a)) 'computed)
          (device-error (e) 'out-of-memory))
        (mul x 2.0)))
(defvar f (jit #'risky))
(dotimes (i 3)
  (let ((r (funcall f (tensor '(1.0 2.0)))))
    (print (list (first r) (to-list (second r))))))
;; Traced once, then called as itself every time (uncaptured), never replayed.
(print calls)
(print (getf (jit-stats) :replays))
