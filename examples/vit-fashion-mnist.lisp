;;; SPDX-License-Identifier: Apache-2.0
;;; A small Vision Transformer on Fashion-MNIST: each 28x28 image cut into PATCHxPATCH patches,
;;; each patch a token (a linear patch embedding), a learned class token in front, learned
;;; position embeddings, DEPTH pre-LayerNorm encoder blocks (multi-head self-attention and a
;;; GELU MLP, each added back), a final layer norm, and the class token's output into a linear
;;; classifier. AdamW with a warm-up and cosine learning-rate schedule, gradient clipping and
;;; label smoothing; pixels standardized.
;;;   build/tlisp examples/vit-fashion-mnist.lisp [--epochs 6] [--batch 128] [--lr 2e-3]
;;;       [--seed 1] [--limit N] [--dim 64] [--depth 4] [--heads 4] [--patch 7] [--mlp 2]
;;;       [--warmup STEPS] [--weight-decay 0.05] [--smoothing 0.1] [--checkpoint FILE]
;;;   build/tlisp examples/vit-fashion-mnist.lisp --eval [--checkpoint FILE] (same model flags)
;;; Prints a progress line (loss, learning rate, images/s), the mean training loss and the test
;;; accuracy after each epoch, and saves the model and the optimizer's state to the checkpoint
;;; (safetensors); --eval reloads it and only measures accuracy. --limit N trains and tests
;;; on the first N images of each split.

