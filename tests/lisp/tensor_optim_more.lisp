;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19, "ops users expect": RMSprop, Adagrad and Lion against PyTorch's update rules
;;; computed by hand in Lisp, and an optimizer defined with optim:define.

(require 'nn)
(require 'optim)

(defun run-steps (make start steps)
  ;; Takes STEPS steps from START (a list) on the loss sum(p^2)/2, whose gradient is p;
  ;; returns the parameter as a list.
  (let* ((p (requires-grad! (realize (tensor start))))
         (opt (funcall make (list p))))
    (dotimes (i steps)
      (optim:zero-grad! opt)
      (step! opt (backward (mul (sum (square p)) 0.5))))
    (to-list p)))

(defun ref-steps (update start steps)
  ;; The same by hand: UPDATE maps (p g step state) to (new-p . new-state) for one element.
  (mapcar (lambda (p0)
            (let ((p p0) (state nil))
              (loop for k from 1 to steps
                    do (let ((r (funcall update p p k state)))
                         (setq p (car r) state (cdr r))))
              p))
          start))

;; Each run starts a little apart from the last (which once hid a bug: a realized tensor's
;; buffer, written in place by an optimizer, was also the cached value of the zeros it was
;; realized from; see same-start-again below).
(defvar *runs* 0)
(defun start ()
  (setq *runs* (+ *runs* 1))
  (mapcar (lambda (v) (+ v (* 0.001 *runs*))) '(1.5 -0.4 0.02 -3.0)))

(defun sgn (x) (cond ((> x 0) 1.0) ((< x 0) -1.0) (t 0.0)))

(deftest rmsprop
  ;; Defaults: lr 0.01, alpha 0.99, eps 1e-8.
  (let ((s0 (start))) (is (allclose (run-steps #'optim:rmsprop s0 5)
                (ref-steps (lambda (p g k st)
                             (let ((v (+ (* 0.99 (or (car st) 0.0)) (* 0.01 g g))))
                               (list (- p (/ (* 0.01 g) (+ (sqrt v) 1e-8))) v)))
                           s0 5)
                :rtol 1e-5))))

(deftest adagrad
  ;; Defaults: lr 0.01, eps 1e-10.
  (let ((s0 (start))) (is (allclose (run-steps #'optim:adagrad s0 5)
                (ref-steps (lambda (p g k st)
                             (let ((s (+ (or (car st) 0.0) (* g g))))
                               (list (- p (/ (* 0.01 g) (+ (sqrt s) 1e-10))) s)))
                           s0 5)
                :rtol 1e-5)))
  (let ((s0 (start))) (is (allclose (run-steps (lambda (ps) (optim:adagrad ps :lr 0.1 :lr-decay 0.5 :initial-accumulator-value 0.3 :weight-decay 0.2))
                           s0 4)
                (ref-steps (lambda (p g k st)
                             (let* ((g (+ g (* 0.2 p)))
                                    (s (+ (or (car st) 0.3) (* g g)))
                                    (clr (/ 0.1 (+ 1 (* (- k 1) 0.5)))))
                               (list (- p (/ (* clr g) (+ (sqrt s) 1e-10))) s)))
                           s0 4)
                :rtol 1e-5))))

(deftest lion
  ;; Defaults: lr 1e-4, betas (0.9 0.99).
  (let ((s0 (start))) (is (allclose (run-steps #'optim:lion s0 5)
                (ref-steps (lambda (p g k st)
                             (let ((m (or (car st) 0.0)))
                               (list (- p (* 1e-4 (sgn (+ (* 0.9 m) (* 0.1 g))))) (+ (* 0.99 m) (* 0.01 g)))))
                           s0 5)
                :rtol 1e-6))))


;; A new kind: sign descent with a running count of steps in its state.
(optim:define 'sign-sgd
  :slots '("count")
  :update (lambda (opt p g state)
            (list (sub p (mul (sign g) (optim:lr-of opt p)))
                  (add (first state) 1.0))))

(defun sign-sgd (params &key (lr 0.1))
  "(sign-sgd PARAMS &key (lr 0.1)) Steps each parameter by -lr sign(g)."
  (optim:make 'sign-sgd params :lr lr))

(deftest defined-optimizers

  (let* ((m (nn:linear 2 1))
         (opt (sign-sgd (parameters m) :lr 0.5)))
    (step! opt (backward (sum (funcall m (tensor '((1.0 -2.0)))))))
    (is (= (optim:steps opt) 1))
    (is (equal (mapcar #'car (optim:state opt m))
               '("optim.step" "optim.lr" "optim.weight.count" "optim.bias.count")))
    (is (allclose (cdr (assoc "optim.weight.count" (optim:state opt m) :test #'equal)) '((1.0) (1.0)))))
  ;; The other kinds' state, for checkpoints.
  (let* ((m (nn:linear 2 1)))
    (is (equal (mapcar #'car (optim:state (optim:rmsprop (parameters m) :momentum 0.9 :centered t) m))
               '("optim.step" "optim.lr" "optim.weight.square-avg" "optim.weight.momentum" "optim.weight.grad-avg"
                 "optim.bias.square-avg" "optim.bias.momentum" "optim.bias.grad-avg")))
    (is (equal (length (optim:state (optim:lion (parameters m)) m)) 4)))
  (is-error type-error (optim:make 'no-such-kind (list (ones 2)) :lr 0.1))
  (is-error type-error (optim:define 'broken :slots nil)))

(deftest same-start-again
  ;; Several optimizers in a row from the same start, each from fresh zero state: a state
  ;; buffer updated in place must not leak into the next optimizer's zeros.
  (let ((s0 '(1.5 -0.4 0.02 -3.0)))
    (run-steps #'optim:adagrad s0 3)
    (run-steps (lambda (ps) (optim:rmsprop ps :momentum 0.9)) s0 2)
    (is (allclose (run-steps (lambda (ps) (optim:lion ps :lr 0.1 :betas '(0.5 0.8) :weight-decay 0.5)) s0 3)
                  (ref-steps (lambda (p g k st)
                               (let* ((m (or (car st) 0.0))
                                      (p (* p (- 1 (* 0.1 0.5)))))
                                 (list (- p (* 0.1 (sgn (+ (* 0.5 m) (* 0.5 g))))) (+ (* 0.8 m) (* 0.2 g)))))
                             s0 3)
                  :rtol 1e-5))
    (is (allclose (run-steps (lambda (ps) (optim:rmsprop ps :lr 0.01 :centered t :momentum 0.9)) s0 4)
                  (ref-steps (lambda (p g k st)
                               (let* ((v (+ (* 0.99 (or (first st) 0.0)) (* 0.01 g g)))
                                      (ga (+ (* 0.99 (or (second st) 0.0)) (* 0.01 g)))
                                      (avg (+ (sqrt (- v (* ga ga))) 1e-8))
                                      (buf (+ (* 0.9 (or (third st) 0.0)) (/ g avg))))
                                 (list (- p (* 0.01 buf)) v ga buf)))
                             s0 4)
                  :rtol 1e-4))))

(run-tests)
