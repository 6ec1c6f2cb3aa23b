;;; SPDX-License-Identifier: Apache-2.0
;;; Constant folding: an op whose sources are all constants becomes one constant, computed
;;; by the reference executor (so exactly what the op gives). Views of a constant are a
;;; constant of the new shape; reductions fold where the result is exact in any order.
;;; Applied bottom-up to a fixed point, this folds every subgraph of constants.

(defoptimizer-set fold-constants "Constant folding.")

(defoptimizer fold-1 "An op of one constant folds." (?f (const)) :set fold-constants
  => (%fold-constant ?root))

(defoptimizer fold-2 "An op of two constants folds." (?f (const) (const)) :set fold-constants
  => (%fold-constant ?root))

(defoptimizer fold-3 "An op of three constants folds." (?f (const) (const) (const)) :set fold-constants
  => (%fold-constant ?root))

(defoptimizer fold-empty-reduce
  "A reduce over an axis of length 0 is its identity (sum 0, product 1, max -inf or the lowest
integer), whatever its source and however long its other axes."
  (reduce _ ?x ?axes) :set fold-constants
  :when (some (lambda (a) (eql (nth a (shape ?x)) 0)) ?axes)
  => (%fold-constant ?root))
