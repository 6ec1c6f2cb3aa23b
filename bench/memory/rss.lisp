;;; SPDX-License-Identifier: Apache-2.0
;;; Memory over long training loops (issue 19): the resident set size of this process while
;;; a jit-captured training step (forward, cross-entropy, backward, Adam) replays, for the
;;; Fashion-MNIST examples' MLP and CNN on random data of their shapes.
;;;   build/tlisp bench/memory/rss.lisp [--mlp-steps 10000] [--cnn-steps 2000] [--batch 32]
;;; Prints RSS after warm-up and at the end, and the growth per step; "flat" when the growth
;;; over the run is under 1 MB.
(require 'nn)
(require 'optim)

(defvar *mlp-steps* (command-line-option "--mlp-steps" 10000))
(defvar *cnn-steps* (command-line-option "--cnn-steps" 2000))
(defvar *batch* (command-line-option "--batch" 32))

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(defmodel cnn ()
  ((conv1 (nn:conv2d 1 32 3))
   (conv2 (nn:conv2d 32 64 3))
   (fc (nn:linear (* 64 5 5) 10)))
  (x)
  (let* ((img (reshape x -1 1 28 28))
         (h (max-pool2d (relu (conv1 img)) 2))
         (h (max-pool2d (relu (conv2 h)) 2)))
    (fc (flatten h 1))))

(defun mb (bytes) (/ bytes 1048576.0))

(defun measure (name model steps)
  (let* ((opt (optim:adam (parameters model) :lr 1e-3))
         (step (jit (lambda (xb yb)
                      (let ((l (nn:cross-entropy (funcall model xb) yb)))
                        (step! opt (backward l))))))
         (xs (list (randn (list *batch* 784)) (randn (list *batch* 784))))
         (ys (list (randint 0 10 (list *batch*)) (randint 0 10 (list *batch*))))
         (warm (min 500 (floor steps 5)))
         (start nil) (t0 nil))
    (dotimes (i steps)
      (when (= i warm)
        (setq start (getf (process-memory) :rss) t0 (get-internal-real-time)))
      (funcall step (nth (mod i 2) xs) (nth (mod i 2) ys)))
    (let* ((end (getf (process-memory) :rss))
           (secs (/ (- (get-internal-real-time) t0) 1e9))
           (growth (- end start)))
      (format t "~a: ~a steps, RSS ~,1f MB after ~a steps, ~,1f MB at the end: ~,3f KB/step over ~a steps (~,2f ms/step) ~a~%"
              name steps (mb start) warm (mb end) (/ growth 1024.0 (- steps warm)) (- steps warm)
              (/ (* 1000 secs) (- steps warm)) (if (< growth 1048576) "flat" "GROWS"))
      growth)))

(manual-seed 1)
(measure "mlp 784-256-10" (mlp 784 256 10) *mlp-steps*)
(measure "cnn" (cnn) *cnn-steps*)
