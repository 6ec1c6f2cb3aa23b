;;; SPDX-License-Identifier: Apache-2.0
;;; Memory: a long chain of kernels frees each intermediate after its last reader, so its peak
;;; stays near the largest live set; loops of eager and jitted steps do not grow memory.

(defun stat (k) (getf (tensor-stats) k))
(defvar x (realize (randn '(512 1024))))
(defvar mb (* 512 1024 4))  ; bytes of one (512 1024) f32 buffer

(deftest long-chain-peak
  ;; 30 softmaxes in one graph: 31 kernels, each buffer the size of x. Only the result and
  ;; one intermediate are alive at once.
  (let ((y x))
    (dotimes (i 30) (setq y (softmax (* y 2.0) :axis 1)))
    (is (= (kernel-count y) 31))
    (gc)
    (reset-peak-memory)
    (let ((base (stat :bytes-in-use)))
      (realize y)
      (is (<= (- (stat :peak-bytes) base) (* 2 mb)))
      (is (<= (- (stat :bytes-in-use) base) mb)))))

(defun in-use-after (n step)
  (dotimes (i n) (funcall step))
  (gc)
  (stat :bytes-in-use))

(deftest loops-do-not-grow
  (let* ((w (realize (zeros '(1024 256))))
         (eager (lambda () (realize (prim:assign w (- w (* 0.01 (tanh (+ w 1.0)))))) nil))
         (jstep (jit (lambda (w) (realize (prim:assign w (- w (* 0.01 (tanh (+ w 1.0)))))) nil))))
    (let ((after-10 (in-use-after 10 eager)))
      (is (<= (in-use-after 200 eager) after-10)))
    (let ((after-10 (in-use-after 10 (lambda () (funcall jstep w)))))
      (is (<= (in-use-after 200 (lambda () (funcall jstep w))) after-10)))
    ;; Both ran 420 steps of w <- w - 0.01 tanh(w + 1) from 0, as this scalar loop does.
    (let ((v 0.0))
      (dotimes (i 420) (setq v (- v (* 0.01 (tanh (+ v 1.0))))))
      (is (allclose w (full '(1024 256) v) :atol 1e-4)))))

(run-tests)
