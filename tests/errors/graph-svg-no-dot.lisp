;;; SPDX-License-Identifier: Apache-2.0
;;; graph->svg where Graphviz's dot is not on PATH (ctest runs this with PATH=/nonexistent): a
;;; file-error saying what to install, and that graph->dot works without it (issue 26).
;; expect: graph-svg-no-dot.lisp:6:1: eval error: graph->svg: Graphviz's dot is not on PATH (Debian: apt install graphviz); graph->dot writes the dot file without it

(graph->svg (relu (tensor '(1.0 -1.0))) "/tmp/never-written.svg")
