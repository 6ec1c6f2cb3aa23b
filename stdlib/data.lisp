;;; SPDX-License-Identifier: Apache-2.0
;;; data: datasets and batches. (require 'data)

(defvar data:*fashion-mnist-dir* "/usr/share/datasets/fashion-mnist"
  "Where Fashion-MNIST's IDX files are (Debian's dataset-fashion-mnist puts them here).
  (stringp data:*fashion-mnist-dir*)  ; => t
  (let ((data:*fashion-mnist-dir* \"/tmp/tl-doc-no-such-dir\"))
    (handler-case (data:load-fashion-mnist :limit 10) (file-error () :not-found)))  ; => :not-found")

(defun data:%idx-file (dir base)
  (let ((gz (concat dir "/" base ".gz")) (plain (concat dir "/" base)))
    (cond ((probe-file gz) gz)
          ((probe-file plain) plain)
          (t (error 'file-error "data: ~a not found in ~a (install dataset-fashion-mnist, or set data:*fashion-mnist-dir*)"
                    base dir)))))

(defun data:load-fashion-mnist (&key (dir data:*fashion-mnist-dir*) limit normalize)
  "(data:load-fashion-mnist &key dir limit normalize) Fashion-MNIST as a plist :train-x :train-y
:test-x :test-y: images flattened to f32 rows of 784 values in [0, 1], labels as i32. LIMIT
keeps only the first LIMIT examples of each split (for quick runs). With NORMALIZE, pixels
are standardized with the training images' mean and standard deviation (0.286 and 0.353 on
the full set).
  (handler-case (data:load-fashion-mnist :dir \"/tmp/tl-doc-no-such-dir\") (file-error () :not-found))  ; => :not-found"
  (flet ((images (base)
           (let* ((x (load-idx (data:%idx-file dir base)))
                  (x (if (and limit (< limit (first (shape x)))) (take-rows x (range limit)) x)))
             (realize (div (cast (reshape x (list (first (shape x)) 784)) 'f32) 255.0))))
         (labels-of (base)
           (let* ((y (load-idx (data:%idx-file dir base)))
                  (y (if (and limit (< limit (first (shape y)))) (take-rows y (range limit)) y)))
             (realize (cast y 'i32)))))
    (let ((train-x (images "train-images-idx3-ubyte")) (test-x (images "t10k-images-idx3-ubyte")))
      (when normalize
        (let ((mu (item (mean train-x))) (sd (item (std train-x))))
          (setq train-x (realize (div (sub train-x mu) sd)) test-x (realize (div (sub test-x mu) sd)))))
      (list :train-x train-x :train-y (labels-of "train-labels-idx1-ubyte")
            :test-x test-x :test-y (labels-of "t10k-labels-idx1-ubyte")))))

(defun data:shuffled (n seed)
  "(data:shuffled N SEED) A random permutation of 0 ... N-1 (Fisher-Yates), the same for the
same SEED. It seeds Lisp's random generator with SEED (random-seed), so what random returns
next follows from SEED too.
  (data:shuffled 5 0)  ; => (2 1 4 3 0)
  (sort (data:shuffled 5 42) #'<)  ; => (0 1 2 3 4)"
  (random-seed seed)
  (let ((v (make-vector n 0)))
    (dotimes (i n) (setf (aref v i) i))
    (dotimes (k (- n 1))
      (let* ((i (- n 1 k)) (j (random (+ i 1))) (tmp (aref v i)))
        (setf (aref v i) (aref v j))
        (setf (aref v j) tmp)))
    (coerce v 'list)))

(defun data:batch-indices (n size &key shuffle (seed 0))
  "(data:batch-indices N SIZE &key shuffle seed) Lists of row indices covering 0 ... N-1 in
batches of SIZE (the last may be smaller), shuffled with SEED when SHUFFLE.
  (data:batch-indices 5 2)  ; => ((0 1) (2 3) (4))
  (data:batch-indices 4 2 :shuffle t :seed 1)  ; => ((1 2) (3 0))"
  (let ((order (if shuffle (data:shuffled n seed) (range n))) (out nil))
    (loop
      (when (null order) (return))
      (let ((batch nil))
        (dotimes (i size) (when order (setq batch (cons (car order) batch) order (cdr order))))
        (setq out (cons (reverse batch) out))))
    (reverse out)))

(defmacro data:do-batches ((xb yb x y &key (size 128) shuffle (seed 0)) &rest body)
  "(data:do-batches (XB YB X Y &key (size 128) shuffle seed) BODY...) Runs BODY with XB and YB
bound to the rows of X and Y of each batch.
  (let ((n 0)) (data:do-batches (xb yb (zeros '(10 2)) (zeros '(10)) :size 4) (setq n (+ n 1))) n)  ; => 3"
  (let ((rows (gensym)))
    `(dolist (,rows (data:batch-indices (first (shape ,x)) ,size :shuffle ,shuffle :seed ,seed))
       (let ((,xb (take-rows ,x ,rows)) (,yb (take-rows ,y ,rows)))
         ,@body))))

(defun data:batches (dataset &key (size 128) shuffle (seed 0))
  "(data:batches DATASET &key (size 128) shuffle seed) DATASET's rows in batches, as a list of
(XB . YB): DATASET is (X . Y), or a plist with :train-x and :train-y. Every batch is made
now, a copy of the epoch's data; data:do-batches makes each batch only when it is reached.
  (mapcar (lambda (b) (shape (car b)))
          (data:batches (cons (zeros '(5 3)) (zeros '(5))) :size 2))  ; => ((2 3) (2 3) (1 3))"
  (let ((x (if (consp dataset) (if (keywordp (car dataset)) (getf dataset :train-x) (car dataset))))
        (y (if (consp dataset) (if (keywordp (car dataset)) (getf dataset :train-y) (cdr dataset)))))
    (unless (and (tensorp x) (tensorp y) (equal (first (shape x)) (first (shape y))))
      (error 'type-error "data:batches: expected (X . Y) or a dataset plist with rows matching, got ~s" dataset))
    (mapcar (lambda (rows) (cons (take-rows x rows) (take-rows y rows)))
            (data:batch-indices (first (shape x)) size :shuffle shuffle :seed seed))))

(defun data:progress-line (label done total start-seconds &optional (extra ""))
  "(data:progress-line LABEL DONE TOTAL START-SECONDS [EXTRA]) The text data:progress prints:
LABEL, a bar of 30 columns, DONE/TOTAL, items per second since START-SECONDS, and EXTRA.
  (let ((line (data:progress-line \"epoch 1\" 5 10 (/ (get-internal-real-time) 1e9))))
    (subseq line 0 45))  ; => \"epoch 1 [===============               ] 5/10\""
  (let* ((width 30)
         (filled (floor (* width done) (max total 1)))
         (elapsed (max 1e-9 (- (/ (get-internal-real-time) 1e9) start-seconds)))
         (bar (let ((s "")) (dotimes (i width) (setq s (concat s (if (< i filled) "=" " ")))) s)))
    (format nil "~a [~a] ~a/~a ~,0f/s ~a" label bar done total (/ done elapsed) extra)))

(defun data:progress (label done total start-seconds &optional (extra ""))
  "(data:progress LABEL DONE TOTAL START-SECONDS [EXTRA]) Prints a one-line progress bar with
throughput (items per second), rewritten in place; a newline when DONE reaches TOTAL.
  (let ((text (with-output-to-string (*standard-output*)
                (data:progress \"demo\" 3 3 (/ (get-internal-real-time) 1e9)))))
    (subseq text 1 42))  ; => \"demo [==============================] 3/3\""
  (format t "~a~a" (code-char 13) (data:progress-line label done total start-seconds extra))
  (when (>= done total) (terpri)))

(provide 'data)
