;;; SPDX-License-Identifier: Apache-2.0
;;; A 784-256-10 MLP on Fashion-MNIST: ReLU, Adam (lr 1e-3), batch 128, cross-entropy.
;;;   build/tlisp examples/fashion-mnist-mlp.lisp [--epochs N] [--limit N] [--seed N] [--checkpoint FILE]
;;;   build/tlisp examples/fashion-mnist-mlp.lisp --eval [--checkpoint FILE]
;;; Prints progress and test accuracy after each epoch, and saves the model and the optimizer's
;;; state to the checkpoint (safetensors); --eval reloads it and only measures accuracy.

(require 'nn)
(require 'optim)
(require 'data)

(defvar *epochs* (command-line-option "--epochs" 3))
(defvar *limit* (command-line-option "--limit"))
(defvar *seed* (command-line-option "--seed" 1))
(defvar *checkpoint* (command-line-option "--checkpoint" "fashion-mnist-mlp.safetensors"))

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(manual-seed *seed*)
(format t "loading Fashion-MNIST~%")
(defvar ds (data:load-fashion-mnist :limit *limit*))
(defvar model (mlp 784 256 10))
(defvar opt (optim:adam (parameters model) :lr 1e-3))

;; One training step, captured: after the first call (per batch shape) its kernels replay
;; with no Lisp in between.
(defjit train-step (xb yb)
  (let ((loss (nn:cross-entropy (model xb) yb)))
    (optim:zero-grad! opt)
    (step! opt (backward loss))))

(defun test-accuracy ()
  (* 100 (nn:accuracy model (getf ds :test-x) (getf ds :test-y))))

(if (command-line-flag "--eval")
    (progn
      (nn:load model *checkpoint* :optimizer opt)
      (format t "test accuracy: ~,2f%~%" (test-accuracy)))
    (let* ((x (getf ds :train-x)) (y (getf ds :train-y)) (n (first (shape x))) (step 0))
      (dotimes (epoch *epochs*)
        (let ((start (/ (get-internal-real-time) 1e9)) (done 0) (loss nil))
          (data:do-batches (xb yb x y :size 128 :shuffle t :seed (+ (* 1000 *seed*) epoch))
            (setq loss (funcall train-step xb yb))
            (setq done (+ done (first (shape xb))) step (+ step 1))
            (when (or (= 0 (mod step 50)) (= done n))
              (data:progress (format nil "epoch ~a" (+ epoch 1)) done n start
                             (format nil "loss ~,4f" (nn:check-loss loss step)))))
          (format t "epoch ~a: ~,1f s, test accuracy ~,2f%~%" (+ epoch 1)
                  (- (/ (get-internal-real-time) 1e9) start) (test-accuracy))))
      (nn:save model *checkpoint* :optimizer opt)
      (format t "saved ~a~%" *checkpoint*)))
