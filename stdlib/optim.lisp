;;; SPDX-License-Identifier: Apache-2.0
;;; optim: optimizers that update parameters in place from their gradients. (require 'optim)
;;; An optimizer is a hash table: its settings, its parameters and per-parameter state.

;;; An optimizer is a hash table: its settings, its parameters and per-parameter state. The
;;; learning rate and the step count are 0-d tensors updated in place, so a training step
;;; captured with jit replays correctly (each replay reads them afresh). What an optimizer
;;; of a kind does is its kind's entry, made by optim:define: the names of its
;;; per-parameter state tensors and its update function, which step! calls.

(defvar optim:*kinds* (make-hash-table :test 'eq)
  "The optimizer kinds by name: plists (:slots SLOTS :update UPDATE), made by optim:define.
  (getf (gethash 'adam optim:*kinds*) :slots)  ; => (\"exp-avg\" \"exp-avg-sq\")")

(defun optim:define (kind &key slots update)
  "(optim:define KIND &key slots update) Defines an optimizer kind, the symbol KIND. SLOTS
names its per-parameter state tensors (a list of strings, or a function of the optimizer
giving one, for state that depends on the settings); each starts as zeros shaped like its
parameter, and checkpoints save it as optim.PARAM.SLOT. UPDATE is a function
(lambda (OPT P G STATE) ...) of the optimizer, a parameter, its gradient and the list of
its state tensors, returning the list (NEW-P NEW-STATE...): step! assigns P, then each
state tensor, in place. Read settings with (optim:get OPT :key), the learning rate and
step count (1 on the first step) as tensors of P's dtype with (optim:lr-of OPT P) and
(optim:step-of OPT P). Make an optimizer with (optim:make KIND PARAMS :lr LR :key VALUE ...).
  (optim:define 'doc-ex-heavy-ball :slots '(\"velocity\")
    :update (lambda (opt p g state)
              (let ((v (add (mul (first state) (optim:get opt :beta)) g)))
                (list (sub p (mul v (optim:lr-of opt p))) v))))  ; => doc-ex-heavy-ball
  (let* ((w (requires-grad! (tensor '(1.0 -2.0))))
         (opt (optim:make 'doc-ex-heavy-ball (list w) :lr 0.25 :beta 0.5)))
    (dotimes (i 2) (optim:zero-grad! opt) (step! opt (backward (sum w))))
    (to-list w))  ; => (0.375 -2.625)"
  (unless (functionp update)
    (error 'type-error "optim:define: ~s needs an :update function, got ~s" kind update))
  (puthash kind (list :slots slots :update update) optim:*kinds*)
  kind)

(defun optim:make (kind params &rest settings)
  "(optim:make KIND PARAMS &key lr ...) An optimizer of KIND (see optim:define) for PARAMS (a
list of tensors), with the given settings (LR is required).
  (let* ((w (requires-grad! (tensor '(1.0 -2.0))))
         (opt (optim:make 'lion (list w) :lr 0.5 :betas '(0.9 0.99) :weight-decay 0.0)))
    (step! opt (backward (sum (mul w w))))
    (to-list w))  ; => (0.5 -1.5)
  (handler-case (optim:make 'doc-ex-no-such-kind (list (zeros '(2))) :lr 0.1)
    (type-error () :unknown-kind))  ; => :unknown-kind"
  (unless (gethash kind optim:*kinds*)
    (error 'type-error "optim:make: no optimizer kind ~s (define it with optim:define)" kind))
  (unless (numberp (getf settings :lr))
    (error 'type-error "optim:make: ~s needs a numeric :lr, got ~s" kind (getf settings :lr)))
  (optim:%make kind params (loop for (k v) on settings by #'cddr collect (cons k v))))

(defun optim:get (opt key)
  "(optim:get OPT KEY) The setting KEY of optimizer OPT; an error naming the setting when OPT
has none (an optimizer made with optim:make gets only the settings given to it).
  (optim:get (optim:sgd (list (zeros '(2))) :lr 0.1 :momentum 0.9) :momentum)  ; => 0.9"
  (multiple-value-bind (value found) (gethash key opt)
    (unless found
      (error 'value-error "optim: the ~(~a~) optimizer has no setting ~s: give it when making it, e.g. (optim:make '~(~a~) params ~s VALUE)"
             (gethash :kind opt) key (gethash :kind opt) key))
    value))

(defun optim:lr-of (opt p)
  "(optim:lr-of OPT P) OPT's learning rate as a 0-d tensor of P's dtype (read at each step).
  (let ((opt (optim:sgd (list (zeros '(2))) :lr 0.5)))
    (list (item (optim:lr-of opt (zeros '(2)))) (dtype (optim:lr-of opt (zeros '(2) :dtype 'f64)))))  ; => (0.5 f64)"
  (optim:%scalar opt :lr p))

(defun optim:step-of (opt p)
  "(optim:step-of OPT P) OPT's step count (1 on the first step) as a 0-d tensor of P's dtype.
  (let* ((w (requires-grad! (tensor '(1.0)))) (opt (optim:sgd (list w))))
    (dotimes (i 2) (step! opt (backward (sum w))))
    (item (optim:step-of opt w)))  ; => 2.0"
  (optim:%scalar opt :step p))

(defun optim:%make (kind params settings)
  (let ((o (make-hash-table :test 'eq)))
    (unless (and (listp params) params (every #'tensorp params))
      (error 'type-error "optim:~a: expected a non-empty list of parameter tensors, got ~s" kind params))
    (puthash :kind kind o)
    (puthash :params params o)
    (puthash :state (make-hash-table :test 'eq) o)   ; parameter -> list of state tensors
    (dolist (kv settings) (puthash (car kv) (cdr kv) o))
    (puthash :lr (realize (tensor (float (cdr (assoc :lr settings))) :dtype 'f32)) o)
    (puthash :step (realize (tensor 0.0 :dtype 'f32)) o)
    ;; The per-parameter state exists from the start: made inside a captured step, it would
    ;; be that step's own output, new (zero) at every replay.
    (let ((n (length (optim:%slots o))))
      (when (> n 0) (dolist (p params) (optim:%state o p n))))
    o))

(defun optim:sgd (params &key (lr 0.01) (momentum 0.0) (nesterov nil) (weight-decay 0.0))
  "(optim:sgd PARAMS &key (lr 0.01) (momentum 0) nesterov (weight-decay 0)) Stochastic
gradient descent, with PyTorch's momentum and Nesterov updates and L2 weight decay.
  (let* ((w (requires-grad! (tensor '(1.0 2.0)))) (opt (optim:sgd (list w) :lr 0.1))) (step! opt (backward (sum (mul w w)))) (to-list w))  ; => (0.800000011920929 1.600000023841858)"
  (optim:%make 'sgd params (list (cons :lr lr) (cons :momentum momentum) (cons :nesterov nesterov)
                                 (cons :weight-decay weight-decay))))

(defun optim:adam (params &key (lr 0.001) (betas '(0.9 0.999)) (eps 1e-8) (weight-decay 0.0))
  "(optim:adam PARAMS &key (lr 0.001) (betas '(0.9 0.999)) (eps 1e-8) (weight-decay 0)) Adam
(Kingma and Ba), with bias correction and L2 weight decay added to the gradient.
  (let* ((w (requires-grad! (tensor '(1.0)))) (opt (optim:adam (list w) :lr 0.1))) (step! opt (backward (sum (mul w w)))) (to-list w))"
  (optim:%make 'adam params (list (cons :lr lr) (cons :betas betas) (cons :eps eps)
                                  (cons :weight-decay weight-decay) (cons :decoupled nil))))

(defun optim:adamw (params &key (lr 0.001) (betas '(0.9 0.999)) (eps 1e-8) (weight-decay 0.01))
  "(optim:adamw PARAMS &key (lr 0.001) (betas '(0.9 0.999)) (eps 1e-8) (weight-decay 0.01))
Adam with decoupled weight decay (Loshchilov and Hutter): p <- p - lr wd p.
  (let* ((w (requires-grad! (tensor '(1.0 -2.0)))) (opt (optim:adamw (list w) :lr 0.5 :weight-decay 0.1)))
    (step! opt (backward (sum (mul w w))))
    (mapcar (lambda (v) (format nil \"~,3f\" v)) (to-list w)))  ; => (\"0.450\" \"-1.400\")"
  (optim:%make 'adam params (list (cons :lr lr) (cons :betas betas) (cons :eps eps)
                                  (cons :weight-decay weight-decay) (cons :decoupled t))))

(defun optim:rmsprop (params &key (lr 0.01) (alpha 0.99) (eps 1e-8) (weight-decay 0.0) (momentum 0.0) centered)
  "(optim:rmsprop PARAMS &key (lr 0.01) (alpha 0.99) (eps 1e-8) (weight-decay 0) (momentum 0)
centered) RMSprop as PyTorch's: v <- alpha v + (1 - alpha) g^2, p <- p - lr g / (sqrt(v) + eps)
(v less the squared mean gradient when CENTERED; through a momentum buffer when MOMENTUM > 0),
with L2 weight decay added to the gradient.
  (let* ((w (requires-grad! (tensor '(1.0 -2.0)))) (opt (optim:rmsprop (list w) :lr 0.25 :alpha 0.75)))
    (step! opt (backward (sum (mul w w))))
    (to-list w))  ; => (0.5 -1.5)"
  (optim:make 'rmsprop params :lr lr :alpha alpha :eps eps :weight-decay weight-decay
              :momentum momentum :centered centered))

(defun optim:adagrad (params &key (lr 0.01) (lr-decay 0.0) (weight-decay 0.0) (initial-accumulator-value 0.0) (eps 1e-10))
  "(optim:adagrad PARAMS &key (lr 0.01) (lr-decay 0) (weight-decay 0) (initial-accumulator-value 0)
(eps 1e-10)) Adagrad as PyTorch's: s <- s + g^2, p <- p - lr' g / (sqrt(s) + eps), with
lr' = lr / (1 + (step - 1) lr-decay), s starting at INITIAL-ACCUMULATOR-VALUE and L2 weight
decay added to the gradient.
  (let* ((w (requires-grad! (tensor '(1.0 -2.0)))) (opt (optim:adagrad (list w) :lr 0.5)))
    (step! opt (backward (sum (mul w w))))
    (to-list w))  ; => (0.5 -1.5)"
  (optim:make 'adagrad params :lr lr :lr-decay lr-decay :weight-decay weight-decay
              :initial-accumulator-value initial-accumulator-value :eps eps))

(defun optim:lion (params &key (lr 1e-4) (betas '(0.9 0.99)) (weight-decay 0.0))
  "(optim:lion PARAMS &key (lr 1e-4) (betas '(0.9 0.99)) (weight-decay 0)) Lion (Chen et al.
2023): p <- p (1 - lr wd) - lr sign(b1 m + (1 - b1) g), then m <- b2 m + (1 - b2) g.
  (let* ((w (requires-grad! (tensor '(1.0 -2.0)))) (opt (optim:lion (list w) :lr 0.5)))
    (step! opt (backward (sum (mul w w))))
    (to-list w))  ; => (0.5 -1.5)"
  (optim:make 'lion params :lr lr :betas betas :weight-decay weight-decay))

(defun optim:lr (opt)
  "(optim:lr OPT) The learning rate, a number.
  (optim:lr (optim:sgd (list (zeros '(2))) :lr 0.5))  ; => 0.5"
  (item (gethash :lr opt)))
(defun optim:set-lr! (opt lr)
  "(optim:set-lr! OPT LR) Sets the learning rate (in place: captured steps see it).
  (let ((opt (optim:sgd (list (zeros '(2))) :lr 0.5))) (optim:set-lr! opt 0.25) (optim:lr opt))  ; => 0.25"
  (no-grad (realize (prim:assign (gethash :lr opt) (tensor (float lr) :dtype 'f32))))
  lr)
(defun optim:steps (opt)
  "(optim:steps OPT) How many steps OPT has taken.
  (let* ((w (requires-grad! (tensor '(1.0)))) (opt (optim:sgd (list w))))
    (dotimes (i 3) (step! opt (backward (sum w))))
    (optim:steps opt))  ; => 3"
  (round (item (gethash :step opt))))

(defun optim:%state (opt p n)
  ;; P's N state tensors (zeros like P, or like its parts when complex), made on first use.
  (or (gethash p (gethash :state opt))
      (puthash p (let ((like (if (complex-p p) (view-as-real p) p)) (s nil))
                   (dotimes (i n) (setq s (cons (realize (zeros-like like)) s)))
                   s)
               (gethash :state opt))))

(defun optim:%scalar (opt key p)
  ;; OPT's 0-d tensor KEY in P's dtype.
  (cast (gethash key opt) (dtype p)))

(defun optim:%decayed (opt p g)
  ;; G with L2 weight decay added, realized now: the update must not read P after it changes.
  (let ((wd (optim:get opt :weight-decay)))
    (if (> wd 0) (realize (add g (mul p wd))) g)))

(optim:define 'sgd
  :slots (lambda (opt) (if (> (optim:get opt :momentum) 0) '("momentum") nil))
  :update (lambda (opt p g state)
            (let* ((lr (optim:lr-of opt p)) (mu (optim:get opt :momentum))
                   (g (optim:%decayed opt p g)))
              (if (> mu 0)
                  ;; The buffer starts as the first gradient (step 1), then mu buf + g.
                  (let* ((buf (first state))
                         (new-buf (where (equals (gethash :step opt) 1.0) g (add (mul buf mu) g)))
                         (update (if (optim:get opt :nesterov) (add g (mul new-buf mu)) new-buf)))
                    (list (sub p (mul update lr)) new-buf))
                  (list (sub p (mul g lr)))))))

(optim:define 'adam
  :slots '("exp-avg" "exp-avg-sq")
  :update (lambda (opt p g state)
            (let* ((lr (optim:lr-of opt p)) (b1 (first (optim:get opt :betas))) (b2 (second (optim:get opt :betas)))
                   (eps (optim:get opt :eps)) (wd (optim:get opt :weight-decay)) (decoupled (optim:get opt :decoupled))
                   (k (optim:step-of opt p))
                   (g (if decoupled g (optim:%decayed opt p g)))
                   (m (first state)) (v (second state))
                   (new-m (add (mul m b1) (mul g (- 1 b1))))
                   (new-v (add (mul v b2) (mul (square g) (- 1 b2))))
                   ;; Bias corrections from the step count, in the graph (a tensor read at each step).
                   (step-size (div lr (sub 1 (pow b1 k))))
                   (denom (add (div (sqrt new-v) (sqrt (sub 1 (pow b2 k)))) eps))
                   (p0 (if (and (> wd 0) decoupled) (mul p (sub 1 (mul lr wd))) p)))
              (list (sub p0 (mul (div new-m denom) step-size)) new-m new-v))))

(optim:define 'rmsprop
  :slots (lambda (opt) (append '("square-avg")
                               (when (> (optim:get opt :momentum) 0) '("momentum"))
                               (when (optim:get opt :centered) '("grad-avg"))))
  :update (lambda (opt p g state)
            (let* ((lr (optim:lr-of opt p)) (alpha (optim:get opt :alpha)) (eps (optim:get opt :eps))
                   (mu (optim:get opt :momentum)) (centered (optim:get opt :centered))
                   (g (optim:%decayed opt p g))
                   (v (pop state))
                   (buf (when (> mu 0) (pop state)))
                   (gavg (when centered (pop state)))
                   (new-v (add (mul v alpha) (mul (square g) (- 1 alpha))))
                   (new-gavg (when centered (add (mul gavg alpha) (mul g (- 1 alpha)))))
                   (avg (add (sqrt (if centered (sub new-v (square new-gavg)) new-v)) eps))
                   (new-buf (when buf (add (mul buf mu) (div g avg)))))
              (append (list (sub p (mul (if buf new-buf (div g avg)) lr)) new-v)
                      (when buf (list new-buf))
                      (when centered (list new-gavg))))))

(optim:define 'adagrad
  :slots '("sum")
  :update (lambda (opt p g state)
            (let* ((lr (optim:lr-of opt p)) (k (optim:step-of opt p))
                   (g (optim:%decayed opt p g))
                   (clr (div lr (add (mul (sub k 1) (optim:get opt :lr-decay)) 1)))
                   ;; The state holds the sum of squares from 0; the initial value is added here.
                   (new-s (add (first state) (square g)))
                   (std (add (sqrt (add new-s (optim:get opt :initial-accumulator-value))) (optim:get opt :eps))))
              (list (sub p (mul (div g std) clr)) new-s))))

(optim:define 'lion
  :slots '("exp-avg")
  :update (lambda (opt p g state)
            (let* ((lr (optim:lr-of opt p)) (b1 (first (optim:get opt :betas))) (b2 (second (optim:get opt :betas)))
                   (wd (optim:get opt :weight-decay)) (m (first state))
                   (p0 (if (> wd 0) (mul p (sub 1 (mul lr wd))) p)))
              (list (sub p0 (mul (sign (add (mul m b1) (mul g (- 1 b1)))) lr))
                    (add (mul m b2) (mul g (- 1 b2)))))))

(defun optim:%update (opt p g)
  ;; One parameter's step: its kind's update, then P assigned, then its state (the new
  ;; values were built from the old ones, so P goes first and the state after). A complex
  ;; parameter steps as its real parts (PyTorch's view_as_real): Adam's second moment is then
  ;; the parts' squares, not a complex square.
  (let* ((parts (complex-p p))
         (rp (if parts (view-as-real p) p))
         (rg (if parts (view-as-real g) g))
         (slots (optim:%slots opt))
         (state (and slots (optim:%state opt p (length slots))))
         (new (funcall (getf (gethash (gethash :kind opt) optim:*kinds*) :update) opt rp rg state)))
    (realize (prim:assign rp (car new)))
    (when state
      (realize-all (loop for s in state for v in (cdr new) collect (prim:assign s v))))))

(defun step! (opt &optional loss)
  "(step! OPT [LOSS]) Updates OPT's parameters from their gradients (after backward), in
place; LOSS is returned (so (step! opt (backward loss)) reads well). Parameters without a
gradient are left alone. On a learning-rate schedule, advances it by one step instead.
  (let* ((w (requires-grad! (tensor '(1.0 2.0)))) (opt (optim:sgd (list w) :lr 0.5)))
    (step! opt (backward (sum w)))
    (to-list w))  ; => (0.5 1.5)"
  (if (eq (gethash :kind opt) 'schedule)
      (optim:%schedule-step opt)
      (progn
        (no-grad (realize (prim:assign (gethash :step opt) (add (gethash :step opt) 1.0))))
        (no-grad
          (dolist (p (gethash :params opt))
            (let ((g (grad p)))
              (when g
                (optim:%update opt p g)))))))
  loss)

;;; --- gradient clipping -----------------------------------------------------------------

(defun optim:clip-grad-norm! (params max-norm &key lazy)
  "(optim:clip-grad-norm! PARAMS MAX-NORM &key lazy) Scales the gradients of PARAMS (a list of
tensors, or an optimizer) in place so that their joint L2 norm is at most MAX-NORM; returns the
norm before clipping, as PyTorch's clip_grad_norm_: a number, or with LAZY a 0-d f32 tensor.
With LAZY the norm is never read into Lisp (every gradient is multiplied by
min(1, MAX-NORM / (norm + 1e-6)) in the graph), so a training step captured with jit can clip
and still replay.
  (let ((w (requires-grad! (tensor '(3.0 4.0))))) (backward (sum (mul w w))) (optim:clip-grad-norm! (list w) 1.0))  ; => 10.0"
  (let* ((params (if (hash-table-p params) (gethash :params params) params))
         (grads (remove nil (mapcar #'grad params))))
    (cond ((null grads) (if lazy (realize (tensor 0.0)) 0.0))
          (lazy (optim:%clip-in-graph grads max-norm))
          (t (let* ((total (item (optim:%grad-norm grads)))
                    (scale (/ max-norm (+ total 1e-6))))
               (when (< scale 1.0)
                 (no-grad (realize-all (mapcar (lambda (g) (prim:assign g (mul g scale))) grads))))
               total)))))

(defun optim:%grad-norm (grads)
  ;; The joint L2 norm of GRADS, a 0-d f32 tensor (lazy); a complex gradient counts its parts.
  (sqrt (%fold #'add (mapcar (lambda (g) (sum (square (cast (if (complex-p g) (view-as-real g) g) 'f32)))) grads))))

(defun optim:%clip-in-graph (grads max-norm)
  ;; Clipping with no host read: the norm is realized first (the assigns then read it, not
  ;; the gradients they overwrite), then every gradient is scaled by min(1, max/(norm+eps)).
  (no-grad
    (let* ((total (realize (optim:%grad-norm grads)))
           (scale (minimum (div max-norm (add total 1e-6)) 1.0)))
      (realize-all (mapcar (lambda (g) (prim:assign g (mul g (cast scale (dtype g))))) grads))
      total)))

;;; --- learning-rate schedules -----------------------------------------------------------

(defun optim:%schedule (opt fn)
  ;; A schedule sets OPT's learning rate to base * (FN step) after each step!.
  (let ((s (make-hash-table :test 'eq)))
    (puthash :kind 'schedule s)
    (puthash :optimizer opt s)
    (puthash :base-lr (optim:lr opt) s)
    (puthash :fn fn s)
    (puthash :count 0 s)
    (optim:set-lr! opt (* (optim:lr opt) (funcall fn 0)))
    s))

(defun optim:%schedule-step (s)
  (puthash :count (+ 1 (gethash :count s)) s)
  (optim:set-lr! (gethash :optimizer s) (* (gethash :base-lr s) (funcall (gethash :fn s) (gethash :count s)))))

(defun optim:step-lr (opt step-size &key (gamma 0.1))
  "(optim:step-lr OPT STEP-SIZE &key (gamma 0.1)) A schedule multiplying OPT's learning rate
by GAMMA every STEP-SIZE calls of step! on it (PyTorch's StepLR).
  (let* ((opt (optim:sgd (list (zeros '(1))) :lr 1.0)) (s (optim:step-lr opt 2 :gamma 0.5)))
    (loop repeat 5 collect (progn (step! s) (optim:lr opt))))  ; => (1.0 0.5 0.5 0.25 0.25)"
  (optim:%schedule opt (lambda (k) (expt gamma (floor k step-size)))))

(defun optim:cosine-lr (opt t-max &key (eta-min 0.0))
  "(optim:cosine-lr OPT T-MAX &key (eta-min 0)) A schedule annealing OPT's learning rate from
its value to ETA-MIN along half a cosine over T-MAX steps (PyTorch's CosineAnnealingLR).
  (let* ((opt (optim:sgd (list (zeros '(1))) :lr 1.0)) (s (optim:cosine-lr opt 3)))
    (loop repeat 4 collect (progn (step! s) (round (* 100 (optim:lr opt))))))  ; => (75 25 0 0)"
  (let ((base (optim:lr opt)))
    (optim:%schedule opt (lambda (k)
                           (let ((k (min k t-max)))
                             (/ (+ eta-min (* 0.5 (- base eta-min) (+ 1 (cos (/ (* pi k) t-max))))) base))))))

(defun optim:warmup-cosine (step warmup-steps total-steps &key (min-factor 0.1))
  "(optim:warmup-cosine STEP WARMUP-STEPS TOTAL-STEPS &key (min-factor 0.1)) The learning-rate
factor at STEP (0 first) of a linear warm-up followed by a cosine decay, as nanoGPT's: it rises
from 1/WARMUP-STEPS to 1 over WARMUP-STEPS steps, then falls along half a cosine to MIN-FACTOR
at TOTAL-STEPS and stays there. Multiply by the base rate: (optim:set-lr! opt (* 1e-3 f)), or
use the schedule optim:warmup-cosine-lr.
  (mapcar (lambda (k) (optim:warmup-cosine k 4 10)) '(0 3 7 10 20))  ; => (0.25 1.0 0.55 0.1 0.1)"
  (cond ((< step warmup-steps) (/ (+ step 1) (float warmup-steps)))
        ((>= step total-steps) (float min-factor))
        (t (let ((progress (/ (- step warmup-steps) (float (max 1 (- total-steps warmup-steps))))))
             (+ min-factor (* 0.5 (- 1 min-factor) (+ 1 (cos (* pi progress)))))))))

(defun optim:warmup-cosine-lr (opt warmup-steps total-steps &key (min-factor 0.1))
  "(optim:warmup-cosine-lr OPT WARMUP-STEPS TOTAL-STEPS &key (min-factor 0.1)) A schedule setting
OPT's learning rate to its value times (optim:warmup-cosine K WARMUP-STEPS TOTAL-STEPS) after
K calls of step! on it: linear warm-up, then half a cosine down to MIN-FACTOR times the value.
  (let* ((opt (optim:sgd (list (zeros '(1))) :lr 1.0)) (s (optim:warmup-cosine-lr opt 4 10)))
    (cons (optim:lr opt) (loop repeat 3 collect (progn (step! s) (optim:lr opt)))))  ; => (0.25 0.5 0.75 1.0)"
  (optim:%schedule opt (lambda (k)
                         (optim:warmup-cosine k warmup-steps total-steps :min-factor min-factor))))

(defun optim:warmup-lr (opt warmup-steps &key (start-factor 0.0) then)
  "(optim:warmup-lr OPT WARMUP-STEPS &key (start-factor 0) then) A schedule raising OPT's
learning rate linearly from START-FACTOR times its value to its value over WARMUP-STEPS,
then following THEN, a function of the steps since warm-up ending that gives the factor
(for example (lambda (k) (expt 0.5 (floor k 1000))))).
  (let* ((opt (optim:sgd (list (zeros '(1))) :lr 1.0))
         (s (optim:warmup-lr opt 4 :then (lambda (k) (expt 0.5 k)))))
    (cons (optim:lr opt) (loop repeat 5 collect (progn (step! s) (optim:lr opt)))))  ; => (0.0 0.25 0.5 0.75 1.0 0.5)"
  (optim:%schedule opt (lambda (k)
                         (if (< k warmup-steps)
                             (+ start-factor (* (- 1 start-factor) (/ k (float warmup-steps))))
                             (if then (funcall then (- k warmup-steps)) 1.0)))))

;;; --- checkpoints -----------------------------------------------------------------------

(defun optim:%slots (opt)
  ;; The names of OPT's per-parameter state tensors, from its kind.
  (let ((slots (getf (gethash (gethash :kind opt) optim:*kinds*) :slots)))
    (if (functionp slots) (funcall slots opt) slots)))

(defun optim:state (opt model)
  "(optim:state OPT MODEL) OPT's state (its step count and per-parameter moments, named after
MODEL's parameters) as an alist for a checkpoint; nn:save and nn:load use it.
  (let* ((m (nn:linear 2 1 :bias nil)) (opt (optim:sgd (parameters m) :momentum 0.9)))
    (mapcar #'car (optim:state opt m)))  ; => (\"optim.step\" \"optim.lr\" \"optim.weight.momentum\")"
  (let ((slots (optim:%slots opt)) (out nil))
    (dolist (np (named-parameters model))
      (when (member (cdr np) (gethash :params opt) :test #'eq)
        (loop for tensor in (if slots (optim:%state opt (cdr np) (length slots)) nil)
              for slot in slots
              do (push (cons (format nil "optim.~a.~a" (car np) slot) tensor) out))))
    (append (list (cons "optim.step" (gethash :step opt)) (cons "optim.lr" (gethash :lr opt))) (reverse out))))

(defun optim:%loaded (opt saved)
  ;; nn:load assigned the moments, the step count and the learning rate in place.
  opt)

(defun optim:zero-grad! (opt)
  "(optim:zero-grad! OPT) Clears the gradients of OPT's parameters.
  (let* ((w (requires-grad! (tensor '(1.0)))) (opt (optim:sgd (list w))))
    (backward (sum (mul w 3.0)))
    (list (to-list (grad w)) (progn (optim:zero-grad! opt) (grad w))))  ; => ((3.0) nil)"
  (zero-grad! (gethash :params opt)))

(provide 'optim)
