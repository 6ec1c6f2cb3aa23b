;;; SPDX-License-Identifier: Apache-2.0
;;; Reading past the end of a vector.
;; expect: index-out-of-range.lisp:8:41: eval error: aref: index 3 out of range for a vector of length 3
;; expect: in sum-first called at index-out-of-range.lisp:10:8

(defun sum-first (v n)
  (let ((sum 0))
    (dotimes (i n sum) (setq sum (+ sum (aref v i))))))

(print (sum-first (vector 1 2 3) 4))
