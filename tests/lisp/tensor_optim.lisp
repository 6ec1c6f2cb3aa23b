;;; SPDX-License-Identifier: Apache-2.0
;;; optim: sgd (momentum, Nesterov, weight decay), adam and adamw against the update rules
;;; computed by hand in scalar Lisp (as PyTorch documents them), and training a small model.

(require 'nn)
(require 'optim)

(defvar *p0* '(1.0 -2.0 0.25))

(defun run-optimizer (make steps)
  ;; STEPS of OPT on loss = sum(p * c) + 0.5 * sum(p^2): gradient c + p.
  (let* ((p (requires-grad! (tensor *p0*)))
         (c (tensor '(0.5 -1.0 2.0)))
         (opt (funcall make (list p))))
    (dotimes (i steps)
      (optim:zero-grad! opt)
      (step! opt (backward (add (sum (mul p c)) (mul (sum (square p)) 0.5)))))
    (to-list p)))

(defun scalar-run (update steps)
  ;; The same problem per coordinate, with UPDATE (p g k state) -> (p . state).
  (mapcar (lambda (p0 c)
            (let ((p p0) (state nil))
              (dotimes (k steps)
                (let ((r (funcall update p (+ c p) (+ k 1) state)))
                  (setq p (car r) state (cdr r))))
              p))
          *p0* '(0.5 -1.0 2.0)))

(defun close-p (a b) (every #'identity (mapcar (lambda (x y) (< (abs (- x y)) 1e-5)) a b)))

(deftest sgd
  (is (close-p (run-optimizer (lambda (ps) (optim:sgd ps :lr 0.1)) 4)
               (scalar-run (lambda (p g k s) (cons (- p (* 0.1 g)) nil)) 4)))
  ;; Momentum: b <- g (first step), then mu b + g; Nesterov uses g + mu b; weight decay adds wd p.
  (dolist (nesterov '(nil t))
    (is (close-p (run-optimizer (lambda (ps) (optim:sgd ps :lr 0.1 :momentum 0.9 :nesterov nesterov :weight-decay 0.01)) 5)
                 (scalar-run (lambda (p g k b)
                               (let* ((g (+ g (* 0.01 p)))
                                      (b (if (= k 1) g (+ (* 0.9 b) g)))
                                      (u (if nesterov (+ g (* 0.9 b)) b)))
                                 (cons (- p (* 0.1 u)) b)))
                             5)))))

(defun adam-update (lr b1 b2 eps wd decoupled)
  (lambda (p g k s)
    (let* ((m (if s (car s) 0.0)) (v (if s (cdr s) 0.0))
           (g (if decoupled g (+ g (* wd p))))
           (p (if decoupled (* p (- 1 (* lr wd))) p))
           (m (+ (* b1 m) (* (- 1 b1) g)))
           (v (+ (* b2 v) (* (- 1 b2) g g)))
           (mhat (/ m (- 1 (expt b1 k))))
           (denom (+ (/ (sqrt v) (sqrt (- 1 (expt b2 k)))) eps)))
      (cons (- p (* lr (/ mhat denom))) (cons m v)))))

(deftest adam
  (is (close-p (run-optimizer (lambda (ps) (optim:adam ps :lr 0.05)) 6)
               (scalar-run (adam-update 0.05 0.9 0.999 1e-8 0.0 nil) 6)))
  (is (close-p (run-optimizer (lambda (ps) (optim:adam ps :lr 0.05 :betas '(0.8 0.99) :weight-decay 0.1)) 6)
               (scalar-run (adam-update 0.05 0.8 0.99 1e-8 0.1 nil) 6)))
  (is (close-p (run-optimizer (lambda (ps) (optim:adamw ps :lr 0.05 :weight-decay 0.1)) 6)
               (scalar-run (adam-update 0.05 0.9 0.999 1e-8 0.1 t) 6))))

(deftest interface
  (let* ((p (requires-grad! (tensor '(1.0 2.0))))
         (opt (optim:sgd (list p) :lr 0.5)))
    (is (= (optim:lr opt) 0.5))
    (optim:set-lr! opt 0.25)
    (is (= (optim:lr opt) 0.25))
    (step! opt)                                   ; no gradient yet: nothing moves
    (is (equal (to-list p) '(1.0 2.0)))
    (is-error type-error (optim:adam nil))
    (is-error type-error (optim:sgd (list 1 2)))))

(deftest training
  (manual-seed 7)
  (defmodel mlp (in hidden out) ((fc1 (nn:linear in hidden)) (fc2 (nn:linear hidden out))) (x) (fc2 (relu (fc1 x))))
  (let* ((n 64)
         (x (realize (cat (list (add (randn (list n 2)) 2.0) (add (randn (list n 2)) -2.0)) :axis 0)))
         (y (realize (cat (list (zeros (list n) :dtype 'i32) (ones (list n) :dtype 'i32)) :axis 0))))
    (dolist (make (list (lambda (ps) (optim:sgd ps :lr 0.1 :momentum 0.9))
                        (lambda (ps) (optim:adam ps :lr 0.01))
                        (lambda (ps) (optim:adamw ps :lr 0.01))))
      (let* ((m (mlp 2 16 2)) (opt (funcall make (parameters m))) (first-loss nil) (loss nil))
        (dotimes (i 50)
          (setq loss (nn:cross-entropy (m x) y))
          (unless first-loss (setq first-loss (item loss)))
          (optim:zero-grad! opt)
          (step! opt (backward loss)))
        (is (< (item loss) (* 0.1 first-loss)))))))

(run-tests)
