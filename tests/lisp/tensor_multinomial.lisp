;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: multinomial and randperm (stdlib/tensor/70-random.lisp). The draws are seeded,
;;; so these statistics are the same on every run and device; the tolerances (5 standard
;;; deviations) would hold for nearly any seed as well.

(defun tl (x) (to-list x))

(manual-seed 70)

(defun counts (samples c)
  ;; How often each of 0..C-1 occurs in SAMPLES (any shape), as a list.
  (tl (sum (reshape (one-hot samples c) (list -1 c)) :axis 0)))

(defun all-near (counts n ps)
  ;; Every count of COUNTS near its probability in PS.
  (every #'identity (mapcar (lambda (c p) (near-binomial c n p)) counts ps)))

(defun near-binomial (count n p)
  ;; COUNT of N draws is within 5 standard deviations of N*P.
  (<= (abs (- count (* n p))) (max 1.0 (* 5 (sqrt (* n p (- 1 p)))))))

(deftest with-replacement
  (let* ((w (tensor '(1.0 2.0 0.0 3.0 4.0)))      ; not normalized; one zero weight
         (s (multinomial w 20000 :replacement t))
         (k (counts s 5)))
    (is (eq (dtype s) 'i64))
    (is (equal (shape s) '(20000)))
    (is (= (nth 2 k) 0))
    (is (all-near k 20000 '(0.1 0.2 0.0 0.3 0.4))))
  ;; Rows are separate distributions; integer weights are accepted.
  (let* ((s (multinomial (tensor '((0 0 1) (5 5 0))) 4000 :replacement t)))
    (is (equal (shape s) '(2 4000)))
    (is (equal (counts (slice s 0) 3) '(0 0 4000)))
    (is (all-near (counts (slice s 1) 3) 4000 '(0.5 0.5 0.0))))
  ;; A weight of 1 in many tiny ones still draws its share (the sums are in f64).
  (let* ((w (cat (list (full '(1000) 1e-6) (tensor '(1.0)))))
         (k (counts (multinomial w 5000 :replacement t) 1001)))
    (is (near-binomial (nth 1000 k) 5000 (/ 1.0 (+ 1.0 1e-3))))))

(deftest without-replacement
  ;; 4000 rows of one distribution, two draws each: distinct, never the zero weight, and the
  ;; first and second draws distributed as sequential draws without replacement are.
  (let* ((w '(1.0 2.0 0.0 3.0 4.0)) (rows 4000)
         (s (multinomial (expand (tensor w) rows 5) 2))
         (first-draw (slice s t 0)) (second-draw (slice s t 1))
         (p1 (mapcar (lambda (x) (/ x 10.0)) w))
         (p2 (mapcar (lambda (wj) (let ((acc 0.0))
                                    (dolist (wi w acc)
                                      (unless (or (= wi 0) (= wi wj))   ; the weights are distinct
                                        (setq acc (+ acc (* (/ wi 10.0) (/ wj (- 10.0 wi)))))))))
                     w)))
    (is (equal (shape s) (list rows 2)))
    (is (= (item (sum (equals first-draw second-draw))) 0))
    (is (= (nth 2 (counts s 5)) 0))
    (is (all-near (counts first-draw 5) rows p1))
    (is (all-near (counts second-draw 5) rows p2)))
  ;; All of them: a permutation of the nonzero categories.
  (let ((s (tl (multinomial (tensor '(0.5 0.1 0.2 0.7 0.05)) 5))))
    (is (equal (sort (copy-list s) #'<) '(0 1 2 3 4))))
  (is (equal (shape (multinomial (tensor '(1 1 1)) 1)) '(1))))

(deftest randperm-draws
  (let ((p (randperm 1000)))
    (is (eq (dtype p) 'i64))
    (is (equal (tl (first (sort p))) (range 1000)))
    (is (not (equal (tl p) (range 1000)))))
  (is (eq (dtype (randperm 4 :dtype 'i32)) 'i32))
  (is (equal (shape (randperm 0)) '(0)))
  (is (equal (tl (randperm 1)) '(0)))
  ;; 400 permutations of 4: each a permutation, and each value first about 100 times.
  (let ((firsts (make-list 4 0)) (ok t))
    (dotimes (i 400)
      (let ((p (tl (randperm 4))))
        (setq ok (and ok (equal (sort (copy-list p) #'<) '(0 1 2 3))))
        (incf (nth (car p) firsts))))
    (is ok)
    (is (every (lambda (c) (near-binomial c 400 0.25)) firsts)))
  ;; Fresh numbers on every draw; the same after the same seed.
  (manual-seed 7)
  (let ((a (tl (randperm 50))) (b (tl (randperm 50))))
    (manual-seed 7)
    (is (equal (tl (randperm 50)) a))
    (is (not (equal a b)))))

(deftest errors
  (is-error type-error (multinomial (tensor '(0.1 -1.0 0.6)) 1))
  (is-error type-error (multinomial (tensor (list 0.1 nan 0.6)) 1))
  (is-error type-error (multinomial (tensor (list 0.1 inf 0.6)) 1 :replacement t))
  (is-error type-error (multinomial (tensor '((0.1 1.0) (0.0 0.0))) 1 :replacement t))
  (is-error type-error (multinomial (tensor '(0.1 0.0 0.0 0.3)) 3))        ; two nonzero weights
  (is-error type-error (multinomial (tensor '(0.1 0.2 0.3)) 4))
  (is-error type-error (multinomial (tensor '(0.1 0.2 0.3)) 0 :replacement t))
  (is-error shape-error (multinomial (ones '(2 2 2)) 1))
  (is-error type-error (randperm -1))
  (is-error dtype-error (randperm 3 :dtype 'f99)))

(run-tests)
