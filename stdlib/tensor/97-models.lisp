;;; SPDX-License-Identifier: Apache-2.0
;;; Models: defmodel makes a constructor whose result is a callable model holding named
;;; fields (parameters, sub-models, settings). Layers are in the nn module (require 'nn).

(defmacro defmodel (name params fields &rest forward)
  "(defmodel NAME (PARAM...) ((FIELD INIT)...) [DOC] (ARG...) BODY...)
Defines NAME as a function of PARAM... that builds a model: each FIELD is bound to its INIT
in order (later INITs see earlier fields), and calling the model with ARG... runs BODY,
which sees the fields and SELF, the model. Fields that are tensors marked with
requires-grad! are its parameters, and fields that are models are its sub-models:
  (defmodel doc-ex-mlp (in hidden out)
    ((fc1 (nn:linear in hidden)) (fc2 (nn:linear hidden out)))
    (x) (fc2 (relu (fc1 x))))  ; => doc-ex-mlp"
  (let* ((doc (when (and (stringp (car forward)) (cdr forward)) (car forward)))
         (forward (if doc (cdr forward) forward))
         (args (car forward))
         (body (cdr forward)))
    (when (and (symbolp name) (special-operator-p name))
      (error 'program-error "defmodel: ~a is a special form; it cannot be redefined" name))
    (unless (listp fields)
      (error 'type-error "defmodel ~a: expected a list of (FIELD INIT) after the parameters, got ~s" name fields))
    `(defun ,name ,params
       ,@(if doc (list doc) nil)
       (let* (,@fields)
         (let ((self (%make-model ',name (list ,@(mapcar (lambda (f) `(cons ',(car f) ,(car f))) fields))
                                  #'identity)))
           (%set-model-function self (lambda ,args ,@body))
           self)))))

(defun %named-tensors (model keep)
  ;; MODEL's tensors for which KEEP is true, with dotted names, in definition order.
  (let ((out nil))
    (labels ((walk (v prefix)
               (cond ((model-p v)
                      (dolist (f (model-fields v))
                        (walk (cdr f) (concat prefix (if (equal prefix "") "" ".") (string-downcase (symbol-name (car f)))))))
                     ((and (tensorp v) (funcall keep v))
                      (unless (find v out :key #'cdr :test #'eq) (setq out (cons (cons prefix v) out))))
                     ((consp v)
                      (let ((i 0))
                        (dolist (x v)
                          (walk x (concat prefix (if (equal prefix "") "" ".") (format nil "~a" i)))
                          (setq i (+ i 1))))))))
      (walk model ""))
    (reverse out)))

(defun named-parameters (model)
  "(named-parameters MODEL) MODEL's parameters with their dotted names, as an alist
((\"fc1.weight\" . TENSOR) ...), in definition order.
  (mapcar #'car (named-parameters (nn:linear 2 3)))  ; => (\"weight\" \"bias\")
  (mapcar #'car (named-parameters (nn:sequential (nn:linear 2 3))))  ; => (\"layers.0.weight\" \"layers.0.bias\")"
  (%named-tensors model #'requires-grad-p))

(defun named-buffers (model)
  "(named-buffers MODEL) MODEL's buffers (tensors it keeps that are not parameters, such as
batch-norm's running statistics) with their dotted names, in definition order.
  (mapcar #'car (named-buffers (nn:batch-norm 4)))  ; => (\"running-mean\" \"running-var\")"
  (%named-tensors model (lambda (x) (not (requires-grad-p x)))))

(defun named-tensors (model)
  "(named-tensors MODEL) MODEL's parameters and buffers with their dotted names, in definition
order: what a checkpoint holds.
  (mapcar #'car (named-tensors (nn:batch-norm 4)))  ; => (\"weight\" \"bias\" \"running-mean\" \"running-var\")"
  (%named-tensors model (lambda (x) t)))

(defun parameters (model)
  "(parameters MODEL) MODEL's parameters (tensors that require gradients), sub-models'
included, in definition order.
  (mapcar #'shape (parameters (nn:linear 4 2)))  ; => ((4 2) (2))"
  (mapcar #'cdr (named-parameters model)))

(defun %set-mode (model flag)
  (labels ((walk (v)
             (cond ((model-p v) (%set-training v flag) (dolist (f (model-fields v)) (walk (cdr f))))
                   ((consp v) (dolist (x v) (walk x))))))
    (walk model))
  model)

(defun train! (model)
  "(train! MODEL) Puts MODEL and its sub-models in training mode (dropout drops, batch-norm
uses batch statistics); returns MODEL.
  (training-p (train! (eval! (nn:dropout 0.5))))  ; => t"
  (%set-mode model t))

(defun eval! (model)
  "(eval! MODEL) Puts MODEL and its sub-models in evaluation mode; returns MODEL.
  (training-p (eval! (nn:dropout 0.5)))  ; => nil
  (to-list (funcall (eval! (nn:dropout 0.5)) (ones '(4))))  ; => (1.0 1.0 1.0 1.0)"
  (%set-mode model nil))
