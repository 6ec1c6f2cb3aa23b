;;; SPDX-License-Identifier: Apache-2.0
;;; View clean-up: chains of movement ops collapse into one, and views that change nothing go.
;;; (A reshape, permute or expand that keeps the shape is never built: the graph returns its
;;; source, so no rule is needed for those.)

(defoptimizer-set views "View clean-up.")

(defoptimizer reshape-to-source "A reshape of a reshape back to the original shape is nothing."
  (reshape (reshape ?x _) ?s) :set views :when (equal (shape ?x) ?s) => ?x)

(defoptimizer reshape-reshape "Two reshapes are one." (reshape (reshape ?x _) ?s) :set views
  => (reshape ?x ?s))

(defun %compose-orders (inner outer)
  ;; permute(permute(x, inner), outer) = permute(x, composed): axis i reads inner[outer[i]].
  (mapcar (lambda (i) (nth i inner)) outer))

(defun %identity-order-p (order)
  (let ((i -1)) (every (lambda (a) (setq i (+ i 1)) (= a i)) order)))

(defoptimizer permute-permute "Two permutes are one (none when they cancel)."
  (permute (permute ?x ?p) ?q) :set views
  => (let ((order (%compose-orders ?p ?q)))
       (if (%identity-order-p order) ?x (prim:permute ?x order))))

(defoptimizer expand-expand "Two expands are one." (expand (expand ?x _) ?s) :set views
  => (expand ?x ?s))

(defoptimizer flip-flip "Flipping the same axes twice does nothing."
  (flip (flip ?x ?a) ?a) :set views => ?x)

(defoptimizer shrink-shrink "Two shrinks are one (constant bounds)."
  (shrink (shrink ?x ?r1) ?r2) :set views
  :when (every #'numberp (apply #'append (append ?r1 ?r2)))
  => (shrink ?x (mapcar (lambda (a b) (list (+ (first a) (first b)) (+ (first a) (second b)))) ?r1 ?r2)))
