;;; SPDX-License-Identifier: Apache-2.0
;;; A 784-256-10 MLP on Fashion-MNIST: ReLU, Adam (lr 1e-3), batch 128, cross-entropy.
;;;   build/tlisp examples/fashion-mnist-mlp.lisp [--epochs N] [--limit N] [--checkpoint FILE]
;;;   build/tlisp examples/fashion-mnist-mlp.lisp --eval [--checkpoint FILE]
;;; Prints progress and test accuracy after each epoch, and saves the parameters to the
;;; checkpoint (safetensors); --eval reloads them and only measures accuracy.

(require 'nn)
(require 'optim)
(require 'data)

(defun option (name default)
  (let ((tail (member name *argv* #'equal)))
    (if (and tail (cdr tail)) (cdr tail) default)))
(defun option-value (name default)
  (let ((v (option name nil))) (if v (car v) default)))

(defvar *epochs* (parse-number (option-value "--epochs" "1")))
(defvar *limit* (let ((v (option-value "--limit" nil))) (and v (parse-number v))))
(defvar *checkpoint* (option-value "--checkpoint" "fashion-mnist-mlp.safetensors"))
(defvar *eval-only* (member "--eval" *argv* #'equal))

(defmodel mlp (in hidden out)
  ((fc1 (nn:linear in hidden))
   (fc2 (nn:linear hidden out)))
  (x) (fc2 (relu (fc1 x))))

(defun accuracy (model x y)
  ;; The fraction of rows of X whose largest logit is at Y's class, in batches of 1000.
  (eval! model)
  (let ((right 0))
    (data:do-batches (xb yb x y :size 1000)
      (setq right (+ right (item (sum (cast (equals (argmax (model xb) :axis 1) yb) 'i32))))))
    (train! model)
    (/ right (float (first (shape y))))))

(manual-seed 0)
(format t "loading Fashion-MNIST~%")
(defvar ds (data:load-fashion-mnist :limit *limit*))
(defvar model (mlp 784 256 10))

(defun save-checkpoint (file)
  (save-safetensors file (named-parameters model)))

(defun load-checkpoint (file)
  (let ((saved (load-safetensors file)))
    (dolist (p (named-parameters model))
      (let ((v (cdr (assoc (car p) saved #'equal))))
        (unless v (error 'file-error "~a has no tensor named ~a" file (car p)))
        (unless (equal (shape v) (shape (cdr p)))
          (error 'shape-error "~a: ~a is ~s in the file but ~s in the model" file (car p) (shape v) (shape (cdr p))))
        (no-grad (realize (prim:assign (cdr p) v)))))))

(if *eval-only*
    (progn
      (load-checkpoint *checkpoint*)
      (format t "test accuracy: ~,2f%~%" (* 100 (accuracy model (getf ds :test-x) (getf ds :test-y)))))
    (let* ((opt (optim:adam (parameters model) :lr 1e-3))
           (x (getf ds :train-x)) (y (getf ds :train-y))
           (n (first (shape x))))
      (dotimes (epoch *epochs*)
        (let ((start (/ (get-internal-real-time) 1e9)) (done 0) (step 0) (loss nil))
          (data:do-batches (xb yb x y :size 128 :shuffle t :seed epoch)
            (setq loss (nn:cross-entropy (model xb) yb))
            (optim:zero-grad! opt)
            (step! opt (backward loss))
            (setq done (+ done (first (shape xb))) step (+ step 1))
            (when (or (= 0 (mod step 50)) (= done n))
              (let ((l (item loss)))
                (when (/= l l) (error 'arithmetic-error "the loss became NaN at step ~a of epoch ~a" step (+ epoch 1)))
                (data:progress (format nil "epoch ~a" (+ epoch 1)) done n start (format nil "loss ~,4f" l)))))
          (format t "epoch ~a: ~,1f s, test accuracy ~,2f%~%" (+ epoch 1)
                  (- (/ (get-internal-real-time) 1e9) start)
                  (* 100 (accuracy model (getf ds :test-x) (getf ds :test-y))))))
      (save-checkpoint *checkpoint*)
      (format t "saved ~a~%" *checkpoint*)))
