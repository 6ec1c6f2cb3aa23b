;;; The scheduler's decisions as golden text (issue 20): for softmax, layer-norm, attention,
;;; conv2d and an MLP training step, which kernels run, what each fuses and what it reads
;;; (schedule->text: after the optimizer rules, before lowering). A change to fusion shows here
;;; as a diff to review, and kernel-count must agree with it.
(require (quote nn))
(manual-seed 7)
(defun input (shape) (realize (rand shape)))
(defun show (name x)
  (let ((text (schedule->text x)))
    (format t "~a:~%~a" name text)
    (unless (= (kernel-count x) (count #\Newline text))
      (format t "kernel-count ~a disagrees~%" (kernel-count x)))))

(defvar x (input '(16 64)))
(show "softmax" (softmax x :axis -1))
(show "log-softmax" (log-softmax x :axis -1))
(show "layer-norm" (layer-norm x))

(defvar q (input '(2 4 16 8)))
(defvar k (input '(2 4 16 8)))
(defvar v (input '(2 4 16 8)))
(show "attention" (nn:attention q k v))
(show "causal attention" (nn:attention q k v :causal t))

(defvar img (input '(2 3 8 8)))
(defvar w (input '(4 3 3 3)))
(show "conv2d" (conv2d img w :padding 1))

;; One training step of a 2-layer MLP: backward realizes the loss and every weight's gradient
;; together (realize-all); their schedule is shown as it does so.
(defvar w1 (input '(16 32)))
(defvar w2 (input '(32 10)))
(defvar targets (realize (cast (mod (arange 8) 10) 'i32)))
(defvar batch (input '(8 16)))
(defvar *realize-all* realize-all)
(defun realize-all (tensors)
  (format t "mlp training step (loss and 2 gradients):~%~a" (schedule->text tensors))
  (funcall *realize-all* tensors))
(funcall (value-and-grad (lambda (w1 w2) (nn:cross-entropy (matmul (relu (matmul batch w1)) w2) targets)))
         w1 w2)
(setq realize-all *realize-all*)

;; An embedding lookup (an indexed load of whole rows) fuses into its consumer, here a
;; layer-norm whose two row reduces stay fused; its gradient is one scatter-add kernel.
(defvar table (input '(50 16)))
(defvar tokens (realize (tensor '(3 1 4 1 5 9 2 6) :dtype 'i32)))
(show "embedding + layer-norm" (layer-norm (add (%select-along table tokens 0) (input '(8 16)))))
(show "embedding gradient" (prim:scatter-add (prim:const 0 'f32 '(50 16)) (prim:expand (prim:reshape tokens '(8 1)) '(8 16))
                                             (input '(8 16)) 0))

;; bf16 attention's training step: matmul reads its operands widened to f32, and the weights
;; are stored as the softmax's bf16 row kernel (not widened: half the bytes), read through the
;; cast by the forward product and by the values' gradient.
(defun realize-all (tensors)
  (format t "bf16 attention training step (loss and 3 gradients):~%~a" (schedule->text tensors))
  (funcall *realize-all* tensors))
(funcall (value-and-grad (lambda (q k v) (sum (nn:attention q k v))))
         (realize (cast q 'bf16)) (realize (cast k 'bf16)) (realize (cast v 'bf16)))
