;;; SPDX-License-Identifier: Apache-2.0
;;; tokenizers: GPT-2 byte-level BPE and Hugging Face tokenizer.json BPE (Llama 2 and 3
;;; style, with byte fallback), encode and decode. (require 'tokenizers)
;;; The merge loop, pre-tokenizer regexes and vocabularies live in C++ (src/text/).

(defun tok:load-gpt2 (vocab merges)
  "(tok:load-gpt2 VOCAB MERGES) GPT-2's byte-level BPE tokenizer from its files: VOCAB is
encoder.json or vocab.json (token -> id), MERGES is vocab.bpe or merges.txt (one merge per line,
by priority, after a #version line). <|endoftext|> is its special token.
  (let ((dir \"/tmp/tl-doc-tok-load-gpt2/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:encode (tok:load-gpt2 (concat dir \"vocab.json\") (concat dir \"merges.txt\")) \"abba\"))  ; => (2 1 0)"
  (tok:%load-gpt2 vocab merges))

(defun tok:load-hf (path)
  "(tok:load-hf PATH) A tokenizer from a Hugging Face tokenizer.json with a BPE model: GPT-2,
Llama 2 (byte fallback, the ▁ space marker) and Llama 3 files. Supported components:
normalizers Sequence, Prepend, Replace, NFC/NFKC/NFD/NFKD; pre-tokenizers Sequence, ByteLevel,
Split (regex or string), Metaspace; post-processors TemplateProcessing, ByteLevel, Sequence;
decoders Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace. Any other
component is an error naming it.
  (let ((file \"/tmp/tl-doc-tok-load-hf.json\"))
    (write-file file (json-write '((\"model\" (\"type\" . \"BPE\") (\"vocab\" (\"a\" . 0) (\"b\" . 1) (\"ab\" . 2))
                                            (\"merges\" . #(\"a b\")))
                                   (\"added_tokens\" . #(((\"id\" . 3) (\"content\" . \"<s>\") (\"special\" . t)))))))
    (tok:encode (tok:load-hf file) \"<s>abab\"))  ; => (3 2 2)"
  (tok:%load-hf path))

(defun tok:load (dir)
  "(tok:load DIR) The tokenizer of a model folder: DIR/tokenizer.json when it exists, else
GPT-2's DIR/vocab.json (or encoder.json) with DIR/merges.txt (or vocab.bpe).
  (let ((dir \"/tmp/tl-doc-tok-load/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:encode (tok:load dir) \"abab\"))  ; => (2 2)"
  (flet ((file (name) (concat dir "/" name)))
    (cond ((probe-file (file "tokenizer.json")) (tok:load-hf (file "tokenizer.json")))
          ((and (probe-file (file "vocab.json")) (probe-file (file "merges.txt")))
           (tok:load-gpt2 (file "vocab.json") (file "merges.txt")))
          ((and (probe-file (file "encoder.json")) (probe-file (file "vocab.bpe")))
           (tok:load-gpt2 (file "encoder.json") (file "vocab.bpe")))
          (t (error 'file-error "tok:load: ~a has no tokenizer.json, vocab.json + merges.txt or encoder.json + vocab.bpe"
                    dir)))))

(defun tok:encode (tok text &key add-special (split-special t))
  "(tok:encode TOK TEXT &key add-special (split-special t)) The token ids of the string TEXT, as
a list. ADD-SPECIAL adds the tokens the tokenizer's post-processor adds (Llama's <s> or
<|begin_of_text|>; GPT-2 adds none). With SPLIT-SPECIAL (the default, as Hugging Face does) an
added token written in TEXT (\"<|endoftext|>\", \"<s>\") becomes its id; nil encodes it as text.
  (let ((dir \"/tmp/tl-doc-tok-encode/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:encode (tok:load dir) \"aab<|endoftext|>\"))  ; => (0 2 3)"
  (tok:%encode tok text add-special split-special))

(defun tok:decode (tok ids &key skip-special (lossy t))
  "(tok:decode TOK IDS &key skip-special (lossy t)) The text of IDS (a list, vector or 1-d
integer tensor). SKIP-SPECIAL leaves out special tokens. Bytes that do not form UTF-8 (a
character split across tokens) become U+FFFD; with :lossy nil they are returned as they are,
for a caller that joins pieces itself.
  (let ((dir \"/tmp/tl-doc-tok-decode/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (let ((tok (tok:load dir)))
      (list (tok:decode tok '(2 0 3)) (tok:decode tok '(2 0 3) :skip-special t))))  ; => (\"aba<|endoftext|>\" \"aba\")"
  (tok:%decode tok (if (tensorp ids) (to-list ids) ids) skip-special lossy))

(defun tok:vocab-size (tok)
  "(tok:vocab-size TOK) The number of token ids (one more than the largest), added tokens included.
  (let ((dir \"/tmp/tl-doc-tok-vocab-size/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:vocab-size (tok:load dir)))  ; => 4"
  (tok:%vocab-size tok))

(defun tok:token-id (tok token)
  "(tok:token-id TOK TOKEN) The id of the token spelled TOKEN (\"<|endoftext|>\", \"<s>\",
\"Ġthe\"), or nil.
  (let ((dir \"/tmp/tl-doc-tok-token-id/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (let ((tok (tok:load dir)))
      (list (tok:token-id tok \"ab\") (tok:token-id tok \"<|endoftext|>\") (tok:token-id tok \"zz\"))))  ; => (2 3 nil)"
  (tok:%token-id tok token))

(defun tok:id-token (tok id)
  "(tok:id-token TOK ID) The token with id ID as the vocabulary spells it, or nil.
  (let ((dir \"/tmp/tl-doc-tok-id-token/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (let ((tok (tok:load dir)))
      (list (tok:id-token tok 2) (tok:id-token tok 99))))  ; => (\"ab\" nil)"
  (tok:%id-token tok id))

(defun tok:special-tokens (tok)
  "(tok:special-tokens TOK) The special tokens as an alist of (CONTENT . ID), by id.
  (let ((dir \"/tmp/tl-doc-tok-special-tokens/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:special-tokens (tok:load dir)))  ; => ((\"<|endoftext|>\" . 3))"
  (loop for (content id special) in (tok:%added-tokens tok)
        when special collect (cons content id)))

(defun tok:added-tokens (tok)
  "(tok:added-tokens TOK) Every added token as a list of (CONTENT ID SPECIAL), by id.
  (let ((dir \"/tmp/tl-doc-tok-added-tokens/\"))
    (ensure-directories-exist dir)
    (write-file (concat dir \"vocab.json\")
                (json-write '((\"a\" . 0) (\"b\" . 1) (\"ab\" . 2) (\"<|endoftext|>\" . 3))))
    (write-file (concat dir \"merges.txt\") (format nil \"#version: 0.2~%a b~%\"))
    (tok:added-tokens (tok:load dir)))  ; => ((\"<|endoftext|>\" 3 t))"
  (tok:%added-tokens tok))
