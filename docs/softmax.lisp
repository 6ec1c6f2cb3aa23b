;;; SPDX-License-Identifier: Apache-2.0
;;; The running example of docs/ARCHITECTURE.md: a softmax over the last axis of a (4 8) f32
;;; tensor, with what each stage of the compiler makes of it. Run it as
;;;   build/tlisp docs/softmax.lisp
;;; and with TENSORLISP_DEBUG=1, 2 or 3 (and TENSORLISP_CACHE=0) for the later stages' output.
(defvar x (tensor (loop for i below 4
                        collect (loop for j below 8 collect (* 0.1 (+ i 1) j)))))
(defvar y (softmax x :axis -1))

(princ ";; 1. the primitive graph") (terpri)
(princ (graph->text y))
(princ ";; 2. the rewrites: none fire on y; with a temperature of 1.0, two do") (terpri)
(print (optimizers-fired y))
(terpri)
(explain-optimizers (softmax (div x 1.0) :axis -1))
(princ ";; 3. the schedule") (terpri)
(print (kernel-count y))
(terpri)
(princ ";; 4-6. lowered, compiled and run") (terpri)
(print (realize y))
(terpri)
