;;; SPDX-License-Identifier: Apache-2.0
;;; Attention's training step as users write it: nn:attention (batch 1, 12 heads of 64, f32),
;;; then backward of sum(out * dO) for a fixed dO, at each length, plain and causal; with the
;;; L x L matrices recomputed (FlashAttention-2's scheme, (jit-online-softmax :always)) and
;;; stored (:never). Each line:
;;;   NAME  step-ms  peak-MiB
;;; step-ms: forward and backward, the best of 2 after a warm-up ("-" past --time-max, whose
;;; steps would take minutes); peak-MiB: the buffer plan's peak for the step (the forward's
;;; and backward's kernels together, as backward realizes them), found without running it
;;; (plan-peak-bytes), so L = 16384 costs no memory. bench/attention/run.sh --backward prints
;;; it next to PyTorch's.
;;;   tlisp bench/attention/backward.lisp [--lengths 1024,4096,16384] [--time-max 1024]
(require 'nn)

(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun numbers (text)
  (let ((out nil) (start 0))
    (loop
      (let ((comma (position #\, text :start start)))
        (push (parse-number (subseq text start comma)) out)
        (if comma (setq start (+ comma 1)) (return))))
    (reverse out)))

(defun lengths ()
  (let ((v (command-line-option "--lengths" "1024,4096,16384")))
    (if (numberp v) (list v) (numbers v))))

;; One training step's loss for fresh leaves of Q K V.
(defun step-loss (q k v d-out causal)
  (let ((leaves (mapcar (lambda (x) (requires-grad! (realize (mul x 1.0)))) (list q k v))))
    (sum (mul (nn:attention (first leaves) (second leaves) (third leaves) :causal causal) d-out))))

;; The buffer plan's peak bytes for LOSS's backward, without running it: backward's
;; realize-all answers with the plan instead.
(defun backward-peak (loss)
  (let ((peak nil) (realize-all (symbol-function 'realize-all)))
    (unwind-protect
         (progn
           (setf (symbol-function 'realize-all) (lambda (xs) (setq peak (plan-peak-bytes xs)) xs))
           (backward loss))
      (setf (symbol-function 'realize-all) realize-all))
    peak))

(defun step-ms (q k v d-out causal)
  (backward (step-loss q k v d-out causal))  ; warm-up: compiles the kernels
  (let ((best nil))
    (dotimes (i 2)
      (gc)
      (let ((loss (step-loss q k v d-out causal)) (t0 (now-ms)))
        (backward loss)
        (let ((dt (- (now-ms) t0)))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(manual-seed 0)
(defvar *time-max* (command-line-option "--time-max" 1024))
(dolist (l (lengths))
  (let ((q (realize (randn (list 1 12 l 64))))
        (k (realize (randn (list 1 12 l 64))))
        (v (realize (randn (list 1 12 l 64))))
        (d-out (realize (randn (list 1 12 l 64)))))
    (dolist (causal '(nil t))
      (dolist (mode '(:always :never))
        (jit-online-softmax mode)
        (let ((peak (backward-peak (step-loss q k v d-out causal)))
              (ms (if (<= l *time-max*) (step-ms q k v d-out causal) nil)))
          (format t "~a-~a-~a ~a ~,1f~%"
                  (if causal "causal" "plain") l (if (eq mode :always) "recomputed" "stored")
                  (if ms (format nil "~,3f" ms) "-") (/ peak 1048576.0)))))))
(jit-online-softmax :auto)
