;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 21: Hugging Face checkpoint folders (tests/models/): sharded and single files, stored
;;; dtypes kept or cast, and the errors when files and config.json do not match, which name
;;; the tensor, both shapes and the file.

(require 'hf)

(defun error-text (thunk)
  (handler-case (progn (funcall thunk) "no error")
    (error (e) (format nil "~a: ~a" (condition-type e) (condition-message e)))))

(defun edited (dir key value)
  ;; The checkpoint in DIR with its config's KEY set to VALUE (nil removes it).
  (let ((ck (hf:load-checkpoint dir)))
    (if value
        (setf (gethash key (getf ck :config)) value)
        (remhash key (getf ck :config)))
    ck))

(deftest sharded-and-single-files
  (let ((sharded (hf:load-checkpoint "../models/tiny-gpt2"))
        (single (hf:load-checkpoint "../models/tiny-gpt2-f16")))
    (is (= (length (hf:tensor-names sharded)) 30))
    (is (equal (hf:tensor-names single)
               (mapcar (lambda (n) (subseq n 12)) (hf:tensor-names sharded))))
    (is (equal (hf:config sharded "n_embd") 32))
    (is (equal (hf:config sharded "n_inner" 'none) 'none))      ; null reads as absent
    (is (equal (gethash "transformer.wte.weight" (getf sharded :files))
               "../models/tiny-gpt2/model-00001-of-00002.safetensors"))
    (is (equal (gethash "transformer.ln_f.bias" (getf sharded :files))
               "../models/tiny-gpt2/model-00002-of-00002.safetensors"))))

(deftest headers-and-named-loads
  ;; the checkpoint reads headers only; hf:tensor reads one tensor by name when taken
  (let ((file "../models/tiny-llama/model.safetensors"))
    (is (equal (first (safetensors-header file)) '("model.embed_tokens.weight" bf16 (256 32))))
    (is (= (length (safetensors-header file)) 21))
    (let ((two (load-safetensors file :names '("model.norm.weight" "lm_head.weight"))))
      (is (equal (mapcar #'car two) '("model.norm.weight" "lm_head.weight")))
      (is (equal (shape (cdr (second two))) '(256 32))))
    (is (equal (error-text (lambda () (load-safetensors file :names '("model.norm.weight" "x"))))
               "file-error: load-safetensors: \"../models/tiny-llama/model.safetensors\" has no tensor \"x\""))
    (is-error type-error (load-safetensors file :names "model.norm.weight"))
    (is-error program-error (load-safetensors file :nmes '("x")))))

(deftest stored-dtypes-kept-or-cast
  (let ((cast (hf:load-checkpoint "../models/tiny-llama"))
        (kept (hf:load-checkpoint "../models/tiny-llama" :dtype nil))
        (f16 (hf:load-checkpoint "../models/tiny-gpt2-f16" :dtype nil)))
    (is (eq (dtype (hf:tensor cast "model.norm.weight" '(32))) 'f32))
    (is (eq (dtype (hf:tensor kept "model.norm.weight" '(32))) 'bf16))
    (is (eq (dtype (hf:tensor f16 "wte.weight" '(256 32))) 'f16))
    ;; every fixture value is exact in bf16, so the cast changes nothing
    (is (equal (to-list (hf:tensor cast "model.norm.weight" '(32)))
               (to-list (cast (hf:tensor kept "model.norm.weight" '(32)) 'f32))))
    ;; a Llama kept in bf16 computes in bf16, close to the f32 one, and continues alike
    (let ((ids (tensor '(1 5 200 17 99) :dtype 'i32))
          (m16 (hf:from-checkpoint kept))
          (m32 (hf:from-checkpoint cast)))
      (is (eq (dtype (m16 ids)) 'bf16))
      (is (< (item (amax (abs (sub (cast (m16 ids) 'f32) (m32 ids))))) 0.1))
      (is (equal (hf:generate m16 '(1 5 200 17) :max-new-tokens 8)
                 (hf:generate m32 '(1 5 200 17) :max-new-tokens 8))))
    ;; a GPT-2 kept in f16 computes in f16, close to the f32 one
    (let ((ids (tensor '(1 2 3) :dtype 'i32))
          (m16 (hf:from-checkpoint f16))
          (m32 (hf:load "../models/tiny-gpt2-f16")))
      (is (eq (dtype (m16 ids)) 'f16))
      (is (< (item (amax (abs (sub (cast (m16 ids) 'f32) (m32 ids))))) 0.1)))))

(deftest mismatches-name-the-tensor
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-gpt2" "n_embd" 48))))
             "shape-error: hf: tensor \"transformer.wte.weight\" in ../models/tiny-gpt2/model-00001-of-00002.safetensors has shape (256 32), but ../models/tiny-gpt2/config.json implies (256 48)"))
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-gpt2" "n_layer" 3))))
             "file-error: hf: ../models/tiny-gpt2 has no tensor \"h.2.ln_1.weight\" or \"transformer.h.2.ln_1.weight\", which its config.json implies (a gpt2 model, shape (32)); looked in ../models/tiny-gpt2/model-00001-of-00002.safetensors, ../models/tiny-gpt2/model-00002-of-00002.safetensors"))
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-llama" "num_key_value_heads" 4))))
             "shape-error: hf: tensor \"model.layers.0.self_attn.k_proj.weight\" in ../models/tiny-llama/model.safetensors has shape (16 32), but ../models/tiny-llama/config.json implies (32 32)"))
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-llama" "num_key_value_heads" 3))))
             "shape-error: llama: ../models/tiny-llama/config.json has 4 attention heads, 3 key/value heads and head_dim 8 (key/value heads must divide heads, head_dim must be even)"))
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-llama" "tie_word_embeddings" :false))))
             "no error"))
  (let ((ck (hf:load-checkpoint "../models/tiny-llama")))
    (remhash "lm_head.weight" (getf ck :tensors))
    (is (equal (error-text (lambda () (hf:from-checkpoint ck)))
               "file-error: hf: ../models/tiny-llama has no tensor \"lm_head.weight\", which its config.json implies (a llama model, shape (256 32)); looked in ../models/tiny-llama/model.safetensors"))))

(deftest bad-folders-and-configs
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-llama" "hidden_size" nil))))
             "file-error: hf: ../models/tiny-llama/config.json has no \"hidden_size\", which a llama model needs"))
  (is (equal (error-text (lambda () (hf:from-checkpoint (edited "../models/tiny-llama" "model_type" "bert"))))
             "file-error: hf: ../models/tiny-llama/config.json has model_type \"bert\"; supported: gpt2, llama, mistral"))
  (is (equal (error-text (lambda () (hf:from-checkpoint
                                      (edited "../models/tiny-llama" "rope_scaling" (json-read "{\"rope_type\": \"dynamic\", \"factor\": 2.0}")))))
             "file-error: llama: rope_scaling of type \"dynamic\" is not supported (supported: default, linear, llama3)"))
  (is (equal (error-text (lambda () (hf:load "../models")))
             "file-error: hf: ../models has no config.json"))
  (is (equal (error-text (lambda () (hf:load "../models/absent")))
             "file-error: hf: there is no model folder ../models/absent"))
  (is (equal (error-text (lambda () (hf:load "../models/bad-index-missing-shard")))
             "file-error: hf: the index of ../models/bad-index-missing-shard names ../models/bad-index-missing-shard/model-00001-of-00002.safetensors, which does not exist"))
  (is (equal (error-text (lambda () (hf:load "../models/bad-index-wrong-shard")))
             "file-error: hf: the index of ../models/bad-index-wrong-shard puts \"transformer.wte.weight\" in ../models/bad-index-wrong-shard/../tiny-gpt2/model-00002-of-00002.safetensors, which does not hold it")))

(deftest sampling-with-a-seed
  (let* ((model (hf:load "../models/tiny-gpt2"))
         (prompt '(1 5 200 17))
         (greedy (hf:generate model prompt :max-new-tokens 8))
         (sampled (lambda (seed &rest options)
                    (apply #'hf:generate model prompt :max-new-tokens 8 :temperature 1.0 :seed seed options))))
    (is (equal (funcall sampled 0 :top-k 1) greedy))           ; one candidate: the greedy choice
    (is (equal (funcall sampled 0 :top-p 1e-6) greedy))        ; the most likely alone reaches p
    (is (equal (funcall sampled 5) (funcall sampled 5)))       ; a seed gives the same draws
    (is (not (equal (funcall sampled 5) (funcall sampled 6))))
    (is (equal (hf:generate model prompt :max-new-tokens 8 :stop (list (third greedy)))
               (subseq greedy 0 3)))                           ; a stop token ends it, kept
    (is (= (getf hf:*generate-stats* :prefill-tokens) 4))
    (is (= (getf hf:*generate-stats* :decode-tokens) 2))))

(deftest models-name-their-tensors
  ;; defmodel fields: parameters can be listed, saved and trained like any model's
  (let ((gpt2 (hf:load "../models/tiny-gpt2"))
        (llama (hf:load "../models/tiny-llama")))
    (is (= (length (named-tensors gpt2)) 28))
    (is (equal (subseq (mapcar #'car (named-tensors gpt2)) 0 4)
               '("wte" "wpe" "blocks.0.ln-1-weight" "blocks.0.ln-1-bias")))
    (is (= (length (named-tensors llama)) 21))
    (is (equal (car (last (mapcar #'car (named-tensors llama)))) "lm-head"))
    ;; GPT-2 has 32 positions: the cache stops there, and a longer prompt is an error
    (is (= (length (hf:generate gpt2 (loop for i below 30 collect i) :max-new-tokens 10)) 3))
    (is (equal (error-text (lambda () (hf:generate gpt2 (loop for i below 33 collect i))))
               "index-error: hf:generate: the prompt has 33 tokens, more than the model's 32 positions"))
    ;; a sliding_window no longer caps generation (it silently stopped at the window before
    ;; Mistral's windowed attention existed; tensor_hf_models checks the window's values)
    (is (= (length (hf:generate (hf:from-checkpoint (edited "../models/tiny-llama" "sliding_window" 6))
                                '(1 2 3 4) :max-new-tokens 10))
           10))))

(run-tests)
