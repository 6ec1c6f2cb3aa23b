;;; SPDX-License-Identifier: Apache-2.0
;;; Small complete programs: sieve, n-queens, quicksort, RPN calculator, trees, RLE, matrices, objects.

(defun show (label value) (format t "~a: ~s~%" label value))

;; Sieve of Eratosthenes on a vector.
(defun primes-below (n)
  (let ((composite (make-vector n nil)) (primes nil))
    (loop for i from 2 below n
          unless (aref composite i)
            do (push i primes)
               (loop for j from (* i i) below n by i
                     do (setf (aref composite j) t)))
    (reverse primes)))
(show "primes below 50" (primes-below 50))
(show "number of primes below 10000" (length (primes-below 10000)))

;; N-queens by backtracking.
(defun queens (n)
  (labels ((safe-p (col placed)
             (let ((row 1))
               (dolist (c placed t)
                 (when (or (= c col) (= (abs (- c col)) row)) (return nil))
                 (setq row (+ row 1)))))
           (place (k placed)
             (if (= k n)
                 1
                 (loop for col below n
                       when (safe-p col placed)
                         sum (place (+ k 1) (cons col placed))))))
    (place 0 nil)))
(show "n-queens solutions for n = 1..8" (loop for n from 1 to 8 collect (queens n)))

;; Quicksort on lists, and a comparison with sort.
(defun quicksort (l)
  (if (null l)
      nil
      (let ((p (car l)))
        (append (quicksort (remove-if-not (lambda (x) (< x p)) (cdr l)))
                (list p)
                (quicksort (remove-if-not (lambda (x) (>= x p)) (cdr l)))))))
(defvar *numbers* (let ((x 7) (out nil))
                    (dotimes (i 200 out)
                      (setq x (mod (+ (* x 1103515245) 12345) 2147483648))
                      (push (mod x 1000) out))))
(show "quicksort of 10" (quicksort '(3 1 4 1 5 9 2 6 5 3)))
(show "quicksort agrees with sort" (equal (quicksort *numbers*) (sort (copy-list *numbers*) #'<)))

;; A reverse Polish calculator over a tokenized string.
(defun rpn (text)
  (let ((stack nil))
    (dolist (token (string-split text) (car stack))
      (let ((op (assoc token '(("+" . +) ("-" . -) ("*" . *) ("/" . /)) :test #'equal)))
        (if op
            (let ((b (pop stack)) (a (pop stack)))
              (push (funcall (symbol-value (cdr op)) a b) stack))
            (push (parse-number token) stack))))))
(show "rpn 3 4 + 2 *" (rpn "3 4 + 2 *"))
(show "rpn 5 1 2 + 4 * + 3 -" (rpn "5 1 2 + 4 * + 3 -"))
(show "rpn 1 2 /" (rpn "1 2 /"))
(show "rpn 2.5 2 *" (rpn "2.5 2 *"))

;; A binary search tree of (key left right) nodes.
(defun tree-insert (tree key)
  (cond ((null tree) (list key nil nil))
        ((< key (first tree)) (list (first tree) (tree-insert (second tree) key) (third tree)))
        ((> key (first tree)) (list (first tree) (second tree) (tree-insert (third tree) key)))
        (t tree)))
(defun tree-inorder (tree)
  (if (null tree) nil
      (append (tree-inorder (second tree)) (list (first tree)) (tree-inorder (third tree)))))
(defun tree-depth (tree)
  (if (null tree) 0 (+ 1 (max (tree-depth (second tree)) (tree-depth (third tree))))))
(let ((tree (reduce #'tree-insert '(50 30 70 20 40 60 80 30 65) :initial-value nil)))
  (show "tree" tree)
  (show "in order" (tree-inorder tree))
  (show "depth" (tree-depth tree)))

;; Run-length encoding and decoding.
(defun rle-encode (items)
  (let ((out nil))
    (dolist (x items (reverse out))
      (if (and out (equal (car (car out)) x))
          (setf (cdr (car out)) (+ 1 (cdr (car out))))
          (push (cons x 1) out)))))
(defun rle-decode (pairs)
  (mapcan (lambda (p) (loop repeat (cdr p) collect (car p))) pairs))
(let* ((text (coerce "aaabccddddde" 'list)) (encoded (rle-encode text)))
  (show "rle" encoded)
  (show "rle as text" (string-join (mapcar (lambda (p) (format nil "~a~a" (cdr p) (car p))) encoded)))
  (show "round trip" (equal (rle-decode encoded) text)))

;; Matrices as lists of rows.
(defun transpose (m) (apply #'mapcar #'list m))
(defun mat* (a b)
  (let ((cols (transpose b)))
    (mapcar (lambda (row) (mapcar (lambda (col) (reduce #'+ (mapcar #'* row col))) cols)) a)))
(defun mat-expt (m n) (if (= n 1) m (mat* m (mat-expt m (- n 1)))))
(show "transpose" (transpose '((1 2 3) (4 5 6))))
(show "product" (mat* '((1 2) (3 4)) '((5 6) (7 8))))
(show "fibonacci by matrix power" (second (first (mat-expt '((1 1) (1 0)) 50))))

;; A tiny message-passing object system with closures and a hash table of methods.
(defun make-object (&rest slots)
  (let ((state (make-hash-table)) (methods (make-hash-table)))
    (do ((tail slots (cddr tail))) ((null tail)) (setf (gethash (car tail) state) (cadr tail)))
    (lambda (message &rest args)
      (case message
        (get (gethash (car args) state))
        (set (setf (gethash (car args) state) (cadr args)))
        (define (setf (gethash (car args) methods) (cadr args)) (car args))
        (slots (hash-table-keys state))
        (otherwise
         (let ((method (gethash message methods)))
           (if method
               (apply method state args)
               (error "no method ~a" message))))))))
(let ((account (make-object 'owner "ann" 'balance 100)))
  (funcall account 'define 'deposit
           (lambda (state amount) (setf (gethash 'balance state) (+ (gethash 'balance state) amount))))
  (funcall account 'define 'describe
           (lambda (state) (format nil "~a has ~a" (gethash 'owner state) (gethash 'balance state))))
  (funcall account 'deposit 50)
  (funcall account 'set 'owner "ann b.")
  (show "object slots" (funcall account 'slots))
  (show "object method" (funcall account 'describe))
  (show "unknown message" (handler-case (funcall account 'withdraw 5) (error (e) (condition-message e)))))
