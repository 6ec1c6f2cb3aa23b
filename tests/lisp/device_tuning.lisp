;;; SPDX-License-Identifier: Apache-2.0
;;; The tuner: a backend's runtime file declares a search space (block and thread-group sizes)
;;; and use-backend :tune t times its candidates on each kernel's first run. Here on a simulated
;;; GPU (the CPU backend's SIMT simulator): which candidate wins depends on timing, so this
;;; checks the results against the CPU's, and that each kernel is tuned once.
(defbackend simgpu
  :library "builtin" :target :nvptx :options "sim=nvptx"
  :limits (:max-threads-per-block 1024 :shared-memory-per-block 49152)
  :search (:block (32 64 128) :group (64 0 32 128)))

(defvar a (realize (reshape (arange 6000.0) '(60 100))))
(defun work (a)
  (list (sum a) (sum a :axis 1) (sum a :axis 0) (softmax (/ a 1000.0) :axis 1) (+ a 1.0)
        (matmul a (transpose a))))
(defvar on-cpu (mapcar #'realize (work a)))

(use-backend 'simgpu :tune t)
(defvar tuned (mapcar #'realize (work a)))
(print (mapcar (lambda (x y) (allclose x y :rtol 1e-5)) on-cpu tuned))
(defvar stats (jit-stats))
(print (> (getf stats :kernels-tuned) 5))
(print (> (getf stats :tune-seconds) 0))
;; Tuned once: the same kernels again time nothing more.
(gc)
(mapc #'realize (work a))
(setq stats (jit-stats))
(gc)
(mapc #'realize (work a))
(print (= (getf (jit-stats) :kernels-tuned) (getf stats :kernels-tuned)))
(print (> (getf (jit-stats) :run-seconds) 0))

;; Mistakes in a runtime file's limits and search space are named.
(defmacro try (&rest body)
  `(handler-case (progn ,@body) (error (e) (condition-message e))))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :search (:local (32 64)))
(print (try (use-backend 'badgpu)))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :search (:group (48)))
(print (try (use-backend 'badgpu)))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :limits (:max-threads-per-block 128)
  :search (:block (64 256)))
(print (try (use-backend 'badgpu)))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :limits (:shared-memory-per-block 1024)
  :search (:group (256)))
(print (try (use-backend 'badgpu)))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :search (:block 64))
(print (try (use-backend 'badgpu)))
(defbackend badgpu :library "builtin" :options "sim=nvptx" :limits (:max-threads-per-block))
(print (try (use-backend 'badgpu)))
;; Still on the tuned device after the failures.
(print (device))
