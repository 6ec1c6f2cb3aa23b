;;; SPDX-License-Identifier: Apache-2.0
;;; A character-level GPT (nanoGPT-style) trained on the fortune cookies of Debian's `fortunes`
;;; package (2.5 MB of English text in /usr/share/games/fortunes): token and position
;;; embeddings, pre-LayerNorm transformer blocks with causal self-attention, AdamW with a
;;; warm-up and cosine learning-rate schedule, gradient clipping, a validation split.
;;;   build/tlisp examples/char-gpt.lisp [--steps 2000] [--minutes M] [--seed 1] [--resume]
;;;       [--layers 4] [--heads 4] [--embed 128] [--context 128] [--batch 16] [--lr 1e-3]
;;;       [--eval-every 100] [--eval-batches 8] [--limit CHARS] [--out char-gpt]
;;;       [--sample 400] [--text FILE]
;;; Prints a progress line (loss, learning rate, tokens/s), the validation loss every
;;; --eval-every steps, then a generated sample. Writes OUT.safetensors (model and optimizer),
;;; OUT.json (vocabulary, settings, loss history) and OUT.svg (the loss curves); --resume goes
;;; on from them. --steps stops training after that many steps, --minutes after that much
;;; time; the learning-rate schedule spans the steps, or the time if it runs out first.

