;;; SPDX-License-Identifier: Apache-2.0
;;; nn layers and losses beyond linear: convolution and pooling layers, normalization,
;;; embedding, dropout, recurrent cells, attention, binary cross-entropy and KL divergence.
;;; Values marked "torch" were computed by PyTorch 1.13 (f64) from the same deterministic
;;; weights (det below); gradients are checked against finite differences.

(require 'nn)
(require 'optim)
(load "data/grad_check.lisp")

(defun tl (x) (to-list x))

(defun det (shp scale phase)
  ;; Deterministic values sin(0.7 i + PHASE) * SCALE in row-major order, f64.
  (let ((n (apply #'* shp)))
    (reshape (mul (sin (add (mul (arange n :dtype 'f64) 0.7) phase)) scale) shp)))

(defun field (m name) (cdr (assoc name (model-fields m))))

(defun set-field! (m name value)
  (no-grad (realize (prim:assign (field m name) (cast value (dtype (field m name)))))))

(defun near (x expected &optional (atol 1e-4))
  (allclose (reshape (cast x 'f64) (list (numel x))) (tensor expected :dtype 'f64) :atol atol :rtol 0))

(defun message-of (thunk)
  (handler-case (progn (funcall thunk) "no error") (error (e) (condition-message e))))

(manual-seed 5)

(deftest conv-layers
  (let ((c (nn:conv2d 3 8 '(3 5) :padding 1)))
    (is (equal (mapcar #'car (named-parameters c)) '("weight" "bias")))
    (is (equal (shape (field c 'weight)) '(8 3 3 5)))
    ;; PyTorch's default: uniform in +-1/sqrt(fan-in), fan-in = 3 * 3 * 5.
    (is (<= (item (amax (abs (field c 'weight)))) (/ 1.0 (sqrt 45))))
    (is (> (item (amax (abs (field c 'weight)))) (* 0.8 (/ 1.0 (sqrt 45)))))
    (is (equal (shape (c (randn '(2 3 10 10)))) '(2 8 10 8)))
    (is (string-contains (message-of (lambda () (c (randn '(2 4 10 10)))))
                         "nn:conv2d (3 -> 8, 3x5): expected an input of shape (batch 3 height width), got (2 4 10 10)")))
  (is (equal (shape ((nn:conv2d 4 6 3 :groups 2 :bias nil) (randn '(1 4 5 5)))) '(1 6 3 3)))
  (is (equal (shape ((nn:conv1d 2 3 3 :padding 1) (randn '(4 2 9)))) '(4 3 9)))
  (is (equal (shape ((nn:conv-transpose2d 3 2 3 :stride 2 :padding 1 :output-padding 1) (randn '(1 3 4 4)))) '(1 2 8 8)))
  (is (equal (shape ((nn:sequential (nn:conv2d 1 4 3) (nn:relu) (nn:max-pool2d 2) (nn:flatten)) (randn '(5 1 8 8))))
             '(5 36)))
  (is (equal (tl ((nn:avg-pool2d 2) (reshape (arange 16.0) 1 1 4 4))) '((((2.5 4.5) (10.5 12.5)))))))

(deftest batch-norm
  (let ((bn (nn:batch-norm 3)) (x (det '(4 3 2 2) 1.0 0.4)))
    (is (equal (mapcar #'car (named-parameters bn)) '("weight" "bias")))
    (is (equal (mapcar #'car (named-buffers bn)) '("running-mean" "running-var")))
    ;; torch: training output, then the running statistics after that one step.
    (is (near (slice (bn x) 0 t 0 0) '(0.29841 0.15545 -0.59078)))
    (is (near (field bn 'running-mean) '(0.01822 -0.01664 0.01313)))
    (is (near (field bn 'running-var) '(0.95143 0.95147 0.95155)))
    (eval! bn)
    (is (near (slice (bn x) 0 t 0 0) '(0.38055 -0.04279 -0.2999)))
    ;; Evaluation does not move the statistics.
    (is (near (field bn 'running-mean) '(0.01822 -0.01664 0.01313)))
    (is (string-contains (message-of (lambda () (bn (randn '(2 4)))))
                         "nn:batch-norm (3): expected an input of shape (batch 3 ...), got (2 4)")))
  ;; 1-d inputs (batch features) too; the training output has mean 0 and variance 1.
  (let* ((bn (nn:batch-norm 5)) (y (bn (add (mul (randn '(64 5)) 3.0) 2.0))))
    (is (< (item (amax (abs (mean y :axis 0)))) 1e-5))
    (is (< (item (amax (abs (sub (mean (square y) :axis 0) 1.0)))) 1e-3))))

(deftest normalization
  (let* ((x (randn '(2 3 4)))
         (ln (nn:layer-norm 4))
         (ln2 (nn:layer-norm '(3 4)))
         (rms (nn:rms-norm 4))
         (gn (nn:group-norm 2 4)))
    (is (allclose (ln x) (layer-norm x) :atol 1e-5))
    (is (allclose (ln2 x) (layer-norm x :axis '(1 2)) :atol 1e-5))
    (is (allclose (rms x) (div x (sqrt (add (mean (square x) :axis -1 :keepdim t) 1e-6))) :atol 1e-5))
    (is (equal (mapcar #'car (named-parameters ln)) '("weight" "bias")))
    (is (equal (mapcar #'car (named-parameters rms)) '("weight")))
    ;; torch: GroupNorm(2, 4) on (2 4 3).
    (is (near (slice ((nn:group-norm 2 4) (det '(2 4 3) 1.0 0.9)) 0)
              '(0.80908 1.10802 0.75707 -0.0787 -1.00622 -1.58926 -1.63282 -0.9786 -0.01442 0.80625 1.09742 0.72217)))
    (is (string-contains (message-of (lambda () (ln (randn '(2 5)))))
                         "nn:layer-norm: expected an input of shape (... 4), got (2 5)"))
    (is (string-contains (message-of (lambda () (nn:group-norm 3 4))) "3 groups must divide 4 channels"))
    (is (equal (shape (gn (randn '(2 4 5 5)))) '(2 4 5 5)))))

(deftest embedding-and-dropout
  (let* ((e (nn:embedding 10 3 :padding-idx 0))
         (w (field e 'weight))
         (ix (tensor '((1 0) (4 1)) :dtype 'i32))
         (y (e ix)))
    (is (equal (shape y) '(2 2 3)))
    (is (allclose (slice y 0 0) (slice w 1)))
    (is (allclose (slice y 1 0) (slice w 4)))
    (is (equal (tl (slice w 0)) '(0.0 0.0 0.0)))
    ;; Only the rows used get gradient; the padding row none.
    (backward (sum (e ix)))
    (is (equal (tl (sum (grad w) :axis 1)) '(0.0 6.0 0.0 0.0 3.0 0.0 0.0 0.0 0.0 0.0)))
    (is (string-contains (message-of (lambda () (e (tensor '(1.0))))) "expected a tensor of integer indices")))
  (let* ((d (nn:dropout 0.25)) (x (ones '(100 100))) (y (d x))
         (kept (item (sum (gt y 0)))))
    (is (< 7200 kept 7800))
    (is (allclose (amax y) (tensor (/ 1.0 0.75))))
    (eval! d)
    (is (allclose (d x) x))
    (is (string-contains (message-of (lambda () (nn:dropout 1.0))) "must be in [0, 1)"))))

(deftest recurrent-cells
  ;; Our weights are (in gates*hidden), PyTorch's the transpose.
  (let ((x (det '(2 3) 1.0 0.3)) (h (det '(2 4) 0.5 1.1)) (c (det '(2 4) 0.5 2.0)))
    (flet ((setup (m gates)
             (set-field! m 'weight-ih (det (list 3 (* gates 4)) 0.4 0.1))
             (set-field! m 'weight-hh (det (list 4 (* gates 4)) 0.3 0.5))
             (set-field! m 'bias-ih (det (list (* gates 4)) 0.2 0.9))
             (set-field! m 'bias-hh (det (list (* gates 4)) 0.1 1.7))
             m))
      (let ((rnn (setup (nn:rnn-cell 3 4) 1)) (gru (setup (nn:gru-cell 3 4) 3)) (lstm (setup (nn:lstm-cell 3 4) 4)))
        (is (near (rnn x h) '(0.14891 0.29995 0.31254 0.18308 0.37768 0.36935 0.19319 -0.08815)))
        (is (near (gru x h) '(0.30183 0.30012 0.16239 -0.06048 -0.10302 0.12062 0.23799 0.22973)))
        (let ((hc (lstm x (list h c))))
          (is (near (first hc) '(0.07128 -0.02186 -0.0899 -0.06657 -0.08595 0.08841 0.12609 0.12728)))
          (is (near (second hc) '(0.12377 -0.03658 -0.15858 -0.13096 -0.15948 0.21521 0.396 0.40884))))
        ;; Without a state: zeros.
        (is (allclose (gru x) (gru x (zeros '(2 4)))))
        (is (equal (shape (first (lstm (randn '(3))))) '(4)))
        (is (string-contains (message-of (lambda () (gru (randn '(2 5)))))
                             "nn:gru-cell (3 -> 4): expected an input of shape (... 3), got (2 5)"))))))

(deftest attention
  (let ((m (nn:multihead-attention 4 2)) (q (det '(2 3 4) 1.0 0.0)))
    (set-field! m 'in-weight (det '(4 12) 0.3 0.2))
    (set-field! m 'in-bias (det '(12) 0.1 0.4))
    (set-field! m 'out-weight (det '(4 4) 0.25 0.6))
    (set-field! m 'out-bias (det '(4) 0.05 0.8))
    ;; torch: self-attention, causal, and cross-attention to 5 keys.
    (is (near (m q) '(0.03585 0.03693 0.02064 -0.00535 0.03569 0.03679 0.02058 -0.0053 0.03592 0.03699 0.02065
                      -0.00539 0.03922 0.04584 0.0309 0.00143 0.03962 0.04602 0.03078 0.00107 0.03925 0.04586
                      0.0309 0.00141)))
    (is (near (m q nil nil :causal t)
              '(0.03401 0.03054 0.0127 -0.0111 0.03829 0.04321 0.0278 -0.00068 0.03592 0.03699 0.02065 -0.00539
                0.04473 0.05884 0.04527 0.01041 0.03773 0.04218 0.02679 -0.0012 0.03925 0.04586 0.0309 0.00141)))
    (let ((kv (det '(2 5 4) 0.8 1.3)))
      (is (near (m q kv kv) '(0.03755 0.0412 0.02547 -0.00224 0.03752 0.04118 0.02548 -0.0022 0.03757 0.04121
                              0.02547 -0.00225 0.03804 0.04303 0.02778 -0.00053 0.0383 0.04318 0.02774 -0.00074
                              0.03806 0.04304 0.02778 -0.00054))))
    ;; A boolean mask equal to the causal one gives the same.
    (is (allclose (m q nil nil :mask (tril (ones '(3 3) :dtype 'bool))) (m q nil nil :causal t) :atol 1e-6))
    (is (string-contains (message-of (lambda () (m (randn '(2 3 5)))))
                         "nn:multihead-attention (4, 2 heads): expected inputs of shape (batch seq 4), got (2 3 5)"))
    (is (string-contains (message-of (lambda () (nn:multihead-attention 6 4))) "4 heads must divide the embedding size 6"))))

(deftest losses
  (let ((p (sigmoid (det '(2 3) 2.0 0.1))) (lg (det '(2 3) 2.0 0.1))
        (tg (cast (gt (det '(2 3) 1.0 0.5) 0) 'f64))
        (lp (log-softmax (det '(2 3) 1.0 0.2) :axis 1)) (tp (softmax (det '(2 3) 1.0 1.2) :axis 1)))
    ;; torch
    (is (near (nn:binary-cross-entropy p tg) '(0.40446)))
    (is (near (nn:binary-cross-entropy-with-logits lg tg) '(0.40446)))
    (is (near (nn:kl-div lp tp) '(0.02138)))
    (is (near (nn:kl-div lp tp :reduction :batchmean) '(0.06415)))
    (is (near (nn:kl-div lp (log tp) :reduction :sum :log-target t) '(0.1283)))
    ;; Probabilities of exactly 0 and 1 stay finite (log clamped at -100).
    (is (near (nn:binary-cross-entropy (tensor '(0.0 1.0)) (tensor '(1.0 1.0)) :reduction :sum) '(100.0)))
    (is (equal (shape (nn:binary-cross-entropy p tg :reduction :none)) '(2 3)))
    (is (string-contains (message-of (lambda () (nn:kl-div lp (ones '(3 2)))))
                         "nn:kl-div: prediction of shape (2 3) and target of shape (3 2) differ"))
    (is (string-contains (message-of (lambda () (nn:check-loss (tensor nan) 17)))
                         "the loss became nan at step 17"))))

(manual-seed 9)
(deftest layer-gradients
  (let ((bn (nn:batch-norm 2)) (ln (nn:layer-norm 3)) (gn (nn:group-norm 2 4)))
    (is (grad-check (lambda (x) (bn x)) (det '(3 2 2) 1.0 0.4)))
    (is (grad-check (lambda (x) (ln x)) (randn '(2 3))))
    (is (grad-check (lambda (x) (gn x)) (randn '(2 4 3))))
    (let ((gru (nn:gru-cell 3 2)) (lstm (nn:lstm-cell 3 2)))
      (is (grad-check (lambda (x h) (gru x h)) (randn '(2 3)) (randn '(2 2))))
      (is (grad-check (lambda (x h c) (apply #'add (lstm x (list h c)))) (randn '(2 3)) (randn '(2 2)) (randn '(2 2)))))
    (is (grad-check (lambda (p y) (nn:binary-cross-entropy p y)) (add (mul (rand '(5)) 0.8) 0.1) (rand '(5))))
    (is (grad-check (lambda (x) (nn:kl-div (log-softmax x :axis 1) (softmax (tensor '((1.0 2.0 0.5))) :axis 1))) (randn '(1 3))))
    (is (grad-check (lambda (q k v) (nn:attention q k v :causal t)) (randn '(2 3 2)) (randn '(2 3 2)) (randn '(2 3 2))))))

(run-tests)
