;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: bidirectional recurrent layers (nn:rnn, nn:gru, nn:lstm with :bidirectional t),
;;; as PyTorch's: the backward direction is its own cell run over the reversed sequence, the
;;; output joins both directions on the feature axis, and h_n lists layer 0 forward, layer 0
;;; backward, layer 1 forward, ... Checked against the cells run by hand.

(load "data/grad_check.lisp")
(require 'nn)

(manual-seed 4)

(defun field (m name) (cdr (assoc name (model-fields m))))

(defun run-cell (cell xs state lstm)
  ;; CELL over the list of steps XS: the list (OUTPUTS FINAL).
  (let ((outs nil))
    (dolist (x xs) (setq state (funcall cell x state)) (push (if lstm (first state) state) outs))
    (list (reverse outs) state)))

(defun layer-by-hand (fcell bcell xs fstate bstate lstm)
  ;; One bidirectional layer: (OUTPUTS FORWARD-FINAL BACKWARD-FINAL), each output the forward
  ;; and backward h joined.
  (let ((f (run-cell fcell xs fstate lstm))
        (b (run-cell bcell (reverse xs) bstate lstm)))
    (list (mapcar (lambda (x y) (cat (list x y) :axis -1)) (first f) (reverse (first b)))
          (second f) (second b))))

(defun steps-of (x) (loop for i from 0 below (first (shape x)) collect (slice x i)))

(deftest one-layer
  (let* ((m (nn:rnn 3 4 :bidirectional t))
         (x (randn '(5 2 3)))
         (r (funcall m x))
         (fc (first (field m 'cells))) (bc (first (field m 'reverse-cells))))
    (is (equal (shape (car r)) '(5 2 8)))
    (is (equal (shape (cdr r)) '(2 2 4)))
    ;; The forward half is the cell run forwards; the backward half is the reverse cell run
    ;; on the flipped sequence, flipped back.
    (is (allclose (slice (car r) t t '(0 4)) (stack (first (run-cell fc (steps-of x) nil nil))) :atol 1e-6))
    (is (allclose (slice (car r) t t '(4 8))
                  (flip (stack (first (run-cell bc (steps-of (flip x :axis 0)) nil nil))) :axis 0) :atol 1e-6))
    ;; h_n: the forward direction's last step, the backward direction's first.
    (is (allclose (slice (cdr r) 0) (slice (car r) 4 t '(0 4)) :atol 1e-6))
    (is (allclose (slice (cdr r) 1) (slice (car r) 0 t '(4 8)) :atol 1e-6))
    ;; Parameters per direction, named after the field.
    (is (equal (mapcar #'car (named-parameters m))
               '("cells.0.weight-ih" "cells.0.weight-hh" "cells.0.bias-ih" "cells.0.bias-hh"
                 "reverse-cells.0.weight-ih" "reverse-cells.0.weight-hh" "reverse-cells.0.bias-ih"
                 "reverse-cells.0.bias-hh")))
    ;; Not bidirectional: no reverse cells, as before.
    (is (null (field (nn:rnn 3 4) 'reverse-cells)))))

(deftest two-layers
  ;; A GRU of two layers, batch first, with an initial state: layer 1 reads both directions
  ;; of layer 0 (2*hidden inputs).
  (let* ((m (nn:gru 3 2 :num-layers 2 :bidirectional t :batch-first t))
         (x (randn '(2 4 3)))
         (h0 (randn '(4 2 2)))
         (r (funcall m x h0))
         (cells (field m 'cells)) (rcells (field m 'reverse-cells))
         (xs (loop for i from 0 below 4 collect (slice x t i)))
         (l0 (layer-by-hand (first cells) (first rcells) xs (slice h0 0) (slice h0 1) nil))
         (l1 (layer-by-hand (second cells) (second rcells) (first l0) (slice h0 2) (slice h0 3) nil)))
    (is (equal (shape (field (second cells) 'weight-ih)) '(4 6)))
    (is (equal (shape (car r)) '(2 4 4)))
    (is (allclose (car r) (stack (first l1) :axis 1) :atol 1e-6))
    (is (allclose (cdr r) (stack (list (second l0) (third l0) (second l1) (third l1))) :atol 1e-6))
    (is-error shape-error (funcall m x (randn '(2 2 2))))))

(deftest lstm-state
  ;; An LSTM: (output . (h_n c_n)), both (layers*2 batch hidden); unbatched input too.
  (let* ((m (nn:lstm 2 3 :bidirectional t))
         (x (randn '(3 1 2)))
         (st (list (randn '(2 1 3)) (randn '(2 1 3))))
         (r (funcall m x st))
         (l0 (layer-by-hand (first (field m 'cells)) (first (field m 'reverse-cells)) (steps-of x)
                            (list (slice (first st) 0) (slice (second st) 0))
                            (list (slice (first st) 1) (slice (second st) 1)) t)))
    (is (equal (shape (car r)) '(3 1 6)))
    (is (allclose (car r) (stack (first l0)) :atol 1e-6))
    (is (allclose (first (cdr r)) (stack (list (first (second l0)) (first (third l0)))) :atol 1e-6))
    (is (allclose (second (cdr r)) (stack (list (second (second l0)) (second (third l0)))) :atol 1e-6))
    (let ((u (funcall m (reshape x '(3 2)))))
      (is (equal (shape (car u)) '(3 6)))
      (is (equal (mapcar #'shape (cdr u)) '((2 3) (2 3))))
      (is (allclose (car u) (reshape (car (funcall m x)) '(3 6)) :atol 1e-6)))))

(deftest gradients
  ;; Against finite differences in f64, through both directions and two layers.
  (let ((m (nn:gru 2 2 :num-layers 2 :bidirectional t)))
    (is (grad-check (lambda (x) (car (funcall m x))) (randn '(3 1 2))))
    (is (grad-check (lambda (x h) (cdr (funcall m x h))) (randn '(3 2 2)) (randn '(4 2 2)))))
  (let ((m (nn:lstm 2 2 :bidirectional t)))
    (is (grad-check (lambda (x) (car (funcall m x))) (randn '(3 1 2)))))
  ;; Every parameter of both directions gets a gradient.
  (let* ((m (nn:rnn 2 3 :num-layers 2 :bidirectional t))
         (loss (sum (car (funcall m (randn '(3 2 2)))))))
    (backward loss)
    (is (= (length (parameters m)) 16))
    (is (every (lambda (p) (and (grad p) (> (item (sum (abs (grad p)))) 0))) (parameters m)))))

(run-tests)
