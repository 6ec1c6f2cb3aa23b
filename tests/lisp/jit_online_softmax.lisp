;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 24 on the JIT: where the scheduler makes attention one online-softmax kernel, and
;;; what that saves. The values are checked on every device by tensor_attention.lisp; this
;;; script pins the decisions (kernel counts, the schedule's text) and the buffer plan's peak
;;; bytes, which grow with L d instead of L^2.
(require 'nn)
(manual-seed 24)
(defun input (shape) (realize (randn shape)))

(defvar q (input '(1 2 16 8)))
(defvar k (input '(1 2 16 8)))
(defvar v (input '(1 2 16 8)))

(format t "mode: ~a~%" (jit-online-softmax))
(format t "auto, 16 queries: ~a kernels~%" (kernel-count (nn:attention q k v)))
(format t "auto, 1 query: ~a kernel~%" (kernel-count (nn:attention (slice q t t '(0 1)) k v)))
(format t "auto, 4 query heads per key head: ~a kernel~%"
        (kernel-count (nn:attention (input '(2 4 1 8)) (reshape k '(2 1 16 8)) (reshape v '(2 1 16 8)))))
(let ((q16 (input '(1 2 32 16))))
  (format t "auto, keys and values in 16s: ~a kernel, causal ~a kernel~%"
          (kernel-count (nn:attention q16 q16 q16)) (kernel-count (nn:attention q16 q16 q16 :causal t))))
(format t "auto, causal, values 8 wide: ~a kernels~%" (kernel-count (nn:attention q k v :causal t)))
;; Projections whose size happens to equal the scores' (L = d) stay kernels of their own: only the
;; scores and the work between them and their q . k reduce run inside the online kernel.
(let ((x (input '(16 16))) (wq (input '(16 16))) (wk (input '(16 16))) (wv (input '(16 16))))
  (princ (schedule->text (nn:attention (matmul x wq) (matmul x wk) (matmul x wv) :causal t))))
(let ((big (input '(1 12 4096 64))))
  ;; 12 x 4096 x 4096 weights would take 768 MiB: auto takes the online kernel
  (format t "auto, L = 4096: ~a kernel~%" (kernel-count (nn:attention big big big))))
(jit-online-softmax :always)
(format t "always: ~a kernel~%" (kernel-count (nn:attention q k v)))
;; The CPU's blocked form (keys and values in multiples of 16): its opts pack the keys per
;; head, unroll the register tiles of both products and take each block's max in lanes.
(let ((text (kernels->text (nn:attention q (input '(1 2 32 8)) (input '(1 2 32 16))))))
  (princ (subseq text 0 (1+ (position #\Newline text :start (1+ (position #\Newline text)))))))
(princ (schedule->text (nn:attention q k v :causal t)))
;; An epilogue on the result (a cast) runs as a kernel of its own after the online one.
(princ (schedule->text (cast (nn:attention q k v) 'f64)))
;; The weights read again (they are returned too, or backward reads them): stored.
(let ((w (softmax (matmul q (transpose k)) :axis -1)))
  (format t "weights also returned: ~a kernels~%" (count #\Newline (schedule->text (list w (matmul w v))))))
(jit-online-softmax :never)
(format t "never: ~a kernels~%" (kernel-count (nn:attention (slice q t t '(0 1)) k v)))
(format t "not a mode: ~a~%" (handler-case (jit-online-softmax :sometimes) (type-error () "type-error")))

;; Peak bytes of the buffer plan at L = 1024, 2 heads of 64: the stored form holds the
;; 2 x 1024 x 1024 scores (8 MiB); the online kernel only its 512 KiB output.
(defvar ql (input '(1 2 1024 64)))
(defvar kl (input '(1 2 1024 64)))
(defvar vl (input '(1 2 1024 64)))
(dolist (mode '(:never :always))
  (jit-online-softmax mode)
  (realize (nn:attention ql kl vl))
  (format t "~a, L = 1024: peak ~a bytes~%" mode (getf (jit-stats) :peak-bytes)))
(jit-online-softmax :auto)
