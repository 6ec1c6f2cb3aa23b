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
      ;; greedy decoding in bf16 picks, at every step, a token that the f32 model scores within
      ;; bf16's rounding of its best (random weights make near-ties: 0.0007 apart at step 7)
      (let* ((prompt '(1 5 200 17))
             (picked (hf:generate m16 prompt :max-new-tokens 8))
             (rows (to-list (m32 (tensor (append prompt picked) :dtype 'i32)))))
        (is (= 8 (length picked)))
        (is (every (lambda (i token)
                     (let ((row (nth (+ (length prompt) i -1) rows)))
                       (>= (nth token row) (- (reduce #'max row) 0.05))))
                   '(0 1 2 3 4 5 6 7) picked))))
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

(defun bad-gguf (name)
  (error-text (lambda () (load-gguf (concat "../models/gguf/bad/" name ".gguf")))))

(deftest gguf-headers-and-loads
  ;; issue 21: GGUF (llama.cpp's format) headers, metadata of every kind, named loads
  (let* ((file "../models/gguf/tiny-llama-f32.gguf")
         (h (gguf-header file))
         (meta (getf h :metadata)))
    (is (equal (list (getf h :version) (getf h :alignment)) '(3 32)))
    (is (equal (cdr (assoc "general.architecture" meta :test #'equal)) "llama"))
    (is (equal (cdr (assoc "llama.attention.head_count_kv" meta :test #'equal)) 2))
    (is (equal (cdr (assoc "llama.rope.freq_base" meta :test #'equal)) 10000.0))
    (is (eq (cdr (assoc "tokenizer.ggml.add_bos_token" meta :test #'equal)) t))
    (is (equal (subseq (cdr (assoc "tokenizer.ggml.tokens" meta :test #'equal)) 0 2) '("<0>" "<1>")))
    ;; (NAME DTYPE SHAPE TYPE), the shape row-major
    (is (equal (third (getf h :tensors)) '("blk.0.attn_q.weight" f32 (32 32) "F32")))
    (is (equal (getf (gguf-header "../models/tiny-llama-q4_0-gguf/tiny-llama-q4_0.gguf") :alignment) 64))
    (is (equal (second (getf (gguf-header "../models/gguf/tiny-gpt2-q8_0.gguf") :tensors))
               '("position_embd.weight" f32 (32 32) "Q8_0")))
    (let ((two (load-gguf file :names '("output_norm.weight" "blk.1.ffn_down.weight"))))
      (is (equal (mapcar #'car two) '("output_norm.weight" "blk.1.ffn_down.weight")))
      (is (equal (shape (cdr (second two))) '(32 64))))
    (is (equal (mapcar #'car (load-gguf "../models/gguf/bad/q4_k.gguf" :names nil)) nil))
    (is (equal (gguf-files "../models/tiny-llama-q4_0-gguf")
               '("../models/tiny-llama-q4_0-gguf/tiny-llama-q4_0.gguf")))
    ;; the checkpoint: config from the metadata, Hugging Face names and shapes
    (let ((ck (hf:load-checkpoint file)))
      (is (equal (mapcar (lambda (k) (hf:config ck k))
                         '("model_type" "hidden_size" "num_attention_heads" "num_key_value_heads"
                           "num_hidden_layers" "intermediate_size" "vocab_size" "tie_word_embeddings"))
                 '("llama" 32 4 2 2 64 256 nil)))
      (is (= (length (hf:tensor-names ck)) 21)))
    ;; Llama 3.1's rope scaling as llama.cpp stores it: rope_freqs.weight, read into the config
    (let ((ck (hf:load-checkpoint "../models/tiny-llama-q4_0-gguf")))
      (is (equal (hf:config (hf:config ck "rope_scaling") "rope_type") "freq_factors"))
      (let ((factors (hf:config (hf:config ck "rope_scaling") "factors")))   ; blended, then 8
        (is (< (abs (- (first factors) 1.73594117)) 1e-6))
        (is (equal (rest factors) '(8.0 8.0 8.0))))
      (hf:from-checkpoint ck)
      (is (equal (hf:unused-tensors ck) nil)))
    (is (equal (second (gethash "h.0.attn.c_attn.weight"
                                (getf (hf:load-checkpoint "../models/gguf/tiny-gpt2-q8_0.gguf") :tensors)))
               '(32 96)))))

(deftest gguf-errors
  ;; malformed files are file-errors naming the file and what is wrong, never a crash
  (is (equal (bad-gguf "bad-magic")
             "file-error: load-gguf: \"../models/gguf/bad/bad-magic.gguf\" is not a GGUF file: it does not start with \"GGUF\""))
  (is (equal (bad-gguf "bad-version")
             "file-error: load-gguf: \"../models/gguf/bad/bad-version.gguf\" is a GGUF version 1 file, which is not supported (only versions 2 and 3)"))
  (is (equal (bad-gguf "truncated-header")
             "file-error: load-gguf: \"../models/gguf/bad/truncated-header.gguf\" is truncated: it ends inside the length of metadata \"general.architecture\" (byte 56 of 60)"))
  (is (equal (bad-gguf "truncated-data")
             "file-error: load-gguf: \"../models/gguf/bad/truncated-data.gguf\" is truncated: tensor \"w\" (512 bytes at data offset 0) ends beyond the 412 bytes of data"))
  (is (equal (bad-gguf "huge-count")
             "file-error: load-gguf: \"../models/gguf/bad/huge-count.gguf\" is truncated or corrupt: it claims 4611686018427387904 tensors, more than its 0 remaining bytes can hold"))
  (is (equal (bad-gguf "huge-dims")
             "file-error: load-gguf: \"../models/gguf/bad/huge-dims.gguf\" has tensor \"w\" of shape (4294967296 4294967296), too many elements"))
  ;; a type that cannot be read: listed by gguf-header, an error naming tensor and type on load
  (is (equal (bad-gguf "q4_k")
             "dtype-error: load-gguf: \"../models/gguf/bad/q4_k.gguf\" has tensor \"blk.0.attn_q.weight\" of type Q4_K, which TensorLisp cannot read (supported: F32 F16 BF16 Q8_0 Q4_0 F64 I8 I16 I32 I64)"))
  (is (equal (error-text (lambda () (load-gguf "../models/gguf/tiny-gpt2-q8_0.gguf" :names '("nope"))))
             "file-error: load-gguf: \"../models/gguf/tiny-gpt2-q8_0.gguf\" has no tensor \"nope\""))
  ;; hf:load of GGUF files it cannot take
  (is (equal (error-text (lambda () (hf:load "../models/gguf")))
             "file-error: hf: ../models/gguf holds several .gguf files (../models/gguf/tiny-gpt2-f16.gguf, ../models/gguf/tiny-gpt2-q8_0.gguf, ../models/gguf/tiny-llama-f32.gguf); name the one to load"))
  (is (equal (error-text (lambda () (hf:load "../models/gguf/bad/q4_k.gguf")))
             "file-error: hf: ../models/gguf/bad/q4_k.gguf has general.architecture nil; supported: llama, gpt2"))
  (is (equal (error-text (lambda () (hf:load "../models/gguf/nothing.gguf")))
             "file-error: hf: there is no GGUF file ../models/gguf/nothing.gguf"))
  ;; a missing or mis-shaped tensor is named as llama.cpp and as Hugging Face name it
  (let ((ck (hf:load-checkpoint "../models/gguf/tiny-gpt2-q8_0.gguf")))
    (remhash "h.1.mlp.c_fc.weight" (getf ck :tensors))
    (is (equal (error-text (lambda () (hf:from-checkpoint ck)))
               "file-error: hf: ../models/gguf/tiny-gpt2-q8_0.gguf has no tensor \"blk.1.ffn_up.weight\" (Hugging Face's \"h.1.mlp.c_fc.weight\"), which its metadata implies (a gpt2 model, shape (32 128))")))
  (let ((ck (hf:load-checkpoint "../models/gguf/tiny-llama-f32.gguf")))
    (setf (gethash "intermediate_size" (getf ck :config)) 48)
    (is (equal (error-text (lambda () (hf:from-checkpoint ck)))
               "shape-error: hf: tensor \"blk.0.ffn_gate.weight\" (Hugging Face's \"model.layers.0.mlp.gate_proj.weight\") in ../models/gguf/tiny-llama-f32.gguf has shape (64 32) as Hugging Face lays it out, but its metadata implies (48 32)"))))

(run-tests)
