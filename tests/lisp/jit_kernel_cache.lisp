;;; SPDX-License-Identifier: Apache-2.0
;;; The JIT device keeps the most recently used compiled kernels, at most (jit-kernel-cache)
;;; of them besides those its kept plans run: a kernel let go is released once no plan runs it
;;; and compiled again (or loaded from the disk cache) when it comes back, and a (jit f) trace
;;; keeps the kernels of the plans it replays.

(defun stat (k) (getf (jit-stats) k))
(defmacro counting (key &rest body)
  `(let ((before (stat ,key))) ,@body (- (stat ,key) before)))
(defmacro made (&rest body)
  ;; Kernels compiled or loaded from the disk cache while BODY runs.
  `(let ((before (+ (stat :kernels-compiled) (stat :disk-hits))))
     ,@body
     (- (+ (stat :kernels-compiled) (stat :disk-hits)) before)))
(defun step-of (n)
  ;; One kernel per N (its shape is in the code), on new data each time.
  (let ((x (tensor (make-list n :initial-element 1.0))))
    (to-list (sum (mul (add x 1.0) 2.0)))))
(defun expected (n) (* 4.0 n))
(defmacro with-caches ((plans kernels) &rest body)
  `(let ((old-plans (jit-plan-cache)) (old-kernels (jit-kernel-cache)))
     (unwind-protect (progn (jit-plan-cache ,plans) (jit-kernel-cache ,kernels) ,@body)
       (jit-plan-cache old-plans)
       (jit-kernel-cache old-kernels))))

(deftest the-cache-keeps-at-most-its-size
  (is (= (jit-kernel-cache) 4096))
  (with-caches (2 4)
    (is (= (jit-kernel-cache) 4))
    (let ((dropped (counting :kernels-dropped
                     (loop for n from 1 to 40 do (is (= (step-of n) (expected n)))))))
      (is (<= (stat :kernels) 4))
      (is (>= dropped 36)))
    ;; The most recent is kept: no compile, no load. An early one comes back: made again.
    (is (= (made (step-of 40)) 0))
    (is (= (made (is (= (step-of 1) (expected 1)))) 1))))

(deftest a-smaller-size-drops-at-once
  (loop for n from 1 to 6 do (step-of n))
  (with-caches (1024 2)
    (is (<= (stat :kernels) 2))))

(deftest a-trace-keeps-its-kernels
  (with-caches (1 1)
    (let ((f (jit (lambda (x) (relu (sub (mul x 3.0) 1.0))))))
      (is (equal (to-list (funcall f (tensor '(1.0 -1.0 2.0)))) '(2.0 0.0 5.0)))
      ;; Other shapes push the trace's plan and kernel out of both caches ...
      (loop for n from 1 to 10 do (step-of n))
      ;; ... and the trace replays them all the same, on new data, compiling nothing.
      (is (= (made (is (= (counting :replays
                             (is (equal (to-list (funcall f (tensor '(0.0 4.0 -3.0)))) '(0.0 11.0 0.0))))
                           1)))
             0)))))

(deftest bad-sizes-are-errors
  (is (eq (handler-case (jit-kernel-cache 0) (type-error (e) 'refused)) 'refused))
  (is (eq (handler-case (jit-kernel-cache 'many) (type-error (e) 'refused)) 'refused))
  (is (= (jit-kernel-cache) 4096)))
(run-tests)
