;;; SPDX-License-Identifier: Apache-2.0
;;; Common subexpressions: equal nodes are already one node (the graph is hash-consed), and
;;; putting the operands of commutative ops in a canonical order makes (add a b) and
;;; (add b a) one node too.

(defoptimizer-set cse "Common subexpression sharing.")

(defoptimizer commute-canonical "Operands of commutative ops in node order, so equal sums share a node."
  (?f ?a ?b) :set cse
  :when (and (member ?f '(add mul max cmpeq and or xor)) (> (node-id ?a) (node-id ?b)))
  => (?f ?b ?a))