(require 'nn)
(require 'optim)
(require 'data)

(defvar *epochs* (command-line-option "--epochs" 6))
(defvar *batch* (command-line-option "--batch" 128))
(defvar *lr* (command-line-option "--lr" 2e-3))
(defvar *seed* (command-line-option "--seed" 1))
(defvar *limit* (command-line-option "--limit"))
(defvar *dim* (command-line-option "--dim" 64))
(defvar *depth* (command-line-option "--depth" 4))
(defvar *heads* (command-line-option "--heads" 4))
(defvar *patch* (command-line-option "--patch" 7))
(defvar *mlp-ratio* (command-line-option "--mlp" 2))
(defvar *weight-decay* (command-line-option "--weight-decay" 0.05))
(defvar *smoothing* (command-line-option "--smoothing" 0.1))
(defvar *checkpoint* (format nil "~a" (command-line-option "--checkpoint"
                                                           "vit-fashion-mnist.safetensors")))

(unless (and (integerp *patch*) (> *patch* 0) (= 0 (mod 28 *patch*)))
  (error 'type-error "vit-fashion-mnist: --patch must divide 28 (2, 4, 7 or 14), got ~a" *patch*))

;;; --- the model --------------------------------------------------------------------------

(defun small-normal (shape)
  ;; A learned tensor drawn from N(0, 0.02^2), as ViT's class token and position embeddings.
  (requires-grad! (realize (mul (randn shape) 0.02))))

(defun patches (x patch)
  ;; Rows of 784 pixels (batch 784) -> (batch patches PATCH*PATCH): the image cut into a grid
  ;; of PATCHxPATCH squares, row by row, each square's pixels row by row.
  (let ((grid (/ 28 patch)))
    (reshape (permute (reshape x -1 grid patch grid patch) 0 1 3 2 4)
             -1 (* grid grid) (* patch patch))))

(defmodel encoder-block (dim heads mlp-ratio)
  ((ln-1 (nn:layer-norm dim))
   (attention (nn:multihead-attention dim heads))
   (ln-2 (nn:layer-norm dim))
   (fc (nn:linear dim (* mlp-ratio dim)))
   (proj (nn:linear (* mlp-ratio dim) dim)))
  ;; X (batch tokens dim): self-attention over all tokens (not causal), then an MLP, each on a
  ;; normalized copy, each added back.
  (x)
  (let ((x (add x (attention (ln-1 x)))))
    (add x (proj (gelu (fc (ln-2 x)))))))

(defmodel vit (patch dim depth heads mlp-ratio classes)
  ((tokens (* (/ 28 patch) (/ 28 patch)))
   (embed (nn:linear (* patch patch) dim))
   (cls (small-normal (list 1 1 dim)))
   (positions (small-normal (list 1 (+ tokens 1) dim)))
   (blocks (loop repeat depth collect (encoder-block dim heads mlp-ratio)))
   (ln-f (nn:layer-norm dim))
   (head (nn:linear dim classes)))
  ;; X: rows of 784 pixels -> logits (batch CLASSES).
  (x)
  (let* ((p (embed (patches x patch)))                               ; (batch tokens dim)
         (c (expand cls (list (first (shape p)) 1 dim)))              ; (batch 1 dim)
         (h (add (cat (list c p) :axis 1) positions)))                ; (batch tokens+1 dim)
    (dolist (b blocks) (setq h (funcall b h)))
    (head (slice (ln-f h) t 0))))                                     ; the class token's row

;;; --- training -----------------------------------------------------------------------------

(defun seconds () (/ (get-internal-real-time) 1e9))

(defun progress (epoch done total rate loss lr)
  ;; The progress line, rewritten in place.
  (let* ((width 24) (filled (min width (floor (* width done) (max total 1)))))
    (format t "~aepoch ~a [~a~a] ~a/~a loss ~,4f lr ~,2e ~,0f images/s  "
            (code-char 13) epoch (make-string filled :initial-element #\=)
            (make-string (- width filled) :initial-element #\Space) done total loss lr rate)))

(manual-seed *seed*)
(format t "loading Fashion-MNIST~%")
(defvar ds (data:load-fashion-mnist :limit *limit* :normalize t))
(defvar model (vit *patch* *dim* *depth* *heads* *mlp-ratio* 10))
(defvar opt (optim:adamw (parameters model) :lr *lr* :weight-decay *weight-decay*))
(defvar *train-count* (first (shape (getf ds :train-x))))
(defvar *steps-per-epoch* (ceiling *train-count* *batch*))
(defvar *total-steps* (* *epochs* *steps-per-epoch*))
(defvar *warmup* (command-line-option "--warmup" (max 1 (min 500 (floor *total-steps* 10)))))
;; The learning rate follows the schedule: each step! on it sets the optimizer's rate (a tensor
;; updated in place, so the captured training step reads the new value).
(defvar schedule (optim:warmup-cosine-lr opt *warmup* *total-steps* :min-factor 0.01))

;; The loss of the first step, printed at the end with the last epoch's mean loss.
(defvar *first-loss* nil)

;; One training step, captured with jit: after the first call (and the first of the smaller
;; last batch), forward, backward, clipping and AdamW replay as compiled kernels.
(defvar train-step
  (jit (lambda (xb yb)
         (let ((loss (nn:cross-entropy (funcall model xb) yb :label-smoothing *smoothing*)))
           (optim:zero-grad! opt)
           (backward loss)
           (optim:clip-grad-norm! opt 1.0 :lazy t)
           (step! opt loss)))))

(defun train-epoch (epoch)
  ;; One pass over the shuffled training images; returns the mean loss. Throughput counts the
  ;; steps after the first of the run (which compiles).
  (let ((done 0) (loss-sum 0.0) (steps 0) (smooth nil) (busy 0.0) (timed 0))
    (data:do-batches (xb yb (getf ds :train-x) (getf ds :train-y)
                      :size *batch* :shuffle t :seed (+ (* 1000 *seed*) epoch))
      (let* ((t0 (seconds))
             (lr (optim:lr opt))
             (loss (nn:check-loss (funcall train-step xb yb) (optim:steps opt)))
             (n (first (shape xb))))
        (step! schedule)
        (unless *first-loss* (setq *first-loss* loss))
        (unless (and (= epoch 1) (= steps 0))
          (setq busy (+ busy (- (seconds) t0)) timed (+ timed n)))
        (setq done (+ done n) steps (+ steps 1) loss-sum (+ loss-sum loss)
              smooth (if smooth (+ (* 0.95 smooth) (* 0.05 loss)) loss))
        (progress epoch done *train-count* (/ timed (max 1e-9 busy)) smooth lr)))
    (terpri)
    (/ loss-sum steps)))

(format t "model: ViT, ~a patches of ~ax~a, ~a wide, ~a blocks, ~a heads, MLP ~ax; ~a parameters~%"
        (* (/ 28 *patch*) (/ 28 *patch*)) *patch* *patch* *dim* *depth* *heads* *mlp-ratio*
        (reduce #'+ (mapcar (lambda (p) (reduce #'* (shape p))) (parameters model))))
(if (command-line-flag "--eval")
    (progn
      (nn:load model *checkpoint* :optimizer opt)
      (format t "test accuracy: ~,2f%~%"
              (* 100 (nn:accuracy model (getf ds :test-x) (getf ds :test-y)))))
    (let ((start (seconds)) (loss nil))
      (format t "training on ~a images, ~a epochs of ~a steps (batch ~a), warm-up ~a steps~%"
              *train-count* *epochs* *steps-per-epoch* *batch* *warmup*)
      (train! model)
      (loop for epoch from 1 to *epochs*
            do (let ((t0 (seconds)))
                 (setq loss (train-epoch epoch))
                 (let ((took (- (seconds) t0))
                       (accuracy (* 100 (nn:accuracy model (getf ds :test-x) (getf ds :test-y)))))
                   (format t "epoch ~a: ~,1f s, mean loss ~,4f, test accuracy ~,2f%~%"
                           epoch took loss accuracy))))
      (nn:save model *checkpoint* :optimizer opt)
      (format t "trained ~a epochs in ~,1f s: loss ~,4f at the first step, ~
                 ~,4f (mean) in the last epoch~%"
              *epochs* (- (seconds) start) *first-loss* loss)
      (format t "saved ~a~%" *checkpoint*)))
