;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 19: a safetensors header of 200,000 tensors took 43 s to open (the duplicate-key
;;; check scanned every earlier key). Opening it is now linear; ctest gives this script 30 s.

(defvar *path* (format nil "~a/tl-many-~a.safetensors" (or (getenv "TMPDIR") "/tmp")
                       (get-internal-real-time)))
(defvar *n* 200000)
(defun le (n width)
  (apply #'byte-string (loop for i below width collect (logand (ash n (* -8 i)) 255))))

;; Tensor "tK" is one u8 at byte K, whose value is K mod 251; the entries are written in
;; reverse order of their data, so loading also sorts them.
(defvar *header*
  (concat "{\"__metadata__\":{\"n\":\"200000\"},"
          (string-join (loop for i below *n*
                             collect (let ((k (- *n* 1 i)))
                                       (format nil "\"t~a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[~a,~a]}"
                                               k k (1+ k))))
                       ",")
          "}"))
(write-file *path* (concat (le (length *header*) 8) *header*
                           (apply #'byte-string (loop for i below *n* collect (mod i 251)))))

(deftest many-tensors
  (is (equal (safetensors-metadata *path*) '(("n" . "200000"))))
  (let ((loaded (load-safetensors *path*)))
    (is (= (length loaded) *n*))
    (is (equal (mapcar #'car (list (first loaded) (nth 1000 loaded) (car (last loaded))))
               '("t0" "t1000" "t199999")))
    (is (equal (mapcar (lambda (k) (item (cdr (nth k loaded)))) '(0 1000 199999)) '(0 247 203)))
    (is (equal (shape (cdr (nth 5 loaded))) '(1))))
  ;; A repeated name among many is still found.
  (let ((h (concat "{" (string-join (loop for i below *n* collect (format nil "\"t~a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}" (if (= i 150000) 7 i))) ",") "}")))
    (write-file *path* (concat (le (length h) 8) h))
    (is (string-contains (handler-case (load-safetensors *path*) (file-error (e) (condition-message e)))
                         "has a malformed header: a repeated key \"t7\" at byte")))
  (delete-file *path*))

(run-tests)
