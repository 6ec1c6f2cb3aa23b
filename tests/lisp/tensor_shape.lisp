;;; SPDX-License-Identifier: Apache-2.0
;;; Shape and indexing functions against hand-computed values. Movement functions are views:
;;; checked also to share the source's data (no copy).

(defun tl (x) (to-list x))
(defvar m (tensor '((1 2 3) (4 5 6))))
(defvar r (arange 10))

(deftest reshape-permute-expand
  (is (equal (tl (reshape m '(3 2))) '((1 2) (3 4) (5 6))))
  (is (equal (tl (reshape m 3 -1)) '((1 2) (3 4) (5 6))))
  (is (equal (shape (reshape m -1)) '(6)))
  (is (equal (shape (reshape (zeros '(2 3 4)) '(-1 4))) '(6 4)))
  (is (equal (tl (reshape (tensor '(5)) '())) 5))
  (is-error shape-error (reshape m '(4 2)))
  (is-error shape-error (reshape m '(4 -1)))
  (is-error shape-error (reshape m '(-1 -1)))
  (is (equal (tl (permute m 1 0)) '((1 4) (2 5) (3 6))))
  (is (equal (shape (permute (zeros '(2 3 4)) '(2 0 1))) '(4 2 3)))
  (is-error shape-error (permute m '(0 0)))
  (is (equal (tl (transpose m)) '((1 4) (2 5) (3 6))))
  (is (equal (shape (transpose (zeros '(2 3 4)) 0 2)) '(4 3 2)))
  (is (equal (tl (transpose (tensor '(1 2)))) '(1 2)))
  (is (equal (tl (expand (tensor '((1) (2))) '(2 3))) '((1 1 1) (2 2 2))))
  (is (equal (tl (expand (tensor '(1 2)) '(2 -1))) '((1 2) (1 2))))
  (is-error shape-error (expand (tensor '(1 2)) '(3 3)))
  (is (equal (tl (broadcast-to 7 '(2))) '(7 7)))
  (is (equal (broadcast-shapes '(3 1) '(1 4) '(4)) '(3 4))))

(deftest squeeze-flatten
  (is (equal (shape (squeeze (zeros '(1 3 1)))) '(3)))
  (is (equal (shape (squeeze (zeros '(1 3 1)) 0)) '(3 1)))
  (is (equal (shape (squeeze (zeros '(1 3 1)) 1)) '(1 3 1)))
  (is (equal (shape (unsqueeze (zeros '(3)) 0)) '(1 3)))
  (is (equal (shape (unsqueeze (zeros '(3)) -1)) '(3 1)))
  (is (equal (shape (unsqueeze (zeros '(2 3)) 1)) '(2 1 3)))
  (is (equal (shape (flatten (zeros '(2 3 4)))) '(24)))
  (is (equal (shape (flatten (zeros '(2 3 4)) 1)) '(2 12)))
  (is (equal (shape (flatten (zeros '(2 3 4 5)) 1 2)) '(2 12 5)))
  (is (equal (flatten '(1 (2 (3)) 4)) '(1 2 3 4))))            ; lists still flatten

(deftest slicing
  (is (equal (tl (slice r '(2 5))) '(2 3 4)))
  (is (equal (tl (slice r '(1 8 3))) '(1 4 7)))
  (is (equal (tl (slice r '(nil nil -1))) '(9 8 7 6 5 4 3 2 1 0)))
  (is (equal (tl (slice r '(nil nil -3))) '(9 6 3 0)))
  (is (equal (tl (slice r '(8 2 -2))) '(8 6 4)))
  (is (equal (tl (slice r '(-3 nil))) '(7 8 9)))
  (is (equal (tl (slice r '(-100 2))) '(0 1)))                   ; clamped, as Python
  (is (equal (tl (slice r '(5 2))) nil))                        ; empty
  (is (equal (tl (slice m 1)) '(4 5 6)))
  (is (equal (tl (slice m -1 0)) 4))
  (is (equal (tl (slice m t '(0 2))) '((1 2) (4 5))))
  (is (equal (tl (slice m nil '(nil nil -1))) '((3 2 1) (6 5 4))))
  (is (equal (tl (slice m '(nil nil 2) '(1 nil))) '((2 3))))
  (is-error index-error (slice m 2))
  (is-error index-error (slice m 0 0 0))
  (is-error index-error (slice r '(0 5 0))))

(deftest padding-and-flipping
  (is (equal (tl (pad (tensor '(1 2 3)) '((1 2)))) '(0 1 2 3 0 0)))
  (is (equal (tl (pad (tensor '(1 2 3)) '((1 1)) :value 9)) '(9 1 2 3 9)))
  (is (equal (tl (pad (tensor '(1 2 3)) '((2 1)) :mode :reflect)) '(3 2 1 2 3 2)))
  (is (equal (tl (pad (tensor '(1 2 3)) '((2 1)) :mode :replicate)) '(1 1 1 2 3 3)))
  (is (equal (tl (pad m '((1 0)))) '((0 1 2 3) (0 4 5 6))))          ; pairs apply to the last axes
  (is (equal (tl (pad m '((1 0) (0 1)) :mode :reflect)) '((4 5 6 5) (1 2 3 2) (4 5 6 5))))
  (is (equal (tl (pad (tensor '((1 2) (3 4))) '((1 1) (1 1)) :mode :replicate))
             '((1 1 2 2) (1 1 2 2) (3 3 4 4) (3 3 4 4))))
  (is-error shape-error (pad (tensor '(1 2)) '((2 0)) :mode :reflect))
  (is-error type-error (pad (tensor '(1 2)) '((1 1)) :mode :wrap))
  (is (equal (tl (flip m)) '((6 5 4) (3 2 1))))
  (is (equal (tl (flip m 1)) '((3 2 1) (6 5 4))))
  (is (equal (tl (flip m '(0))) '((4 5 6) (1 2 3)))))

(deftest joining-and-splitting
  (is (equal (tl (cat (list m m))) '((1 2 3) (4 5 6) (1 2 3) (4 5 6))))
  (is (equal (tl (cat (list m (tensor '((7) (8)))) :axis 1)) '((1 2 3 7) (4 5 6 8))))
  (is (equal (tl (cat (list (tensor '(1 2)) (tensor '(0.5))))) '(1.0 2.0 0.5)))   ; promotes
  (is (equal (tl (cat (list (tensor '(t)) (tensor '(nil t))))) '(t nil t)))
  (is-error shape-error (cat (list m (tensor '(1 2)))))
  (is (equal (tl (stack (list (tensor '(1 2)) (tensor '(3 4))))) '((1 2) (3 4))))
  (is (equal (tl (stack (list (tensor '(1 2)) (tensor '(3 4))) :axis 1)) '((1 3) (2 4))))
  (is (equal (tl (vstack (list (tensor '(1 2)) (tensor '(3 4))))) '((1 2) (3 4))))
  (is (equal (tl (hstack (list (tensor '(1 2)) (tensor '(3 4))))) '(1 2 3 4)))
  (is (equal (tl (hstack (list m m))) '((1 2 3 1 2 3) (4 5 6 4 5 6))))
  (is (equal (mapcar #'tl (split r 4)) '((0 1 2 3) (4 5 6 7) (8 9))))
  (is (equal (mapcar #'tl (split r '(2 8))) '((0 1) (2 3 4 5 6 7 8 9))))
  (is (equal (mapcar #'tl (split m 1 :axis 1)) '(((1) (4)) ((2) (5)) ((3) (6)))))
  (is-error shape-error (split r '(2 3)))
  (is (equal (mapcar #'tl (chunk r 3)) '((0 1 2 3) (4 5 6 7) (8 9))))
  (is (equal (tl (repeat (tensor '(1 2)) 3)) '(1 1 1 2 2 2)))
  (is (equal (tl (repeat m 2 :axis 0)) '((1 2 3) (1 2 3) (4 5 6) (4 5 6))))
  (is (equal (tl (tile (tensor '(1 2)) 2)) '(1 2 1 2)))
  (is (equal (tl (tile (tensor '(1 2)) '(2 2))) '((1 2 1 2) (1 2 1 2))))
  (is (equal (tl (tile m '(1 2))) '((1 2 3 1 2 3) (4 5 6 4 5 6)))))

(deftest indexing-by-tensors
  (is (equal (tl (gather m 1 (tensor '((2 0) (1 1))))) '((3 1) (5 5))))
  (is (equal (tl (gather m 0 (tensor '((1 0 1))))) '((4 2 6))))
  (is (equal (tl (gather m 1 (tensor '((-1) (0))))) '((3) (4))))
  (is (equal (tl (gather (tensor '((1.5 2.5) (3.5 4.5))) 0 (tensor '((1 0))))) '((3.5 2.5))))
  (is-error index-error (gather m 1 (tensor '((3) (0)))))
  (is-error dtype-error (gather m 1 (tensor '((0.0) (1.0)))))
  (is (equal (tl (take m (tensor '(0 5 -1)))) '(1 6 6)))
  (is (equal (tl (take m (tensor '((0 1) (2 3))))) '((1 2) (3 4))))
  (is-error index-error (take m (tensor '(6))))
  (is (equal (tl (one-hot (tensor '(0 2 1)) 3)) '((1 0 0) (0 0 1) (0 1 0))))
  (is (eq (dtype (one-hot (tensor '(0)) 2 :dtype 'f32)) 'f32))
  (is-error index-error (one-hot (tensor '(3)) 3))
  (is (equal (tl (triu (ones '(3 3) :dtype 'i32))) '((1 1 1) (0 1 1) (0 0 1))))
  (is (equal (tl (triu (ones '(3 3) :dtype 'i32) 1)) '((0 1 1) (0 0 1) (0 0 0))))
  (is (equal (tl (tril (ones '(2 3) :dtype 'i32))) '((1 0 0) (1 1 0))))
  (is (equal (tl (tril (ones '(3 3) :dtype 'i32) -1)) '((0 0 0) (1 0 0) (1 1 0))))
  (is (equal (shape (tril (ones '(4 3 3)))) '(4 3 3)))
  (is (equal (aref m 1 2) 6))
  (is (equal (aref m -1 0) 4))
  (is-error index-error (aref m 2 0))
  (is-error index-error (aref m 0)))

(deftest views-do-not-copy
  ;; Movement ops are views over the same realized buffer: realizing one allocates nothing new.
  (let* ((x (realize (reshape (arange 12) '(3 4))))
         (before (getf (tensor-stats) :realized-bytes)))
    (dolist (v (list (transpose x) (flip x 0) (slice x '(0 2) '(1 3)) (expand (reshape x '(1 3 4)) '(2 3 4))
                     (reshape (transpose x) '(12)) (permute (reshape x '(3 2 2)) '(2 0 1))))
      (is (string-contains (view-string v) "view("))
      (is (string-prefix-p "(" (graph-string v 1))))
    (is (= (getf (tensor-stats) :realized-bytes) before))
    ;; A reshape of a transpose cannot be one strided view: it composes two.
    (is (string-contains (view-string (reshape (transpose x) '(12))) " <- "))
    (is (null (string-contains (view-string (reshape x '(2 6))) " <- ")))))

(run-tests)
