;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: long training loops do not grow memory. A jit-captured MLP training step
;;; (forward, cross-entropy, backward, Adam) replayed 10,000 times on random data: the resident
;;; set size after warm-up and at the end differ by under 1 MB. (A replay's results and their
;;; graph nodes live outside the Lisp heap; they count toward collection, so they are freed
;;; in time.) The warm-up is 5,000 steps: the collector waits for 2 MiB of such garbage, some
;;; 4,000 steps here, and the memory it frees then serves the steps after; a leak of the
;;; results would still grow by 3 MB or more in the 5,000 measured. Not run under the
;;; sanitizers, whose allocator keeps freed memory on purpose.
;;; bench/memory/rss.lisp runs the 10,000-step MLP and 2,000-step CNN versions.
(require 'nn)
(require 'optim)

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(manual-seed 1)
(let* ((model (mlp 784 64 10))
       (opt (optim:adam (parameters model) :lr 1e-3))
       (step (jit (lambda (xb yb)
                    (let ((l (nn:cross-entropy (funcall model xb) yb)))
                      (step! opt (backward l))))))
       (xb (randn '(16 784)))
       (yb (randint 0 10 '(16)))
       (start nil))
  (dotimes (i 10000)
    (when (= i 5000) (setq start (getf (process-memory) :rss)))
    (funcall step xb yb))
  (let ((growth (- (getf (process-memory) :rss) start)))
    (format t "rss flat over 5000 replays: ~a~%" (< growth 1048576))
    (unless (< growth 1048576) (format t "grew by ~a bytes~%" growth))))
