;;; SPDX-License-Identifier: Apache-2.0
;;; (jit f): a captured function computes what f does on every call, replays (no re-tracing)
;;; for a known signature, traces again for a new one, reads weights and random draws afresh,
;;; and runs uncaptured what it cannot replay.

(defun tl (x) (to-list x))
(defun stat (k) (getf (jit-stats) k))
(defmacro counting (key &rest body)
  ;; How much the jit-stats counter KEY grew while BODY ran.
  `(let ((before (stat ,key))) ,@body (- (stat ,key) before)))

(defvar w (realize (randn '(4 3))))
(defun mlp-eager (x) (relu (+ (matmul x w) 1.0)))
(defjit mlp (x) (relu (+ (matmul x w) 1.0)))

(deftest replay-matches-eager
  (let ((a (realize (randn '(2 4)))) (b (realize (randn '(2 4)))))
    (is (equal (tl (mlp a)) (tl (mlp-eager a))))
    ;; The second call replays: no tracing, no Lisp, the same answer as eager on new data.
    (is (= (counting :replays (is (equal (tl (mlp b)) (tl (mlp-eager b))))) 1))
    (is (= (counting :traces (mlp a) (mlp b)) 0))
    ;; Results come back realized, and lazy arguments are fine.
    (is (realizedp (mlp a)))
    (is (equal (tl (mlp (* a 2.0))) (tl (mlp-eager (* a 2.0)))))))

(deftest new-signatures-trace-again
  (let ((a (randn '(5 4))))
    ;; Another batch size, then another dtype: each traces once and is right.
    (is (= (counting :traces (is (equal (tl (mlp a)) (tl (mlp-eager a))))) 1))
    (is (= (counting :traces (mlp a)) 0))
    (is (= (counting :traces (is (allclose (mlp (cast a 'f64)) (mlp-eager (cast a 'f64))))) 1))
    ;; Non-tensor arguments are part of the signature.
    (let ((scale (jit (lambda (x k) (* x k)))))
      (is (equal (tl (funcall scale (tensor '(1.0 2.0)) 2.0)) '(2.0 4.0)))
      (is (equal (tl (funcall scale (tensor '(1.0 2.0)) 3.0)) '(3.0 6.0)))
      (is (equal (tl (funcall scale (tensor '(1.0 2.0)) 2.0)) '(2.0 4.0))))))

(deftest weights-updated-in-place-are-seen
  (let* ((v (realize (tensor '(1.0 2.0 3.0))))
         (f (jit (lambda (x) (* x v)))))
    (is (equal (tl (funcall f (tensor '(1.0 1.0 1.0)))) '(1.0 2.0 3.0)))
    (realize (prim:assign v (tensor '(10.0 20.0 30.0))))
    (is (equal (tl (funcall f (tensor '(1.0 1.0 1.0)))) '(10.0 20.0 30.0)))))

(deftest a-training-step-with-assign
  ;; Gradient descent on sum((p - target)^2), the update written with assign inside the step:
  ;; jitted and eager runs agree step by step.
  (let* ((target (tensor '(1.0 -2.0 0.5)))
         (p1 (realize (tensor '(0.0 0.0 0.0))))
         (p2 (realize (tensor '(0.0 0.0 0.0))))
         ;; The loss is realized with the update: built before the assign and realized after
         ;; it, it would need the data the assign overwrote (an error since issue 19).
         (step (lambda (p lr)
                 (let ((loss (sum (square (- p target)))))
                   (realize-all (list loss (prim:assign p (- p (* lr (* 2.0 (- p target)))))))
                   loss)))
         (jstep (jit step)))
    (dotimes (i 5)
      (is (equal (tl (funcall jstep p1 0.1)) (tl (funcall step p2 0.1))))
      (is (equal (tl p1) (tl p2))))
    (is (allclose p1 (tensor '(0.67232 -1.34464 0.33616)) :atol 1e-5))))

(deftest random-draws-are-fresh-and-reproducible
  (let ((noisy (jit (lambda (x) (+ x (rand (shape x))))))
        (zeros4 (zeros '(4))))
    (manual-seed 7)
    (let* ((e1 (tl (rand '(4)))) (e2 (tl (rand '(4)))) (e3 (tl (rand '(4)))))
      (manual-seed 7)
      (let* ((j1 (tl (funcall noisy zeros4))) (j2 (tl (funcall noisy zeros4))) (j3 (tl (funcall noisy zeros4))))
        (is (not (equal j1 j2)))
        (is (equal (list j1 j2 j3) (list e1 e2 e3)))
        ;; Draws after a replay continue the sequence.
        (manual-seed 7)
        (dotimes (i 3) (funcall noisy zeros4))
        (let ((after (tl (rand '(4)))))
          (manual-seed 7)
          (dotimes (i 3) (rand '(4)))
          (is (equal after (tl (rand '(4))))))))))

(deftest arguments-are-told-apart
  (let ((diff (jit (lambda (x y) (- x y))))
        (a (realize (tensor '(1.0 2.0))))
        (b (realize (tensor '(5.0 7.0)))))
    ;; Called first with one tensor twice, then with two: the aliasing is in the signature.
    (is (equal (tl (funcall diff a a)) '(0.0 0.0)))
    (is (equal (tl (funcall diff a b)) '(-4.0 -5.0)))
    (is (equal (tl (funcall diff b a)) '(4.0 5.0))))
  ;; An argument that is also a captured weight: later calls with other tensors still read
  ;; the weight.
  (let* ((v (realize (tensor '(2.0 3.0))))
         (f (jit (lambda (x) (* x v)))))
    (is (equal (tl (funcall f v)) '(4.0 9.0)))
    (is (equal (tl (funcall f (tensor '(1.0 1.0)))) '(2.0 3.0)))))

(deftest results-of-any-shape
  (let ((f (jit (lambda (x) (list x (sum x) :sum 3 (list (* x 2.0) "s"))))))
    (dotimes (i 2)
      (let* ((x (realize (tensor (list 1.0 (float i)))))
             (r (funcall f x)))
        (is (eq (first r) x))               ; an argument comes back as itself
        (is (equal (tl (second r)) (+ 1.0 i)))
        (is (equal (subseq r 2 4) '(:sum 3)))
        (is (equal (tl (first (nth 4 r))) (list 2.0 (* 2.0 i))))
        (is (equal (second (nth 4 r)) "s")))))
  (is-error type-error (funcall (jit (lambda (x) (make-hash-table))) (tensor 1.0))))

(deftest nested-jit-functions
  (let* ((inner (jit (lambda (x) (* x 3.0))))
         (outer (jit (lambda (x) (+ (funcall inner x) 1.0)))))
    (is (equal (tl (funcall outer (tensor '(1.0 2.0)))) '(4.0 7.0)))
    (is (equal (tl (funcall outer (tensor '(3.0 4.0)))) '(10.0 13.0)))
    (is (equal (tl (funcall inner (tensor '(3.0 4.0)))) '(9.0 12.0)))))

(deftest what-cannot-be-replayed-runs-uncaptured
  ;; item reads data into Lisp: the function runs uncaptured (with a warning on stderr), and
  ;; stays right.
  (let ((f (jit (lambda (x) (if (> (item (sum x)) 0) (* x 2.0) (* x -1.0))))))
    (is (equal (tl (funcall f (tensor '(1.0 2.0)))) '(2.0 4.0)))
    (is (equal (tl (funcall f (tensor '(-1.0 -2.0)))) '(1.0 2.0))))
  ;; An error during tracing leaves nothing behind: the next call traces again.
  (let* ((fail t)
         (f (jit (lambda (x) (when fail (error 'type-error "boom")) (+ x 1.0)))))
    (is-error type-error (funcall f (tensor '(1.0))))
    (setq fail nil)
    (is (equal (tl (funcall f (tensor '(1.0)))) '(2.0)))))

(require 'nn)
(require 'optim)

(deftest a-captured-adam-training-step
  ;; A whole step (forward, backward, Adam) captured: the same losses and weights as eager
  ;; steps, and the loss is the one before the step changed the weights.
  (flet ((run (use-jit)
           (manual-seed 0)
           (let* ((w (requires-grad! (realize (randn '(4 3)))))
                  (opt (optim:adam (list w) :lr 0.1))
                  (step (lambda (x)
                          (let ((loss (sum (square (matmul x w)))))
                            (optim:zero-grad! opt)
                            (step! opt (backward loss)))))
                  (f (if use-jit (jit step) step))
                  (out nil))
             (manual-seed 1)
             (dotimes (i 4)
               (let* ((x (realize (randn '(2 4))))
                      (before (item (sum (square (matmul x w))))))
                 (push (list (item (funcall f x)) before (to-list w)) out)))
             (reverse out))))
    (let ((eager (run nil)) (jitted (run t)))
      (is (equal eager jitted))
      (is (every (lambda (r) (< (abs (- (first r) (second r))) 1e-4)) jitted)))))

(deftest guards-run-on-replay
  ;; An index check inside a captured function holds on every call, not only the traced one.
  (let ((f (jit (lambda (labels) (sum (one-hot labels 3))))))
    (is (equal (item (funcall f (tensor '(0 2) :dtype 'i32))) 2))
    (is (equal (item (funcall f (tensor '(1 1) :dtype 'i32))) 2))
    (is-error index-error (funcall f (tensor '(1 3) :dtype 'i32)))
    (is (string-contains (handler-case (funcall f (tensor '(5 0) :dtype 'i32)) (index-error (e) (condition-message e)))
                         "out of range for an axis of size 3 (found in a jit replay)"))))

(run-tests)
