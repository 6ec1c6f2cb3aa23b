;;; SPDX-License-Identifier: Apache-2.0
;;; Tensor files: .npy and safetensors round trips for every dtype, odd shapes and views,
;;; metadata, the bytes written, files written by hand, and the errors for malformed files.

(defvar *stem* (format nil "~a/tl-tensor-files-~a"
                       (or (getenv "TMPDIR") "/tmp") (get-internal-real-time))
  "Prefix of this run's temporary files.")
(defun tmp (suffix) (concat *stem* suffix))

(defun bytes (&rest codes)
  "A string of the bytes CODES."
  (apply #'byte-string codes))
(defun le (n width)
  "N as WIDTH little-endian bytes."
  (apply #'bytes (loop for i below width collect (logand (ash n (* -8 i)) 255))))
(defun byte-at (s i) (char-code (subseq s i (1+ i))))

(defun npy-file (major header data)
  "The bytes of an .npy file of format MAJOR.0 with HEADER text and DATA bytes."
  (concat (bytes 147) "NUMPY" (bytes major 0) (le (length header) (if (= major 1) 2 4))
          header data))
(defun safetensors-file (header data)
  (concat (le (length header) 8) header data))

;; One sample per dtype, with its extreme values.
(defvar *samples*
  '((f32 (1.5 -2.25 0.0 3.4028234663852886e38))
    (f64 (0.1 -1e300 3.0 -0.0))
    (f16 (0.5 -2.0 65504.0 0.0009765625))
    (bf16 (1.0 -3.5 256.0 0.0078125))
    (i8 (-128 127 0 -1))
    (i16 (-32768 32767 1 -1))
    (i32 (-2147483648 2147483647 5 -1))
    (i64 (-9000000000000000000 9000000000000000000 7 -1))
    (u8 (0 255 17 128))
    (u32 (0 4294967295 65536 1))
    (bool (t nil t nil))))

(deftest npy-every-dtype
  (dolist (sample *samples*)
    (let ((x (tensor (second sample) :dtype (first sample))))
      (if (eq (first sample) 'bf16)
          (is-error dtype-error (save-npy x (tmp ".npy")))
          (let ((y (progn (save-npy x (tmp ".npy")) (load-npy (tmp ".npy")))))
            (format t "npy ~a: ~a ~s~%" (dtype y) (shape y) (to-list y))
            (is (eq (dtype y) (first sample)))
            (is (equal (to-list y) (second sample))))))))

(deftest safetensors-every-dtype
  (let ((pairs (mapcar (lambda (sample)
                         (cons (string (first sample))
                               (tensor (second sample) :dtype (first sample))))
                       *samples*)))
    (is (equal (save-safetensors pairs (tmp ".safetensors")) (tmp ".safetensors")))
    (let ((loaded (load-safetensors (tmp ".safetensors"))))
      (is (equal (mapcar #'car loaded) (mapcar #'car pairs)))
      (dolist (entry loaded)
        (format t "safetensors ~a: ~a ~a ~s~%"
                (car entry) (dtype (cdr entry)) (shape (cdr entry)) (to-list (cdr entry)))
        (is (equal (to-list (cdr entry)) (to-list (cdr (assoc (car entry) pairs :test #'equal)))))))))

(deftest shapes-and-views
  (let ((x (reshape (arange 24) '(2 3 4))))
    (save-npy x (tmp ".npy"))
    (is (equal (to-list (load-npy (tmp ".npy"))) (to-list x)))
    ;; 0-d and empty tensors.
    (save-npy (tensor 3.5) (tmp ".npy"))
    (is (equal (shape (load-npy (tmp ".npy"))) nil))
    (is (equal (to-list (load-npy (tmp ".npy"))) 3.5))
    (save-npy (zeros '(0 3)) (tmp ".npy"))
    (is (equal (shape (load-npy (tmp ".npy"))) '(0 3)))
    (save-safetensors (list (cons "scalar" (tensor 7 :dtype 'i16))
                            (cons "empty" (zeros '(0 3) :dtype 'i64))
                            (cons "x" x))
                      (tmp ".safetensors"))
    (let ((loaded (load-safetensors (tmp ".safetensors"))))
      (format t "0-d, empty, 3-d: ~s~%"
              (mapcar (lambda (e) (list (car e) (shape (cdr e)) (to-list (cdr e)))) loaded))
      (is (equal (shape (cdr (assoc "scalar" loaded :test #'equal))) nil))
      (is (equal (shape (cdr (assoc "empty" loaded :test #'equal))) '(0 3))))
    ;; Views are written in their own row-major order.
    (save-npy (transpose (reshape (arange 6) '(2 3))) (tmp ".npy"))
    (format t "transposed: ~s~%" (to-list (load-npy (tmp ".npy"))))
    (is (equal (to-list (load-npy (tmp ".npy"))) '((0 3) (1 4) (2 5))))
    (save-safetensors (list (cons "flipped" (flip (arange 4) 0))
                            (cons "broadcast" (broadcast-to (tensor '(1 2 3)) '(2 3))))
                      (tmp ".safetensors"))
    (is (equal (mapcar (lambda (e) (to-list (cdr e))) (load-safetensors (tmp ".safetensors")))
               '((3 2 1 0) ((1 2 3) (1 2 3)))))
    ;; A lazy graph with a symbolic shape is realized and saved with its concrete shape.
    (let ((y (mul (symbolic-shape (reshape (arange 6) '(2 3)) '(batch 3)) 2)))
      (is (equal (shape y) '(batch 3)))
      (save-npy y (tmp ".npy"))
      (is (equal (to-list (load-npy (tmp ".npy"))) '((0 2 4) (6 8 10)))))))

(deftest metadata-and-tables
  (let ((tensors (make-hash-table :test 'equal)))
    (setf (gethash "w" tensors) (ones '(2 2)))
    (setf (gethash "b" tensors) (zeros '(2)))
    (save-safetensors tensors (tmp ".safetensors")
                      :metadata '(("format" . "pt") ("note" . "a \"quoted\" line
and é")))
    (is (equal (mapcar #'car (load-safetensors (tmp ".safetensors"))) '("w" "b")))
    (format t "metadata: ~s~%" (safetensors-metadata (tmp ".safetensors")))
    (is (equal (safetensors-metadata (tmp ".safetensors"))
               '(("format" . "pt") ("note" . "a \"quoted\" line
and é"))))
    (save-safetensors (list (cons 'sym (ones '(1)))) (tmp ".safetensors"))
    (is (equal (safetensors-metadata (tmp ".safetensors")) nil))
    (is (equal (mapcar #'car (load-safetensors (tmp ".safetensors"))) '("sym")))))

(deftest bytes-written
  (save-npy (reshape (arange 6 :dtype 'f32) '(2 3)) (tmp ".npy"))
  (let ((s (read-file (tmp ".npy"))))
    (is (string= (subseq s 0 6) (concat (bytes 147) "NUMPY")))
    (is (equal (list (byte-at s 6) (byte-at s 7)) '(1 0)))
    (is (= (+ (byte-at s 8) (* 256 (byte-at s 9))) 118))
    (is (string-prefix-p "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
                         (subseq s 10)))
    (is (string= (subseq s 127 128) (bytes 10)))
    (is (= (length s) (+ 128 24)))
    (is (string= (subseq s 132 136) (bytes 0 0 128 63))))  ; 1.0f0, little-endian
  (save-npy (tensor '(1 2 3) :dtype 'u8) (tmp ".npy"))
  (is (string-prefix-p "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }"
                       (subseq (read-file (tmp ".npy")) 10)))
  (save-safetensors (list (cons "a" (tensor '(1 2) :dtype 'i16))) (tmp ".safetensors")
                    :metadata '(("k" . "v")))
  (let* ((s (read-file (tmp ".safetensors")))
         (n (loop for i below 8 sum (ash (byte-at s i) (* 8 i)))))
    (is (= n 80))  ; 79 bytes of JSON and a space, so that the data starts 8-byte aligned
    (is (string= (subseq s 8 (+ 8 n))
                 (concat "{\"__metadata__\":{\"k\":\"v\"},"
                         "\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}} ")))
    (is (string= (subseq s (+ 8 n)) (bytes 1 0 2 0)))))

(deftest files-written-by-hand
  ;; Big-endian data is converted.
  (write-file (tmp "-be.npy")
              (npy-file 1 "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }"
                        (bytes 0 0 1 2 255 255 255 254)))
  (is (equal (to-list (load-npy (tmp "-be.npy"))) '(258 -2)))
  ;; Fortran order is rearranged into row-major order; format 2.0 has a 4-byte length.
  (write-file (tmp "-f.npy")
              (npy-file 2 "{'shape': (2, 3), 'fortran_order': True, 'descr': '<i2'}"
                        (bytes 1 0 4 0 2 0 5 0 3 0 6 0)))
  (is (equal (to-list (load-npy (tmp "-f.npy"))) '((1 2 3) (4 5 6))))
  ;; '|i1', '<i1' and a byte order of '=' all name the same types.
  (dolist (descr '("|i1" "<i1" "=i1"))
    (write-file (tmp "-i1.npy")
                (npy-file 3 (format nil "{'descr': '~a', 'fortran_order': False, 'shape': (2,)}"
                                    descr)
                          (bytes 255 1)))
    (is (equal (to-list (load-npy (tmp "-i1.npy"))) '(-1 1))))
  ;; Bool bytes other than 0 read as true.
  (write-file (tmp "-b.npy")
              (npy-file 1 "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"
                        (bytes 0 2 1)))
  (is (equal (to-list (load-npy (tmp "-b.npy"))) '(nil t t)))
  ;; Safetensors: tensors come back in the order of their data; JSON escapes; spaces pad.
  (write-file (tmp "-hand.safetensors")
              (safetensors-file
               "{ \"second\" : {\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]},
                  \"\\u00e9\\n\":{\"data_offsets\":[0,2],\"shape\":[1],\"dtype\":\"I16\"},
                  \"__metadata__\":{\"a\\\"b\":\"\\ud83d\\ude00\"}}    "
               (bytes 254 255 7 8)))
  (let ((loaded (load-safetensors (tmp "-hand.safetensors"))))
    (is (equal (mapcar #'car loaded) (list "é
" "second")))
    (is (equal (mapcar (lambda (e) (to-list (cdr e))) loaded) '((-2) (7 8)))))
  (is (equal (safetensors-metadata (tmp "-hand.safetensors")) '(("a\"b" . "😀")))))

(defun write-and-load (loader contents)
  "Writes CONTENTS to a temporary file and calls LOADER on it."
  (write-file (tmp "-bad") contents)
  (funcall loader (tmp "-bad")))

(defun bad-safetensors (header &optional (data ""))
  (write-and-load #'load-safetensors (safetensors-file header data)))

(deftest malformed-npy
  (save-npy (tensor '(1 2 3) :dtype 'i16) (tmp ".npy"))
  (let ((good (read-file (tmp ".npy"))))
    (is-error file-error (write-and-load #'load-npy (subseq good 0 (- (length good) 1))))
    (is-error file-error (write-and-load #'load-npy (concat good "x")))
    (is-error file-error (write-and-load #'load-npy (subseq good 0 20)))
    (is-error file-error (write-and-load #'load-npy (subseq good 0 5)))
    (is-error file-error (write-and-load #'load-npy ""))
    (is-error file-error (write-and-load #'load-npy (concat "PK" (subseq good 2))))
    (is-error file-error (write-and-load #'load-npy (string-replace good "(3,)" "(-3)")))
    (is-error file-error (write-and-load #'load-npy (string-replace good "False" "Flase")))
    (is-error file-error (write-and-load #'load-npy (string-replace good "'shape'" "'shope'")))
    (is-error dtype-error (write-and-load #'load-npy (string-replace good "<i2" "<u2")))
    (is-error dtype-error (write-and-load #'load-npy (string-replace good "<i2" "<c32"))))
  ;; A shape whose byte count overflows is refused before anything is allocated.
  (is-error file-error
            (write-and-load #'load-npy
                            (npy-file 1 "{'descr': '<f8', 'fortran_order': False,
                                          'shape': (4611686018427387904, 4), }" "")))
  (is-error file-error (load-npy (tmp "-does-not-exist.npy")))
  (is-error file-error (load-npy (or (getenv "TMPDIR") "/tmp")))
  (is-error file-error (save-npy (ones '(2)) (tmp "-no-such-dir/x.npy"))))

(deftest malformed-safetensors
  (save-safetensors (list (cons "a" (tensor '(1 2))) (cons "b" (tensor '(3)))) (tmp ".safetensors"))
  (let ((good (read-file (tmp ".safetensors"))))
    (flet ((bad (loader old new) (write-and-load loader (string-replace good old new))))
      (is-error file-error (write-and-load #'load-safetensors (subseq good 0 7)))
      (is-error file-error (write-and-load #'load-safetensors (subseq good 0 40)))
      (is-error file-error
                (write-and-load #'load-safetensors (subseq good 0 (- (length good) 1))))
      (is-error file-error (bad #'load-safetensors "[0,8]" "[0,9]"))
      (is-error file-error (bad #'load-safetensors "[8,12]" "[4,8]"))
      (is-error file-error (bad #'load-safetensors "}}" "},}"))
      (is-error dtype-error (bad #'load-safetensors "I32" "U16"))
      (is-error dtype-error (bad #'load-safetensors "I32" "U64"))))
  (is-error dtype-error
            (write-and-load #'safetensors-metadata
                            (safetensors-file
                             "{\"x\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}"
                             "a")))
  (is-error file-error (bad-safetensors "{\"a\":{\"a\":{\"a\":{\"a\":1}}}}"))
  (is-error file-error (bad-safetensors (concat "{\"a\":" (apply #'concat (make-list 100 "[")))))
  (is-error file-error (bad-safetensors "{\"__metadata__\":{\"k\":1}}"))
  (is-error file-error
            (bad-safetensors "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.0]}}"
                             "abcd"))
  (is-error file-error
            (bad-safetensors "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},
                               \"x\":{}}"
                             "abcd")))

(deftest bad-arguments
  (is-error type-error (save-npy '(1 2) (tmp ".npy")))
  (is-error type-error (load-npy 'x))
  (is-error type-error (save-safetensors '(("a" . 5)) (tmp ".safetensors")))
  (is-error type-error (save-safetensors '(1 2) (tmp ".safetensors")))
  (is-error program-error (save-safetensors (list (cons "a" (ones '(1))) (cons "a" (ones '(1))))
                                            (tmp ".safetensors")))
  (is-error program-error (save-safetensors (list (cons "__metadata__" (ones '(1))))
                                            (tmp ".safetensors")))
  (is-error type-error (save-safetensors nil (tmp ".safetensors") :metadata '(("k" . 1))))
  (is-error program-error (save-safetensors nil (tmp ".safetensors") :meta nil)))

(defparameter *suffixes* '(".npy" ".safetensors" "-hand.safetensors" "-bad" "-b.npy" "-be.npy" "-f.npy" "-i1.npy"))

;; Runs last: leaves nothing behind, and checks delete-file and probe-file.
;; IDX (MNIST's format): big-endian elements, plain or gzip-compressed.
(deftest idx-files
  (let ((u8 (load-idx "data/small-u8.idx")))
    (is (equal (shape u8) '(2 3)))
    (is (eq (dtype u8) 'u8))
    (is (equal (to-list u8) '((1 2 3) (250 251 252)))))
  (let ((i32 (load-idx "data/small-i32.idx.gz")))
    (is (eq (dtype i32) 'i32))
    (is (equal (to-list i32) '(1 -2 70000 -2147483648))))
  (is (equal (to-list (load-idx "data/small-f32.idx")) '((1.5 -2.25) (0.0 1e10))))
  (is-error file-error (load-idx "data/truncated.idx"))
  (is-error file-error (load-idx "data/small-f32.npy-missing"))
  (is-error file-error (load-idx "tensor_files.lisp"))
  ;; Fashion-MNIST as Debian ships it (dataset-fashion-mnist), when installed.
  (let ((labels "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"))
    (is (or (not (probe-file labels))
            (equal (to-list (slice (load-idx labels) '(0 10))) '(9 2 1 1 6 1 4 6 5 7))))))

(deftest cleanup
  (dolist (suffix *suffixes*)
    (when (probe-file (tmp suffix)) (is (delete-file (tmp suffix)))))
  (is (equal (remove-if-not (lambda (s) (probe-file (tmp s))) *suffixes*) nil))
  (is-error file-error (delete-file (tmp ".npy")))
  (is-error file-error (delete-file (or (getenv "TMPDIR") "/tmp"))))

(deftest csv
  (flet ((tl (x) (to-list x)))
  (let ((r (load-csv "data/small.csv" :header t)))
    (is (equal (cdr r) '("x" "y" "label, name")))
    (is (equal (shape (car r)) '(3 3)))
    (is (equal (tl (slice (car r) 0)) '(1.0 2.5 3.0)))
    (is (isnan (aref (car r) 1 1)))
    (is (equal (aref (car r) 1 2) 1000.0))
    (is (equal (tl (slice (car r) 2 '(0 2))) '(7.0 8.0))))
  (is (equal (tl (load-csv "data/semicolon.csv" :delimiter ";" :skip 1 :dtype 'i32)) '((1 2) (3 4))))
  (is (equal (tl (load-csv "data/semicolon.csv.gz" :delimiter ";" :skip 1)) '((1.0 2.0) (3.0 4.0))))
  (is (string-contains (handler-case (load-csv "data/ragged.csv") (file-error (e) (condition-message e)))
                       "load-csv: \"data/ragged.csv\" line 2 has 1 fields, but the first row has 2"))
  (is (string-contains (handler-case (load-csv "data/small.csv") (file-error (e) (condition-message e)))
                       "line 1, column 1: \"x\" is not a number"))
  (is (string-contains (handler-case (load-csv "data/small.csv" :header t :dtype 'i32) (file-error (e) (condition-message e)))
                       "line 2, column 2: \"2.5\" is not an integer, as dtype i32 needs"))
  (is-error type-error (load-csv "data/small.csv" :delim ";"))
  (is-error file-error (load-csv "data/no-such.csv"))))

(run-tests)
