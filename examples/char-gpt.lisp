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
                      (error 'file-error "char-gpt: ~a not found (apt-get install fortunes, or give --text FILE)"
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

;;; --- the loss curve as SVG ------------------------------------------------------------------

(defun svg-polyline (points x-of y-of color)
  (format nil "<polyline fill=\"none\" stroke=\"~a\" stroke-width=\"1.5\" points=\"~{~a~^ ~}\"/>~%"
          color (mapcar (lambda (p) (format nil "~,1f,~,1f" (funcall x-of (car p)) (funcall y-of (cdr p))))
                        points)))

(defun write-loss-svg (file series &key (title "") (x-label "step") (y-label "loss"))
  "(write-loss-svg FILE SERIES &key title x-label y-label) Writes an SVG line plot of SERIES,
a list of (NAME COLOR POINTS), POINTS a list of (X . Y), with axes, ticks and a legend."
  (let* ((w 640) (h 400) (left 60) (right 20) (top 40) (bottom 50)
         (all (loop for s in series append (third s)))
         (x0 (reduce #'min (mapcar #'car all))) (x1 (max (+ x0 1) (reduce #'max (mapcar #'car all))))
         (y0 (* 0.95 (reduce #'min (mapcar #'cdr all)))) (y1 (* 1.02 (reduce #'max (mapcar #'cdr all))))
         (x-of (lambda (x) (+ left (* (- w left right) (/ (- x x0) (float (- x1 x0)))))))
         (y-of (lambda (y) (- h bottom (* (- h top bottom) (/ (- y y0) (max 1e-9 (- y1 y0)))))))
         (out (format nil "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"~a\" height=\"~a\" font-family=\"sans-serif\" font-size=\"12\">~%<rect width=\"100%\" height=\"100%\" fill=\"white\"/>~%<text x=\"~a\" y=\"24\" font-size=\"14\">~a</text>~%"
                      w h left title)))
    (flet ((add (s) (setq out (concat out s))))
      ;; Axes, five ticks on each, and the axis labels.
      (add (format nil "<path d=\"M~a,~a V~a H~a\" stroke=\"black\" fill=\"none\"/>~%" left top (- h bottom) (- w right)))
      (dotimes (i 5)
        (let* ((fx (+ x0 (* i (/ (- x1 x0) 4.0)))) (fy (+ y0 (* i (/ (- y1 y0) 4.0))))
               (px (funcall x-of fx)) (py (funcall y-of fy)))
          (add (format nil "<line x1=\"~,1f\" y1=\"~a\" x2=\"~,1f\" y2=\"~a\" stroke=\"black\"/><text x=\"~,1f\" y=\"~a\" text-anchor=\"middle\">~a</text>~%"
                       px (- h bottom) px (+ (- h bottom) 5) px (+ (- h bottom) 18) (round fx)))
          (add (format nil "<line x1=\"~a\" y1=\"~,1f\" x2=\"~a\" y2=\"~,1f\" stroke=\"#ddd\"/><text x=\"~a\" y=\"~,1f\" text-anchor=\"end\">~,2f</text>~%"
                       left py (- w right) py (- left 5) (+ py 4) fy))))
      (add (format nil "<text x=\"~a\" y=\"~a\" text-anchor=\"middle\">~a</text>~%" (/ (+ left (- w right)) 2) (- h 10) x-label))
      (add (format nil "<text x=\"15\" y=\"~a\" transform=\"rotate(-90 15 ~a)\" text-anchor=\"middle\">~a</text>~%"
                   (/ h 2) (/ h 2) y-label))
      (loop for s in series for i from 0
            do (when (third s) (add (svg-polyline (third s) x-of y-of (second s))))
               (add (format nil "<line x1=\"~a\" y1=\"~a\" x2=\"~a\" y2=\"~a\" stroke=\"~a\" stroke-width=\"2\"/><text x=\"~a\" y=\"~a\">~a</text>~%"
                            (- w 150) (+ top 10 (* 18 i)) (- w 130) (+ top 10 (* 18 i)) (second s)
                            (- w 125) (+ top 14 (* 18 i)) (first s))))
      (add "</svg>
")
      (write-file file out))))

;;; --- generation ---------------------------------------------------------------------------

(defun sample-text (model vocab prompt n)
  ;; N characters continuing PROMPT (a list of indices), sampled from the model's softmax one
  ;; at a time. The model always sees a window of *context* positions (the last characters,
  ;; padding after them), so one compiled step serves every position; causal attention keeps
  ;; the padding from reaching the position read.
  (let* ((probs-at (jit (lambda (ids pick)
                          (no-grad (sum (mul (softmax (funcall model ids) :axis -1) pick) :axis 1)))))
         (ids prompt) (out ""))
    (dotimes (k n)
      (let* ((window (last ids *context*))
             (pos (- (length window) 1))
             (padded (append window (make-list (- *context* (length window)) :initial-element 0)))
             (pick (reshape (tensor (loop for i below *context* collect (if (= i pos) 1.0 0.0))) 1 *context* 1))
             (p (to-list (reshape (funcall probs-at (reshape (tensor padded :dtype 'i32) 1 *context*) pick) -1)))
             (r (random 1.0))
             (c (or (loop for q in p for i from 0 sum q into acc when (> acc r) return i) (- (length p) 1))))
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
  (let* ((width 24)
         (done (max (/ step (float *steps*)) (if *minutes* (/ elapsed (* 60.0 *minutes*)) 0.0)))
         (filled (min width (floor (* width done)))))
    (format t "~astep ~a/~a [~a~a] loss ~,4f lr ~,2e ~,0f tokens/s ~,0f s  "
            (code-char 13) step *steps* (make-string filled :initial-element #\=)
            (make-string (- width filled) :initial-element #\Space) loss lr rate elapsed)))

(defun main ()
  (manual-seed *seed*)
  (let* ((chars (read-corpus))
         (vocab (vocabulary chars))
         (codes (encode chars vocab))
         (n (length codes))
         (split (floor (* 9 n) 10))                    ; the first 90% trains, the rest validates
         (model (char-gpt (length vocab) *context* *embed* *heads* *layers*))
         (opt (optim:adamw (parameters model) :lr *lr* :betas '(0.9 0.95) :weight-decay 0.1))
         (checkpoint (concat *out* ".safetensors"))
         (meta-file (concat *out* ".json"))
         (train-losses nil) (val-losses nil)
         (train-step (jit (lambda (xb yb)
                            (let ((loss (loss-of model xb yb)))
                              (optim:zero-grad! opt)
                              (backward loss)
                              (optim:clip-grad-norm! opt 1.0 :lazy t)
                              (step! opt loss)))))
         (val-loss-of (jit (lambda (xb yb) (no-grad (loss-of model xb yb)))))
         ;; Fixed validation windows, evenly spread over the validation text.
         (val-span (- n split *context* 1))
         (val-batches (loop for b below *eval-batches*
                            collect (batch codes split n
                                           (loop for i below *batch*
                                                 collect (floor (* val-span (+ (* b *batch*) i))
                                                                (* *eval-batches* *batch*)))))))
    (format t "corpus: ~a characters (~a distinct), ~a for training, ~a for validation~%"
            n (length vocab) split (- n split))
    (format t "model: ~a layers, ~a heads, ~a wide, context ~a, ~a parameters; batch ~a~%"
            *layers* *heads* *embed* *context*
            (reduce #'+ (mapcar (lambda (p) (reduce #'* (shape p))) (parameters model))) *batch*)
    (when (and (command-line-flag "--resume") (probe-file checkpoint))
      (let ((meta (json-read-file meta-file :object-as :alist :array-as :list)))
        (unless (equal (cdr (assoc "vocab" meta :test #'equal)) (mapcar #'char-code vocab))
          (error 'file-error "char-gpt: ~a was trained on another text (its vocabulary differs)" meta-file))
        (nn:load model checkpoint :optimizer opt)
        (setq train-losses (mapcar (lambda (p) (cons (first p) (second p))) (cdr (assoc "train" meta :test #'equal)))
              val-losses (mapcar (lambda (p) (cons (first p) (second p))) (cdr (assoc "val" meta :test #'equal))))
        (format t "resumed from ~a at step ~a~%" checkpoint (optim:steps opt))))
    (flet ((validate ()
             (eval! model)
             (prog1 (/ (loop for vb in val-batches sum (item (funcall val-loss-of (first vb) (second vb))))
                       (length val-batches))
               (train! model)))
           (save ()
             (nn:save model checkpoint :optimizer opt)
             (json-write-file (list (cons "vocab" (mapcar #'char-code vocab))
                                    (cons "settings" (list (cons "layers" *layers*) (cons "heads" *heads*)
                                                           (cons "embed" *embed*) (cons "context" *context*)
                                                           (cons "batch" *batch*) (cons "seed" *seed*)))
                                    (cons "train" (mapcar (lambda (p) (list (car p) (cdr p))) train-losses))
                                    (cons "val" (mapcar (lambda (p) (list (car p) (cdr p))) val-losses)))
                              meta-file)
             (write-loss-svg (concat *out* ".svg")
                             (list (list "train" "#1f77b4" (reverse train-losses))
                                   (list "validation" "#d62728" (reverse val-losses)))
                             :title (format nil "char-gpt: ~a layers, ~a wide, context ~a" *layers* *embed* *context*)
                             :y-label "cross-entropy (nats/char)")))
      (train! model)
      (when (null val-losses)
        (let ((v (validate)))
          (push (cons (optim:steps opt) v) val-losses)
          (format t "step ~a: validation loss ~,4f (~,2f bits/char)~%" (optim:steps opt) v (/ v (log 2.0)))))
      ;; Throughput counts the training steps after this run's first (which compiles), not
      ;; the validations; --minutes counts everything.
      (let* ((first-step (optim:steps opt)) (step first-step)
             (start (seconds)) (busy 0.0) (tokens 0) (loss 0.0) (smooth nil))
        (loop while (and (< step *steps*)
                         (or (null *minutes*) (< (- (seconds) start) (* 60 *minutes*))))
              do (let ((lr (* *lr* (optim:warmup-cosine (schedule-step step (- (seconds) start))
                                                          *warmup* *steps*)))
                       (t0 (seconds)))
                   (optim:set-lr! opt lr)
                   (random-seed (+ (* 1000003 *seed*) step))
                   (let ((b (batch codes 0 split (random-offsets *batch* (- split *context* 1)))))
                     (setq loss (nn:check-loss (funcall train-step (first b) (second b)) step)))
                   (when (> step first-step)
                     (setq busy (+ busy (- (seconds) t0)) tokens (+ tokens (* *batch* *context*))))
                   (setq step (+ step 1) smooth (if smooth (+ (* 0.9 smooth) (* 0.1 loss)) loss))
                   (push (cons step loss) train-losses)
                   (progress step (/ tokens (max 1e-9 busy)) smooth lr (- (seconds) start))
                   (when (or (= 0 (mod step *eval-every*)) (= step *steps*))
                     (let ((v (validate)))
                       (push (cons step v) val-losses)
                       (format t "~%step ~a: validation loss ~,4f (~,2f bits/char)~%" step v (/ v (log 2.0)))
                       (save)))))
        (terpri)
        (when (or (null val-losses) (/= (car (first val-losses)) step))
          (let ((v (validate)))
            (push (cons step v) val-losses)
            (format t "step ~a: validation loss ~,4f (~,2f bits/char)~%" step v (/ v (log 2.0)))))
        (save)
        (format t "trained ~a steps (~a this run) in ~,1f s; ~,0f tokens/s after the first step; saved ~a, ~a.json, ~a.svg~%"
                step (- step first-step) (- (seconds) start) (/ tokens (max 1e-9 busy))
                checkpoint *out* *out*)))
    (when (> *sample-length* 0)
      (eval! model)
      (random-seed *seed*)
      (format t "--- sample ---~%~a~a~%" (string (aref chars 0))
              (sample-text model vocab (list (aref codes 0)) *sample-length*)))))

(main)
