;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: writes into part of a tensor at a position that may be symbolic. index-put!
;;; writes in place and costs what it writes; a symbolic position (with-dims, (dim NAME VALUE))
;;; keeps one compiled kernel for every position, eager and in a jit replay, and is checked
;;; against the axis before anything runs.

(defun tl (x) (to-list x))

(deftest index-put-rows
  (let ((c (realize (zeros '(6 3)))))
    (is (eq (index-put! c 1 (tensor '(1.0 2.0 3.0))) c))       ; returns the target
    (index-put! c 2 (tensor '((4 5 6))))                        ; a block of one row, i32 cast to f32
    (index-put! c -1 7.0)                                       ; a number, broadcast; negative position
    (index-put! c 3 (tensor '((8.0 8.0 8.0) (9.0 9.0 9.0))))    ; two rows
    (is (equal (tl c) '((0.0 0.0 0.0) (1.0 2.0 3.0) (4.0 5.0 6.0) (8.0 8.0 8.0) (9.0 9.0 9.0) (7.0 7.0 7.0))))
    (index-put! c 0 (tensor '(-1.0 -2.0 -3.0 -4.0 -5.0 -6.0)) :axis 1)   ; column 0
    (is (equal (mapcar #'first (tl c)) '(-1.0 -2.0 -3.0 -4.0 -5.0 -6.0)))
    (is (equal (mapcar #'second (tl c)) '(0.0 2.0 5.0 8.0 9.0 7.0)))
    (index-put! c 2 (tensor '(10.0 20.0 30.0 40.0 50.0 60.0)) :axis -1)
    (is (equal (mapcar #'third (tl c)) '(10.0 20.0 30.0 40.0 50.0 60.0)))))

(deftest index-put-other-layouts
  ;; Through a permuted, reshaped and strided view of a 3-d cache: (heads, positions, dim).
  (let ((kv (realize (zeros '(2 5 2) :dtype 'f64))))
    (index-put! kv 3 (tensor '((1.0 2.0) (3.0 4.0))) :axis 1)
    (is (equal (tl (slice kv t 3)) '((1.0 2.0) (3.0 4.0))))
    (is (= (item (sum kv)) 10.0))
    (let ((tr (realize (transpose (realize (zeros '(3 4))) 0 1))))   ; a realized 4x3
      (index-put! tr 1 (tensor '(1.0 2.0 3.0)))
      (is (equal (tl tr) '((0.0 0.0 0.0) (1.0 2.0 3.0) (0.0 0.0 0.0) (0.0 0.0 0.0))))))
  ;; prim:assign into a strided slice and a flipped view writes only those elements.
  (let ((v (realize (zeros '(7)))))
    (realize (prim:assign (slice v '(1 nil 3)) (tensor '(1.0 2.0))))
    (realize (prim:assign (slice v '(nil nil -3)) (tensor '(9.0 8.0 7.0))))
    (is (equal (tl v) '(7.0 1.0 0.0 8.0 2.0 0.0 9.0)))))

(deftest index-put-errors
  (let ((c (realize (ones '(4 2)))))
    (is-error index-error (index-put! c 4 (tensor '(1.0 1.0))))
    (is-error index-error (index-put! c -5 (tensor '(1.0 1.0))))
    (is-error index-error (index-put! c 3 (tensor '((1.0 1.0) (1.0 1.0)))))
    (is-error index-error (index-put! c 0 (tensor '(1.0 1.0)) :axis 2))
    (is-error shape-error (index-put! c 0 (tensor '(1.0 1.0 1.0))))
    (is-error type-error (index-put! (add c 1.0) 0 (tensor '(1.0 1.0))))    ; not realized
    (is-error index-error (index-put! c (dim 'p 4) (tensor '(1.0 1.0))))    ; symbolic: at realize
    (is-error type-error (dim "p" 1))
    (is-error index-error (dim 'p -1))
    ;; nothing was written by the failed calls
    (is (= (item (sum c)) 8.0))))

(deftest two-assigns-into-one-tensor-are-an-error
  (let ((c (realize (zeros '(3)))))
    (is-error type-error
              (realize-all (list (prim:assign (slice c 0) (tensor 1.0)) (prim:assign (slice c 1) (tensor 2.0)))))
    (is (equal (tl c) '(0.0 0.0 0.0)))))

(deftest reads-in-the-same-realize-see-the-old-data
  (let* ((c (realize (tensor '(1.0 2.0 3.0))))
         (old (mul c 10.0))
         (new (prim:assign (slice c 0) (tensor 5.0))))
    (realize-all (list new old))
    (is (equal (tl old) '(10.0 20.0 30.0)))
    (is (equal (tl c) '(5.0 2.0 3.0))))
  ;; the value may read the target it writes
  (let ((c (realize (tensor '(1.0 2.0 3.0 4.0)))))
    (realize (prim:assign (slice c '(1 3)) (mul (slice c '(0 2)) 10.0)))
    (is (equal (tl c) '(1.0 10.0 20.0 4.0)))))

(deftest symbolic-positions
  (let ((c (realize (reshape (arange 12 :dtype 'f32) '(6 2)))))
    (with-dims ((pos 2))
      (is (equal (shape (slice c '(0 (+ pos 1)))) '((+ 1 pos) 2)))
      (is (equal (tl (slice c '(0 (+ pos 1)))) '((0.0 1.0) (2.0 3.0) (4.0 5.0))))
      (is (equal (tl (slice c 'pos)) '(4.0 5.0)))
      (with-dims ((pos 4))                                      ; an inner binding wins
        (is (equal (tl (slice c 'pos)) '(8.0 9.0)))))
    ;; a lazy value keeps the value its dimension had when it was built
    (let ((lazy (with-dims ((pos 1)) (slice c 'pos))))
      (is (equal (tl lazy) '(2.0 3.0))))
    (let ((d (dim 'at 5)))
      (is (dim-p d))
      (is (= (dim-value d) 5))
      (is (eq (dim-name d) 'at))
      (is (equal (dim+ d 1) '(+ 1 at)))
      (with-dims (d) (is (equal (tl (sum (slice c (list 0 (dim+ d 1))) :axis 0)) '(30.0 36.0)))))
    ;; unbound outside with-dims; out of range when bound
    (is-error shape-error (tl (slice c 'pos)))
    (is-error index-error (with-dims ((pos 6)) (tl (slice c 'pos))))
    (is-error program-error (eval '(with-dims ((pos 1 2)) nil)))
    (is-error type-error (with-dims ((pos -1)) nil))))

(deftest a-decode-step-replays-for-every-position
  ;; A KV-cache-like step: write row pos, then sum rows 0..pos. One trace serves every position.
  (let* ((cache (realize (zeros '(8 3))))
         (step (jit (lambda (row pos)
                      (index-put! cache pos row)
                      (with-dims (pos) (sum (slice cache (list 0 (dim+ pos 1))) :axis 0)))))
         (jit-p (not (eq (device) 'ref)))   ; the reference executor has no traces to count
         (before (and jit-p (getf (jit-stats) :traces)))
         (sums nil))
    (dotimes (i 8)
      (push (tl (funcall step (realize (full '(3) (float (+ i 1)))) (dim 'pos i))) sums))
    (is (equal (reverse sums) (loop for i from 1 to 8 collect (let ((s (float (/ (* i (+ i 1)) 2)))) (list s s s)))))
    (is (or (not jit-p) (= (- (getf (jit-stats) :traces) before) 1)))
    (is (equal (tl (slice cache t 0)) '(1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0)))
    ;; a position past the cache is refused before anything is written
    (is-error index-error (funcall step (realize (full '(3) 100.0)) (dim 'pos 8)))
    (is (= (item (sum cache)) 108.0))
    ;; the same dimension with two values in one call
    (is (or (not jit-p)
            (handler-case (progn (funcall (jit (lambda (a b) nil)) (dim 'pos 1) (dim 'pos 2)) nil)
              (shape-error () t))))))

(deftest reading-a-dim-value-runs-uncaptured
  ;; dim-value builds the number into the graph: the step cannot replay for other values.
  (let* ((step (jit (lambda (x n) (add x (float (dim-value n))))))
         (x (realize (zeros '(2)))))
    (is (equal (tl (funcall step x (dim 'n 1))) '(1.0 1.0)))
    (is (equal (tl (funcall step x (dim 'n 5))) '(5.0 5.0)))))

(deftest row-writes-into-a-large-buffer-do-not-collect-the-heap
  ;; An assign's result is the buffer written into: counted as new memory, each write into a
  ;; 16 MB cache made the heap collect (0.43 ms a row write).
  (let* ((cache (realize (zeros '(4096 1024))))
         (row (realize (ones '(1024))))
         (before (getf (gc-stats) :collections)))
    (dotimes (i 200) (index-put! cache i row))
    (is (< (- (getf (gc-stats) :collections) before) 5))
    (let ((rows (tl (sum cache :axis 1))))
      (is (= (count 1024.0 rows) 200))
      (is (= (count 0.0 rows) 3896)))))

(run-tests)
