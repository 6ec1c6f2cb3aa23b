;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: sort, argsort and topk (stdlib/tensor/55-sort.lisp), by the bitonic network
;;; and by counting (short axes), each test both ways: on axes that are not powers of two,
;;; every dtype (and its extreme values, which meet the network's sentinels), ties, NaN,
;;; and gradients; against a stable sort in plain Lisp.

(load "data/grad_check.lisp")
(defun tl (x) (to-list x))

(manual-seed 55)

(defmacro both-ways (&rest body)
  ;; BODY with short axes sorted by counting (the default), then by the network.
  `(dolist (limit (list *sort-rank-limit* 0))
     (let ((*sort-rank-limit* limit)) ,@body)))

(defun stable-order (row descending)
  ;; The indices that sort ROW (a list) stably, NaN last (first when DESCENDING).
  (let ((key (lambda (v) (cond ((not (floatp v)) v) ((/= v v) (if descending inf inf)) (t v))))
        (idx (range (length row))))
    (let ((keyed (mapcar (lambda (i) (cons (funcall key (nth i row)) i)) idx)))
      (mapcar #'cdr (sort keyed (lambda (a b) (if descending (> (car a) (car b)) (< (car a) (car b)))))))))

(deftest every-length
  (both-ways
    ;; Lengths up to 33 (paddings of 0 to 15) with many ties, both directions, against the
    ;; Lisp sort (stable: equal keys keep their order).
    (dolist (n '(1 2 3 5 6 8 13 16 17 32 33))
      (let* ((x (randint 0 5 (list 2 n)))
             (rows (tl x)))
        (is (equal (tl (argsort x)) (mapcar (lambda (r) (stable-order r nil)) rows)))
        (is (equal (tl (argsort x :descending t)) (mapcar (lambda (r) (stable-order r t)) rows)))
        (is (equal (tl (first (sort x))) (mapcar (lambda (r) (sort (copy-list r) #'<)) rows)))))))

(deftest a-longer-axis
  (both-ways
    ;; 1000 floats (padded to 1024) in a middle axis of a 3-d tensor.
    (let* ((x (randn '(2 1000 3)))
           (s (sort x :axis 1))
           (col (lambda (r b c) (mapcar (lambda (row) (nth c row)) (nth b (tl r))))))
      (dolist (b '(0 1))
        (dolist (c '(0 2))
          (is (equal (funcall col (first s) b c) (sort (copy-list (funcall col x b c)) #'<)))))
      (is (equal (shape (second s)) '(2 1000 3)))
      ;; The indices point at the values.
      (is (allclose (gather x (second s) :axis 1) (first s) :rtol 0)))))

(deftest dtypes-and-extremes
  (both-ways
    ;; The padding's sentinel is the dtype's extreme: real extremes tie with it and stay first.
    (is (equal (mapcar #'tl (sort (tensor '(127 1 -128 127 0) :dtype 'i8)))
               '((-128 0 1 127 127) (2 4 1 0 3))))
    (is (equal (mapcar #'tl (sort (tensor '(127 1 -128 127 0) :dtype 'i8) :descending t))
               '((127 127 1 0 -128) (0 3 1 4 2))))
    (is (equal (mapcar #'tl (sort (tensor '(255 1 255 0 3) :dtype 'u8)))
               '((0 1 3 255 255) (3 1 4 0 2))))
    (is (equal (mapcar #'tl (sort (tensor '(32767 -32768 5) :dtype 'i16) :descending t))
               '((32767 5 -32768) (0 2 1))))
    (is (equal (mapcar #'tl (sort (tensor '(2147483647 1 2147483647 0 -2147483648) :dtype 'i32)))
               '((-2147483648 0 1 2147483647 2147483647) (4 3 1 0 2))))
    (is (equal (mapcar #'tl (sort (tensor '(4294967295 1 4294967295 0 7) :dtype 'u32)))
               '((0 1 7 4294967295 4294967295) (3 1 4 0 2))))
    (is (equal (mapcar #'tl (sort (tensor '(9223372036854775807 1 -9223372036854775808 0 9223372036854775807) :dtype 'i64)
                                  :descending t))
               '((9223372036854775807 9223372036854775807 1 0 -9223372036854775808) (0 4 1 3 2))))
    (is (equal (mapcar #'tl (sort (tensor '(t nil t nil t)) :descending t))
               '((t t t nil nil) (0 2 4 1 3))))
    (dolist (dt '(f16 bf16 f64))
      (let ((s (sort (tensor (list 3.5 1.0 nan -2.0 (- inf) 1.0 inf) :dtype dt))))
        (is (eq (dtype (first s)) dt))
        (is (equal (tl (second s)) '(4 3 1 5 0 6 2))))
      (is (equal (tl (second (sort (tensor (list 3.5 1.0 nan -2.0 (- inf) 1.0 inf) :dtype dt) :descending t)))
                 '(2 6 0 1 5 3 4))))
    ;; -inf ties the descending sentinel; NaN the ascending one.
    (is (equal (tl (argsort (tensor (list (- inf) nan (- inf) 0.0 nan)) :descending t)) '(1 4 3 0 2)))
    (is (equal (tl (argsort (tensor (list nan 0.0 nan))) ) '(1 0 2)))
    ;; -0.0 keeps its sign (values move by where, never by arithmetic).
    (is (equal (tl (first (sort (tensor (list 1.0 -0.0 -1.0))))) '(-1.0 -0.0 1.0)))))

(deftest topk-cases
  (both-ways
    (let ((x (randn '(3 37))))
      (dolist (k '(0 1 5 37))
        (let ((r (topk x k)) (s (sort x :descending t)))
          (is (equal (shape (first r)) (list 3 k)))
          (is (equal (tl (first r)) (tl (slice (first s) t (list 0 k)))))
          (is (equal (tl (second r)) (tl (slice (second s) t (list 0 k)))))))
      (is (equal (tl (first (topk x 2 :largest nil :axis 0)))
                 (tl (slice (first (sort x :axis 0)) (list 0 2))))))
    (is (equal (mapcar #'tl (topk (tensor '(1 3 3 2 3)) 2)) '((3 3) (1 2))))
    (is (equal (mapcar #'tl (topk (tensor '(1 3 3 2 3)) 2 :largest nil)) '((1 2) (0 3))))))

(deftest gradients
  (both-ways
    ;; The gradient of the values reaches the elements they came from; ties and a padded axis.
    (is (grad-check (lambda (x) (first (sort x))) (randn '(2 7))))
    (is (grad-check (lambda (x) (first (sort x :axis 0 :descending t))) (randn '(5 3))))
    (is (grad-check (lambda (x) (first (topk x 3))) (randn '(2 9))))
    (is (grad-check (lambda (x) (first (topk x 2 :largest nil :axis 0))) (randn '(6 2))))
    ;; By hand: d/dx of sum(w * sort(x)) is w moved back to where each element came from.
    (let* ((x (tensor '(3.0 1.0 2.0)))
           (g (second (funcall (value-and-grad (lambda (x) (sum (mul (first (sort x)) (tensor '(1.0 10.0 100.0))))))
                               x))))
      (is (equal (tl (first g)) '(100.0 1.0 10.0))))))

(run-tests)
