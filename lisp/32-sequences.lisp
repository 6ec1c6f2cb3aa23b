;;; SPDX-License-Identifier: Apache-2.0
;;; Generic sequence functions of Common Lisp (CLHS chapter 17) over lists, vectors and
;;; strings: map, map-into, concatenate, fill, replace; and parse-integer, string-capitalize.

(defun %sequence-type (type)
  "(%sequence-type TYPE) is list, vector or string for a sequence type specifier TYPE."
  (let ((head (if (consp type) (car type) type)))
    (case head
      ((list cons null) 'list)
      ((vector simple-vector array simple-array)
       (if (and (consp type) (member (cadr type) '(character base-char))) 'string 'vector))
      ((string simple-string base-string) 'string)
      (otherwise (error 'type-error "~s is not a sequence type (list, vector or string)" type)))))

(defun map (result-type fn sequence &rest more)
  "(map RESULT-TYPE FUNCTION SEQUENCE...) calls FUNCTION on the elements at each index of the
SEQUENCEs (up to the shortest) and returns the values as a sequence of RESULT-TYPE (list,
vector, string), or nil when RESULT-TYPE is nil.
  (map 'list #'+ '(1 2) '(10 20))  ; => (11 22)"
  (let* ((lists (mapcar (lambda (s) (coerce s 'list)) (cons sequence more)))
         (values (apply #'mapcar fn lists)))
    (if (null result-type) nil (coerce values (%sequence-type result-type)))))

(defun map-into (result fn &rest sequences)
  "(map-into RESULT FUNCTION SEQUENCE...) stores FUNCTION's values on the elements at each
index into RESULT, up to the shortest of RESULT and the SEQUENCEs; returns RESULT.
  (map-into (list 0 0 0) #'+ '(1 2 3) '(10 20 30))  ; => (11 22 33)
  (map-into (vector 1 2 3) #'- '(5))  ; => #(-5 2 3)"
  (let ((n (apply #'min (length result) (mapcar #'length sequences))))
    (dotimes (i n result)
      (setf (elt result i) (apply fn (mapcar (lambda (s) (elt s i)) sequences))))))

(defun concatenate (result-type &rest sequences)
  "(concatenate RESULT-TYPE SEQUENCE...) is a new sequence of RESULT-TYPE with the elements of
all the SEQUENCEs in order.
  (concatenate 'string \"ab\" \"cd\")  ; => \"abcd\""
  (let ((type (%sequence-type result-type)))
    (cond ((and (eq type 'string) (every #'stringp sequences))
           (apply #'concat sequences))  ; strings joined as strings: no list of characters between
          ((eq type 'list)
           (apply #'append (append (mapcar (lambda (s) (if (listp s) s (coerce s 'list))) sequences) (list nil))))
          (t (coerce (apply #'append (append (mapcar (lambda (s) (coerce s 'list)) sequences) (list nil)))
                     type)))))

(defun fill (sequence item &key (start 0) end)
  "(fill SEQUENCE ITEM &key :start :end) stores ITEM at every index of SEQUENCE from START below
END; returns SEQUENCE.
  (fill (list 1 2 3) 0)  ; => (0 0 0)"
  (let ((end (or end (length sequence))))
    (do ((i start (+ i 1))) ((>= i end) sequence)
      (setf (elt sequence i) item))))

(defun replace (target source &key (start1 0) end1 (start2 0) end2)
  "(replace TARGET SOURCE &key :start1 :end1 :start2 :end2) copies elements of SOURCE into
TARGET, as many as both ranges hold; returns TARGET.
  (replace (list 1 2 3 4 5) '(a b) :start1 1)  ; => (1 a b 4 5)
  (replace (copy-seq \"hello\") \"J\")  ; => \"Jello\""
  (let* ((end1 (or end1 (length target)))
         (end2 (or end2 (length source)))
         (n (min (- end1 start1) (- end2 start2)))
         (items (coerce (subseq source start2 (+ start2 n)) 'list)))
    (dotimes (k n target)
      (setf (elt target (+ start1 k)) (nth k items)))))

(defun string-capitalize (string)
  "(string-capitalize STRING) is STRING with each word's first letter in upper case and the
others in lower case; a word is a run of letters and digits.
  (string-capitalize \"hello world\")  ; => \"Hello World\""
  (let ((in-word nil))
    (map 'string (lambda (c)
                   (prog1 (if in-word (char-downcase c) (char-upcase c))
                     (setq in-word (alphanumericp c))))
         (string string))))

(defun parse-integer (string &key (start 0) end (radix 10) junk-allowed)
  "(parse-integer STRING &key :start :end :radix :junk-allowed) reads an integer, optionally
signed and surrounded by whitespace, from STRING; returns it and the index where reading
stopped. Without :junk-allowed anything else is a parse-error; with it, the value is nil when
there are no digits.
  (parse-integer \"ff\" :radix 16)  ; => 255"
  (let* ((end (or end (length string)))
         (i start)
         (sign 1)
         (value nil)
         (space-p (lambda (c) (member c '(#\Space #\Tab #\Newline #\Return #\Page)))))
    (while (and (< i end) (funcall space-p (char string i))) (setq i (+ i 1)))
    (when (and (< i end) (member (char string i) '(#\+ #\-)))
      (when (char= (char string i) #\-) (setq sign -1))
      (setq i (+ i 1)))
    (let (digit)
      (while (and (< i end) (setq digit (digit-char-p (char string i) radix)))
        (setq value (+ (* (or value 0) radix) digit) i (+ i 1))))
    (unless junk-allowed
      (while (and (< i end) (funcall space-p (char string i))) (setq i (+ i 1)))
      (when (or (null value) (< i end))
        (error 'parse-error "parse-integer: ~s is not an integer~a" (subseq string start end)
               (if (null value) "" (format nil " (junk at index ~d)" i)))))
    (values (and value (* sign value)) i)))

;;; Arrays: one-dimensional ones, which are vectors (and strings of characters); those of
;;; other ranks are in 36-arrays.lisp.

(defun make-array (dimensions &key (initial-element nil) (initial-contents nil contents-p) element-type
                                   fill-pointer adjustable displaced-to)
  "(make-array DIMENSIONS &key initial-element initial-contents element-type fill-pointer
adjustable) A new array of DIMENSIONS (a size, or a list of sizes), each element
INITIAL-ELEMENT (nil by default), or from INITIAL-CONTENTS (nested sequences, one level per
dimension). One dimension makes a vector (with ELEMENT-TYPE character, a string), whose
FILL-POINTER (t or a size, the elements in use) and ADJUSTABLE are accepted: every vector
grows with vector-push-extend. Other ranks make an array (aref takes a subscript per
dimension), printed #2A((...) ...).
  (make-array 3 :initial-element 0)  ; => #(0 0 0)
  (make-array '(2 2) :initial-element 0)  ; => #2A((0 0) (0 0))
  (make-array '(2) :initial-contents '(a b))  ; => #(a b)
  (make-array 0 :fill-pointer 0 :adjustable t)  ; => #()
  (make-array 3 :element-type 'character :initial-element #\\x)  ; => \"xxx\""
  (declare (ignore adjustable))
  (when (and (listp dimensions) (not (and (consp dimensions) (null (cdr dimensions)))))
    (when displaced-to (error 'type-error "make-array: :displaced-to is not supported"))
    (return-from make-array (%make-array-of-rank dimensions initial-element initial-contents contents-p)))
  (let ((size (cond ((integerp dimensions) dimensions)
                    ((and (consp dimensions) (integerp (car dimensions))) (car dimensions))
                    (t (error 'type-error "make-array: DIMENSIONS must be a size or a list of sizes, got ~s"
                              dimensions)))))
    (when displaced-to (error 'type-error "make-array: :displaced-to is not supported"))
    (when (and contents-p (/= (length initial-contents) size))
      (error 'shape-error "make-array: ~a initial contents for ~a elements" (length initial-contents) size))
    (let ((v (cond ((member element-type '(character base-char standard-char))
                    (if contents-p (coerce initial-contents 'string)
                        (make-string size :initial-element (or initial-element #\Space))))
                   (contents-p (coerce initial-contents 'vector))
                   (t (make-vector size initial-element)))))
      ;; A fill pointer below the size: the vector holds only the elements in use.
      (if (and (integerp fill-pointer) (< fill-pointer size) (vectorp v))
          (subseq v 0 fill-pointer)
          v))))

(defun vector-push-extend (value vector &optional extension)
  "(vector-push-extend VALUE VECTOR [EXTENSION]) Appends VALUE to VECTOR, which grows; returns
its index.
  (let ((v (make-array 0 :fill-pointer 0 :adjustable t))) (vector-push-extend 'a v) (vector-push-extend 'b v) v)  ; => #(a b)"
  (declare (ignore extension))
  (vector-push value vector))

(defun svref (vector index)
  "(svref VECTOR INDEX) Element INDEX of VECTOR, as aref; setf-able.
  (svref (vector 'a 'b) 1)  ; => b"
  (aref vector index))
(defsetf svref (vector index) (value) `(setf (aref ,vector ,index) ,value))

(defun fill-pointer (vector)
  "(fill-pointer VECTOR) How many elements VECTOR holds: its length (vectors grow as they are
pushed to).
  (fill-pointer (vector 1 2 3))  ; => 3"
  (unless (or (vectorp vector) (stringp vector))
    (error 'type-error "fill-pointer: argument 1 must be a vector, got ~s" vector))
  (length vector))

(defun array-dimensions (array)
  "(array-dimensions ARRAY) The list of ARRAY's dimensions (a vector's: its length).
  (array-dimensions (make-array 4))  ; => (4)
  (array-dimensions (make-array '(2 3)))  ; => (2 3)"
  (cond ((or (vectorp array) (stringp array)) (list (length array)))
        ((%md-array-p array) (copy-list (%md-array-dimensions array)))
        (t (error 'type-error "array-dimensions: argument 1 must be an array, got ~s" array))))

(defun array-dimension (array axis)
  "(array-dimension ARRAY AXIS) The size of ARRAY along AXIS (0 for a vector).
  (array-dimension (make-array 4) 0)  ; => 4"
  (let ((dims (array-dimensions array)))
    (unless (and (integerp axis) (< -1 axis (length dims)))
      (error 'index-error "array-dimension: axis ~s out of range for an array of rank ~d" axis (length dims)))
    (nth axis dims)))

(defun array-rank (array)
  "(array-rank ARRAY) How many dimensions ARRAY has: 1 for a vector or a string.
  (array-rank (vector 1 2))  ; => 1
  (array-rank (make-array '(2 3 4)))  ; => 3"
  (length (array-dimensions array)))

(defun array-total-size (array)
  "(array-total-size ARRAY) How many elements ARRAY has.
  (array-total-size (make-array 5))  ; => 5"
  (apply #'* (array-dimensions array)))

(defun arrayp (x)
  "(arrayp X) True when X is an array: a vector, a string, or one of several dimensions.
  (list (arrayp (vector 1)) (arrayp (make-array '(2 2))) (arrayp '(1)))  ; => (t t nil)"
  (or (vectorp x) (stringp x) (%md-array-p x)))
