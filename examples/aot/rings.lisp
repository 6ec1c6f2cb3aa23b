;;; SPDX-License-Identifier: Apache-2.0
;;; A classifier trained in Lisp and compiled ahead of time for a C program (tlisp compile).
;;;
;;;   build/tlisp compile examples/aot/rings.lisp --entry classify --shapes 1x2 -o /tmp/rings
;;;   cc -I/tmp examples/aot/main.c /tmp/rings.o -lm -o /tmp/rings && /tmp/rings 0.1 0.2 1.5 -0.3
;;;
;;; Loading this file trains a 2-32-32-2 MLP to tell points inside the unit circle (class 0)
;;; from points in the ring around it (class 1); tlisp compile then traces classify on a 1x2
;;; input and writes rings.o, the kernels and the trained weights, and rings.h, declaring
;;;   int classify(const float* points, float* out0, void* workspace);
;;; Run it as a script (build/tlisp examples/aot/rings.lisp) to see the training alone.

(require 'nn)
(require 'optim)

(defmodel rings-mlp ()
  ((fc1 (nn:linear 2 32))
   (fc2 (nn:linear 32 32))
   (fc3 (nn:linear 32 2)))
  (x) (fc3 (relu (fc2 (relu (fc1 x))))))

(defun ring-points (n)
  "N points: half inside the unit circle (label 0), half at radius 1.5 to 2.5 (label 1)."
  (let* ((angle (mul (rand (list n)) (* 2 pi)))
         (label (ge (arange n) (floor n 2)))
         (radius (where label (add 1.5 (rand (list n))) (mul 0.9 (sqrt (rand (list n)))))))
    (list (stack (list (mul radius (cos angle)) (mul radius (sin angle))) :axis 1)
          (cast label 'i64))))

(manual-seed 3)
(defvar *model* (rings-mlp))
(let* ((train (ring-points 2048))
       (opt (optim:adam (parameters *model*) :lr 1e-2))
       (step (jit (lambda (x y)
                    (let ((l (nn:cross-entropy (funcall *model* x) y)))
                      (optim:zero-grad! opt)
                      (step! opt (backward l)))))))
  (dotimes (i 300) (funcall step (first train) (second train)))
  (let ((test (ring-points 512)))
    (format t "rings: test accuracy ~,1f%~%" (* 100 (nn:accuracy *model* (first test) (second test))))))

(defun classify (points)
  "The probability of each class for each row of POINTS (x, y)."
  (softmax (funcall *model* points) :axis -1))
