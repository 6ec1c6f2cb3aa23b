;;; SPDX-License-Identifier: Apache-2.0
;;; A 784-256-10 MLP on Fashion-MNIST: ReLU, Adam (lr 1e-3), batch 128, cross-entropy.
;;;   build/tlisp examples/fashion-mnist-mlp.lisp [--epochs N] [--limit N] [--seed N] [--checkpoint FILE] [--plot FILE.svg]
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
(defvar *plot* (command-line-option "--plot"))  ; e.g. --plot curves.svg: loss and accuracy curves

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(manual-seed *seed*)
(format t "loading Fashion-MNIST~%")
(defvar ds (data:load-fashion-mnist :limit *limit*))
(defvar model (mlp 784 256 10))
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
