;;; SPDX-License-Identifier: Apache-2.0
;;; Arrays of several dimensions (issue 25), as in Common Lisp: (make-array '(2 3)), aref and
;;; (setf aref) with one subscript per dimension, array-dimensions, array-rank,
;;; array-total-size, array-in-bounds-p, array-row-major-index, row-major-aref, and printing
;;; as #2A((1 2 3) (4 5 6)). One dimension stays a vector (and a string); an array of rank 0
;;; holds one element. An array is a structure of its dimensions and a vector of its elements
;;; in row-major order; the builtins aref and %aset hand it to %array-ref and %array-set.

(defstruct (%md-array (:constructor %make-md-array (dimensions data)) (:copier nil)
                      (:print-object %print-md-array))
  dimensions  ; a list of sizes
  data)       ; a vector of the elements, row-major

(defun %array-check-dimensions (fn dimensions)
  (unless (and (listp dimensions) (every (lambda (d) (and (integerp d) (>= d 0))) dimensions))
    (error 'type-error "~a: DIMENSIONS must be a size or a list of sizes, got ~s" fn dimensions)))

(defun %array-contents (contents dimensions)
  ;; The elements of the nested sequences CONTENTS in row-major order, checked against
  ;; DIMENSIONS (a shape-error names the first level that differs).
  (let ((out nil))
    (labels ((walk (x dims depth)
               (if (null dims)
                   (push x out)
                   (progn
                     (unless (and (typep x 'sequence) (= (length x) (car dims)))
                       (error 'shape-error "make-array: initial contents at depth ~d are ~s, not a sequence of ~d"
                              depth x (car dims)))
                     (map nil (lambda (y) (walk y (cdr dims) (+ depth 1))) x)))))
      (walk contents dimensions 0))
    (coerce (nreverse out) 'vector)))

(defun %make-array-of-rank (dimensions initial-element contents contents-p)
  ;; make-array's array of rank other than 1 (32-sequences.lisp makes vectors).
  (%array-check-dimensions 'make-array dimensions)
  (%make-md-array (copy-list dimensions)
                  (if contents-p
                      (%array-contents contents dimensions)
                      (make-vector (apply #'* dimensions) initial-element))))

(defun %array-index (fn array subscripts)
  ;; The row-major index of SUBSCRIPTS in the array of several dimensions ARRAY.
  (unless (%md-array-p array)
    (error 'type-error "~a: argument 1 must be an array, got ~s" fn array))
  (let ((dims (%md-array-dimensions array)) (index 0))
    (unless (= (length subscripts) (length dims))
      (error 'program-error "~a: ~d subscripts for an array of rank ~d ~s" fn (length subscripts) (length dims) dims))
    (loop for i in subscripts
          for d in dims
          for axis from 0
          do (unless (and (integerp i) (< -1 i d))
               (error 'index-error "~a: subscript ~s out of range for dimension ~d of ~s" fn i axis dims))
             (setq index (+ (* index d) i)))
    index))

(defun %array-ref (array &rest subscripts)
  ;; aref of an array of several dimensions (the builtin aref's own case is the vector's).
  (unless (arrayp array) (error 'type-error "aref: argument 1 must be an array, got ~s" array))
  (if (or (vectorp array) (stringp array))
      (if (= (length subscripts) 1)
          (aref array (car subscripts))
          (error 'program-error "aref: ~d subscripts for a vector" (length subscripts)))
      (aref (%md-array-data array) (%array-index 'aref array subscripts))))

(defun %array-set (array &rest subscripts-and-value)
  ;; (setf aref) of an array of several dimensions.
  (unless (arrayp array) (error 'type-error "setf aref: argument 1 must be an array, got ~s" array))
  (let ((subscripts (butlast subscripts-and-value)) (value (car (last subscripts-and-value))))
    (if (or (vectorp array) (stringp array))
        (if (= (length subscripts) 1)
            (%aset array (car subscripts) value)
            (error 'program-error "setf aref: ~d subscripts for a vector" (length subscripts)))
        (setf (aref (%md-array-data array) (%array-index 'setf-aref array subscripts)) value))))

(defun array-row-major-index (array &rest subscripts)
  "(array-row-major-index ARRAY SUBSCRIPT...) The index of the element at SUBSCRIPTS among
ARRAY's elements in row-major order.
  (array-row-major-index (make-array '(2 3)) 1 2)  ; => 5"
  (if (or (vectorp array) (stringp array))
      (progn (aref array (car subscripts)) (car subscripts))
      (%array-index 'array-row-major-index array subscripts)))

(defun row-major-aref (array index)
  "(row-major-aref ARRAY INDEX) Element INDEX of ARRAY's elements in row-major order; setf-able.
  (row-major-aref (make-array '(2 2) :initial-contents '((a b) (c d))) 2)  ; => c"
  (aref (if (%md-array-p array) (%md-array-data array) array) index))
(defsetf row-major-aref (array index) (value)
  `(setf (aref (if (%md-array-p ,array) (%md-array-data ,array) ,array) ,index) ,value))

(defun array-in-bounds-p (array &rest subscripts)
  "(array-in-bounds-p ARRAY SUBSCRIPT...) True when SUBSCRIPTS are within ARRAY's dimensions.
  (list (array-in-bounds-p (make-array '(2 3)) 1 2) (array-in-bounds-p (make-array '(2 3)) 2 0))  ; => (t nil)"
  (let ((dims (array-dimensions array)))
    (and (= (length subscripts) (length dims))
         (every (lambda (i d) (and (integerp i) (< -1 i d))) subscripts dims))))

(defun array-element-type (array)
  "(array-element-type ARRAY) character for a string, t for other arrays.
  (list (array-element-type \"ab\") (array-element-type (make-array '(2 2))))  ; => (character t)"
  (if (stringp array) 'character (progn (array-dimensions array) t)))

(defun %print-md-array (array stream)
  ;; #RANKA followed by the nested lists of the elements, as Common Lisp prints an array.
  (let ((dims (%md-array-dimensions array)) (data (%md-array-data array)) (index 0))
    (labels ((emit (dims)
               (if (null dims)
                   (progn (if *print-escape* (prin1 (aref data index) stream) (princ (aref data index) stream))
                          (setq index (+ index 1)))
                   (progn (princ "(" stream)
                          (dotimes (i (car dims))
                            (when (> i 0) (princ " " stream))
                            (emit (cdr dims)))
                          (princ ")" stream)))))
      (format stream "#~dA" (length dims))
      (if dims (emit dims) (emit nil)))))
