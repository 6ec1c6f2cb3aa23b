;;; SPDX-License-Identifier: Apache-2.0
;;; Hash tables: eq/eql/equal tests, string and list keys, counting, remhash, insertion-ordered iteration.

(defun show (label value) (format t "~a: ~s~%" label value))

;; The default test is equal: strings, lists and vectors compare by contents.
(let ((h (make-hash-table)))
  (setf (gethash "b" h) 2
        (gethash "a" h) 1
        (gethash '(1 2) h) 'a-list
        (gethash 1.0 h) 'a-float
        (gethash 'sym h) 'a-symbol)
  (show "printed" h)
  (show "string key" (gethash (concat "a" "") h))
  (show "list key" (gethash (list 1 2) h))
  (show "1 is not 1.0" (list (gethash 1 h) (gethash 1.0 h)))
  (show "symbol key" (gethash 'sym h))
  (show "missing key" (gethash "zz" h))
  (show "default for a missing key" (gethash "zz" h 'default))
  (show "count" (hash-table-count h))
  (show "length" (length h))
  (show "keys in insertion order" (hash-table-keys h))
  (show "values in insertion order" (hash-table-values h))
  (show "contains" (list (hash-table-contains-p "a" h) (hash-table-contains-p "zz" h)))
  (show "remhash present" (remhash "b" h))
  (show "remhash absent" (remhash "b" h))
  (show "keys after remhash" (hash-table-keys h))
  (setf (gethash "b" h) 3)
  (show "re-added key goes last" (hash-table-keys h))
  (setf (gethash "a" h) 'updated)
  (show "updating keeps the position" (hash-table-keys h))
  (format t "maphash:~%")
  (maphash (lambda (k v) (format t "  ~s => ~s~%" k v)) h)
  (show "maphash returns" (maphash (lambda (k v) (list k v)) h))
  (show "clrhash returns the table" (eq (clrhash h) h))
  (show "count after clrhash" (hash-table-count h))
  (show "keys after clrhash" (hash-table-keys h)))

;; A nil value is stored, not the same as a missing key.
(let ((h (make-hash-table)))
  (setf (gethash 'k h) nil)
  (show "nil value" (list (gethash 'k h 'default) (hash-table-contains-p 'k h) (hash-table-count h))))

;; eq tables: strings and lists are different objects unless they are the same object.
(let ((h (make-hash-table :test 'eq)) (key (list 1 2)) (str "key"))
  (setf (gethash key h) 'by-identity
        (gethash str h) 'string-by-identity
        (gethash 'sym h) 'symbol
        (gethash 5 h) 'small-integer)
  (show "eq table printed" h)
  (show "same list object" (gethash key h))
  (show "equal but different list" (gethash (list 1 2) h))
  (show "same string object" (gethash str h))
  (show "equal but different string" (gethash (concat "k" "ey") h))
  (show "symbol and integer keys" (list (gethash 'sym h) (gethash 5 h))))

;; eql tables: numbers by type and value.
(let ((h (make-hash-table :test 'eql)))
  (setf (gethash 1 h) 'int (gethash 1.0 h) 'float (gethash 2.5 h) 'two-and-a-half)
  (show "eql numbers" (list (gethash 1 h) (gethash 1.0 h) (gethash 2.5 h) (hash-table-count h)))
  (setf (gethash (list 'a) h) 'list)
  (show "eql list lookup with a fresh list" (gethash (list 'a) h)))

;; The test may also be given as a function.
(let ((h (make-hash-table :test #'equal)))
  (setf (gethash (vector 1 2) h) 'vector-key)
  (show ":test #'equal with a vector key" (gethash (vector 1 2) h)))

;; Counting words.
(let ((counts (make-hash-table)))
  (dolist (word (string-split "the cat and the dog and the bird"))
    (setf (gethash word counts) (+ 1 (gethash word counts 0))))
  (format t "word counts:")
  (maphash (lambda (word n) (format t " ~a=~a" word n)) counts)
  (terpri)
  (show "most frequent"
        (car (sort (hash-table-keys counts) (lambda (a b) (> (gethash a counts) (gethash b counts)))))))

;; incf and push on gethash places.
(let ((groups (make-hash-table)))
  (dolist (n '(1 2 3 4 5 6 7))
    (push n (gethash (if (evenp n) 'even 'odd) groups)))
  (show "grouping with push" (list (gethash 'odd groups) (gethash 'even groups)))
  (setf (gethash 'total groups) 0)
  (incf (gethash 'total groups) 10)
  (show "incf" (gethash 'total groups)))

;; Removing entries while keeping order, and many entries.
(let ((h (make-hash-table)))
  (setf (gethash 'a h) 1 (gethash 'b h) 2 (gethash 'c h) 3)
  (remhash 'a h)
  (setf (gethash 'a h) 4)
  (show "a removed and re-added" (hash-table-keys h))
  (dotimes (i 1000) (setf (gethash i h) (* i i)))
  (dotimes (i 990) (remhash i h))
  (show "after 1000 adds and 990 removes" (hash-table-count h))
  (show "the remaining keys, in order" (hash-table-keys h))
  (show "a value" (gethash 999 h)))

;; A hash table as a memo for a recursive function.
(defvar *memo* (make-hash-table))
(defun fib (n)
  (or (gethash n *memo*)
      (setf (gethash n *memo*) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))))
(show "memoized fib 90" (fib 90))
(show "memo size" (hash-table-count *memo*))
(show "hash-table-p" (list (hash-table-p *memo*) (hash-table-p '((a . 1)))))
