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

(deftest clipping-and-schedules
  ;; Gradients (3 4) and (12): joint norm 13, clipped to 6.5 (half).
  (let* ((a (requires-grad! (tensor '(0.0 0.0)))) (b (requires-grad! (tensor '(0.0)))))
    (backward (add (sum (mul a (tensor '(3.0 4.0)))) (sum (mul b 12.0))))
    (is (< (abs (- (optim:clip-grad-norm! (list a b) 6.5) 13.0)) 1e-4))
    (is (allclose (grad a) (tensor '(1.5 2.0)) :atol 1e-5))
    (is (allclose (grad b) (tensor '(6.0)) :atol 1e-5))
    ;; Under the limit nothing changes.
    (is (< (abs (- (optim:clip-grad-norm! (list a b) 100.0) 6.5)) 1e-4))
    (is (allclose (grad a) (tensor '(1.5 2.0)) :atol 1e-5)))
  (let* ((p (requires-grad! (tensor '(1.0))))
         (lrs (lambda (sched opt n) (let ((out nil)) (dotimes (i n) (push (optim:lr opt) out) (step! sched)) (reverse out)))))
    (let* ((opt (optim:sgd (list p) :lr 1.0)) (s (optim:step-lr opt 2 :gamma 0.5)))
      (is (close-p (funcall lrs s opt 5) '(1.0 1.0 0.5 0.5 0.25))))
    (let* ((opt (optim:sgd (list p) :lr 1.0)) (s (optim:cosine-lr opt 4 :eta-min 0.0)))
      (is (close-p (funcall lrs s opt 6) (list 1.0 (/ (+ 1 (cos (/ pi 4))) 2) 0.5 (/ (+ 1 (cos (* 3 (/ pi 4)))) 2) 0.0 0.0))))
    (let* ((opt (optim:sgd (list p) :lr 1.0)) (s (optim:warmup-lr opt 4 :then (lambda (k) (expt 0.5 k)))))
      (is (close-p (funcall lrs s opt 7) '(0.0 0.25 0.5 0.75 1.0 0.5 0.25))))))

(deftest checkpoints
  (manual-seed 3)
  (defmodel net () ((fc (nn:linear 3 2)) (bn (nn:batch-norm 2))) (x) (bn (fc x)))
  (let* ((file (concat (or (getenv "TMPDIR") "/tmp") "/tl-optim-ckpt.safetensors"))
         (m (net)) (opt (optim:adam (parameters m) :lr 0.01)) (x (randn '(4 3))))
    (dotimes (i 3) (optim:zero-grad! opt) (step! opt (backward (sum (square (m x))))))
    (nn:save m file :optimizer opt)
    (is (equal (mapcar #'car (load-safetensors file))
               '("fc.weight" "fc.bias" "bn.weight" "bn.bias" "bn.running-mean" "bn.running-var" "optim.step" "optim.lr"
                 "optim.fc.weight.exp-avg" "optim.fc.weight.exp-avg-sq" "optim.fc.bias.exp-avg" "optim.fc.bias.exp-avg-sq"
                 "optim.bn.weight.exp-avg" "optim.bn.weight.exp-avg-sq" "optim.bn.bias.exp-avg" "optim.bn.bias.exp-avg-sq")))
    ;; A fresh model and optimizer take up exactly where these left off.
    (let* ((m2 (net)) (opt2 (optim:adam (parameters m2) :lr 0.5)))
      (nn:load m2 file :optimizer opt2)
      (is (= (optim:steps opt2) 3))
      (is (< (abs (- (optim:lr opt2) 0.01)) 1e-7))
      (is (equal (mapcar (lambda (p) (to-list (cdr p))) (named-tensors m2))
                 (mapcar (lambda (p) (to-list (cdr p))) (named-tensors m))))
      (optim:zero-grad! opt) (step! opt (backward (sum (square (m x)))))
      (optim:zero-grad! opt2) (step! opt2 (backward (sum (square (m2 x)))))
      (is (allclose (cdr (first (named-parameters m2))) (cdr (first (named-parameters m))))))
    ;; Names and shapes that do not match are listed together.
    (defmodel other () ((fc (nn:linear 3 4)) (extra (nn:linear 1 1))) (x) x)
    (let ((msg (handler-case (progn (nn:load (other) file) "loaded") (file-error (e) (condition-message e)))))
      (is (string-contains msg "does not match other"))
      (is (string-contains msg "fc.weight is (3 2) in the file but (3 4) in the model"))
      (is (string-contains msg "extra.weight is missing"))
      (is (string-contains msg "bn.running-mean is in the file but not in the model")))))

;; Issue 21: clipping inside a captured step (no host read of the norm), and nanoGPT's
;; warm-up then cosine schedule.
(deftest lazy-clipping-and-warmup-cosine
  (let* ((a (requires-grad! (tensor '(0.0 0.0)))) (b (requires-grad! (tensor '(0.0)))))
    (backward (add (sum (mul a (tensor '(3.0 4.0)))) (sum (mul b 12.0))))
    (let ((norm (optim:clip-grad-norm! (list a b) 6.5 :lazy t)))
      (is (tensorp norm))
      (is (< (abs (- (item norm) 13.0)) 1e-4)))
    (is (allclose (grad a) (tensor '(1.5 2.0)) :atol 1e-5))
    (is (allclose (grad b) (tensor '(6.0)) :atol 1e-5))
    (is (< (abs (- (item (optim:clip-grad-norm! (list a b) 100.0 :lazy t)) 6.5)) 1e-4))
    (is (allclose (grad a) (tensor '(1.5 2.0)) :atol 1e-5)))
  ;; The same clipped AdamW steps, captured with jit (replayed) and not, on a loss whose
  ;; gradient norm (about 20 at the start) is above the limit.
  (flet ((train (captured)
           (let* ((p (requires-grad! (realize (tensor '(4.0 -8.0 16.0)))))
                  (opt (optim:adamw (list p) :lr 0.1 :weight-decay 0.1))
                  (body (lambda ()
                          (let ((loss (sum (square p))))
                            (optim:zero-grad! opt)
                            (backward loss)
                            (optim:clip-grad-norm! opt 1.0 :lazy t)
                            (step! opt loss))))
                  (run (if captured (jit body) body)))
             (dotimes (i 6) (funcall run))
             (to-list p))))
    (is (close-p (train t) (train nil))))
  (is (close-p (mapcar (lambda (k) (optim:warmup-cosine k 4 12 :min-factor 0.1)) '(0 1 3 4 8 12 20))
               (list 0.25 0.5 1.0 1.0 (+ 0.1 (* 0.45 (+ 1 (cos (/ pi 2))))) 0.1 0.1)))
  (let* ((p (requires-grad! (tensor '(1.0))))
         (opt (optim:sgd (list p) :lr 2.0))
         (s (optim:warmup-cosine-lr opt 2 4 :min-factor 0.0))
         (lrs nil))
    (dotimes (i 6) (push (optim:lr opt) lrs) (step! s))
    (is (close-p (reverse lrs) '(1.0 2.0 2.0 1.0 0.0 0.0)))))

(run-tests)
