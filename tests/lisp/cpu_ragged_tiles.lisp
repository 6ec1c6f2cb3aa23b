;;; SPDX-License-Identifier: Apache-2.0
;;; Matmuls whose rows or columns no register tile divides (issue 22): a ragged last tile of 6
;;; rows or 16 columns (AVX2; AVX-512's are up to 64 wide) repeats the last row or column with
;;; its stores masked, and (peel L) runs that tile as a copy of its own, so the full tiles need
;;; no clamp or mask. Every shape here is checked against the reference executor; the opts are
;;; checked to peel. Last, tiles under epilogues that store another dtype.
(manual-seed 7)

(defun on-ref (thunk)
  (use-backend 'ref)
  (prog1 (realize (funcall thunk)) (use-backend 'cpu)))

(defun same-as-ref (thunk)
  (allclose (realize (funcall thunk)) (on-ref thunk) :rtol 1e-5 :atol 1e-5))

(defun opts-of (x)
  "The opts line of the last kernel in X's schedule."
  (let* ((text (kernels->text x))
         (at (search "opts: " text :from-end t)))
    (subseq text (+ at 6) (position #\Newline text :start at))))

(defun split-factor (opts loop)
  "The factor of (split LOOP F) in the text OPTS, or nil."
  (let* ((key (format nil "(split ~a " loop))
         (at (search key opts)))
    (when at (parse-integer opts :start (+ at (length key)) :junk-allowed t))))

(deftest ragged-rows-and-columns
  ;; (rows depth columns): columns past the last multiple of 16 (37, 86, 2049) or of 8, rows
  ;; past the last multiple of 6 (50, 97), both, and a GPT-2-like vocabulary edge.
  (dolist (mkn '((50 20 37) (97 33 37) (48 16 86) (2048 8 86) (50 12 16) (12 64 2049) (7 9 33) (49 5 17)))
    (destructuring-bind (m k n) mkn
      (let ((a (realize (randn (list m k))))
            (b (realize (randn (list k n)))))
        ;; (The opts first: once the product is realized, a new (matmul a b) reads it back.)
        ;; A tile its rows or columns do not divide (6 or 16 with AVX2, 6 or up to 64 with
        ;; AVX-512) is peeled, and only such a tile.
        (let* ((opts (opts-of (matmul a b)))
               (rows (split-factor opts 0))
               (cols (split-factor opts 1)))
          (is (and rows cols) (format nil "~a tiled: ~a" mkn opts))
          (is (eq (not (search "(peel " opts))
                  (not (and rows cols (or (/= 0 (mod m rows)) (/= 0 (mod n cols))))))
              (format nil "~a peels when ragged: ~a" mkn opts)))
        (is (same-as-ref (lambda () (matmul a b))) (format nil "~a" mkn))))))

(deftest ragged-with-epilogue-and-batches
  (let ((a (realize (randn '(3 50 24))))
        (b (realize (randn '(3 24 37))))
        (bias (realize (randn '(37)))))
    ;; Batched, with a fused epilogue (relu of the sum plus a bias).
    (is (same-as-ref (lambda () (relu (+ (matmul a b) bias)))))
    ;; A transposed right operand (a linear layer's weight as stored).
    (let ((w (realize (randn '(37 24)))))
      (is (same-as-ref (lambda () (matmul a (transpose w))))))))

(deftest tiles-under-epilogues-of-other-dtypes
  ;; The f32 sums of a matmul accumulate in the register tile whatever the epilogue stores:
  ;; tanh (computed in f64), a cast to f64, to bf16 or to integers, ragged or not.
  (dolist (mkn '((64 32 128) (50 20 37)))
    (destructuring-bind (m k n) mkn
      (dolist (epilogue (list (lambda (y) (tanh y))
                              (lambda (y) (cast y 'f64))
                              (lambda (y) (cast y 'bf16))
                              (lambda (y) (cast (* y 4.0) 'i32))))
        ;; (New operands each time: a product realized before would be read back.)
        (let ((a (realize (randn (list m k))))
              (b (realize (randn (list k n)))))
          (is (search "(upcast " (kernels->text (funcall epilogue (matmul a b)))) (format nil "~a tiled" mkn))
          (is (same-as-ref (lambda () (funcall epilogue (matmul a b)))) (format nil "~a" mkn)))))))

(deftest hand-peels
  ;; The same kernel under opts given by hand, peeled or not, and the plain nest: identical.
  (let* ((a (realize (randn '(14 20))))
         (b (realize (randn '(20 37))))
         (tile '((split 0 2) (split 1 16) (swap 4) (pack -1 3 5 2 6) (upcast 6) (upcast 4))))
    (is (search "peel" (kernels->text (matmul a b) :opts (append tile '((peel 5) (peel 3))))))
    (is (search "(peel 7): the kernel has no loop i7"
                (handler-case (kernels->text (matmul a b) :opts '((peel 7)))
                  (error (e) (condition-message e)))))))

(run-tests)
