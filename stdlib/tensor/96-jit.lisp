;;; SPDX-License-Identifier: Apache-2.0
;;; (jit f): capture a function of tensors once per signature and replay its kernels.

(defun jit (f)
  "(jit F) A function that computes what F does, for functions of tensors such as a training
step. The first call with a new signature (the tensor arguments' shapes and dtypes, the other
arguments' values) runs F and records the compiled kernels it runs; later calls with that
signature replay them on the new tensors, skipping F's Lisp code. Tensor results come back
realized. Weights F reads (not passed as arguments) are read afresh at each call, and random
draws are fresh each call, so update weights in place with assign. Lisp side effects of F
(printing text, setq) happen only when it is traced, so state F updates in place (an
optimizer's moments) must exist before the first call; a function that reads tensor data
into Lisp (item, aref, print) is run uncaptured, with a warning. Checks made with %guard
(index ranges) run again on every replay.
  (let ((f (jit (lambda (x) (add (mul x 2.0) 1.0)))))
    (list (to-list (funcall f (tensor '(1.0 2.0))))
          (to-list (funcall f (tensor '(3.0 4.0))))))  ; => ((3.0 5.0) (7.0 9.0))"
  (let ((capture (%make-capture f)))
    (lambda (&rest args) (%capture-call capture args))))

(defmacro defjit (name params &rest body)
  "(defjit NAME (PARAM...) [DOC] BODY...) Defines NAME as (jit (lambda (PARAM...) BODY...)):
a function whose tensor kernels are captured on the first call and replayed after.
  (progn (defjit doc-ex-square (x) (mul x x)) (to-list (funcall doc-ex-square (tensor '(2.0 3.0)))))  ; => (4.0 9.0)"
  `(progn
     (defvar ,name nil)
     (setq ,name (jit (lambda ,params ,@body)))
     ',name))

(defmacro with-profile (options &rest body)
  "(with-profile (&key trace (print t)) BODY...) Runs BODY while profiling the JIT device
(profile-start, profile-stop) and returns BODY's value. The summary -- time per stage and the
kernels that took longest, with calls, ms, GFLOP/s and GB/s -- is printed when BODY returns
(unless :print is nil); with :trace FILE every event also goes to FILE as a Chrome trace
(open it in Perfetto or chrome://tracing), e.g. (with-profile (:trace \"step.json\") (train-step model x y)).
  (with-profile (:print nil) (to-list (relu (tensor '(-1.0 2.0)))))  ; => (0.0 2.0)"
  (let ((trace (getf options :trace))
        (show (if (member :print options) (getf options :print) t))
        (done (gensym))
        (summary (gensym)))
    `(let ((,done nil))
       (profile-start)
       (unwind-protect
           (multiple-value-prog1 (progn ,@body) (setq ,done t))
         (let ((,summary (profile-stop ,trace)))
           (when (and ,done ,show) (format t "~a" ,summary)))))))

(defmacro with-beam (width &rest body)
  "(with-beam WIDTH BODY...) Runs BODY with the JIT's beam search at WIDTH (see jit-beam) and
returns BODY's value; the width before is back afterwards, also when BODY exits by an error.
Each new CPU kernel BODY compiles has its opts searched (a line per round on stderr), at most
jit-beam's budget of seconds per kernel; the result is kept in the disk cache, so the next run
with the same width compiles the searched kernels at once. Plans made inside are kept apart
from those made outside, so the same graph outside runs the heuristics' kernels.
  (with-beam 2 (to-list (relu (tensor '(-1.0 2.0)))))  ; => (0.0 2.0)"
  (let ((old (gensym)))
    `(let ((,old (jit-beam)))
       (unwind-protect
           (progn (jit-beam ,width) ,@body)
         (jit-beam ,old)))))
