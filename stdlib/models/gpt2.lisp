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

(defun gpt2:%weights (ck prefix specs)
  ;; The tensors PREFIX+NAME of checkpoint CK for each (FIELD NAME SHAPE) of SPECS, as an
  ;; alist (FIELD . TENSOR); the Hugging Face names may start with "transformer.".
  (mapcar (lambda (s)
            (cons (first s) (hf:tensor ck (concat prefix (second s)) (third s)
                                       :prefixes '("" "transformer."))))
          specs))

(defmodel gpt2:block (ck layer)
  ((d (hf:config-required ck "n_embd"))
   (heads (hf:config-required ck "n_head"))
   (inner (hf:config ck "n_inner" (* 4 d)))
   (eps (hf:config ck "layer_norm_epsilon" 1e-5))
   (w (gpt2:%weights ck (format nil "h.~a." layer)
                     `((ln-1-weight "ln_1.weight" (,d)) (ln-1-bias "ln_1.bias" (,d))
                       (attn-weight "attn.c_attn.weight" (,d ,(* 3 d)))
                       (attn-bias "attn.c_attn.bias" (,(* 3 d)))
                       (attn-proj-weight "attn.c_proj.weight" (,d ,d))
                       (attn-proj-bias "attn.c_proj.bias" (,d))
                       (ln-2-weight "ln_2.weight" (,d)) (ln-2-bias "ln_2.bias" (,d))
                       (fc-weight "mlp.c_fc.weight" (,d ,inner)) (fc-bias "mlp.c_fc.bias" (,inner))
                       (mlp-proj-weight "mlp.c_proj.weight" (,inner ,d))
                       (mlp-proj-bias "mlp.c_proj.bias" (,d))))))
  "(gpt2:block CHECKPOINT LAYER) Transformer block LAYER of a GPT-2 checkpoint. Called with X
(T n_embd) and optionally a layer's KV cache and the position START of X's first token:
  x + attn(ln_1(x)), then + mlp(ln_2(x)), mlp = c_proj(gelu_tanh(c_fc(x))); returns (T n_embd)."
  (x &optional cache (start 0))
  (flet ((p (name) (cdr (assoc name w))))
    (let* ((h (gpt2:%layer-norm x (p 'ln-1-weight) (p 'ln-1-bias) eps))
           (qkv (chunk (gpt2:%conv1d h (p 'attn-weight) (p 'attn-bias)) 3 :axis -1))
           (a (hf:attention (hf:split-heads (first qkv) heads) (hf:split-heads (second qkv) heads)
                            (hf:split-heads (third qkv) heads) :cache cache :start start))
           (x (add x (gpt2:%conv1d (hf:merge-heads a) (p 'attn-proj-weight) (p 'attn-proj-bias))))
           (h (gpt2:%layer-norm x (p 'ln-2-weight) (p 'ln-2-bias) eps))
           (m (gpt2:%conv1d (gelu (gpt2:%conv1d h (p 'fc-weight) (p 'fc-bias)) :approximate :tanh)
                            (p 'mlp-proj-weight) (p 'mlp-proj-bias))))
      (add x m))))

(defmodel gpt2:from-checkpoint (ck)
  ((config (getf ck :config))
   (d (hf:config-required ck "n_embd"))
   (heads (hf:config-required ck "n_head"))
   (vocab (hf:config-required ck "vocab_size"))
   (positions (hf:config ck "n_positions" 1024))
   (eps (hf:config ck "layer_norm_epsilon" 1e-5))
   (layers (hf:config-required ck "n_layer"))
   (wte (hf:tensor ck "wte.weight" (list vocab d) :prefixes '("" "transformer.")))
   (wpe (hf:tensor ck "wpe.weight" (list positions d) :prefixes '("" "transformer.")))
   (blocks (loop for i below layers collect (gpt2:block ck i)))
   (ln-f-weight (hf:tensor ck "ln_f.weight" (list d) :prefixes '("" "transformer.")))
   (ln-f-bias (hf:tensor ck "ln_f.bias" (list d) :prefixes '("" "transformer.")))
   (cache-layout (list layers heads (/ d heads) (dtype wte))))
  "(gpt2:from-checkpoint CHECKPOINT) A GPT-2 language model from an hf:load-checkpoint.
Called with IDS (a 1-d integer tensor of T token ids, or one id as a dim) and optionally a KV
cache (from hf:make-cache) and the position START of the first id (an integer, or a dim for a
decode step), returns the logits (T vocab_size), or with LAST-ONLY those of the last token
(1 vocab_size), all a prefill needs; lm_head is the token embedding wte."
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
