;;; SPDX-License-Identifier: Apache-2.0
;;; The beam search over opts (jit-beam, with-beam; src/runtime/beam.h): each new elementwise or
;;; reduce CPU kernel's opts are searched, every candidate checked against the heuristics'
;;; kernel on buffers of the kernel's sizes, and the choice goes into the disk cache, so a new
;;; device (or process) takes it without searching. Which opts win depends on timing, so this
;;; checks values against the reference executor and the counts.
(manual-seed 5)
(defvar a (realize (randn '(96 256))))
(defvar b (realize (randn '(256 128))))
(defvar x (realize (randn '(64 300))))
(defun work (a b x) (list (matmul a b) (sum (exp x) :axis 0) (relu (add (matmul a b) 1.0))))
;; The reference's values from copies of the leaves: graphs of their own, so the devices below
;; compute every kernel.
(use-backend 'ref)
(defvar want (mapcar #'realize (work (realize (add a 0.0)) (realize (add b 0.0)) (realize (add x 0.0)))))

(use-backend 'cpu)
(print (jit-beam))                       ; off unless TENSORLISP_BEAM says otherwise
;; Every kernel searched (none too short), a second at most each. (allclose, which compiles
;; kernels of its own, runs with the search off.)
(defun compare (got) (mapcar (lambda (x y) (allclose x y :rtol 1e-4 :atol 1e-4)) want got))
(jit-beam 2 1 0)
(defvar got (mapcar #'realize (work a b x)))
(defvar stats (jit-stats))
(jit-beam 0)
(print (compare got))
(print (list (+ (getf stats :kernels-searched) (getf stats :kernels-searched-from-cache))
             (getf stats :search-disagreed)))   ; three kernels: the product, the sum, the relu
;; A new device takes every choice from the disk cache and times nothing.
(setq got nil)
(gc)
(jit-beam 2 1 0)
(use-backend 'cpu)
(print (jit-beam))                       ; the width is the device's from the start
(setq got (mapcar #'realize (work a b x)))
(setq stats (jit-stats))
(jit-beam 0)
(print (compare got))
(print (list (getf stats :kernels-searched) (getf stats :kernels-searched-from-cache)
             (getf stats :search-candidates)))
;; with-beam sets the width for its body and puts the old one back, after an error too.
(jit-beam 0)
(print (with-beam 3 (jit-beam)))
(print (handler-case (with-beam 4 (error "inside")) (error () (jit-beam))))
;; Plans made with another width are kept apart: outside with-beam, the heuristics' kernels.
(setq got nil)
(gc)
(let ((before (getf (jit-stats) :kernels-searched-from-cache)))
  (realize (matmul a b))
  (print (- (getf (jit-stats) :kernels-searched-from-cache) before)))
;; Bad settings are errors that name the function.
(print (handler-case (jit-beam -1) (error (e) (condition-message e))))
(print (handler-case (jit-beam 2 0) (error (e) (condition-message e))))
(print (handler-case (jit-beam 2 1 -1) (error (e) (condition-message e))))
(print (jit-beam))