(require 'nn)
(require 'optim)

(defun option-text (name default)
  (let ((v (command-line-option name default))) (and v (format nil "~a" v))))

(defvar *steps* (command-line-option "--steps" 2000))
(defvar *minutes* (command-line-option "--minutes" nil))
(defvar *seed* (command-line-option "--seed" 1))
(defvar *layers* (command-line-option "--layers" 4))
(defvar *heads* (command-line-option "--heads" 4))
(defvar *embed* (command-line-option "--embed" 128))
(defvar *context* (command-line-option "--context" 128))
(defvar *batch* (command-line-option "--batch" 16))
(defvar *lr* (command-line-option "--lr" 1e-3))
(defvar *warmup* (command-line-option "--warmup" (min 100 (max 1 (floor *steps* 10)))))
(defvar *eval-every* (command-line-option "--eval-every" 100))
(defvar *eval-batches* (command-line-option "--eval-batches" 8))
(defvar *limit* (command-line-option "--limit" nil))
(defvar *out* (option-text "--out" "char-gpt"))
(defvar *sample-length* (command-line-option "--sample" 400))
(defvar *text* (option-text "--text" nil))

;;; --- the corpus -------------------------------------------------------------------------

(defvar *fortunes-dir* "/usr/share/games/fortunes/")
(defvar *fortune-files*
  '("computers" "cookie" "definitions" "disclaimer" "drugs" "education" "ethnic" "food"
    "fortunes" "goedel" "humorists" "kids" "knghtbrd" "law" "linux" "linuxcookie" "literature"
    "love" "magic" "medicine" "men-women" "miscellaneous" "news" "paradoxum" "people" "perl"
    "pets" "platitudes" "politics" "pratchett" "riddles" "science" "songs-poems" "sports"
    "startrek" "tao" "translate-me" "wisdom" "work" "zippy"))

(defun read-corpus ()
  ;; The text as a vector of characters (a vector: indexing a long string counts characters).
  (let ((text (if *text*
                  (read-file *text*)
                  (progn
                    (unless (probe-file (concat *fortunes-dir* "cookie"))
                      (error 'file-error
                             "char-gpt: ~a not found (apt-get install fortunes, or use --text FILE)"
                             *fortunes-dir*))
                    (apply #'concat (mapcar (lambda (f) (read-file (concat *fortunes-dir* f)))
                                            *fortune-files*))))))
    (let ((chars (coerce text 'vector)))
      (if (and *limit* (< *limit* (length chars))) (subseq chars 0 *limit*) chars))))

(defun vocabulary (chars)
  ;; The distinct characters of CHARS, sorted.
  (let ((seen (make-hash-table :test 'eql)))
    (loop for c across chars do (setf (gethash c seen) t))
    (sort (loop for c being the hash-keys of seen collect c) #'char<)))

(defun encode (chars vocab)
  ;; CHARS as a vector of their indices in VOCAB.
  (let ((index (make-hash-table :test 'eql)))
    (loop for c in vocab for i from 0 do (setf (gethash c index) i))
    (map 'vector (lambda (c) (gethash c index)) chars)))

;;; --- the model --------------------------------------------------------------------------

(defmodel transformer-block (embed heads)
  ((ln-1 (nn:layer-norm embed))
   (attention (nn:multihead-attention embed heads))
   (ln-2 (nn:layer-norm embed))
   (fc (nn:linear embed (* 4 embed)))
   (proj (nn:linear (* 4 embed) embed)))
  ;; X (batch tokens embed): attention then an MLP, each on a normalized copy, each added back.
  (x)
  (let ((x (add x (attention (ln-1 x) :causal t))))
    (add x (proj (gelu (fc (ln-2 x)))))))

(defmodel char-gpt (vocab context embed heads layers)
  ((tokens (nn:embedding vocab embed))
   (positions (nn:embedding context embed))
   (blocks (loop repeat layers collect (transformer-block embed heads)))
   (ln-f (nn:layer-norm embed))
   (head (nn:linear embed vocab :bias nil)))
  ;; IDS (batch tokens) of character indices -> logits (batch tokens vocab).
  (ids)
  (let ((x (add (tokens ids) (positions (arange (second (shape ids)))))))
    (dolist (b blocks) (setq x (funcall b x)))
    (head (ln-f x))))

(defun loss-of (model xb yb)
  ;; The mean cross-entropy of the next characters YB under MODEL's logits for XB.
  (let ((logits (funcall model xb)))
    (nn:cross-entropy (reshape logits -1 (car (last (shape logits)))) (reshape yb -1))))

;;; --- batches ------------------------------------------------------------------------------

(defun batch (codes start end offsets)
  ;; Inputs and targets (each (batch context) i32) for windows of CODES beginning at OFFSETS
  ;; within START..END: the targets are the inputs moved on by one character.
  (let ((xs nil) (ys nil))
    (dolist (o offsets)
      (loop for i from (+ start o) below (+ start o *context*)
            do (push (aref codes i) xs) (push (aref codes (+ i 1)) ys)))
    (list (reshape (tensor (nreverse xs) :dtype 'i32) (length offsets) *context*)
          (reshape (tensor (nreverse ys) :dtype 'i32) (length offsets) *context*))))

(defun random-offsets (n span)
  ;; N window starts drawn from 0 .. SPAN-1 (the Lisp generator, seeded per step).
  (loop repeat n collect (random span)))

;;; --- the loss curve as SVG ------------------------------------------------------------

(defun svg (tag attributes &optional text)
  ;; The SVG element TAG with ATTRIBUTES (a plist: :stroke-width 2 ...; floats to one decimal),
  ;; around TEXT when given, and a newline.
  (let ((attrs (loop for (k v) on attributes by #'cddr
                     collect (format nil " ~a=\"~a\"" (string-downcase (symbol-name k))
                                     (if (floatp v) (format nil "~,1f" v) v)))))
    (if text
        (format nil "<~a~{~a~}>~a</~a>~%" tag attrs text tag)
        (format nil "<~a~{~a~}/>~%" tag attrs))))

(defun write-loss-svg (file series &key (title "") (x-label "step") (y-label "loss"))
  "(write-loss-svg FILE SERIES &key title x-label y-label) Writes a line plot of SERIES to the
SVG file FILE, with axes, ticks and a legend: SERIES is a list of (NAME COLOR POINTS), POINTS
a list of (X . Y)."
  (let* ((w 640) (h 400) (left 60) (right 620) (top 40) (bottom 350)   ; the plot's area
         (points (loop for s in series append (third s)))
         (x0 (reduce #'min (mapcar #'car points)))
         (x1 (max (+ x0 1) (reduce #'max (mapcar #'car points))))
         (y0 (* 0.95 (reduce #'min (mapcar #'cdr points))))
         (y1 (* 1.02 (reduce #'max (mapcar #'cdr points))))
         (px (lambda (x) (+ left (* (- right left) (/ (- x x0) (float (- x1 x0)))))))
         (py (lambda (y) (- bottom (* (- bottom top) (/ (- y y0) (max 1e-9 (- y1 y0))))))))
    (write-file
     file
     (apply #'concat
            (format nil "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"~a\" height=\"~a\" ~
                         font-family=\"sans-serif\" font-size=\"12\">~%" w h)
            (svg "rect" (list :width w :height h :fill "white"))
            (svg "text" (list :x left :y 24 :font-size 14) title)
            (svg "path" (list :d (format nil "M~a,~a V~a H~a" left top bottom right)
                              :stroke "black" :fill "none"))
            (svg "text" (list :x (/ (+ left right) 2) :y (- h 10) :text-anchor "middle") x-label)
            (svg "text" (list :x 15 :y (/ h 2) :transform (format nil "rotate(-90 15 ~a)" (/ h 2))
                              :text-anchor "middle")
                 y-label)
            (append
             ;; Five ticks on each axis: steps below, losses on the left with grid lines.
             (loop for i below 5
                   for x = (+ x0 (* i (/ (- x1 x0) 4.0)))
                   for y = (+ y0 (* i (/ (- y1 y0) 4.0)))
                   append (list (svg "line" (list :x1 (funcall px x) :y1 bottom :x2 (funcall px x)
                                                  :y2 (+ bottom 5) :stroke "black"))
                                (svg "text" (list :x (funcall px x) :y (+ bottom 18)
                                                  :text-anchor "middle")
                                     (round x))
                                (svg "line" (list :x1 left :y1 (funcall py y)
                                                  :x2 right :y2 (funcall py y) :stroke "#ddd"))
                                (svg "text" (list :x (- left 5) :y (+ (funcall py y) 4)
                                                  :text-anchor "end")
                                     (format nil "~,2f" y))))
             ;; Each series as a line, and its name in the legend.
             (loop for s in series for i from 0
                   for ly = (+ top 10 (* 18 i))
                   append (list (svg "polyline"
                                     (list :fill "none" :stroke (second s) :stroke-width 1.5
                                           :points (format nil "~{~a~^ ~}"
                                                           (mapcar (lambda (p)
                                                                     (format nil "~,1f,~,1f"
                                                                             (funcall px (car p))
                                                                             (funcall py (cdr p))))
                                                                   (third s)))))
                                (svg "line" (list :x1 (- w 150) :y1 ly :x2 (- w 130) :y2 ly
                                                  :stroke (second s) :stroke-width 2))
                                (svg "text" (list :x (- w 125) :y (+ ly 4)) (first s))))
             (list (format nil "</svg>~%")))))))

;;; --- generation ---------------------------------------------------------------------------

(defun pick-index (probs)
  ;; An index drawn from the list of probabilities PROBS.
  (let ((r (random 1.0)) (acc 0.0))
    (or (position-if (lambda (q) (> (setq acc (+ acc q)) r)) probs) (- (length probs) 1))))

(defun sample-text (model vocab prompt n)
  ;; N characters continuing PROMPT (a list of indices), sampled from the model's softmax one
  ;; at a time. The model always sees a window of *context* positions (the last characters,
  ;; padding after them), so one compiled step serves every position; causal attention keeps
  ;; the padding from reaching the position read, which PICK (one-hot) selects.
  (let ((probs-at (jit (lambda (ids pick)
                         (no-grad (sum (mul (softmax (funcall model ids) :axis -1) pick)
                                       :axis 1)))))
        (ids prompt)
        (out ""))
    (dotimes (k n)
      (let* ((window (last ids *context*))
             (pos (- (length window) 1))
             (padded (append window (make-list (- *context* (length window)) :initial-element 0)))
             (pick (loop for i below *context* collect (if (= i pos) 1.0 0.0)))
             (probs (funcall probs-at (reshape (tensor padded :dtype 'i32) 1 *context*)
                             (reshape (tensor pick) 1 *context* 1)))
             (c (pick-index (to-list (reshape probs -1)))))
        (setq ids (append ids (list c)) out (concat out (string (nth c vocab))))))
    out))

;;; --- training -----------------------------------------------------------------------------

(defun seconds () (/ (get-internal-real-time) 1e9))

(defun schedule-step (step elapsed)
  ;; Where the learning-rate schedule is: at STEP, or with --minutes further on when the time
  ;; will run out before --steps, so that the cosine ends with the time budget (after warm-up).
  (if (or (null *minutes*) (< step *warmup*))
      step
      (max step (+ *warmup* (floor (* (- *steps* *warmup*) (/ elapsed (* 60.0 *minutes*))))))))

(defun progress (step rate loss lr elapsed)
  ;; The progress line, rewritten in place: the bar shows steps, or time with --minutes.
  (let* ((width 24)
         (done (max (/ step (float *steps*)) (if *minutes* (/ elapsed (* 60.0 *minutes*)) 0.0)))
         (filled (min width (floor (* width done)))))
    (format t "~astep ~a/~a [~a~a] loss ~,4f lr ~,2e ~,0f tokens/s ~,0f s  "
            (code-char 13) step *steps* (make-string filled :initial-element #\=)
            (make-string (- width filled) :initial-element #\Space) loss lr rate elapsed)))

(manual-seed *seed*)
(defvar *chars* (read-corpus))
(defvar *vocab* (vocabulary *chars*))
(defvar *codes* (encode *chars* *vocab*))
(defvar *split* (floor (* 9 (length *codes*)) 10))   ; the first 90% trains, the rest validates
(defvar *model* (char-gpt (length *vocab*) *context* *embed* *heads* *layers*))
(defvar *opt* (optim:adamw (parameters *model*) :lr *lr* :betas '(0.9 0.95) :weight-decay 0.1))
(defvar *checkpoint* (concat *out* ".safetensors"))
(defvar *train-losses* nil "(STEP . LOSS) after each training step, the latest first.")
(defvar *val-losses* nil "(STEP . LOSS) of each validation, the latest first.")

;; One training step, captured with jit: after the first call, forward, backward, clipping and
;; AdamW replay as compiled kernels with no Lisp in between.
(defvar train-step
  (jit (lambda (xb yb)
         (let ((loss (loss-of *model* xb yb)))
           (optim:zero-grad! *opt*)
           (backward loss)
           (optim:clip-grad-norm! *opt* 1.0 :lazy t)
           (step! *opt* loss)))))

(defvar val-loss-of (jit (lambda (xb yb) (no-grad (loss-of *model* xb yb)))))

;; Fixed validation windows, spread evenly over the validation text.
(defvar *val-batches*
  (let ((n (length *codes*)) (count (* *eval-batches* *batch*)))
    (loop for b below *eval-batches*
          collect (batch *codes* *split* n
                         (loop for i below *batch*
                               collect (floor (* (- n *split* *context* 1) (+ (* b *batch*) i))
                                              count))))))

(defun validate (step)
  ;; The mean loss over the validation batches, in evaluation mode; recorded and printed.
  (eval! *model*)
  (let ((v (/ (loop for vb in *val-batches* sum (item (funcall val-loss-of (first vb) (second vb))))
              (length *val-batches*))))
    (train! *model*)
    (push (cons step v) *val-losses*)
    (format t "step ~a: validation loss ~,4f (~,2f bits/char)~%" step v (/ v (log 2.0)))
    v))

(defun pairs (conses) (mapcar (lambda (p) (list (car p) (cdr p))) conses))
(defun conses (pairs) (mapcar (lambda (p) (cons (first p) (second p))) pairs))

(defun save-run ()
  ;; The checkpoint (model and optimizer), the history and settings (OUT.json), the plot.
  (nn:save *model* *checkpoint* :optimizer *opt*)
  (json-write-file (list (cons "vocab" (mapcar #'char-code *vocab*))
                         (cons "settings" (list (cons "layers" *layers*) (cons "heads" *heads*)
                                                (cons "embed" *embed*) (cons "context" *context*)
                                                (cons "batch" *batch*) (cons "seed" *seed*)))
                         (cons "train" (pairs *train-losses*))
                         (cons "val" (pairs *val-losses*)))
                   (concat *out* ".json"))
  (write-loss-svg (concat *out* ".svg")
                  (list (list "train" "#1f77b4" (reverse *train-losses*))
                        (list "validation" "#d62728" (reverse *val-losses*)))
                  :title (format nil "char-gpt: ~a layer~a, ~a wide, context ~a" *layers*
                                 (if (= *layers* 1) "" "s") *embed* *context*)
                  :y-label "cross-entropy (nats/char)"))

(defun resume-run ()
  ;; The model, the optimizer (its step count too) and the history from the last save-run.
  (let ((meta (json-read-file (concat *out* ".json") :object-as :alist :array-as :list)))
    (flet ((field (name) (cdr (assoc name meta :test #'equal))))
      (unless (equal (field "vocab") (mapcar #'char-code *vocab*))
        (error 'file-error "char-gpt: ~a.json was trained on another text (its vocabulary differs)"
               *out*))
      (nn:load *model* *checkpoint* :optimizer *opt*)
      (setq *train-losses* (conses (field "train")) *val-losses* (conses (field "val")))
      (format t "resumed from ~a at step ~a~%" *checkpoint* (optim:steps *opt*)))))

(defun train ()
  ;; Steps until --steps or --minutes; throughput counts the steps after this run's first
  ;; (which compiles), not the validations.
  (let* ((first-step (optim:steps *opt*)) (step first-step)
         (start (seconds)) (busy 0.0) (tokens 0) (smooth nil))
    (loop while (and (< step *steps*)
                     (or (null *minutes*) (< (- (seconds) start) (* 60 *minutes*))))
          do (let ((lr (* *lr* (optim:warmup-cosine (schedule-step step (- (seconds) start))
                                                    *warmup* *steps*)))
                   (t0 (seconds)))
               (optim:set-lr! *opt* lr)
               (random-seed (+ (* 1000003 *seed*) step))      ; the same batches when resumed
               (let* ((b (batch *codes* 0 *split* (random-offsets *batch* (- *split* *context* 1))))
                      (loss (nn:check-loss (funcall train-step (first b) (second b)) step)))
                 (when (> step first-step)
                   (setq busy (+ busy (- (seconds) t0)) tokens (+ tokens (* *batch* *context*))))
                 (setq step (+ step 1) smooth (if smooth (+ (* 0.9 smooth) (* 0.1 loss)) loss))
                 (push (cons step loss) *train-losses*))
               (progress step (/ tokens (max 1e-9 busy)) smooth lr (- (seconds) start))
               (when (or (= 0 (mod step *eval-every*)) (= step *steps*))
                 (terpri)
                 (validate step)
                 (save-run))))
    (terpri)
    (unless (= (car (first *val-losses*)) step)
      (validate step))
    (save-run)
    (format t "trained ~a steps (~a this run) in ~,1f s; ~,0f tokens/s after the first step~%"
            step (- step first-step) (- (seconds) start) (/ tokens (max 1e-9 busy)))
    (format t "saved ~a, ~a.json, ~a.svg~%" *checkpoint* *out* *out*)))

(format t "corpus: ~a characters (~a distinct), ~a for training, ~a for validation~%"
        (length *codes*) (length *vocab*) *split* (- (length *codes*) *split*))
(format t "model: ~a layers, ~a heads, ~a wide, context ~a, ~a parameters; batch ~a~%"
        *layers* *heads* *embed* *context*
        (reduce #'+ (mapcar (lambda (p) (reduce #'* (shape p))) (parameters *model*))) *batch*)
(when (and (command-line-flag "--resume") (probe-file *checkpoint*))
  (resume-run))
(train! *model*)
(unless *val-losses*
  (validate (optim:steps *opt*)))
(train)
(when (> *sample-length* 0)
  (eval! *model*)
  (random-seed *seed*)
  (format t "--- sample ---~%~a~a~%" (string (aref *chars* 0))
          (sample-text *model* *vocab* (list (aref *codes* 0)) *sample-length*)))
