;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 26: graphs as pictures. graph->dot at each stage (the graph as built, after the
;;; optimizer rules, and with the scheduler's kernels as clusters), and graph->svg through
;;; Graphviz's dot (scripts/bootstrap.sh installs graphviz; without it graph->svg is an error
;;; saying so: tests/errors/graph-svg-no-dot.lisp).

(defvar x (realize (randn '(4 8))))
(defvar w (realize (randn '(8 3))))
(defvar y (softmax (relu (matmul x w)) :axis 1))
(defvar dir (format nil "~a/tl-graph-~a" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time)))

(defun occurrences (needle text)
  (let ((n 0) (at 0))
    (loop (let ((p (search needle text :start2 at)))
            (if p (setq n (+ n 1) at (+ p 1)) (return n))))))

(defun picture (stage)
  (let ((path (format nil "~a-~a.dot" dir (symbol-name stage))))
    (graph->dot y path :stage stage)
    (read-file path)))

(let ((g (picture :graph)) (o (picture :optimized)) (k (picture :kernels)))
  (format t "dot files begin with a digraph: ~a~%"
          (every (lambda (s) (eql 0 (search "digraph tensorlisp {" s))) (list g o k)))
  (format t "the graph as built has softmax's own nodes: ~a~%" (and (search "exp" g) (search "reduce :max" g) t))
  (format t "no clusters before scheduling: ~a~%" (= 0 (occurrences "subgraph cluster_" g) (occurrences "subgraph cluster_" o)))
  (format t "one cluster per kernel: ~a (~a kernels)~%"
          (= (occurrences "subgraph cluster_" k) (kernel-count y)) (kernel-count y))
  (format t "kernels are labelled: ~a~%" (and (search "kernel 0: reduce" k) (search "kernel 1: rows" k) t))
  (format t "inputs are grey, outside the kernels: ~a~%" (= 2 (occurrences "fillcolor=lightgrey" k))))

(let ((svg (format nil "~a-y.svg" dir)))
  (format t "graph->svg returns the file: ~a~%" (equal (graph->svg y svg :stage :kernels) svg))
  (let ((text (read-file svg)))
    (format t "an SVG with the kernels: ~a~%" (and (search "<svg" text) (search "kernel 1: rows" text) t))))

(format t "a bad stage: ~a~%"
        (handler-case (graph->dot y "/dev/null" :stage :lowered) (error (e) (format nil "~a" e))))
(format t "a realized tensor is one buffer: ~a~%"
        (= 1 (occurrences "[label=" (progn (graph->dot x (format nil "~a-x.dot" dir) :stage :kernels)
                                          (read-file (format nil "~a-x.dot" dir))))))
;; The kernels drawn are the device's scheduler's, in its mode: attention's online-softmax kernel
;; with (jit-online-softmax :always), three kernels with :never.
(let* ((q (realize (randn '(2 5 4)))) (kk (realize (randn '(2 7 4)))) (v (realize (randn '(2 7 3))))
       (a (matmul (softmax (matmul q (transpose kk)) :axis -1) v))
       (path (format nil "~a-a.dot" dir))
       (old (jit-online-softmax)))
  (dolist (mode '(:always :never))
    (jit-online-softmax mode)
    (graph->dot a path :stage :kernels)
    (let ((text (read-file path)))
      (format t "~a: online-softmax drawn ~a, one cluster per kernel ~a~%" mode (and (search "online-softmax" text) t)
              (= (occurrences "subgraph cluster_" text) (kernel-count a)))))
  (jit-online-softmax old))
(dolist (f (list "graph.dot" "optimized.dot" "kernels.dot" "y.svg" "x.dot" "a.dot"))
  (delete-file (format nil "~a-~a" dir f)))
