;;; SPDX-License-Identifier: Apache-2.0
;;; hf: Hugging Face model folders (config.json and safetensors weights, one file or sharded),
;;; the language models built from them, KV caches and generation. (require 'hf)
;;; The model families live in stdlib/models/ (gpt2.lisp, llama.lisp), loaded on demand.

(require 'nn)

;;; --- configs ---------------------------------------------------------------------------

(defun hf:read-config (path)
  "(hf:read-config PATH) The config.json at PATH as an equal hash table (string keys).
  (progn (write-file \"/tmp/tl-doc-hf-config.json\" (json-write '((\"model_type\" . \"gpt2\") (\"n_layer\" . 12))))
         (gethash \"n_layer\" (hf:read-config \"/tmp/tl-doc-hf-config.json\")))  ; => 12"
  (json-read-file path))

(defun hf:config (config key &optional default)
  "(hf:config CONFIG KEY [DEFAULT]) The value of KEY (a string) in CONFIG (a hash table from
hf:read-config, or a checkpoint), or DEFAULT when it is absent or null.
  (let ((c (json-read (json-write '((\"n_embd\" . 768) (\"n_inner\" . :null))))))
    (list (hf:config c \"n_embd\") (hf:config c \"n_inner\" 3072) (hf:config c \"n_head\")))  ; => (768 3072 nil)"
  (let* ((table (if (hash-table-p config) config (getf config :config)))
         (v (gethash key table :%absent)))
    (if (or (eq v :%absent) (eq v :null)) default v)))

(defun hf:config-required (config key)
  "(hf:config-required CONFIG KEY) The value of KEY in CONFIG; an error naming the key and the
config file when it is missing.
  (let ((c (json-read (json-write '((\"model_type\" . \"gpt2\") (\"n_embd\" . 768))))))
    (list (hf:config-required c \"n_embd\")
          (handler-case (hf:config-required c \"n_head\") (file-error () :missing))))  ; => (768 :missing)"
  (let ((v (hf:config config key :%absent)))
    (when (eq v :%absent)
      (let ((type (hf:config config "model_type" nil)))
        (error 'file-error "hf: ~a has no ~s, which ~a needs"
               (if (hash-table-p config) "the config" (getf config :config-file)) key
               (if type (format nil "a ~a model" type) "this model"))))
    v))

;;; --- checkpoints -----------------------------------------------------------------------

(defun hf:%path (dir name)
  ;; DIR/NAME, without a doubled slash when DIR ends with one
  (let ((n (length dir)))
    (concat (if (and (> n 1) (string-suffix-p "/" dir)) (subseq dir 0 (- n 1)) dir) "/" name)))

(defun hf:%weight-files (dir)
  ;; The safetensors files of DIR with, for a sharded checkpoint, the names its index maps to
  ;; each: a list of (FILE . NAMES), NAMES nil when the file is not sharded.
  (let ((index (hf:%path dir "model.safetensors.index.json"))
        (single (hf:%path dir "model.safetensors")))
    (cond ((probe-file index)
           (let ((map (gethash "weight_map" (json-read-file index)))
                 (files nil))
             (unless (hash-table-p map)
               (error 'file-error "hf: ~a has no weight_map object" index))
             (maphash (lambda (name file)
                        (let ((entry (assoc file files :test #'equal)))
                          (if entry
                              (push name (cdr entry))
                              (push (list file name) files))))
                      map)
             (mapcar (lambda (e) (cons (hf:%path dir (car e)) (reverse (cdr e)))) (reverse files))))
          ((probe-file single) (list (cons single nil)))
          (t (error 'file-error "hf: ~a has neither model.safetensors nor model.safetensors.index.json"
                    dir)))))

(defun hf:load-checkpoint (dir &key (dtype 'f32) quantize)
  "(hf:load-checkpoint DIR &key (dtype 'f32) quantize) The checkpoint in the Hugging Face folder DIR:
its config.json and the headers of model.safetensors, or of every shard named by
model.safetensors.index.json. DIR may also be a GGUF file (llama.cpp's format), or a folder
without config.json that holds one: see hf:load-gguf-checkpoint. No tensor data is read here:
hf:tensor reads each tensor from its file when a model takes it, so tensors a model does not
use are never read. Tensors stored in another dtype are cast to DTYPE when taken (f32 by
default; nil keeps each as stored: f32, f16 or bf16). With QUANTIZE, q8_0 or q4_0, the
matrices a model multiplies by (hf:weight) are quantized as they are taken, those of a GGUF
file already in Q8_0 or Q4_0 kept as stored; :stored keeps a GGUF file's quantized matrices
and quantizes nothing else. Returns a plist (:dir :config :config-file :tensors :files :dtype
:quantize), :tensors a hash table from names to (DTYPE SHAPE), :files from names to files.
  (let ((dir \"/tmp/tl-doc-hf-load-checkpoint/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\") (\"n_embd\" . 3))))
    (save-safetensors (list (cons \"wte.weight\" (ones '(2 3) :dtype 'f16)))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir)) (stored (hf:load-checkpoint dir :dtype nil)))
      (list (hf:config ck \"n_embd\") (gethash \"wte.weight\" (getf ck :tensors))
            (dtype (hf:tensor ck \"wte.weight\" '(2 3)))
            (dtype (hf:tensor stored \"wte.weight\" '(2 3))))))  ; => (3 (f16 (2 3)) f32 f16)"
  (unless (member quantize '(nil q8_0 q4_0 :stored))
    (error 'dtype-error "hf:load-checkpoint: :quantize must be q8_0, q4_0, :stored or nil, got ~s" quantize))
  (let ((gguf (hf:%gguf-file dir)))
    (append (if gguf
                (hf:load-gguf-checkpoint gguf :dtype dtype)
                (hf:%load-safetensors-checkpoint dir dtype))
            (list :quantize quantize))))

(defun hf:%load-safetensors-checkpoint (dir dtype)
  (let* ((config-file (hf:%path dir "config.json"))
         (config (cond ((probe-file config-file) (hf:read-config config-file))
                       ((probe-file dir) (error 'file-error "hf: ~a has no config.json" dir))
                       (t (error 'file-error "hf: there is no model folder ~a" dir))))
         (tensors (make-hash-table :test 'equal))
         (files (make-hash-table :test 'equal)))
    (dolist (entry (hf:%weight-files dir))
      (let* ((file (car entry))
             (header (if (probe-file file)
                         (safetensors-header file)
                         (error 'file-error "hf: the index of ~a names ~a, which does not exist"
                                dir file))))
        (dolist (name (cdr entry))
          (unless (assoc name header :test #'equal)
            (error 'file-error "hf: the index of ~a puts ~s in ~a, which does not hold it"
                   dir name file)))
        (dolist (h header)
          (setf (gethash (first h) tensors) (rest h))
          (setf (gethash (first h) files) file))))
    (list :dir dir :config config :config-file config-file :tensors tensors :files files
          :dtype dtype :used (make-hash-table :test 'equal))))

(defun hf:tensor-names (checkpoint)
  "(hf:tensor-names CHECKPOINT) The names of the tensors CHECKPOINT's files hold, sorted.
  (let ((dir \"/tmp/tl-doc-hf-tensor-names/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\"))))
    (save-safetensors (list (cons \"wte.weight\" (zeros '(4 2))) (cons \"ln_f.bias\" (zeros '(2))))
                      (concat dir \"model.safetensors\"))
    (hf:tensor-names (hf:load-checkpoint dir)))  ; => (\"ln_f.bias\" \"wte.weight\")"
  (let ((names nil))
    (maphash (lambda (k v) (push k names)) (getf checkpoint :tensors))
    (sort names #'string<)))

(defun hf:has-tensor (checkpoint name &key (prefixes '("")))
  "(hf:has-tensor CHECKPOINT NAME &key prefixes) The full name under which CHECKPOINT holds
NAME, trying each of PREFIXES before it, or nil.
  (let ((dir \"/tmp/tl-doc-hf-has-tensor/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\"))))
    (save-safetensors (list (cons \"transformer.wte.weight\" (zeros '(4 2))))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir)))
      (list (hf:has-tensor ck \"wte.weight\" :prefixes '(\"\" \"transformer.\"))
            (hf:has-tensor ck \"wpe.weight\"))))  ; => (\"transformer.wte.weight\" nil)"
  (loop for p in prefixes
        for full = (concat p name)
        when (gethash full (getf checkpoint :tensors)) return full))

(defun hf:tensor (checkpoint name shape &key (prefixes '("")) %quantized)
  "(hf:tensor CHECKPOINT NAME SHAPE &key (prefixes '(\"\"))) The tensor NAME of CHECKPOINT (the
first of PREFIX+NAME it holds), checked to have SHAPE (what the config implies) and cast to
the checkpoint's dtype. A missing tensor is a file-error naming it and the files searched;
a tensor of another shape is a shape-error giving both shapes and its file.
  (let ((dir \"/tmp/tl-doc-hf-tensor/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\"))))
    (save-safetensors (list (cons \"transformer.wte.weight\" (tensor '((1.0 2.0)))))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir)) (p '(\"\" \"transformer.\")))
      (list (handler-case (hf:tensor ck \"wpe.weight\" '(1 2)) (file-error () :missing))
            (handler-case (hf:tensor ck \"wte.weight\" '(2 2) :prefixes p) (shape-error () :bad-shape))
            (to-list (hf:tensor ck \"wte.weight\" '(1 2) :prefixes p)))))  ; => (:missing :bad-shape ((1.0 2.0)))"
  (let* ((full (hf:has-tensor checkpoint name :prefixes prefixes))
         (files (getf checkpoint :files)))
    (unless full
      (when (getf checkpoint :gguf)
        (let ((source (hf:%gguf-source-name checkpoint (concat (car prefixes) name))))
          (error 'file-error
                 "hf: ~a has no tensor ~s (Hugging Face's ~s), which its metadata implies (~a)"
                 (getf checkpoint :dir) source (concat (car prefixes) name)
                 (format nil "a ~a model, shape ~s"
                         (hf:config checkpoint "model_type" "?") shape))))
      (let ((searched nil))
        (maphash (lambda (k f) (pushnew f searched :test #'equal)) files)
        (error 'file-error
               "hf: ~a has no tensor ~a, which its config.json implies (a ~a model, shape ~s); looked in ~a"
               (getf checkpoint :dir)
               (string-join (mapcar (lambda (p) (format nil "~s" (concat p name))) prefixes) " or ")
               (hf:config checkpoint "model_type" "?") shape
               (string-join (sort searched #'string<) ", "))))
    (let ((found (second (gethash full (getf checkpoint :tensors))))
          (file (gethash full files))
          (want (getf checkpoint :dtype)))
      (unless (equal found shape)
        (if (getf checkpoint :gguf)
            (error 'shape-error
                   (concat "hf: tensor ~s (Hugging Face's ~s) in ~a has shape ~s as Hugging Face "
                           "lays it out, but its metadata implies ~s")
                   (car (gethash full (getf checkpoint :gguf))) full file found shape)
            (error 'shape-error "hf: tensor ~s in ~a has shape ~s, but ~a implies ~s"
                   full file found (getf checkpoint :config-file) shape)))
      (setf (gethash full (getf checkpoint :used)) t)
      (let ((x (if (getf checkpoint :gguf)
                   (hf:%gguf-tensor checkpoint full %quantized)
                   (cdr (first (load-safetensors file :names (list full)))))))
        (if (and want (not (eq (dtype x) want)) (not (dtype-quantized-p (dtype x))))
            (realize (cast x want))
            x)))))

(defun hf:weight (checkpoint name shape &key (prefixes '("")) (layout :out-in))
  "(hf:weight CHECKPOINT NAME SHAPE &key (prefixes '(\"\")) (layout :out-in)) A matrix a model
multiplies by, taken as hf:tensor takes it, and quantized when the checkpoint says so (its
:quantize, from hf:load-checkpoint): blocks of 32 along the axis the product sums over, the
input features. LAYOUT says which that is: :out-in (an nn.Linear weight, used as x W^T, also an
embedding table) or :in-out (GPT-2's Conv1D, used as x W), which comes back as a transposed
view of its quantized (out in) form, so that x W still reads the blocks in order. A matrix
whose input features are not a multiple of 32 stays unquantized.
  (let ((dir \"/tmp/tl-doc-hf-weight/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\"))))
    (save-safetensors (list (cons \"w\" (randn '(64 32))) (cons \"v\" (randn '(2 3))))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir :quantize 'q8_0)))
      (list (dtype (hf:weight ck \"w\" '(64 32))) (shape (hf:weight ck \"w\" '(64 32) :layout :in-out))
            (dtype (hf:weight ck \"v\" '(2 3))))))  ; => (q8_0 (64 32) f32)"
  (let* ((format (getf checkpoint :quantize))
         (x (hf:tensor checkpoint name shape :prefixes prefixes :%quantized (and format t)))
         (in (if (eq layout :in-out) (first shape) (second shape))))
    (cond ((not (member layout '(:out-in :in-out)))
           (error 'type-error "hf:weight: LAYOUT must be :out-in or :in-out, got ~s" layout))
          ((or (dtype-quantized-p (dtype x)) (member format '(nil :stored)) (/= (mod in 32) 0)) x)
          ;; prim:permute, not transpose: a composite reads its quantized argument as f32, and
          ;; the weight stays a view of its blocks.
          ((eq layout :in-out) (prim:permute (quantize (transpose x) format) '(1 0)))
          (t (quantize x format)))))

(defun hf:unused-tensors (checkpoint)
  "(hf:unused-tensors CHECKPOINT) The names of CHECKPOINT's tensors that no hf:tensor call
took, sorted (after a model is built: what it ignored).
  (let ((dir \"/tmp/tl-doc-hf-unused-tensors/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\") (json-write '((\"model_type\" . \"gpt2\"))))
    (save-safetensors (list (cons \"wte.weight\" (zeros '(4 2))) (cons \"lm_head.weight\" (zeros '(4 2))))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir)))
      (hf:tensor ck \"wte.weight\" '(4 2))
      (hf:unused-tensors ck)))  ; => (\"lm_head.weight\")"
  (remove-if (lambda (n) (gethash n (getf checkpoint :used))) (hf:tensor-names checkpoint)))

;;; --- GGUF files (llama.cpp's format) --------------------------------------------------------

(defun hf:%gguf-file (path)
  ;; The GGUF file PATH names: PATH itself when it ends in .gguf, the one .gguf file of a
  ;; folder PATH without config.json, or nil (a Hugging Face folder).
  (cond ((string-suffix-p ".gguf" path)
         (unless (probe-file path) (error 'file-error "hf: there is no GGUF file ~a" path))
         path)
        ((probe-file (hf:%path path "config.json")) nil)
        (t (let ((files (gguf-files path)))
             (when (cdr files)
               (error 'file-error "hf: ~a holds several .gguf files (~a); name the one to load"
                      path (string-join files ", ")))
             (car files)))))

(defvar hf:*gguf-names*
  '(("llama"
     ("token_embd.weight" "model.embed_tokens.weight")
     ("output_norm.weight" "model.norm.weight")
     ("output.weight" "lm_head.weight")
     ("attn_norm.weight" "input_layernorm.weight")
     ("attn_q.weight" "self_attn.q_proj.weight" :rope "num_attention_heads")
     ("attn_q.bias" "self_attn.q_proj.bias" :rope "num_attention_heads")
     ("attn_k.weight" "self_attn.k_proj.weight" :rope "num_key_value_heads")
     ("attn_k.bias" "self_attn.k_proj.bias" :rope "num_key_value_heads")
     ("attn_v.weight" "self_attn.v_proj.weight")
     ("attn_v.bias" "self_attn.v_proj.bias")
     ("attn_output.weight" "self_attn.o_proj.weight")
     ("ffn_norm.weight" "post_attention_layernorm.weight")
     ("ffn_gate.weight" "mlp.gate_proj.weight")
     ("ffn_up.weight" "mlp.up_proj.weight")
     ("ffn_down.weight" "mlp.down_proj.weight"))
    ("gpt2"
     ("token_embd.weight" "wte.weight")
     ("position_embd.weight" "wpe.weight")
     ("output_norm.weight" "ln_f.weight")
     ("output_norm.bias" "ln_f.bias")
     ("output.weight" "lm_head.weight")
     ("attn_norm.weight" "ln_1.weight")
     ("attn_norm.bias" "ln_1.bias")
     ("attn_qkv.weight" "attn.c_attn.weight" :transpose)
     ("attn_qkv.bias" "attn.c_attn.bias")
     ("attn_output.weight" "attn.c_proj.weight" :transpose)
     ("attn_output.bias" "attn.c_proj.bias")
     ("ffn_norm.weight" "ln_2.weight")
     ("ffn_norm.bias" "ln_2.bias")
     ("ffn_up.weight" "mlp.c_fc.weight" :transpose)
     ("ffn_up.bias" "mlp.c_fc.bias")
     ("ffn_down.weight" "mlp.c_proj.weight" :transpose)
     ("ffn_down.bias" "mlp.c_proj.bias")))
  "llama.cpp's tensor names and the Hugging Face ones, per GGUF architecture: (ARCH (GGUF-NAME
HF-NAME [TRANSFORM ...]) ...), the names after blk.N. and model.layers.N. (llama) or h.N.
(gpt2) for a layer's tensors. :transpose: llama.cpp stores GPT-2's Conv1D weights (out in);
:rope KEY: its converter permutes the rows of Llama's q and k projections (for KEY heads)
for its rotary layout, undone here.
  (mapcar #'car hf:*gguf-names*)  ; => (\"llama\" \"gpt2\")
  (let ((gpt2 (cdr (assoc \"gpt2\" hf:*gguf-names* :test #'equal))))
    (assoc \"attn_qkv.weight\" gpt2 :test #'equal))  ; => (\"attn_qkv.weight\" \"attn.c_attn.weight\" :transpose)")

(defun hf:%gguf-hf-name (arch name)
  ;; (HF-NAME . TRANSFORM) for llama.cpp's tensor NAME of architecture ARCH; NAME itself
  ;; when it maps to nothing (a tensor the models do not use).
  (let* ((table (cdr (assoc arch hf:*gguf-names* :test #'equal)))
         (layer (and (string-prefix-p "blk." name)
                     (let ((dot (position #\. name :start 4)))
                       (and dot (parse-integer (subseq name 4 dot) :junk-allowed t)
                            (cons (subseq name 4 dot) (subseq name (+ dot 1)))))))
         (entry (assoc (if layer (cdr layer) name) table :test #'equal)))
    (cond ((null entry) (list name))
          (layer (cons (concat (if (equal arch "gpt2") "h." "model.layers.") (car layer) "."
                               (second entry))
                       (cddr entry)))
          (t (cons (second entry) (cddr entry))))))

(defun hf:%gguf-source-name (checkpoint name)
  ;; llama.cpp's name for the Hugging Face tensor NAME of a GGUF CHECKPOINT (NAME when none)
  (let* ((arch (hf:config checkpoint "model_type"))
         (prefix (if (equal arch "gpt2") "h." "model.layers."))
         (layer (and (string-prefix-p prefix name)
                     (let ((dot (position #\. name :start (length prefix))))
                       (and dot (cons (subseq name (length prefix) dot) (subseq name (+ dot 1)))))))
         (entry (find (if layer (cdr layer) name) (cdr (assoc arch hf:*gguf-names* :test #'equal))
                      :key #'second :test #'equal)))
    (cond ((null entry) name)
          (layer (concat "blk." (car layer) "." (first entry)))
          (t (first entry)))))

(defun hf:%gguf-config (path arch metadata tensors)
  ;; A Hugging Face config (a hash table) from the GGUF METADATA (an alist) of an ARCH
  ;; model; TENSORS maps llama.cpp's names to (DTYPE SHAPE TYPE).
  (let ((config (make-hash-table :test 'equal)))
    (labels ((meta (key &optional (default :%absent))
               (let ((e (assoc (concat arch "." key) metadata :test #'equal)))
                 (cond (e (cdr e))
                       ((eq default :%absent)
                        (error 'file-error "hf: ~a has no metadata ~a.~a, which a ~a model needs"
                               path arch key arch))
                       (t default))))
             (put (key value) (setf (gethash key config) value)))
      (let ((vocab (or (meta "vocab_size" nil)
                       (first (second (gethash "token_embd.weight" tensors)))
                       (error 'file-error "hf: ~a has no token_embd.weight" path))))
        (put "model_type" arch)
        (put "vocab_size" vocab)
        (cond ((equal arch "gpt2")
               (put "n_embd" (meta "embedding_length"))
               (put "n_head" (meta "attention.head_count"))
               (put "n_layer" (meta "block_count"))
               (put "n_positions" (meta "context_length"))
               (put "n_inner" (meta "feed_forward_length" nil))
               (put "layer_norm_epsilon" (meta "attention.layer_norm_epsilon" 1e-5)))
              (t
               (let* ((d (meta "embedding_length"))
                      (heads (meta "attention.head_count"))
                      (scaling (meta "rope.scaling.type" "none")))
                 (unless (member scaling '("none" "linear") :test #'equal)
                   (error 'file-error "hf: ~a has ~a.rope.scaling.type ~s; supported: none, linear"
                          path arch scaling))
                 (put "hidden_size" d)
                 (put "num_attention_heads" heads)
                 (put "num_key_value_heads" (meta "attention.head_count_kv" heads))
                 (put "head_dim" (meta "attention.key_length" (/ d heads)))
                 (put "num_hidden_layers" (meta "block_count"))
                 (put "intermediate_size" (meta "feed_forward_length"))
                 (put "max_position_embeddings" (meta "context_length" nil))
                 (put "rms_norm_eps" (meta "attention.layer_norm_rms_epsilon" 1e-6))
                 (put "rope_theta" (meta "rope.freq_base" 10000.0))
                 (let ((r (make-hash-table :test 'equal)))
                   (cond ((equal scaling "linear")
                          (setf (gethash "rope_type" r) "linear"
                                (gethash "factor" r) (meta "rope.scaling.factor"))
                          (put "rope_scaling" r))
                         ((gethash "rope_freqs.weight" tensors)
                          ;; Llama 3.1's scaling as llama.cpp's converter stores it: a divisor
                          ;; per rotary frequency
                          (let ((factors (load-gguf path :names '("rope_freqs.weight"))))
                            (setf (gethash "rope_type" r) "freq_factors"
                                  (gethash "factors" r)
                                  (to-list (cast (cdr (first factors)) 'f64))))
                          (put "rope_scaling" r))))
                 (put "attention_bias" (and (gethash "blk.0.attn_q.bias" tensors) t))
                 (put "tie_word_embeddings" (not (gethash "output.weight" tensors)))))))
      config)))

(defun hf:load-gguf-checkpoint (path &key (dtype 'f32))
  "(hf:load-gguf-checkpoint PATH &key (dtype 'f32)) The checkpoint in the GGUF file PATH
(llama.cpp's format), of general.architecture llama or gpt2, as hf:load-checkpoint gives
it: a config built from the metadata (llama.embedding_length as hidden_size, ...) and
llama.cpp's tensor names mapped to Hugging Face's (hf:*gguf-names*), with their shapes as a
Hugging Face checkpoint has them. Only the header is read here (and rope_freqs.weight, Llama
3.1's rope scaling as llama.cpp stores it, which becomes a rope_scaling of type
freq_factors). F32, F16 and BF16 tensors are taken as stored (then cast to DTYPE, nil keeping
them), Q8_0 and Q4_0 dequantized to f32.
  (progn (write-file \"/tmp/tl-doc-not.gguf\" \"not a GGUF file\")
         (handler-case (hf:load-gguf-checkpoint \"/tmp/tl-doc-not.gguf\") (file-error () :not-gguf)))  ; => :not-gguf"
  (let* ((header (gguf-header path))
         (meta (getf header :metadata))
         (arch (cdr (assoc "general.architecture" meta :test #'equal)))
         (stored (make-hash-table :test 'equal))
         (tensors (make-hash-table :test 'equal))
         (files (make-hash-table :test 'equal))
         (sources (make-hash-table :test 'equal)))
    (unless (assoc arch hf:*gguf-names* :test #'equal)
      (error 'file-error "hf: ~a has general.architecture ~s; supported: ~a" path arch
             (string-join (mapcar #'car hf:*gguf-names*) ", ")))
    (dolist (h (getf header :tensors))
      (setf (gethash (first h) stored) (rest h)))
    (dolist (h (getf header :tensors))
      (destructuring-bind (name dtype shape type) h
        (let* ((mapped (hf:%gguf-hf-name arch name))
               (shape (if (eq (second mapped) :transpose) (reverse shape) shape)))
          (setf (gethash (car mapped) tensors) (list dtype shape type)
                (gethash (car mapped) files) path
                (gethash (car mapped) sources) (cons name (cdr mapped))))))
    (let ((used (make-hash-table :test 'equal)))
      ;; rope_freqs.weight is read into the config (rope_scaling), not taken by the model
      (when (gethash "rope_freqs.weight" stored) (setf (gethash "rope_freqs.weight" used) t))
      (list :dir path :config (hf:%gguf-config path arch meta stored) :config-file path
            :tensors tensors :files files :gguf sources :dtype dtype :used used))))

(defun hf:%unpermute-rope (w heads)
  ;; W (HEADS*hd ...) with llama.cpp's row order back in Hugging Face's: its converter moved
  ;; row h*hd + j*hd/2 + i to h*hd + 2i + j (i < hd/2, j < 2), so view the rows as
  ;; (HEADS hd/2 2) and swap the last two
  (let* ((s (shape w))
         (rows (first s))
         (half (/ rows heads 2)))
    (when (dtype-quantized-p (dtype w))
      ;; Whole rows of blocks, moved as bytes: row h*hd + a*half + b is row h*hd + 2b + a.
      (return-from hf:%unpermute-rope
        (funcall *take-rows-copy* w (loop for h below heads
                                          append (loop for a below 2
                                                       append (loop for b below half
                                                                    collect (+ (* h 2 half) (* 2 b) a)))))))
    (realize (contiguous
              (reshape (apply #'permute (apply #'reshape w heads half 2 (rest s))
                              0 2 1 (loop for i from 3 below (+ 3 (length (rest s))) collect i))
                       s)))))

(defun hf:%gguf-tensor (checkpoint name &optional quantized)
  ;; The tensor NAME (a Hugging Face name) of the GGUF CHECKPOINT, read and put in Hugging
  ;; Face's layout; with QUANTIZED, Q8_0 and Q4_0 data stays in its blocks (transposed as a
  ;; view, its rows reordered whole).
  (destructuring-bind (source &optional transform key) (gethash name (getf checkpoint :gguf))
    (let* ((file (gethash name (getf checkpoint :files)))
           (x (cdr (first (load-gguf file :names (list source) :quantized quantized)))))
      (case transform
        (:transpose (if (dtype-quantized-p (dtype x)) (prim:permute x '(1 0)) (realize (contiguous (transpose x)))))
        (:rope (hf:%unpermute-rope x (hf:config checkpoint key)))
        (t x)))))

;;; --- writing GGUF files ----------------------------------------------------------------------

(defvar hf:*gguf-matrices*
  '("token_embd.weight" "output.weight" "attn_qkv.weight" "attn_output.weight" "ffn_up.weight"
    "ffn_down.weight" "attn_q.weight" "attn_k.weight" "attn_v.weight" "ffn_gate.weight")
  "llama.cpp's names (after blk.N.) of the matrices hf:save-gguf stores in its TYPE: what a model
multiplies by, and the token embedding; norms, biases and position embeddings stay f32.
  (length hf:*gguf-matrices*)  ; => 10")

(defun hf:%gguf-metadata (checkpoint arch type)
  ;; The GGUF metadata of CHECKPOINT's config, the keys hf:%gguf-config reads back.
  (labels ((cfg (key &optional default) (hf:config checkpoint key default))
           (req (key) (hf:config-required checkpoint key))
           (key (name) (concat arch "." name)))
    (append
     (list (cons "general.architecture" arch)
           (cons "general.file_type" (cons :u32 (case type (f32 0) (f16 1) (q4_0 2) (q8_0 7)))))
     (if (equal arch "gpt2")
         (let ((d (req "n_embd")))
           (list (cons (key "embedding_length") (cons :u32 d))
                 (cons (key "attention.head_count") (cons :u32 (req "n_head")))
                 (cons (key "block_count") (cons :u32 (req "n_layer")))
                 (cons (key "context_length") (cons :u32 (cfg "n_positions" 1024)))
                 (cons (key "feed_forward_length") (cons :u32 (or (cfg "n_inner") (* 4 d))))
                 (cons (key "attention.layer_norm_epsilon") (cons :f32 (cfg "layer_norm_epsilon" 1e-5)))))
         (let* ((d (req "hidden_size")) (heads (req "num_attention_heads"))
                (scaling (cfg "rope_scaling"))
                (type (and scaling (or (hf:config scaling "rope_type") (hf:config scaling "type") "default"))))
           (append
            (list (cons (key "embedding_length") (cons :u32 d))
                  (cons (key "attention.head_count") (cons :u32 heads))
                  (cons (key "attention.head_count_kv") (cons :u32 (cfg "num_key_value_heads" heads)))
                  (cons (key "attention.key_length") (cons :u32 (cfg "head_dim" (/ d heads))))
                  (cons (key "block_count") (cons :u32 (req "num_hidden_layers")))
                  (cons (key "feed_forward_length") (cons :u32 (req "intermediate_size")))
                  (cons (key "attention.layer_norm_rms_epsilon") (cons :f32 (cfg "rms_norm_eps" 1e-6)))
                  (cons (key "rope.freq_base") (cons :f32 (cfg "rope_theta" 10000.0))))
            (when (cfg "max_position_embeddings")
              (list (cons (key "context_length") (cons :u32 (cfg "max_position_embeddings")))))
            (when (equal type "linear")
              (list (cons (key "rope.scaling.type") "linear")
                    (cons (key "rope.scaling.factor") (cons :f32 (hf:config scaling "factor")))))))))))

(defun hf:%rope-permute (w heads)
  ;; W's rows (HEADS*hd ...) in llama.cpp's rotary order: its row h*hd + 2b + a is Hugging
  ;; Face's row h*hd + a*hd/2 + b (what hf:%unpermute-rope undoes).
  (let ((half (/ (first (shape w)) heads 2)))
    (funcall *take-rows-copy* (realize (contiguous w))
             (loop for h below heads
                   append (loop for b below half
                                append (loop for a below 2 collect (+ (* h 2 half) (* a half) b)))))))

(defun hf:save-gguf (checkpoint path &key (type 'f32))
  "(hf:save-gguf CHECKPOINT PATH &key (type 'f32)) Writes the GPT-2 or Llama CHECKPOINT (from
hf:load-checkpoint) to PATH as a GGUF file in llama.cpp's layout: its tensor names
(hf:*gguf-names*), GPT-2's Conv1D weights stored (out in), Llama's q and k rows in its rotary
order, the config as its metadata (llama.embedding_length, ...), a Llama 3 rope scaling as
rope_freqs.weight. The matrices (hf:*gguf-matrices*) are stored as TYPE: f32, f16, or q8_0 or
q4_0 quantized (one whose rows are not a multiple of 32 stays f32); everything else f32. Reading
the file back (hf:load, with :quantize :stored to keep the blocks) gives the same model. No
tokenizer is written: keep the folder's tokenizer.json next to the file (generate.lisp and
tok:load look there); llama.cpp itself also needs tokenizer metadata this does not write.
Tensors without a llama.cpp name (GPT-2's attn.bias, a causal mask) are left out. Returns PATH.
  (let ((dir \"/tmp/tl-doc-hf-save-gguf/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 32)
                              (\"intermediate_size\" . 32) (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (randn '(4 32))) (cons \"model.norm.weight\" (ones '(32)))
                            (cons \"lm_head.weight\" (randn '(4 32))))
                      (concat dir \"model.safetensors\"))
    (hf:save-gguf (hf:load-checkpoint dir) (concat dir \"model-q8_0.gguf\") :type 'q8_0)
    (mapcar #'fourth (getf (gguf-header (concat dir \"model-q8_0.gguf\")) :tensors)))  ; => (\"Q8_0\" \"Q8_0\" \"F32\")"
  (let* ((model-type (hf:config checkpoint "model_type"))
         (arch (cond ((equal model-type "gpt2") "gpt2")
                     ((member model-type '("llama" "mistral") :test #'equal) "llama")
                     (t (error 'file-error "hf:save-gguf: ~a has model_type ~s; supported: gpt2, llama, mistral"
                               (getf checkpoint :config-file) model-type))))
         (table (cdr (assoc arch hf:*gguf-names* :test #'equal)))
         (scaling (hf:config checkpoint "rope_scaling"))
         (rope-type (and scaling (or (hf:config scaling "rope_type") (hf:config scaling "type") "default")))
         (tensors nil))
    (unless (member type '(f32 f16 q8_0 q4_0))
      (error 'dtype-error "hf:save-gguf: TYPE must be f32, f16, q8_0 or q4_0, got ~s" type))
    (when (and (equal model-type "mistral") (hf:config checkpoint "sliding_window"))
      (error 'file-error "hf:save-gguf: ~a's sliding_window has no GGUF key that hf:load reads"
             (getf checkpoint :config-file)))
    (dolist (name (hf:tensor-names checkpoint))
      (let* ((hf-name (if (string-prefix-p "transformer." name) (subseq name 12) name))
             (gguf-name (let ((checkpoint (list :config (getf checkpoint :config))))
                          (hf:%gguf-source-name checkpoint hf-name)))
             (local (let ((dot (and (string-prefix-p "blk." gguf-name) (position #\. gguf-name :start 4))))
                      (if dot (subseq gguf-name (+ dot 1)) gguf-name)))
             (entry (assoc local table :test #'equal))
             (shape (second (gethash name (getf checkpoint :tensors)))))
        ;; A tensor without a llama.cpp name (GPT-2's attn.bias, its causal mask) is no weight.
        (when entry
         (let* ((x (cast (hf:tensor checkpoint name shape) 'f32))
               (x (case (third entry)
                    (:transpose (realize (contiguous (transpose x))))
                    (:rope (hf:%rope-permute x (hf:config checkpoint (fourth entry)
                                                         (hf:config-required checkpoint "num_attention_heads"))))
                    (t x)))
               (matrix (and (member local hf:*gguf-matrices* :test #'equal) (= (length (shape x)) 2)))
               (x (cond ((not matrix) x)
                        ((eq type 'f16) (cast x 'f16))
                        ((and (member type '(q8_0 q4_0)) (= 0 (mod (second (shape x)) 32))) (quantize x type))
                        (t x))))
          (push (cons gguf-name x) tensors)))))
    (when (and rope-type (not (member rope-type '("default" "linear") :test #'equal)))
      ;; Llama 3's (or a GGUF file's) per-frequency scaling, as llama.cpp stores it: a divisor each.
      (let* ((hd (hf:config checkpoint "head_dim" (/ (hf:config-required checkpoint "hidden_size")
                                                    (hf:config-required checkpoint "num_attention_heads"))))
             (theta (hf:config checkpoint "rope_theta" 10000.0)))
        (require "models/llama")
        (push (cons "rope_freqs.weight"
                    (tensor (mapcar #'/ (llama:inv-freq hd theta) (llama:inv-freq hd theta scaling)) :dtype 'f32))
              tensors)))
    (save-gguf (reverse tensors) path :metadata (hf:%gguf-metadata checkpoint arch type))))

;;; --- model families ----------------------------------------------------------------------

(defvar hf:*model-types*
  '(("gpt2" "models/gpt2" gpt2:from-checkpoint)
    ("llama" "models/llama" llama:from-checkpoint)
    ("mistral" "models/llama" llama:from-checkpoint))
  "The model families hf:load knows: (MODEL-TYPE MODULE CONSTRUCTOR), CONSTRUCTOR a function of
a checkpoint defined by MODULE (a stdlib module, loaded on first use).
  (mapcar #'car hf:*model-types*)  ; => (\"gpt2\" \"llama\" \"mistral\")")

(defun hf:from-checkpoint (checkpoint)
  "(hf:from-checkpoint CHECKPOINT) The language model of CHECKPOINT's model_type.
  (let ((dir \"/tmp/tl-doc-hf-from-checkpoint/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
                            ;; lm_head: token i -> i + 1 (mod 4)
                            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32)))
                      (concat dir \"model.safetensors\"))
    (let ((ck (hf:load-checkpoint dir)))
      (list (hf:config ck \"model_type\")
            (shape ((hf:from-checkpoint ck) (tensor '(0 1) :dtype 'i32))))))  ; => (\"llama\" (2 4))"
  (let* ((type (hf:config checkpoint "model_type"))
         (entry (assoc type hf:*model-types* :test #'equal)))
    (unless entry
      (error 'file-error "hf: ~a has model_type ~s; supported: ~a" (getf checkpoint :config-file) type
             (string-join (mapcar #'car hf:*model-types*) ", ")))
    (require (second entry))
    (funcall (third entry) checkpoint)))

(defun hf:load (dir &key (dtype 'f32) quantize)
  "(hf:load DIR &key (dtype 'f32)) The language model in the Hugging Face folder DIR
(config.json and model.safetensors, or a sharded model.safetensors.index.json), by its
model_type: gpt2, llama or mistral; or in a GGUF file (DIR ends in .gguf, or is a folder
without config.json holding one .gguf file) of architecture gpt2 or llama, with Q8_0 and
Q4_0 weights dequantized. Weights are cast to DTYPE (nil keeps them as stored); with QUANTIZE
(q8_0, q4_0 or :stored, see hf:load-checkpoint) the matrices stay or become quantized, and
every matmul reads their blocks without making an f32 copy.
Call the model on a 1-d integer tensor of token ids to get logits (tokens vocab), as in
(let ((m (hf:load \"gpt2\"))) (m (tensor '(464 3290) :dtype 'i32))) for a folder gpt2.
  (let ((dir \"/tmp/tl-doc-hf-load/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
                            ;; lm_head: token i -> i + 1 (mod 4)
                            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32)))
                      (concat dir \"model.safetensors\"))
    (to-list (argmax ((hf:load dir) (tensor '(0 1 2 3) :dtype 'i32)) :axis 1)))  ; => (1 2 3 0)"
  (hf:from-checkpoint (hf:load-checkpoint dir :dtype dtype :quantize quantize)))

(defun hf:model-config (model)
  "(hf:model-config MODEL) The config (a hash table) MODEL was built from.
  (let ((dir \"/tmp/tl-doc-hf-model-config/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
                            ;; lm_head: token i -> i + 1 (mod 4)
                            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32)))
                      (concat dir \"model.safetensors\"))
    (hf:config (hf:model-config (hf:load dir)) \"vocab_size\"))  ; => 4"
  (cdr (assoc 'config (model-fields model))))

;;; --- pieces the families share -------------------------------------------------------------

(defun hf:embed (table ids)
  "(hf:embed TABLE IDS) The rows of TABLE (vocab dim) at the integer token IDS (a 1-d tensor),
or, when IDS is a dim (a decode step's one token), its row as a (1 dim) view: a symbolic
slice, so one compiled step serves every token and reads one row.
  (to-list (hf:embed (tensor '((0.0 0.5) (1.0 1.5) (2.0 2.5))) (tensor '(2 0) :dtype 'i32)))  ; => ((2.0 2.5) (0.0 0.5))
  (let ((id (dim 'doc-ex-id 1)))
    (with-dims (id) (to-list (hf:embed (tensor '((0.0 0.5) (1.0 1.5) (2.0 2.5))) id))))  ; => ((1.0 1.5))"
  (if (dim-p ids)
      (unsqueeze (slice table ids) :axis 0)
      (index-select table ids)))

(defun hf:token-count (ids)
  "(hf:token-count IDS) The number of tokens IDS holds: a 1-d tensor's length, 1 for a dim.
  (hf:token-count (tensor '(464 3290 318) :dtype 'i32))  ; => 3
  (hf:token-count (dim 'doc-ex-token 464))  ; => 1"
  (if (dim-p ids) 1 (first (shape ids))))

(defun hf:call-with-dims (values thunk)
  "(hf:call-with-dims VALUES THUNK) Calls THUNK with every dim among VALUES bound (with-dims),
so a model's forward can take a token and a position that are symbolic.
  (let ((n (dim 'doc-ex-n 2)))
    (hf:call-with-dims (list n 5) (lambda () (to-list (slice (arange 5) (list 0 n))))))  ; => (0 1)"
  (cond ((null values) (funcall thunk))
        ((dim-p (car values))
         (let ((d (car values))) (with-dims (d) (hf:call-with-dims (cdr values) thunk))))
        (t (hf:call-with-dims (cdr values) thunk))))

(defun hf:linear (x weight &optional bias)
  "(hf:linear X WEIGHT [BIAS]) x W^T + b with WEIGHT stored (out in), as torch.nn.Linear.
  (let ((x (tensor '((1.0 2.0)))) (w (tensor '((1.0 0.0) (0.0 1.0) (1.0 1.0)))))
    (list (to-list (hf:linear x w (tensor '(0.5 0.5 0.5))))
          (to-list (hf:linear x w))))  ; => (((1.5 2.5 3.5)) ((1.0 2.0 3.0)))"
  (let ((y (matmul x (transpose weight))))
    (if bias (add y bias) y)))

(defun hf:window-mask (queries keys window)
  "(hf:window-mask QUERIES KEYS WINDOW) The causal sliding-window mask of QUERIES queries, the
last QUERIES of KEYS positions (KEYS may be symbolic): a boolean (QUERIES KEYS) tensor, true
where the query at position i may read the key at position j, that is i - WINDOW < j <= i
(Hugging Face Mistral's sliding_window). Built from each key's distance to the last position
(a flipped index), so a symbolic KEYS needs no value: one compiled decode step serves every
position.
  (to-list (hf:window-mask 3 3 2))  ; => ((t nil nil) (t t nil) (nil t t))
  (to-list (hf:window-mask 1 4 2))  ; => ((nil nil t t))"
  ;; query row r is at position KEYS - QUERIES + r; with e = KEYS-1-j (the flipped key index),
  ;; i - j = e - (QUERIES-1-r), and the key is visible when 0 <= i - j < WINDOW
  (let* ((shape (list queries keys))
         (distance (add (flip (prim:iota shape 1 'i32) 1)
                        (sub (prim:iota shape 0 'i32) (- queries 1)))))
    (logical-and (ge distance 0) (lt distance window))))

(defun hf:attention (q k v &key cache start window)
  "(hf:attention Q K V &key cache start window) Causal scaled dot-product attention of Q
(heads T hd) over K and V (kv-heads T hd), the T tokens at positions START..START+T-1. With
grouped-query attention (kv-heads dividing heads) query head h reads key/value head
h / (heads/kv-heads), as Hugging Face's repeat_kv. CACHE, a cons (K-CACHE . V-CACHE) of (kv-heads length hd)
tensors, receives K and V at START (in place) and the queries attend over its first
START+T positions; START may be symbolic (a dim bound by the caller's with-dims), so one
compiled decode step serves every position. WINDOW, an integer, limits each query to the
WINDOW latest positions, its own included (Mistral's sliding window; hf:window-mask).
Returns (heads T hd).
  (to-list (hf:attention (ones '(1 2 2)) (ones '(1 2 2))
                         (tensor '(((1.0 2.0) (3.0 5.0))))))  ; => (((1.0 2.0) (2.0 3.5)))
  (shape (hf:attention (randn '(4 3 8)) (randn '(2 3 8)) (randn '(2 3 8))))  ; => (4 3 8)
  (let ((cache (cons (realize (zeros '(1 4 2))) (realize (zeros '(1 4 2))))))
    (hf:attention (ones '(1 2 2)) (ones '(1 2 2)) (tensor '(((1.0 2.0) (3.0 5.0)))) :cache cache :start 1)
    (to-list (cdr cache)))  ; => (((0.0 0.0) (1.0 2.0) (3.0 5.0) (0.0 0.0)))"
  (let* ((heads (first (shape q))) (tokens (second (shape q))) (hd (third (shape q)))
         (kv-heads (first (shape k)))
         (group (/ heads kv-heads)))
    (when cache
      ;; One realize for the three: each cache write realizes, and would otherwise compute a
      ;; fused q/k/v projection (GPT-2's c_attn) again for k, for v and for q.
      (realize-all (list q k v))
      (index-put! (car cache) start k :axis 1)
      (index-put! (cdr cache) start v :axis 1)
      (setq k (slice (car cache) t (list 0 (dim+ start tokens)))
            v (slice (cdr cache) t (list 0 (dim+ start tokens)))))
    ;; Query heads grouped by the key/value head they share: (kv-heads group T hd) against
    ;; (kv-heads 1 S hd), broadcast, as repeat_kv without the copy.
    (let* ((keys (second (shape k)))
           ;; the window matters only when some query could see more than WINDOW keys
           (windowed (and window (not (and (integerp keys) (<= keys window)))))
           (o (nn:attention (reshape q kv-heads group tokens hd)
                            (unsqueeze k :axis 1) (unsqueeze v :axis 1)
                            :causal (and (not windowed) (> tokens 1))
                            :mask (and windowed (hf:window-mask tokens keys window)))))
      (reshape o heads tokens hd))))

(defun hf:split-heads (x heads)
  "(hf:split-heads X HEADS) X (T HEADS*hd) as (HEADS T hd).
  (to-list (hf:split-heads (tensor '((1 2 3 4) (5 6 7 8))) 2))  ; => (((1 2) (5 6)) ((3 4) (7 8)))
  (shape (hf:split-heads (zeros '(5 12)) 3))  ; => (3 5 4)"
  (let ((s (shape x)))
    (permute (reshape x (first s) heads (/ (second s) heads)) 1 0 2)))

(defun hf:merge-heads (x)
  "(hf:merge-heads X) X (heads T hd) as (T heads*hd).
  (to-list (hf:merge-heads (tensor '(((1 2) (5 6)) ((3 4) (7 8))))))  ; => ((1 2 3 4) (5 6 7 8))"
  (let ((s (shape x)))
    (reshape (permute x 1 0 2) (second s) (* (first s) (third s)))))

;;; --- KV caches and generation --------------------------------------------------------------

(defun hf:make-cache (model length)
  "(hf:make-cache MODEL LENGTH) An empty KV cache for MODEL holding LENGTH positions: one cons
(K . V) of zero (kv-heads LENGTH head-dim) tensors per layer, in MODEL's dtype.
  (let ((dir \"/tmp/tl-doc-hf-make-cache/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 1) (\"intermediate_size\" . 4))))
    (save-safetensors
     (list* (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32))
            (mapcar (lambda (n) (cons (format nil \"model.layers.0.~a.weight\" n)
                                      (zeros (if (search \"norm\" n) '(4) '(4 4)))))
                    '(\"input_layernorm\" \"post_attention_layernorm\" \"self_attn.q_proj\" \"self_attn.k_proj\"
                      \"self_attn.v_proj\" \"self_attn.o_proj\" \"mlp.gate_proj\" \"mlp.up_proj\" \"mlp.down_proj\")))
     (concat dir \"model.safetensors\"))
    (let ((cache (hf:make-cache (hf:load dir) 8)))
      (list (length cache) (shape (car (first cache))) (shape (cdr (first cache))))))  ; => (1 (1 8 4) (1 8 4))"
  (let ((layout (cdr (assoc 'cache-layout (model-fields model)))))
    (destructuring-bind (layers kv-heads head-dim dt) layout
      (loop repeat layers
            collect (cons (realize (zeros (list kv-heads length head-dim) :dtype dt))
                          (realize (zeros (list kv-heads length head-dim) :dtype dt)))))))

(defun hf:cache-length (cache)
  "(hf:cache-length CACHE) The number of positions CACHE holds.
  (hf:cache-length (list (cons (zeros '(2 16 4)) (zeros '(2 16 4)))))  ; => 16"
  (second (shape (car (first cache)))))

(defun hf:decoder (model cache)
  "(hf:decoder MODEL CACHE) A decode step: a function of a token id and its position POS (two
integers) that writes the token's keys and values into CACHE at POS and returns its logits
(vocab). It is captured with jit with the token and the position as symbolic dims, so every
token and position replays one compiled step.
  (let ((dir \"/tmp/tl-doc-hf-decoder/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 1) (\"intermediate_size\" . 4))))
    (save-safetensors
     (list* (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32))
            (mapcar (lambda (n) (cons (format nil \"model.layers.0.~a.weight\" n)
                                      (zeros (if (search \"norm\" n) '(4) '(4 4)))))
                    '(\"input_layernorm\" \"post_attention_layernorm\" \"self_attn.q_proj\" \"self_attn.k_proj\"
                      \"self_attn.v_proj\" \"self_attn.o_proj\" \"mlp.gate_proj\" \"mlp.up_proj\" \"mlp.down_proj\")))
     (concat dir \"model.safetensors\"))
    (let* ((m (hf:load dir)) (step (hf:decoder m (hf:make-cache m 8))))
      (list (item (argmax (funcall step 2 0))) (item (argmax (funcall step 3 1)))
            (shape (funcall step 0 2)))))  ; => (3 0 (4))"
  (let ((step (jit (lambda (token pos) (slice (funcall model token cache pos) 0)))))
    (lambda (id pos)
      (funcall step (dim 'hf-token id) (dim 'hf-position pos)))))

(defun hf:%sample (logits rng &key temperature top-k top-p)
  ;; A token id drawn from LOGITS (a 1-d tensor): greedy when TEMPERATURE is nil or 0, else
  ;; softmax(LOGITS / TEMPERATURE) restricted to the TOP-K most likely and then to the
  ;; smallest set whose probability reaches TOP-P, drawn with the uniform numbers of RNG.
  (if (or (null temperature) (<= temperature 0))
      (item (argmax logits))
      (let* ((probs (to-list (softmax (div (cast logits 'f32) (float temperature)))))
             (ranked (sort (loop for p in probs for i from 0 collect (cons i p))
                           (lambda (a b) (> (cdr a) (cdr b)))))
             (ranked (if (and top-k (> top-k 0)) (subseq ranked 0 (min top-k (length ranked))) ranked))
             (ranked (if (and top-p (< top-p 1.0))
                         (let ((acc 0.0))
                           (loop for e in ranked
                                 collect e
                                 do (setq acc (+ acc (cdr e)))
                                 until (>= acc top-p)))
                         ranked))
             (total (reduce #'+ (mapcar #'cdr ranked)))
             (u (* total (funcall rng))))
        (loop for e in ranked
              do (setq u (- u (cdr e)))
              when (<= u 0) return (car e)
              finally (return (car (car (last ranked))))))))

(defun hf:%rng (seed)
  ;; A uniform [0, 1) generator from SEED: the Park-Miller sequence s' = 48271 s mod (2^31 - 1),
  ;; plain Lisp integers, so a seed gives the same draws on every device.
  (let ((state (+ 1 (mod seed 2147483646))))
    (lambda ()
      (setq state (mod (* state 48271) 2147483647))
      (/ (float (- state 1)) 2147483646.0))))

(defvar hf:*generate-stats* nil
  "What the last hf:generate did, a plist: :prefill-tokens :prefill-seconds :decode-tokens
:decode-seconds.
  (listp hf:*generate-stats*)  ; => t")

(defun hf:%seconds () (/ (get-internal-real-time) 1e9))

(defun hf:generate (model ids &key (max-new-tokens 32) temperature top-k top-p (seed 0)
                                   stop cache-length on-token)
  "(hf:generate MODEL IDS &key (max-new-tokens 32) temperature top-k top-p (seed 0) stop
cache-length on-token) Continues the token ids IDS (a list) with up to MAX-NEW-TOKENS new
ones and returns the new ids. The prompt runs in one pass (prefill) that fills a KV cache of
CACHE-LENGTH positions (default: prompt + new tokens, at most the model's positions, where
generation then stops); each new token then runs one captured decode step. Greedy unless
TEMPERATURE > 0, which samples from softmax(logits / TEMPERATURE) restricted to the TOP-K
most likely tokens and then to the fewest whose probability reaches TOP-P, with numbers
drawn from SEED. Stops after a token in STOP (a list of ids). ON-TOKEN,
when given, is called with each new id as soon as it is chosen (for streaming output).
Timings go to hf:*generate-stats*.
  (let ((dir \"/tmp/tl-doc-hf-generate/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"config.json\")
                (json-write '((\"model_type\" . \"llama\") (\"vocab_size\" . 4) (\"hidden_size\" . 4)
                              (\"num_attention_heads\" . 1) (\"num_hidden_layers\" . 0))))
    (save-safetensors (list (cons \"model.embed_tokens.weight\" (eye 4)) (cons \"model.norm.weight\" (ones '(4)))
                            ;; lm_head: token i -> i + 1 (mod 4)
                            (cons \"lm_head.weight\" (tensor '((0 0 0 1) (1 0 0 0) (0 1 0 0) (0 0 1 0)) :dtype 'f32)))
                      (concat dir \"model.safetensors\"))
    (let ((m (hf:load dir)))
      (list (hf:generate m '(2) :max-new-tokens 6) (hf:generate m '(2 3) :stop '(1)))))  ; => ((3 0 1 2 3 0) (0 1))"
  (let* ((n (length ids))
         (limit (cdr (assoc 'max-positions (model-fields model))))
         (length (min (or cache-length (+ n max-new-tokens)) (or limit most-positive-fixnum))))
    (when (> n length)
      (error 'index-error "hf:generate: the prompt has ~a tokens, more than ~a ~a positions" n
             (if (and limit (= length limit)) "the model's" "the cache's") length))
    (hf:%generate model ids n length max-new-tokens temperature top-k top-p seed stop on-token)))

(defun hf:%generate (model ids n length max-new-tokens temperature top-k top-p seed stop on-token)
  ;; Prefill, then decode steps; N prompt tokens, a cache of LENGTH positions.
  (let* ((cache (hf:make-cache model length))
         (rng (hf:%rng seed))
         (sample (lambda (logits)
                   (hf:%sample logits rng :temperature temperature :top-k top-k :top-p top-p)))
         (out nil)
         (t0 (hf:%seconds))
         (next (funcall sample (slice (funcall model (tensor ids :dtype 'i32) cache 0 t) 0)))
         (t1 (hf:%seconds))
         (step (hf:decoder model cache)))
    (loop for pos from n
          do (push next out)
             (when on-token (funcall on-token next))
          until (or (member next stop) (>= (length out) max-new-tokens) (>= pos length))
          do (setq next (funcall sample (funcall step next pos))))
    (setq hf:*generate-stats* (list :prefill-tokens n :prefill-seconds (- t1 t0)
                                    :decode-tokens (- (length out) 1)
                                    :decode-seconds (- (hf:%seconds) t1)))
    (reverse out)))

(provide 'hf)
