;;; SPDX-License-Identifier: Apache-2.0
;;; Attention as users write it, softmax(Q K^T / sqrt(d)) V (nn:attention), batch 1, 12 heads
;;; of 64, f32, at L = 1024 and 4096, plain and causal; each with the scheduler's online
;;; softmax (one kernel, nothing L x L stored) and with the stored three-kernel form. Each line:
;;;   NAME  best-ms  GFLOP/s  peak-MiB
;;; (GFLOP/s counts the two matmuls' 4 L^2 d flops per head; peak: the buffer plan's.)
;;; bench/attention/run.sh prints it next to PyTorch's matmul-softmax-matmul.
;;;   tlisp bench/attention/attention.lisp [--lengths 1024,4096]
(require 'nn)

(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun best-ms (thunk reps)
  (funcall thunk)  ; warm-up: compiles the kernels
  (let ((best nil))
    (dotimes (i reps)
      (gc)
      (let ((t0 (now-ms)))
        (funcall thunk)
        (let ((dt (- (now-ms) t0)))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(defun lengths ()
  ;; --lengths 1024,4096 (or one number)
  (let ((v (command-line-option "--lengths" "1024,4096")) (out nil) (start 0))
    (if (numberp v)
        (list v)
        (progn
          (loop
            (let ((comma (position #\, v :start start)))
              (push (parse-number (subseq v start comma)) out)
              (if comma (setq start (+ comma 1)) (return))))
          (reverse out)))))

(manual-seed 0)
(defvar *heads* 12)
(defvar *dim* 64)
(dolist (l (lengths))
  (let ((q (realize (randn (list 1 *heads* l *dim*))))
        (k (realize (randn (list 1 *heads* l *dim*))))
        (v (realize (randn (list 1 *heads* l *dim*))))
        (flops (* 4.0 *heads* l l *dim*)))
    (dolist (causal '(nil t))
      (dolist (mode '(:always :never))
        (jit-online-softmax mode)
        (let ((ms (best-ms (lambda () (realize (nn:attention q k v :causal causal))) (if (> l 2048) 1 3))))
          (format t "~a-~a-~a ~,3f ~,2f ~,1f~%"
                  (if causal "causal" "plain") l (if (eq mode :always) "online" "stored")
                  ms (/ flops ms 1e6) (/ (getf (jit-stats) :peak-bytes) 1048576.0)))))))
(jit-online-softmax :auto)
