;;; SPDX-License-Identifier: Apache-2.0
;;; Llama (model_type "llama", and Mistral-style configs) from a Hugging Face checkpoint:
;;; RMSNorm, rotary position embeddings (rope_theta, the "rotate half" layout, rope_scaling
;;; linear or llama3), a SwiGLU MLP, grouped-query attention, lm_head tied or not.
;;; (require "models/llama"); hf:load uses it.

(require 'hf)

(defun llama:inv-freq (head-dim theta &optional scaling)
  "(llama:inv-freq HEAD-DIM THETA [SCALING]) The rotary frequencies THETA^(-2i/HEAD-DIM) for i
below HEAD-DIM/2, a list, adjusted by SCALING, a config's rope_scaling (a hash table or nil):
rope_type \"linear\" divides them by factor; \"llama3\" (Llama 3.1 and later) divides the
low frequencies by factor, keeps the high ones and blends between, as Hugging Face does;
\"freq_factors\" (from a GGUF file's rope_freqs.weight) divides each by its own factor.
  (llama:inv-freq 4 10000.0)  ; => (1.0 0.01)
  (let ((scaling (json-read (json-write '((\"rope_type\" . \"linear\") (\"factor\" . 2.0))))))
    (llama:inv-freq 4 10000.0 scaling))  ; => (0.5 0.005)"
  (let* ((base (loop for i below (/ head-dim 2)
                     collect (/ 1.0 (expt (float theta) (/ (* 2.0 i) head-dim)))))
         (type (and scaling (or (hf:config scaling "rope_type") (hf:config scaling "type") "default")))
         (factor (and scaling (float (hf:config scaling "factor" 1.0)))))
    (cond ((or (null type) (equal type "default")) base)
          ((equal type "linear") (mapcar (lambda (f) (/ f factor)) base))
          ((equal type "freq_factors")
           (let ((factors (hf:config-required scaling "factors")))
             (unless (= (length factors) (length base))
               (error 'shape-error "llama: ~a rope frequency factors for ~a frequencies (head_dim ~a)"
                      (length factors) (length base) head-dim))
             (mapcar #'/ base factors)))
          ((equal type "llama3")
           (let* ((low (float (hf:config scaling "low_freq_factor" 1.0)))
                  (high (float (hf:config scaling "high_freq_factor" 4.0)))
                  (old (float (hf:config-required scaling "original_max_position_embeddings")))
                  (low-wavelen (/ old low))
                  (high-wavelen (/ old high)))
             (mapcar (lambda (f)
                       (let ((wavelen (/ (* 2 pi) f)))
                         (cond ((< wavelen high-wavelen) f)
                               ((> wavelen low-wavelen) (/ f factor))
                               (t (let ((smooth (/ (- (/ old wavelen) low) (- high low))))
                                    (+ (* (- 1 smooth) (/ f factor)) (* smooth f)))))))
                     base)))
          (t (error 'file-error
                    "llama: rope_scaling of type ~s is not supported (supported: default, linear, llama3)"
                    type)))))

(defun llama:rope-tables (positions head-dim theta &optional scaling)
  "(llama:rope-tables POSITIONS HEAD-DIM THETA [SCALING]) The rotary cosines and sines for
positions 0..POSITIONS-1, a cons of two (POSITIONS HEAD-DIM) f32 tensors: angle p * f_i for the
frequencies of llama:inv-freq, repeated for the second half (as Hugging Face lays them out).
  (let ((rope (llama:rope-tables 3 4 10000.0)))
    (list (shape (car rope)) (to-list (slice (car rope) 0))
          (to-list (slice (cdr rope) 0))))  ; => ((3 4) (1.0 1.0 1.0 1.0) (0.0 0.0 0.0 0.0))"
  (let* ((inv-freq (tensor (llama:inv-freq head-dim theta scaling) :dtype 'f32))
         (angles (mul (unsqueeze (arange positions :dtype 'f32) :axis 1) inv-freq))
         (angles (cat (list angles angles) :axis 1)))
    (cons (realize (cos angles)) (realize (sin angles)))))

(defun llama:rotate (x cos sin)
  "(llama:rotate X COS SIN) Rotary embedding of X (heads T hd) with COS and SIN (T hd):
x cos + rotate_half(x) sin, rotate_half(x) = (-x2, x1) for the halves x1, x2 of the last axis.
  (to-list (llama:rotate (tensor '(((1.0 2.0)))) (zeros '(1 2)) (ones '(1 2))))  ; => (((-2.0 1.0)))
  (let ((rope (llama:rope-tables 1 2 10000.0)))  ; position 0: no rotation
    (to-list (llama:rotate (tensor '(((1.0 2.0)))) (car rope) (cdr rope))))  ; => (((1.0 2.0)))"
  (let* ((halves (chunk x 2 :axis -1))
         (rotated (cat (list (neg (second halves)) (first halves)) :axis -1)))
    (add (mul x cos) (mul rotated sin))))

(defun llama:%rms-norm (x weight eps)
  (rms-norm x :weight weight :eps eps))

(defmodel llama:block (ck layer &optional window)
  ((d (hf:config-required ck "hidden_size"))
   (heads (hf:config-required ck "num_attention_heads"))
   (kv-heads (hf:config ck "num_key_value_heads" heads))
   (hd (hf:config ck "head_dim" (/ d heads)))
   (inner (hf:config-required ck "intermediate_size"))
   (eps (hf:config ck "rms_norm_eps" 1e-6))
   (bias (hf:config ck "attention_bias" nil))
   (p (format nil "model.layers.~a." layer))
   (input-norm (hf:tensor ck (concat p "input_layernorm.weight") (list d)))
   (q-weight (hf:weight ck (concat p "self_attn.q_proj.weight") (list (* heads hd) d)))
   (k-weight (hf:weight ck (concat p "self_attn.k_proj.weight") (list (* kv-heads hd) d)))
   (v-weight (hf:weight ck (concat p "self_attn.v_proj.weight") (list (* kv-heads hd) d)))
   (q-bias (when (eq bias t) (hf:tensor ck (concat p "self_attn.q_proj.bias") (list (* heads hd)))))
   (k-bias (when (eq bias t) (hf:tensor ck (concat p "self_attn.k_proj.bias") (list (* kv-heads hd)))))
   (v-bias (when (eq bias t) (hf:tensor ck (concat p "self_attn.v_proj.bias") (list (* kv-heads hd)))))
   (o-weight (hf:weight ck (concat p "self_attn.o_proj.weight") (list d (* heads hd))))
   (post-norm (hf:tensor ck (concat p "post_attention_layernorm.weight") (list d)))
   (gate-weight (hf:weight ck (concat p "mlp.gate_proj.weight") (list inner d)))
   (up-weight (hf:weight ck (concat p "mlp.up_proj.weight") (list inner d)))
   (down-weight (hf:weight ck (concat p "mlp.down_proj.weight") (list d inner))))
  "(llama:block CHECKPOINT LAYER [WINDOW]) Decoder layer LAYER of a Llama checkpoint, its
attention limited to the WINDOW latest positions when given (Mistral). Called with X
(T hidden), the rotary COS and SIN for X's positions (T head_dim), and optionally the
layer's KV cache and the position START of X's first token:
  x + o_proj(attention(rope(q_proj(h)), rope(k_proj(h)), v_proj(h))), h = rms_norm(x),
  then + down_proj(silu(gate_proj(h)) * up_proj(h)), h = rms_norm(x).
  (let ((dir \"/tmp/tl-doc-llama-block/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"hidden_size\" . 2) (\"num_attention_heads\" . 1)
                              (\"intermediate_size\" . 2))))
    (save-safetensors  ; all zero: the layer adds nothing to its residual stream
     (mapcar (lambda (n) (cons (format nil \"model.layers.0.~a.weight\" n)
                               (zeros (if (search \"norm\" n) '(2) '(2 2)))))
             '(\"input_layernorm\" \"post_attention_layernorm\" \"self_attn.q_proj\" \"self_attn.k_proj\"
               \"self_attn.v_proj\" \"self_attn.o_proj\" \"mlp.gate_proj\" \"mlp.up_proj\" \"mlp.down_proj\"))
     (concat dir \"model.safetensors\"))
    (let ((rope (llama:rope-tables 2 2 10000.0)) (layer (llama:block (hf:load-checkpoint dir) 0)))
      (to-list (funcall layer (tensor '((1.0 2.0) (3.0 4.0))) (car rope) (cdr rope)))))  ; => ((1.0 2.0) (3.0 4.0))"
  (x cos sin &optional cache (start 0))
  (let* ((h (llama:%rms-norm x input-norm eps))
         (q (llama:rotate (hf:split-heads (hf:linear h q-weight q-bias) heads) cos sin))
         (k (llama:rotate (hf:split-heads (hf:linear h k-weight k-bias) kv-heads) cos sin))
         (v (hf:split-heads (hf:linear h v-weight v-bias) kv-heads))
         (a (hf:attention q k v :cache cache :start start :window window))
         (x (add x (hf:linear (hf:merge-heads a) o-weight)))
         (h (llama:%rms-norm x post-norm eps)))
    (add x (hf:linear (mul (silu (hf:linear h gate-weight)) (hf:linear h up-weight)) down-weight))))

(defmodel llama:from-checkpoint (ck)
  ((config (getf ck :config))
   (d (hf:config-required ck "hidden_size"))
   (heads (hf:config-required ck "num_attention_heads"))
   (kv-heads (hf:config ck "num_key_value_heads" heads))
   (hd (hf:config ck "head_dim" (/ d heads)))
   (vocab (hf:config-required ck "vocab_size"))
   (eps (hf:config ck "rms_norm_eps" 1e-6))
   (theta (hf:config ck "rope_theta" 10000.0))
   (scaling (let ((r (hf:config ck "rope_scaling")))
              (llama:inv-freq hd theta r)     ; an unsupported rope_type fails at load
              r))
   (layers (hf:config-required ck "num_hidden_layers"))
   (check (unless (and (= 0 (mod heads kv-heads)) (evenp hd))
            (error 'shape-error
                   "llama: ~a has ~a attention heads, ~a key/value heads and head_dim ~a (~a)"
                   (getf ck :config-file) heads kv-heads hd
                   "key/value heads must divide heads, head_dim must be even")))
   (embed (hf:weight ck "model.embed_tokens.weight" (list vocab d)))
   (compute-dtype (if (dtype-quantized-p (dtype embed)) 'f32 (dtype embed)))  ; a quantized one reads as f32
   ;; Mistral's sliding_window (Hugging Face's Llama ignores the key): each query reads the
   ;; WINDOW latest positions. Rotary positions have no hard limit, so neither has generation.
   (window (let ((w (hf:config ck "sliding_window")))
             (and (equal (hf:config ck "model_type") "mistral") (integerp w) w)))
   (blocks (loop for i below layers collect (llama:block ck i window)))
   (norm (hf:tensor ck "model.norm.weight" (list d)))
   (tied (eq (hf:config ck "tie_word_embeddings" nil) t))
   (lm-head (if tied embed (hf:weight ck "lm_head.weight" (list vocab d))))
   (rope nil)
   (max-positions nil)
   (cache-layout (list layers kv-heads hd compute-dtype)))
  "(llama:from-checkpoint CHECKPOINT) A Llama language model from an hf:load-checkpoint.
Called with IDS (a 1-d integer tensor of T token ids, or one id as a dim) and optionally a
KV cache (from hf:make-cache) and the position START of the first id (an integer, or a dim for a decode
step), returns the logits (T vocab_size), or with LAST-ONLY those of the last token
(1 vocab_size). lm_head is the token embedding when
tie_word_embeddings is true. A mistral config's sliding_window limits each token's attention
to that many latest positions.
  (let ((dir \"/tmp/tl-doc-llama/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
                            ;; lm_head: token i -> i + 1 (mod 4)
                            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32)))
                      (concat dir \"model.safetensors\"))
    (let ((m (llama:from-checkpoint (hf:load-checkpoint dir))) (ids (tensor '(0 1 2) :dtype 'i32)))
      (list (to-list (argmax (m ids) :axis 1)) (shape (m ids nil 0 t)))))  ; => ((1 2 3) (1 4))"
  (ids &optional cache (start 0) last-only)
  (let* ((tokens (hf:token-count ids))
         (needed (if cache (hf:cache-length cache) tokens)))
    ;; The rotary tables cover every position the cache (or this call) can hold.
    (unless (and rope (>= (first (shape (car rope))) needed))
      (setq rope (llama:rope-tables needed hd theta scaling)))
    (flet ((run ()
             (let* ((at (list start (dim+ start tokens)))
                    (cos (cast (slice (car rope) at) compute-dtype))
                    (sin (cast (slice (cdr rope) at) compute-dtype))
                    (x (hf:embed embed ids)))
               ;; With a cache, each block's input is realized first: the cache writes inside
               ;; a block realize, and would otherwise recompute every block before it.
               (loop for b in blocks for i from 0
                     do (setq x (funcall b (if cache (realize x) x) cos sin
                                         (and cache (nth i cache)) start)))
               (when last-only (setq x (slice x (list -1 nil))))
               (hf:linear (llama:%rms-norm x norm eps) lm-head))))
      (hf:call-with-dims (list ids start) #'run))))

(provide "models/llama")
