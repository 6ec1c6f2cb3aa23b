;;; SPDX-License-Identifier: Apache-2.0
;;; Common Lisp's everyday list, set, tree, property-list and mapping functions that the
;;; builtins leave out (issue 25), with CL's contracts (CLHS chapter 14).

(defun %key-of (keys)
  "(%key-of KEYS) is the :key function in the keyword arguments KEYS, or nil."
  (getf keys :key))

(defun adjoin (item list &rest keys)
  "(adjoin ITEM LIST &key :key :test :test-not) is LIST when ITEM (after :key) is already a
member of it, else (cons ITEM LIST).
  (adjoin 1 '(1 2))  ; => (1 2)"
  (let ((key (%key-of keys)))
    (if (apply #'member (if key (funcall key item) item) list keys)
        list
        (cons item list))))

(defun subsetp (list1 list2 &rest keys)
  "(subsetp LIST1 LIST2 &key :key :test :test-not) is true when every element of LIST1 (after
:key) is a member of LIST2.
  (subsetp '(1 2) '(3 2 1))  ; => t"
  (let ((key (%key-of keys)))
    (dolist (x list1 t)
      (unless (apply #'member (if key (funcall key x) x) list2 keys)
        (return nil)))))

(defun copy-seq (sequence)
  "(copy-seq SEQUENCE) is a fresh list, vector or string with the elements of SEQUENCE.
  (copy-seq '(1 2 3))  ; => (1 2 3)"
  (subseq sequence 0))

(defun list-length (list)
  "(list-length LIST) is the length of the proper list LIST, or nil when LIST is circular.
  (list-length '(a b c))  ; => 3"
  (do ((n 0 (+ n 2))
       (fast list (cddr fast))
       (slow list (cdr slow)))
      (nil)
    (when (endp fast) (return n))
    (when (endp (cdr fast)) (return (+ n 1)))
    (when (and (eq fast slow) (> n 0)) (return nil))))

(defun endp (list)
  "(endp LIST) is true when LIST is empty; an error when LIST is not a list.
  (list (endp '()) (endp '(1)))  ; => (t nil)"
  (cond ((null list) t)
        ((consp list) nil)
        (t (error 'type-error "endp: argument 1 must be a list, got ~s" list))))

(defun nbutlast (list &optional (n 1))
  "(nbutlast LIST [N]) is LIST without its last N elements, made by cutting LIST itself.
  (nbutlast (list 1 2 3 4) 2)  ; => (1 2)
  (nbutlast (list 1 2) 5)  ; => nil"
  (let ((len (length list)))
    (if (<= len n)
        nil
        (progn (%setcdr (nthcdr (- len n 1) list) nil) list))))

(defun tailp (object list)
  "(tailp OBJECT LIST) is true when OBJECT is eql to some tail of LIST, the final atom
included.
  (let ((x (list 1 2 3))) (list (tailp (cddr x) x) (tailp (list 3) x) (tailp nil x)))  ; => (t nil t)"
  (do ((tail list (cdr tail)))
      ((atom tail) (eql tail object))
    (when (eql tail object) (return t))))

(defun ldiff (list object)
  "(ldiff LIST OBJECT) is a fresh list of the elements of LIST before its tail OBJECT (all of
LIST when OBJECT is not a tail of it).
  (ldiff '(1 2 3) nil)  ; => (1 2 3)"
  (let ((out nil) (tail list))
    (while (and (consp tail) (not (eql tail object)))
      (push (car tail) out)
      (setq tail (cdr tail)))
    (let ((result (nreverse out)))
      (if (or (eql tail object) (null tail))
          result
          (nconc result tail)))))

(defun revappend (list tail)
  "(revappend LIST TAIL) is the elements of LIST reversed, followed by TAIL.
  (revappend '(1 2) '(3))  ; => (2 1 3)"
  (dolist (x list tail) (setq tail (cons x tail))))

(defun nreconc (list tail)
  "(nreconc LIST TAIL) is (nconc (nreverse LIST) TAIL).
  (nreconc (list 3 2 1) '(4 5))  ; => (1 2 3 4 5)"
  (nconc (nreverse list) tail))

(defun copy-tree (tree)
  "(copy-tree TREE) copies every cons of TREE; the atoms are shared.
  (let* ((a '((1 2) 3)) (b (copy-tree a))) (list (equal a b) (eq (car a) (car b))))  ; => (t nil)"
  (if (consp tree)
      (cons (copy-tree (car tree)) (copy-tree (cdr tree)))
      tree))

(defun tree-equal (a b &key (test #'eql))
  "(tree-equal A B &key :test) is true when A and B are conses of the same shape whose leaves
satisfy TEST (default eql).
  (tree-equal '(1 (2)) '(1 (2)))  ; => t"
  (cond ((and (consp a) (consp b))
         (and (tree-equal (car a) (car b) :test test) (tree-equal (cdr a) (cdr b) :test test)))
        ((or (consp a) (consp b)) nil)
        (t (and (funcall test a b) t))))

(defun subst (new old tree &rest keys)
  "(subst NEW OLD TREE &key :key :test :test-not) is TREE with every subtree or leaf that
matches OLD replaced by NEW.
  (subst 'x 'b '(a b (b c)))  ; => (a x (x c))"
  (let ((key (%key-of keys)) (test (getf keys :test)) (test-not (getf keys :test-not)))
    (labels ((walk (x)
               (let ((k (if key (funcall key x) x)))
                 (cond ((cond (test (funcall test old k))
                              (test-not (not (funcall test-not old k)))
                              (t (eql old k)))
                        new)
                       ((consp x)
                        (let ((a (walk (car x))) (d (walk (cdr x))))
                          (if (and (eq a (car x)) (eq d (cdr x))) x (cons a d))))
                       (t x)))))
      (walk tree))))

(defun sublis (alist tree &rest keys)
  "(sublis ALIST TREE &key :key :test :test-not) is TREE with each subtree or leaf that is a
key of ALIST replaced by its value.
  (sublis '((a . 1)) '(a b a))  ; => (1 b 1)"
  (let ((key (%key-of keys)))
    (labels ((walk (x)
               (let ((hit (apply #'assoc (if key (funcall key x) x) alist
                                 (%without-key keys))))
                 (cond (hit (cdr hit))
                       ((consp x)
                        (let ((a (walk (car x))) (d (walk (cdr x))))
                          (if (and (eq a (car x)) (eq d (cdr x))) x (cons a d))))
                       (t x)))))
      (walk tree))))

(defun %without-key (keys)
  "(%without-key KEYS) is the keyword arguments KEYS without :key."
  (cond ((null keys) nil)
        ((eq (car keys) :key) (%without-key (cddr keys)))
        (t (cons (car keys) (cons (cadr keys) (%without-key (cddr keys)))))))

(defun pairlis (keys data &optional alist)
  "(pairlis KEYS DATA [ALIST]) is ALIST with (KEY . DATUM) pairs for KEYS and DATA in front.
  (pairlis '(a b) '(1 2))  ; => ((b . 2) (a . 1))"
  (unless (= (length keys) (length data))
    (error 'type-error "pairlis: KEYS and DATA differ in length (~s and ~s)"
           (length keys) (length data)))
  (do ((k keys (cdr k)) (d data (cdr d)))
      ((null k) alist)
    (setq alist (cons (cons (car k) (car d)) alist))))

;;; Mapping over lists: maplist and mapl pass successive tails; mapcan and mapcon splice the
;;; results together with nconc, as Common Lisp does.

(defun %tails-step (lists)
  "(%tails-step LISTS) is each list's cdr, or nil when one of them is exhausted."
  (if (some #'atom lists) nil (mapcar #'cdr lists)))

(defun maplist (fn list &rest more)
  "(maplist FUNCTION LIST...) is the list of FUNCTION's values on successive tails of the
LISTs, stopping at the shortest.
  (maplist #'length '(a b c))  ; => (3 2 1)"
  (let ((lists (cons list more)) (out nil))
    (while (notany #'atom lists)
      (push (apply fn lists) out)
      (setq lists (mapcar #'cdr lists)))
    (nreverse out)))

(defun mapl (fn list &rest more)
  "(mapl FUNCTION LIST...) calls FUNCTION on successive tails of the LISTs; returns LIST.
  (mapl (lambda (tail) tail) '(1 2))  ; => (1 2)"
  (let ((lists (cons list more)))
    (while (notany #'atom lists)
      (apply fn lists)
      (setq lists (mapcar #'cdr lists)))
    list))

(defun mapcan (fn list &rest more)
  "(mapcan FUNCTION LIST...) joins FUNCTION's values on the elements of the LISTs with nconc
(they are spliced, not copied).
  (mapcan (lambda (x) (list x x)) '(1 2))  ; => (1 1 2 2)"
  (apply #'nconc (apply #'mapcar fn list more)))

(defun mapcon (fn list &rest more)
  "(mapcon FUNCTION LIST...) joins FUNCTION's values on successive tails of the LISTs with
nconc.
  (mapcon #'copy-list '(1 2 3))  ; => (1 2 3 2 3 3)"
  (apply #'nconc (apply #'maplist fn list more)))

;;; every, some, notany, notevery over one or more sequences (lists, vectors, strings),
;;; stopping at the shortest.

(defun %map-sequences (fn sequences stop)
  "(%map-sequences FN SEQUENCES STOP) calls FN on the elements at each index of SEQUENCES in
turn; returns (VALUE) for the first value for which (STOP VALUE) is true, or nil when the
shortest sequence ends first."
  (if (and (null (cdr sequences)) (listp (car sequences)))
      (dolist (x (car sequences) nil)
        (let ((v (funcall fn x)))
          (when (funcall stop v) (return (list v)))))
      (let ((n (apply #'min (mapcar #'length sequences))))
        (dotimes (i n nil)
          (let ((v (apply fn (mapcar (lambda (s) (elt s i)) sequences))))
            (when (funcall stop v) (return (list v))))))))

(defun every (pred sequence &rest more)
  "(every PREDICATE SEQUENCE...) is true when PREDICATE is true on the elements at every index
(up to the shortest SEQUENCE).
  (every #'evenp '(2 4 6))  ; => t"
  (null (%map-sequences pred (cons sequence more) #'null)))

(defun some (pred sequence &rest more)
  "(some PREDICATE SEQUENCE...) is the first true value of PREDICATE on the elements at one
index of the SEQUENCEs, or nil.
  (some #'evenp '(1 3 4))  ; => t"
  (car (%map-sequences pred (cons sequence more) #'identity)))

(defun notany (pred sequence &rest more)
  "(notany PREDICATE SEQUENCE...) is true when PREDICATE is false at every index.
  (notany #'minusp '(1 2 3))  ; => t
  (notany #'> '(1 5) '(2 3))  ; => nil"
  (not (apply #'some pred sequence more)))

(defun notevery (pred sequence &rest more)
  "(notevery PREDICATE SEQUENCE...) is true when PREDICATE is false at some index.
  (notevery #'evenp '(2 4 5))  ; => t"
  (not (apply #'every pred sequence more)))

;;; Property lists: getf with setf, remf, and symbol property lists (get, symbol-plist,
;;; remprop), kept in one eq table outside the symbols.

(defun %plist-put (plist indicator value)
  "(%plist-put PLIST INDICATOR VALUE) stores VALUE under INDICATOR in PLIST, in place when
INDICATOR is there, else in front; returns the plist."
  (do ((tail plist (cddr tail)))
      ((null tail) (cons indicator (cons value plist)))
    (when (eq (car tail) indicator)
      (%setcar (cdr tail) value)
      (return plist))))

(defun %plist-remove (plist indicator)
  "(%plist-remove PLIST INDICATOR) is (NEW-PLIST) with INDICATOR's first pair cut out of
PLIST, or nil when INDICATOR is not in it."
  (cond ((null plist) nil)
        ((eq (car plist) indicator) (list (cddr plist)))
        (t (do ((prev (cdr plist) (cddr prev)))
               ((null (cdr prev)) nil)
             (when (eq (cadr prev) indicator)
               (%setcdr prev (cdddr prev))
               (return (list plist)))))))

(defsetf getf (place indicator &optional default) (value)
  (let ((v (gensym "v")))
    `(let ((,v ,value))
       ,@(when default (list default))
       (setf ,place (,#'%plist-put ,place ,indicator ,v))
       ,v)))

(defmacro remf (place indicator)
  "(remf PLACE INDICATOR) removes INDICATOR and its value from the property list in PLACE;
true when it was there.
  (let ((plist (list :a 1 :b 2))) (list (remf plist :a) (remf plist :zz) plist))  ; => (t nil (:b 2))"
  (let ((r (gensym "r")))
    `(let ((,r (,#'%plist-remove ,place ,indicator)))
       (when ,r (setf ,place (car ,r)) t))))

(defvar *symbol-plists* (make-hash-table :test 'eq)
  "Maps a symbol to its property list (see get).
  (progn (setf (get 'doc-ex-plists 'k) 1) (gethash 'doc-ex-plists *symbol-plists*))  ; => (k 1)")

(defun symbol-plist (symbol)
  "(symbol-plist SYMBOL) is the property list of SYMBOL.
  (progn (setf (get 'doc-ex-symbol-plist 'color) 'red) (symbol-plist 'doc-ex-symbol-plist))  ; => (color red)"
  (unless (symbolp symbol) (error 'type-error "symbol-plist: argument 1 must be a symbol, got ~s" symbol))
  (gethash symbol *symbol-plists*))

(defun get (symbol indicator &optional default)
  "(get SYMBOL INDICATOR [DEFAULT]) is SYMBOL's property INDICATOR; set it with setf.
  (progn (setf (get 'doc-ex-get 'size) 3) (list (get 'doc-ex-get 'size) (get 'doc-ex-get 'weight 0)))  ; => (3 0)"
  (getf (symbol-plist symbol) indicator default))

(defun %put (symbol indicator value)
  (puthash symbol (%plist-put (symbol-plist symbol) indicator value) *symbol-plists*)
  value)

(defsetf get (symbol indicator &optional default) (value)
  (if default
      `(progn ,default (,#'%put ,symbol ,indicator ,value))
      `(,#'%put ,symbol ,indicator ,value)))

(defun remprop (symbol indicator)
  "(remprop SYMBOL INDICATOR) removes SYMBOL's property INDICATOR; true when it was there.
  (progn (setf (get 'doc-ex-remprop 'a) 1)
    (list (remprop 'doc-ex-remprop 'a) (get 'doc-ex-remprop 'a) (remprop 'doc-ex-remprop 'a)))  ; => (t nil nil)"
  (let ((r (%plist-remove (symbol-plist symbol) indicator)))
    (when r (puthash symbol (car r) *symbol-plists*) t)))

;;; Comparison that ignores case and number type (string-equal is a builtin).

(defun equalp (a b)
  "(equalp A B) is equal that compares numbers with =, strings ignoring case, and vectors,
structures and hash tables by their elements.
  (equalp \"ABC\" \"abc\")  ; => t"
  (cond ((eq a b) t)
        ((numberp a) (and (numberp b) (= a b)))
        ((stringp a) (and (stringp b) (string-equal a b)))
        ((characterp a) (and (characterp b) (char-equal a b)))
        ((consp a)
         (and (consp b)
              (progn
                (while (and (consp a) (consp b) (equalp (car a) (car b)))
                  (setq a (cdr a) b (cdr b)))
                (and (not (and (consp a) (consp b))) (equalp a b)))))
        ((vectorp a)
         (and (vectorp b) (= (length a) (length b))
              (dotimes (i (length a) t)
                (unless (equalp (aref a i) (aref b i)) (return nil)))))
        ((%struct-descriptor a)
         (and (eq (%struct-descriptor a) (%struct-descriptor b))
              (equalp (%struct-slots a) (%struct-slots b))))
        ((hash-table-p a)
         (and (hash-table-p b) (= (hash-table-count a) (hash-table-count b))
              (block compare
                (maphash (lambda (k v)
                           (unless (and (hash-table-contains-p b k) (equalp v (gethash k b)))
                             (return-from compare nil)))
                         a)
                t)))
        (t (equal a b))))

(defun stable-sort (sequence predicate &rest keys)
  "(stable-sort SEQUENCE PREDICATE &key :key) sorts like sort, keeping equal elements in
their original order (sort is stable too).
  (stable-sort (list 3 1 2) #'<)  ; => (1 2 3)"
  (apply #'sort sequence predicate keys))

;;; The rest of the positional and c...r accessors, and copy-alist.

(defun fifth (list) "(fifth LIST) is the fifth element of LIST.
  (fifth '(1 2 3 4 5 6))  ; => 5" (nth 4 list))
(defun sixth (list) "(sixth LIST) is the sixth element of LIST.
  (sixth '(1 2 3 4 5 6))  ; => 6" (nth 5 list))
(defun seventh (list) "(seventh LIST) is the seventh element of LIST.
  (seventh '(1 2 3 4 5 6 7 8 9 10))  ; => 7" (nth 6 list))
(defun eighth (list) "(eighth LIST) is the eighth element of LIST.
  (eighth '(1 2 3 4 5 6 7 8 9 10))  ; => 8" (nth 7 list))
(defun ninth (list) "(ninth LIST) is the ninth element of LIST.
  (ninth '(1 2 3 4 5 6 7 8 9 10))  ; => 9" (nth 8 list))
(defun tenth (list) "(tenth LIST) is the tenth element of LIST.
  (tenth '(1 2 3 4 5 6 7 8 9 10))  ; => 10" (nth 9 list))
(defun caaar (x) "(caaar X) is (car (car (car X))).
  (caaar '(((1) 2) 3))  ; => 1" (car (car (car x))))
(defun caadr (x) "(caadr X) is (car (car (cdr X))).
  (caadr '(1 (2 3)))  ; => 2" (car (car (cdr x))))
(defun cadar (x) "(cadar X) is (car (cdr (car X))).
  (cadar '((1 2) 3))  ; => 2" (car (cdr (car x))))
(defun cdaar (x) "(cdaar X) is (cdr (car (car X))).
  (cdaar '(((1 2)) 3))  ; => (2)" (cdr (car (car x))))
(defun cdadr (x) "(cdadr X) is (cdr (car (cdr X))).
  (cdadr '(1 (2 3)))  ; => (3)" (cdr (car (cdr x))))
(defun cddar (x) "(cddar X) is (cdr (cdr (car X))).
  (cddar '((1 2 3) 4))  ; => (3)" (cdr (cdr (car x))))

(defun copy-alist (alist)
  "(copy-alist ALIST) copies the list and each of its (KEY . VALUE) conses.
  (let* ((a (list (cons 'x 1))) (b (copy-alist a))) (setf (cdr (car b)) 2) (list a b))  ; => (((x . 1)) ((x . 2)))"
  (mapcar (lambda (entry) (if (consp entry) (cons (car entry) (cdr entry)) entry)) alist))
