;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: write-after-read. A lazy value means what it meant when it was built: an assign
;;; that writes a buffer in place afterwards does not change it (without gradients it reads a
;;; snapshot of the old data); a value with gradients whose old data is gone is an error when
;;; realized or differentiated, like PyTorch's version counter, never a silent new answer.

(defun tl (x) (to-list x))

(deftest lazy-values-keep-their-meaning
  (let* ((a (realize (tensor '(1.0 2.0 3.0))))
         (y (add a 1))
         (y2 (mul (add a 1) 2)))
    (realize (prim:assign a (tensor '(10.0 20.0 30.0))))
    (is (equal (tl y) '(2.0 3.0 4.0)))
    (is (equal (tl y2) '(4.0 6.0 8.0)))
    ;; the same expression built again reads the new data
    (is (equal (tl (add a 1)) '(11.0 21.0 31.0)))
    (is (equal (tl a) '(10.0 20.0 30.0)))
    ;; a realized value stays as it was after a later assign
    (let ((z (add a 5)))
      (is (equal (tl z) '(15.0 25.0 35.0)))
      (realize (prim:assign a (zeros '(3))))
      (is (equal (tl z) '(15.0 25.0 35.0)))
      (is (equal (tl (add a 5)) '(5.0 5.0 5.0))))))

(deftest assigns-in-a-row
  ;; each assign reads the value the previous one wrote
  (let ((acc (realize (zeros '(2)))))
    (dotimes (i 4) (realize (prim:assign acc (add acc (tensor '(1.0 10.0))))))
    (is (equal (tl acc) '(4.0 40.0)))
    (let ((before (mul acc 1.0)))
      (realize (prim:assign acc (add acc 1.0)))
      (is (equal (tl before) '(4.0 40.0)))
      (is (equal (tl acc) '(5.0 41.0))))))

(deftest overwritten-values-with-gradients-are-errors
  ;; the loss realized before the update: backward through it would read the new weights
  (let* ((w (requires-grad! (realize (tensor '(1.0 2.0 3.0)))))
         (loss (sum (mul w w))))
    (is (= (item loss) 14.0))
    (no-grad (realize (prim:assign w (tensor '(100.0 100.0 100.0)))))
    (is-error type-error (backward loss))
    (is (string-contains (handler-case (backward loss) (error (e) (condition-message e)))
                         "assign then wrote in place")))
  ;; a lazy value with gradients built before the update
  (let* ((w (requires-grad! (realize (tensor '(1.0 2.0 3.0)))))
         (l (mul w 3.0)))
    (no-grad (realize (prim:assign w (tensor '(100.0 100.0 100.0)))))
    (is-error type-error (tl l))
    ;; built again after the update, it is fine
    (is (equal (tl (mul w 3.0)) '(300.0 300.0 300.0))))
  ;; backward before the update, then the update: the gradients are the old weights'
  (let* ((w (requires-grad! (realize (tensor '(1.0 2.0 3.0)))))
         (loss (sum (mul w w))))
    (backward loss)
    (no-grad (realize (prim:assign w (sub w (mul (grad w) 0.1)))))
    (is (equal (tl (grad w)) '(2.0 4.0 6.0)))
    (is (allclose w (tensor '(0.8 1.6 2.4))))))

(deftest the-loss-realized-with-its-update
  ;; realize-all computes the loss from the weights before the update it carries
  (let* ((p (realize (tensor '(0.0 0.0))))
         (loss (sum (square (sub p (tensor '(1.0 2.0)))))))
    (realize-all (list loss (prim:assign p (add p 1.0))))
    (is (= (item loss) 5.0))
    (is (equal (tl p) '(1.0 1.0)))))

(deftest assigns-in-one-realize-read-the-old-data
  ;; Every value in a realize-all reads the data from before its writes, in either order of
  ;; the roots: an RMSprop-like state update whose second value recomputes the first's.
  (dotimes (order 2)
    (let* ((v (realize (tensor '(1.0 2.0))))
           (b (realize (tensor '(10.0 20.0))))
           (new-v (add (mul v 0.5) 1.0))             ; (1.5 2.0)
           (new-b (add (mul b 0.5) new-v))           ; (6.5 12.0), from v as it was
           (writes (list (prim:assign v new-v) (prim:assign b new-b))))
      (realize-all (if (= order 0) writes (reverse writes)))
      (is (equal (tl v) '(1.5 2.0)))
      (is (equal (tl b) '(6.5 12.0)))))
  ;; a swap
  (let ((a (realize (tensor '(1.0 2.0)))) (b (realize (tensor '(3.0 4.0)))))
    (realize-all (list (prim:assign a (mul b 1.0)) (prim:assign b (mul a 1.0))))
    (is (equal (list (tl a) (tl b)) '((3.0 4.0) (1.0 2.0))))))

(deftest jit-replays-keep-lazy-values-too
  ;; A captured function that assigns: lazy values built outside it, before a call, keep the
  ;; data they read, on the traced call and on replays.
  (let* ((w (realize (tensor '(1.0 2.0))))
         (bump (jit (lambda (d) (realize (prim:assign w (add w d))) nil)))
         (y0 (mul w 10.0)))
    (funcall bump (tensor '(1.0 1.0)))                ; traced
    (let ((y1 (mul w 10.0)))
      (funcall bump (tensor '(1.0 1.0)))              ; replayed
      (let ((y2 (mul w 10.0)))
        (funcall bump (tensor '(1.0 1.0)))            ; replayed
        (is (equal (tl y0) '(10.0 20.0)))
        (is (equal (tl y1) '(20.0 30.0)))
        (is (equal (tl y2) '(30.0 40.0)))
        (is (equal (tl w) '(4.0 5.0)))))))

(deftest writes-into-views-reach-their-base
  (let ((k (realize (zeros '(3 4)))))
    ;; a row, a column range, a strided slice, a transpose, a reshape, a reversed axis
    (realize (prim:assign (slice k 1) (tensor '(1.0 2.0 3.0 4.0))))
    (is (equal (tl k) '((0.0 0.0 0.0 0.0) (1.0 2.0 3.0 4.0) (0.0 0.0 0.0 0.0))))
    (realize (prim:assign (slice k t '(1 3)) (tensor '((5.0 6.0) (7.0 8.0) (9.0 10.0)))))
    (is (equal (tl k) '((0.0 5.0 6.0 0.0) (1.0 7.0 8.0 4.0) (0.0 9.0 10.0 0.0))))
    (realize (prim:assign (slice k t '(nil nil 2)) (ones '(3 2))))
    (is (equal (tl k) '((1.0 5.0 1.0 0.0) (1.0 7.0 1.0 4.0) (1.0 9.0 1.0 0.0))))
    (realize (prim:assign (transpose k 0 1) (reshape (arange 12 :dtype 'f32) '(4 3))))
    (is (equal (tl k) '((0.0 3.0 6.0 9.0) (1.0 4.0 7.0 10.0) (2.0 5.0 8.0 11.0))))
    (realize (prim:assign (slice k t '(nil nil -1)) (reshape (arange 12 :dtype 'f32) '(3 4))))
    (is (equal (tl k) '((3.0 2.0 1.0 0.0) (7.0 6.0 5.0 4.0) (11.0 10.0 9.0 8.0))))
    (realize (prim:assign (reshape k '(12)) (zeros '(12))))
    (is (equal (tl k) '((0.0 0.0 0.0 0.0) (0.0 0.0 0.0 0.0) (0.0 0.0 0.0 0.0)))))
  ;; a KV cache filled one position at a time
  (let ((cache (realize (zeros '(2 5 3)))))
    (dotimes (pos 5)
      (realize (prim:assign (slice cache t pos) (full '(2 3) (float pos)))))
    (is (equal (tl (slice cache 1 t 0)) '(0.0 1.0 2.0 3.0 4.0))))
  ;; views that cannot be written through
  (is-error shape-error (prim:assign (expand (realize (zeros '(1 3))) '(2 3)) (ones '(2 3))))
  (is-error shape-error (prim:assign (pad (realize (zeros '(2))) '((1 1))) (ones '(4))))
  (is-error type-error (prim:assign (slice (add (realize (zeros '(2 2))) 1) 0) (ones '(2))))
  (is-error shape-error (prim:assign (slice (realize (zeros '(2 2))) 0) (ones '(3)))))

(run-tests)
