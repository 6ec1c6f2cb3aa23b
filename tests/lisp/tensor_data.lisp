;;; SPDX-License-Identifier: Apache-2.0
;;; The data module: shuffles, batches (every row once, reproducible from a seed),
;;; Fashion-MNIST with :limit and :normalize, the progress line.

(require 'data)

(deftest shuffles-and-batches
  (let ((p (data:shuffled 10 5)))
    (is (equal (sort (copy-list p) #'<) (range 10)))          ; a permutation
    (is (equal p (data:shuffled 10 5)))                        ; the same for the same seed
    (is (not (equal p (data:shuffled 10 6)))))
  (is (equal (data:batch-indices 5 2) '((0 1) (2 3) (4))))
  (let ((b (data:batch-indices 7 3 :shuffle t :seed 1)))
    (is (equal (mapcar #'length b) '(3 3 1)))
    (is (equal (sort (apply #'append b) #'<) (range 7))))
  (let* ((x (reshape (arange 10.0) 5 2)) (y (arange 5))
         (seen nil))
    (data:do-batches (xb yb x y :size 2)
      (is (equal (first (shape xb)) (first (shape yb))))
      ;; Rows stay paired with their targets.
      (is (equal (to-list (slice xb t 0)) (mapcar (lambda (i) (* 2.0 i)) (to-list yb))))
      (setq seen (append seen (to-list yb))))
    (is (equal seen '(0 1 2 3 4)))
    (let ((batches (data:batches (cons x y) :size 2 :shuffle t :seed 3)))
      (is (equal (length batches) 3))
      (is (equal (sort (apply #'append (mapcar (lambda (b) (to-list (cdr b))) batches)) #'<) '(0 1 2 3 4)))
      (is (every (lambda (b) (equal (to-list (slice (car b) t 0)) (mapcar (lambda (i) (* 2.0 i)) (to-list (cdr b)))))
                 batches)))
    (is-error type-error (data:batches (cons x (arange 4))))))

(deftest fashion-mnist
  (let ((ds (data:load-fashion-mnist :limit 300)))
    (is (equal (shape (getf ds :train-x)) '(300 784)))
    (is (equal (shape (getf ds :test-y)) '(300)))
    (is (equal (dtype (getf ds :train-y)) 'i32))
    (is (<= 0.0 (item (amin (getf ds :train-x))) (item (amax (getf ds :train-x))) 1.0))
    (is (<= 0 (item (amin (getf ds :train-y))) (item (amax (getf ds :train-y))) 9)))
  (let ((ds (data:load-fashion-mnist :limit 300 :normalize t)))
    (is (< (abs (item (mean (getf ds :train-x)))) 1e-4))
    (is (< (abs (- (item (std (getf ds :train-x))) 1.0)) 1e-3)))
  (is (string-contains (handler-case (data:load-fashion-mnist :dir "/no/such/dir") (file-error (e) (condition-message e)))
                       "not found in /no/such/dir")))

(deftest progress-line
  (let ((line (data:progress-line "epoch 1" 50 100 (- (/ (get-internal-real-time) 1e9) 10.0) "loss 0.5")))
    (is (string-contains line "epoch 1 [===============               ] 50/100"))
    (is (string-contains line " 5/s loss 0.5"))))

(run-tests)
