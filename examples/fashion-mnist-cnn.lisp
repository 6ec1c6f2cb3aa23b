;;; SPDX-License-Identifier: Apache-2.0
;;; A small CNN on Fashion-MNIST: conv 32 3x3, ReLU, max-pool 2, conv 64 3x3, ReLU, max-pool 2,
;;; linear 10; Adam (lr 1e-3), batch 128, cross-entropy; pixels standardized.
;;;   build/tlisp examples/fashion-mnist-cnn.lisp [--epochs N] [--limit N] [--seed N] [--checkpoint FILE] [--plot FILE.svg]
;;;   build/tlisp examples/fashion-mnist-cnn.lisp --eval [--checkpoint FILE]
;;; Prints progress and test accuracy after each epoch, and saves the model and the optimizer's
;;; state to the checkpoint (safetensors); --eval reloads it and only measures accuracy.

(require 'nn)
(require 'optim)
(require 'data)

(defvar *epochs* (command-line-option "--epochs" 1))
(defvar *limit* (command-line-option "--limit"))
(defvar *seed* (command-line-option "--seed" 1))
(defvar *checkpoint* (command-line-option "--checkpoint" "fashion-mnist-cnn.safetensors"))
(defvar *plot* (command-line-option "--plot"))  ; e.g. --plot curves.svg: loss and accuracy curves

(defmodel cnn ()
  ((conv1 (nn:conv2d 1 32 3))
   (conv2 (nn:conv2d 32 64 3))
   (fc (nn:linear (* 64 5 5) 10)))
  ;; X: rows of 784 pixels.
  (x)
  (let* ((img (reshape x -1 1 28 28))
         (h (max-pool2d (relu (conv1 img)) 2))       ; (batch 32 13 13)
         (h (max-pool2d (relu (conv2 h)) 2)))        ; (batch 64 5 5)
    (fc (flatten h 1))))

(manual-seed *seed*)
(format t "loading Fashion-MNIST~%")
(defvar ds (data:load-fashion-mnist :limit *limit* :normalize t))
(defvar model (cnn))
(defvar opt (optim:adam (parameters model) :lr 1e-3))

;; The training loop (nn:fit): shuffled batches of 128, each step cross-entropy, backward and
;; Adam, captured with jit so its kernels replay with no Lisp in between.
(if (command-line-flag "--eval")
    (progn
      (nn:load model *checkpoint* :optimizer opt)
      (format t "test accuracy: ~,2f%~%" (* 100 (nn:accuracy model (getf ds :test-x) (getf ds :test-y)))))
    (nn:fit model opt (getf ds :train-x) (getf ds :train-y) :epochs *epochs* :seed *seed*
            :test-x (getf ds :test-x) :test-y (getf ds :test-y) :checkpoint *checkpoint*
            :plot *plot*))
