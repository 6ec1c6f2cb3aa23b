;;; SPDX-License-Identifier: Apache-2.0
;;; On a GPU, a long reduce with few outputs is split across blocks (the split-long-reduce
;;; rule of stdlib/optimizers/60-gpu.lisp): one kernel reduces chunks, each in a thread group
;;; of its own, and a second combines them. Run on the simulated GPU, against the reference
;;; executor (which sums in double: the CPU's sequential f32 sums of 2^20 elements are off
;;; by more than the tolerance).
(defvar x (realize (reshape (arange (* 1024 1024.0)) '(1024 1024))))
(defvar y (realize (reshape (arange 65536.0) '(4 16384))))
(defun cases ()
  (list (sum x)                                         ; 1 output, 2^20 long: 256 chunks
        (sum (reshape x '(2 512 1024)) :axis '(1 2))    ; 2 outputs
        (sum (reshape x '(512 2 1024)) :axis '(0 2))    ; 2 outputs, strided: the axes go last
        (max (- x))
        (mean (* x 1e-6))
        (sum (reshape x '(2 512 1024)) :axis '(0 2))    ; 512 outputs: not split
        (sum y :axis 1)))                               ; 16384 long: not split
(use-backend 'ref)
(defvar on-ref (mapcar #'realize (cases)))
(use-backend 'cpu)
;; On the CPU only reduces with under 16 outputs of at least 2^20 elements each split (so they
;; use every thread, and Ctrl-C stops them between chunks): here the single-output ones.
(print (mapcar #'kernel-count (cases)))
(print (optimizers-fired (sum x)))

(use-backend 'cpu :options "sim=nvptx")
(print (mapcar #'kernel-count (cases)))
(print (optimizers-fired (sum x)))
(defvar on-gpu (mapcar #'realize (cases)))
(print (mapcar (lambda (a b) (allclose a b :rtol 1e-6)) on-ref on-gpu))
;; Summed in chunks, 0 + 1 + ... + (2^20 - 1) comes out exact in f32.
(print (item (first on-gpu)))
(print (shape (second on-gpu)))
;; The rule's set can be switched off.
(optimizer-disable 'gpu)
(print (kernel-count (sum (+ x 1.0))))
(optimizer-enable 'gpu)
(print (kernel-count (sum (+ x 1.0))))

;; The thread-group split is an opt, (group G), last in a GPU kernel's list: lowering adds the
;; one it chose, another group or (group 0) (no split) can be asked for, and each computes the
;; same sums; on the CPU it is an optimizer-error, as is a group the kernel's reduces do not take.
(defvar rows (realize (reshape (arange 8192.0) '(4 2048))))
(defun opts-line (text) (subseq text (search "opts:" text) (position #\Newline text :start (search "opts:" text))))
(print (opts-line (kernels->text (sum rows :axis 1))))
(dolist (opts '(((group 128)) ((group 0)) ((group 1024))))
  (print (opts-line (kernels->text (sum rows :axis 1) :opts opts))))
(print (equal (to-list (sum rows :axis 1)) (to-list (sum (realize (add rows 0.0)) :axis 1))))
(print (handler-case (kernels->text (sum rows :axis 1) :opts '((group 64) (split 0 2)))
         (optimizer-error (e) 'refused)))
(print (handler-case (kernels->text (add rows 1.0) :opts '((group 64))) (optimizer-error (e) 'refused)))
(use-backend 'cpu)
(print (handler-case (kernels->text (sum (mul rows 2.0) :axis 1) :opts '((group 64))) (optimizer-error (e) 'refused)))
