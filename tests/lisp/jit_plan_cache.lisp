;;; SPDX-License-Identifier: Apache-2.0
;;; The JIT device keeps the most recently used plans (a graph structure's schedule, lowered
;;; and compiled), at most (jit-plan-cache) of them: a program whose shapes keep changing does
;;; not grow without bound, a dropped plan is made again when its structure comes back, and a
;;; (jit f) trace keeps replaying the plans it recorded after the cache lets them go.

(defun stat (k) (getf (jit-stats) k))
(defmacro counting (key &rest body)
  `(let ((before (stat ,key))) ,@body (- (stat ,key) before)))
(defun step-of (n)
  ;; One graph structure per N (a shape of its own), on new data each time: the same
  ;; expression on the same tensor would be the same, already computed, node.
  (let ((x (tensor (make-list n :initial-element 1.0))))
    (to-list (sum (mul (add x 1.0) 2.0)))))
(defun expected (n) (* 4.0 n))

(deftest the-cache-keeps-at-most-its-size
  (let ((old (jit-plan-cache)))
    (is (= old 1024))
    (is (= (jit-plan-cache 4) 4))
    (let ((dropped (counting :plans-dropped
                     (loop for n from 1 to 40 do (is (= (step-of n) (expected n)))))))
      (is (<= (stat :plans) 4))
      ;; 40 new structures, 4 kept: all but those were dropped (and the plans held before).
      (is (>= dropped 36)))
    ;; The most recent are kept: the last structure is a hit, an early one is made again.
    (is (= (counting :plan-hits (step-of 40)) 1))
    (is (= (counting :plan-hits (step-of 1)) 0))
    (is (= (step-of 1) (expected 1)))
    (jit-plan-cache old)
    (is (= (jit-plan-cache) old))))

(deftest a-smaller-size-drops-at-once
  (loop for n from 1 to 6 do (step-of n))
  (let ((old (jit-plan-cache)))
    (jit-plan-cache 2)
    (is (<= (stat :plans) 2))
    (jit-plan-cache old)))

(deftest a-dropped-plan-still-replays-in-a-trace
  (let ((old (jit-plan-cache))
        (f (jit (lambda (x) (relu (sub (mul x 3.0) 1.0))))))
    (jit-plan-cache 2)
    (is (equal (to-list (funcall f (tensor '(1.0 -1.0 2.0)))) '(2.0 0.0 5.0)))
    ;; Other structures push the trace's plan out of the cache ...
    (loop for n from 1 to 10 do (step-of n))
    ;; ... and the trace replays it all the same, on new data.
    (is (= (counting :replays
             (is (equal (to-list (funcall f (tensor '(0.0 4.0 -3.0)))) '(0.0 11.0 0.0))))
           1))
    (jit-plan-cache old)))

(deftest bad-sizes-are-errors
  (is (eq (handler-case (jit-plan-cache 0) (type-error (e) 'refused)) 'refused))
  (is (eq (handler-case (jit-plan-cache 'many) (type-error (e) 'refused)) 'refused))
  (is (= (jit-plan-cache) 1024)))
(run-tests)
