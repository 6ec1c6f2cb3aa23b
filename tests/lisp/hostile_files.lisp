;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19 ("impossible to crash"): loaders given hostile or damaged files raise conditions
;;; that name the function, the file and the offending values; nothing crashes or wraps.

(defvar *stem* (format nil "~a/tl-hostile-~a" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time))
  "Prefix of this run's temporary files.")
(defvar *made* nil "The temporary files written, deleted at the end.")
(defun tmp (suffix)
  (let ((path (concat *stem* suffix)))
    (unless (member path *made* :test #'equal) (push path *made*))
    path))

(defun bytes (&rest codes) (apply #'byte-string codes))
(defun le (n width) (apply #'bytes (loop for i below width collect (logand (ash n (* -8 i)) 255))))
(defun byte-at (s i) (char-code (subseq s i (1+ i))))
(defun flip-byte (s i)
  "S with the lowest bit of byte I flipped."
  (concat (subseq s 0 i) (bytes (logxor (byte-at s i) 1)) (subseq s (1+ i))))

(defmacro message-of (type form)
  "The message of the TYPE condition FORM signals, or \"no error\"."
  `(handler-case (progn ,form "no error") (,type (e) (condition-message e))))

(defmacro is-message (type form text)
  "Checks that FORM signals a TYPE condition whose message contains TEXT."
  `(let ((m (message-of ,type ,form)))
     (is (string-contains m ,text) (format nil "message ~s lacks ~s" m ,text))))

;; Issue 19, item 1: :dtype i32 truncated 3.7 and wrapped 1e12; now each is an error naming
;; the file, line, column and text.
(deftest csv-integer-dtypes
  (write-file (tmp ".csv") (format nil "1,2~%3.7,4~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'i32)
              "\" line 2, column 1: \"3.7\" is not an integer, as dtype i32 needs")
  (write-file (tmp ".csv") (format nil "1,1e12~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'i32)
              "line 1, column 2: \"1e12\" is out of range for i32 (-2147483648 to 2147483647)")
  (write-file (tmp ".csv") (format nil "0,256~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'u8)
              "line 1, column 2: \"256\" is out of range for u8 (0 to 255)")
  (write-file (tmp ".csv") (format nil "-1~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'u32) "\"-1\" is out of range for u32")
  (write-file (tmp ".csv") (format nil "1,2~%NaN,3~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'i64)
              "line 2, column 1: \"NaN\" cannot be converted to i64 (only float dtypes hold nan and inf)")
  (write-file (tmp ".csv") (format nil "9223372036854775808~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'i64) "is out of range for i64")
  (write-file (tmp ".csv") (format nil "2~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'bool) "\"2\" is out of range for bool (0 to 1)")
  (write-file (tmp ".csv") (format nil "1,~%"))
  (is-message file-error (load-csv (tmp ".csv") :dtype 'i32) "line 1, column 2 is empty")
  ;; What is exact still loads, whole numbers written as floats included.
  (write-file (tmp ".csv") (format nil "9223372036854775807,-9223372036854775808~%4.0,1e3~%"))
  (is (equal (to-list (load-csv (tmp ".csv") :dtype 'i64))
             '((9223372036854775807 -9223372036854775808) (4 1000))))
  (write-file (tmp ".csv") (format nil "0,1~%1,0"))
  (is (equal (to-list (load-csv (tmp ".csv") :dtype 'bool)) '((nil t) (t nil)))))

;; Issue 19, item 2: a .gz IDX file with a damaged tail loaded without complaint; the gzip
;; CRC and length are now checked.
(deftest idx-gzip-trailer
  (let ((gz (read-file "data/large-u8.idx.gz")))
    (is (= (item (sum (cast (load-idx "data/large-u8.idx.gz") 'i64))) 8191025))
    (write-file (tmp "-crc.idx.gz") (flip-byte gz (- (length gz) 6)))
    (is-message file-error (load-idx (tmp "-crc.idx.gz")) "\" is damaged (gzip: incorrect data check)")
    (write-file (tmp "-len.idx.gz") (flip-byte gz (- (length gz) 2)))
    (is-message file-error (load-idx (tmp "-len.idx.gz")) "\" is damaged (gzip: incorrect length check)")
    (write-file (tmp "-cut.idx.gz") (subseq gz 0 (- (length gz) 3)))
    (is-message file-error (load-idx (tmp "-cut.idx.gz")) "-cut.idx.gz\" is truncated: its gzip data ends early")
    (write-file (tmp "-junk.idx.gz") (concat gz "junk"))
    (is-message file-error (load-idx (tmp "-junk.idx.gz")) "\" has bytes after its gzip data")
    ;; Two gzip members are one stream, as gzip reads them; here the second holds extra bytes.
    (write-file (tmp "-two.idx.gz") (concat gz gz))
    (is-message file-error (load-idx (tmp "-two.idx.gz")) "\" has bytes after the data its header declares")
    (write-file (tmp "-body.idx.gz") (flip-byte gz 40))
    (is-message file-error (load-idx (tmp "-body.idx.gz")) "\" is damaged (gzip: ")
    ;; A damaged gzip CSV too.
    (write-file (tmp "-cut.csv.gz") (subseq (read-file "data/semicolon.csv.gz") 0 50))
    (is-message file-error (load-csv (tmp "-cut.csv.gz") :delimiter ";" :skip 1) "is truncated: its gzip data ends early")))

(defun npy-file (header)
  (concat (bytes 147) "NUMPY" (bytes 1 0) (le (length header) 2) header))

;; Issue 19, item 3: an empty descr reached std::string::substr and reported its raw
;; std::out_of_range text; every hostile header now gets a file-error or dtype-error.
(deftest npy-hostile-headers
  (write-file (tmp ".npy") (npy-file "{'descr': '', 'fortran_order': False, 'shape': (1,), }"))
  (is-message file-error (load-npy (tmp ".npy"))
              ".npy\" has a malformed header: its descr is empty (expected e.g. '<f4')")
  (dolist (header '("{'descr': '<', 'fortran_order': False, 'shape': (1,), }"
                    "{'descr': '|', 'fortran_order': False, 'shape': (), }"
                    "{'descr': '<f4', 'fortran_order': Fals"
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }"
                    "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 0, 5), }"
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"
                    "{'descr"
                    "{"
                    ""))
    (write-file (tmp ".npy") (npy-file header))
    (let ((m (handler-case (progn (load-npy (tmp ".npy")) "loaded")
               (file-error (e) (condition-message e))
               (dtype-error (e) (condition-message e)))))
      (is (or (equal m "loaded") (string-contains m "load-npy: \"")) m))))

;; Issue 19, item 7: nan, inf or an out-of-range number converted into an integer dtype was
;; undefined behaviour (UBSan) or wrapped; now a dtype-error, as PyTorch raises. A float is
;; truncated toward zero, as in PyTorch.
(deftest tensor-integer-conversion
  (is-message dtype-error (tensor nan :dtype 'i32) "tensor: nan cannot be converted to i32")
  (is-message dtype-error (tensor (list 1 inf) :dtype 'i64) "tensor: inf cannot be converted to i64")
  (is-message dtype-error (tensor (list 1.0 (- inf)) :dtype 'u8) "tensor: -inf cannot be converted to u8")
  (is-message dtype-error (tensor 300 :dtype 'u8) "tensor: 300 is out of range for u8 (0 to 255)")
  (is-message dtype-error (tensor '(1 -1) :dtype 'u32) "tensor: -1 is out of range for u32 (0 to 4294967295)")
  (is-message dtype-error (tensor 1e20 :dtype 'i64) "tensor: 1e+20 is out of range for i64")
  (is-message dtype-error (tensor '((1 2) (3 40000)) :dtype 'i16) "tensor: 40000 is out of range for i16 (-32768 to 32767)")
  (is-message dtype-error (full '(2) nan :dtype 'i32) "const: nan cannot be converted to i32")
  (is-message dtype-error (tensor '(255.9 -3.7) :dtype 'u8) "tensor: -3.7 is out of range for u8")
  (is (equal (to-list (tensor '(255.9 0.5) :dtype 'u8)) '(255 0)))
  (is (equal (to-list (tensor '(3.7 -3.7 127.5) :dtype 'i8)) '(3 -3 127)))
  (is (equal (to-list (tensor '(-128 127) :dtype 'i8)) '(-128 127))))

;; Issue 19, item 6: shapes whose element or byte count overflowed int64 wrapped, then read
;; out of bounds, crashed or looped; memory too large to allocate crashed.
(deftest shape-overflow
  (is-message shape-error (zeros '(4611686018427387904 4))
              "const: shape (4611686018427387904 4) has too many elements (f32 data of more than 2^63 bytes)")
  (is-message shape-error (zeros '(1152921504606846976 4) :dtype 'f64) "const: shape (1152921504606846976 4) has too many")
  (is-message shape-error (reshape (zeros '(2 2)) '(4294967296 4294967296 0))
              "reshape: shape (4294967296 4294967296 0) has too many elements")
  (is-message shape-error (sum (reshape (arange 4) '(4611686018427387905 4)))
              "reshape: shape (4611686018427387905 4) has too many elements")
  (is-message shape-error (expand (zeros '(1 1)) '(4294967296 4294967296))
              "expand: shape (4294967296 4294967296) has too many elements")
  (is-message shape-error (prim:iota '(4294967296 4294967296) 0 'i64) "iota: shape (4294967296 4294967296) has too many")
  (is-message storage-error (realize (zeros '(100000000000)))
              "realize: out of memory for 400000000000 bytes, a f32 tensor of shape (100000000000)")
  (is-message storage-error (realize (add (ones '(3000000000 1000000000) :dtype 'u8) 1))
              "realize: out of memory for 3000000000000000000 bytes, a u8 tensor of shape (3000000000 1000000000)")
  ;; Still fine: large but representable shapes that are never realized, and empty ones.
  (is (equal (shape (zeros '(1152921504606846975 4) :dtype 'f16)) '(1152921504606846975 4)))
  (is (equal (to-list (sum (zeros '(0 5)) :axis 0)) '(0.0 0.0 0.0 0.0 0.0))))

;; Issue 19, item 8: save-npy took (TENSOR PATH) and save-safetensors (PATH TENSORS). Every
;; saver now takes the value first, as torch.save does; the old order of save-safetensors
;; still works (a string, then an alist or hash table, cannot be the new order) and warns.
(deftest saver-order
  (let ((pairs (list (cons "w" (tensor '(1 2 3) :dtype 'i16)))))
    (is (equal (save-npy (cdr (first pairs)) (tmp ".npy")) (tmp ".npy")))
    (is (equal (save-safetensors pairs (tmp ".safetensors")) (tmp ".safetensors")))
    (is (equal (to-list (cdr (first (load-safetensors (tmp ".safetensors"))))) '(1 2 3)))
    (is (equal (save-safetensors (tmp "-old.safetensors") pairs :metadata '(("k" . "v")))
               (tmp "-old.safetensors")))
    (is (equal (safetensors-metadata (tmp "-old.safetensors")) '(("k" . "v"))))
    (is (equal (to-list (cdr (first (load-safetensors (tmp "-old.safetensors"))))) '(1 2 3)))
    (is-error type-error (save-safetensors (tmp ".safetensors") (tmp ".safetensors")))
    (is-error type-error (save-npy (tmp ".npy") (cdr (first pairs))))))

(deftest cleanup
  (dolist (path *made*)
    (when (probe-file path) (delete-file path))))

(run-tests)
