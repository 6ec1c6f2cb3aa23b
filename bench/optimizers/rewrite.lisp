;;; SPDX-License-Identifier: Apache-2.0
;;; Rewrite throughput: a graph of about 100,000 nodes rewritten by every built-in rule set
;;; (optimize runs them as the JIT does before scheduling). Prints nodes, firings and
;;; nodes per second, best of 3.
;;;   build/tlisp bench/optimizers/rewrite.lisp

(defun now-s () (/ (get-internal-real-time) 1e9))

(defun build-graph (steps)
  ;; A chain over a small tensor in which every step gives the rules work: a double negation,
  ;; a multiplication by one, a constant subexpression, and views that cancel.
  (let* ((x (realize (randn '(4 6))))
         (one (prim:const 1 'f32 '(4 6)))
         (y x))
    (dotimes (i steps)
      (let* ((k (prim:add (prim:const (float i) 'f32 '(4 6)) one))      ; folds to a constant
             (v (prim:reshape (prim:reshape y '(24)) '(6 4)))          ; views that merge
             (w (prim:permute (prim:permute v '(1 0)) '(1 0))))         ; and cancel
        (setq y (prim:add (prim:mul (prim:neg (prim:neg (prim:reshape w '(4 6)))) one) k))))
    y))

(let* ((g (build-graph 10000))
       (nodes (graph-size g))
       (best nil) (out nil))
  (dotimes (r 3)
    (let ((t0 (now-s)))
      ;; A fresh copy of the graph each time: rewriting is cached per node only within a run.
      (setq out (optimize g))
      (let ((dt (- (now-s) t0)))
        (when (or (null best) (< dt best)) (setq best dt)))))
  (format t "rewrite: ~a nodes -> ~a nodes in ~,3f s: ~,0f nodes/s (~a rule firings per run)~%"
          nodes (graph-size out) best (/ nodes best)
          (let ((n 0)) (dolist (r (list-optimizers)) (setq n (+ n (getf r :fired)))) (/ n 3))))
