;;; SPDX-License-Identifier: Apache-2.0
;;; GPT-2 (model_type "gpt2") from a Hugging Face checkpoint: learned positions, pre-LayerNorm
;;; blocks, Conv1D weights stored (in out), one fused q/k/v projection (c_attn), gelu in its
;;; tanh form, lm_head tied to the token embedding. (require "models/gpt2"); hf:load uses it.

(require 'hf)

(defun gpt2:%conv1d (x weight bias)
  ;; GPT-2's Conv1D is a linear layer whose weight is stored (in out): x W + b.
  (add (matmul x weight) bias))

(defun gpt2:%layer-norm (x weight bias eps)
  (add (mul (layer-norm x :eps eps) weight) bias))

(defun gpt2:%tensor (ck name shape)
  ;; Tensor NAME of checkpoint CK; the Hugging Face names may start with "transformer.".
  (hf:tensor ck name shape :prefixes '("" "transformer.")))

(defun gpt2:%weight (ck name shape &optional (layout :in-out))
  ;; A matrix of CK that the model multiplies by (Conv1D weights are stored (in out)),
  ;; quantized when CK asks for it.
  (hf:weight ck name shape :prefixes '("" "transformer.") :layout layout))

(defmodel gpt2:block (ck layer)
  ((d (hf:config-required ck "n_embd"))
   (heads (hf:config-required ck "n_head"))
   (inner (hf:config ck "n_inner" (* 4 d)))
   (eps (hf:config ck "layer_norm_epsilon" 1e-5))
   (p (format nil "h.~a." layer))
   (ln-1-weight (gpt2:%tensor ck (concat p "ln_1.weight") (list d)))
   (ln-1-bias (gpt2:%tensor ck (concat p "ln_1.bias") (list d)))
   (attn-weight (gpt2:%weight ck (concat p "attn.c_attn.weight") (list d (* 3 d))))
   (attn-bias (gpt2:%tensor ck (concat p "attn.c_attn.bias") (list (* 3 d))))
   (attn-proj-weight (gpt2:%weight ck (concat p "attn.c_proj.weight") (list d d)))
   (attn-proj-bias (gpt2:%tensor ck (concat p "attn.c_proj.bias") (list d)))
   (ln-2-weight (gpt2:%tensor ck (concat p "ln_2.weight") (list d)))
   (ln-2-bias (gpt2:%tensor ck (concat p "ln_2.bias") (list d)))
   (fc-weight (gpt2:%weight ck (concat p "mlp.c_fc.weight") (list d inner)))
   (fc-bias (gpt2:%tensor ck (concat p "mlp.c_fc.bias") (list inner)))
   (mlp-proj-weight (gpt2:%weight ck (concat p "mlp.c_proj.weight") (list inner d)))
   (mlp-proj-bias (gpt2:%tensor ck (concat p "mlp.c_proj.bias") (list d))))
  "(gpt2:block CHECKPOINT LAYER) Transformer block LAYER of a GPT-2 checkpoint. Called with X
(T n_embd) and optionally a layer's KV cache and the position START of X's first token:
  x + attn(ln_1(x)), then + mlp(ln_2(x)), mlp = c_proj(gelu_tanh(c_fc(x))); returns (T n_embd).
  (let ((dir \"/tmp/tl-doc-gpt2-block/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"gpt2\") (\"n_embd\" . 2) (\"n_head\" . 1))))
    (save-safetensors  ; all zero: the block adds nothing to its residual stream
     (mapcar (lambda (e) (cons (concat \"h.0.\" (car e)) (zeros (cdr e))))
             '((\"ln_1.weight\" 2) (\"ln_1.bias\" 2) (\"attn.c_attn.weight\" 2 6) (\"attn.c_attn.bias\" 6)
               (\"attn.c_proj.weight\" 2 2) (\"attn.c_proj.bias\" 2) (\"ln_2.weight\" 2) (\"ln_2.bias\" 2)
               (\"mlp.c_fc.weight\" 2 8) (\"mlp.c_fc.bias\" 8) (\"mlp.c_proj.weight\" 8 2) (\"mlp.c_proj.bias\" 2)))
     (concat dir \"model.safetensors\"))
    (to-list ((gpt2:block (hf:load-checkpoint dir) 0) (tensor '((1.0 2.0) (3.0 4.0))))))  ; => ((1.0 2.0) (3.0 4.0))"
  (x &optional cache (start 0))
  (let* ((h (gpt2:%layer-norm x ln-1-weight ln-1-bias eps))
         (qkv (chunk (gpt2:%conv1d h attn-weight attn-bias) 3 :axis -1))
         (a (hf:attention (hf:split-heads (first qkv) heads) (hf:split-heads (second qkv) heads)
                          (hf:split-heads (third qkv) heads) :cache cache :start start))
         (x (add x (gpt2:%conv1d (hf:merge-heads a) attn-proj-weight attn-proj-bias)))
         (h (gpt2:%layer-norm x ln-2-weight ln-2-bias eps)))
    (add x (gpt2:%conv1d (gelu (gpt2:%conv1d h fc-weight fc-bias) :approximate :tanh)
                         mlp-proj-weight mlp-proj-bias))))

(defmodel gpt2:from-checkpoint (ck)
  ((config (getf ck :config))
   (d (hf:config-required ck "n_embd"))
   (heads (hf:config-required ck "n_head"))
   (vocab (hf:config-required ck "vocab_size"))
   (positions (hf:config ck "n_positions" 1024))
   (eps (hf:config ck "layer_norm_epsilon" 1e-5))
   (layers (hf:config-required ck "n_layer"))
   (wte (gpt2:%weight ck "wte.weight" (list vocab d) :out-in))
   (wpe (gpt2:%tensor ck "wpe.weight" (list positions d)))
   (blocks (loop for i below layers collect (gpt2:block ck i)))
   (ln-f-weight (gpt2:%tensor ck "ln_f.weight" (list d)))
   (ln-f-bias (gpt2:%tensor ck "ln_f.bias" (list d)))
   (max-positions positions)
   (cache-layout (list layers heads (/ d heads) (if (dtype-quantized-p (dtype wte)) 'f32 (dtype wte)))))
  "(gpt2:from-checkpoint CHECKPOINT) A GPT-2 language model from an hf:load-checkpoint.
Called with IDS (a 1-d integer tensor of T token ids, or one id as a dim) and optionally a KV
cache (from hf:make-cache) and the position START of the first id (an integer, or a dim for a
decode step), returns the logits (T vocab_size), or with LAST-ONLY those of the last token
(1 vocab_size), all a prefill needs; lm_head is the token embedding wte.
  (let ((dir \"/tmp/tl-doc-gpt2/\"))  ; a GPT-2 with no blocks, random weights
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"gpt2\") (\"vocab_size\" . 5) (\"n_positions\" . 8) (\"n_embd\" . 4)
                              (\"n_head\" . 1) (\"n_layer\" . 0))))
    (save-safetensors (list (cons \"wte.weight\" (randn '(5 4))) (cons \"wpe.weight\" (randn '(8 4)))
                            (cons \"ln_f.weight\" (ones '(4))) (cons \"ln_f.bias\" (zeros '(4))))
                      (concat dir \"model.safetensors\"))
    (let ((m (gpt2:from-checkpoint (hf:load-checkpoint dir))) (ids (tensor '(1 2 3) :dtype 'i32)))
      (list (shape (m ids)) (shape (m ids nil 0 t)))))  ; => ((3 5) (1 5))"
  (ids &optional cache (start 0) last-only)
  (flet ((run ()
           (let* ((tokens (hf:token-count ids))
                  (x (add (hf:embed wte ids) (slice wpe (list start (dim+ start tokens))))))
             ;; With a cache, each block's input is realized first: the cache writes inside a
             ;; block realize, and would otherwise recompute every block before it.
             (loop for b in blocks for i from 0
                   do (setq x (funcall b (if cache (realize x) x) (and cache (nth i cache)) start)))
             (when last-only (setq x (slice x (list -1 nil))))
             (matmul (gpt2:%layer-norm x ln-f-weight ln-f-bias eps) (transpose wte)))))
    (hf:call-with-dims (list ids start) #'run)))

(provide "models/gpt2")
