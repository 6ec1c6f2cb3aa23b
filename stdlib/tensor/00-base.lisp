;;; SPDX-License-Identifier: Apache-2.0
;;; defcomposite and tensor creation from data.

(defmacro defcomposite (name params &rest body)
  "(defcomposite NAME (PARAM...) [DOC] BODY...)
Defines NAME as a tensor function over primitives (a composite), like defun. Composites are
what the JIT traces and fuses; (composite-p 'NAME) is true for them."
  `(progn
     (defun ,name ,params ,@body)
     (puthash ',name t *composites*)
     ',name))

(defvar *composites* (make-hash-table :test 'eq)
  "Names defined with defcomposite.")

(defun composite-p (name)
  "(composite-p NAME) True when NAME was defined with defcomposite."
  (gethash name *composites*))

(defun tensor (data &key dtype)
  "(tensor DATA &key dtype) A tensor holding DATA, a number or nested lists of numbers.
The dtype is inferred (f32 if any float, else i32, i64 for large integers, bool for t/nil)
unless given."
  (if (tensorp data)
      (if dtype (cast data dtype) data)
      (%tensor-from-list data dtype)))
