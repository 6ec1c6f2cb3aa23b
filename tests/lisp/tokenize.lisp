;;; SPDX-License-Identifier: Apache-2.0
;;; The tokenizers module on small hand-made vocabularies (issue 21): GPT-2 files, a Llama 2
;;; style tokenizer.json with byte fallback (both merge forms, both ways of writing the ▁
;;; space marker), special tokens, decode options, and the errors. The real vocabularies are
;;; compared with npm's reference tokenizers in tests/tokenizers/run.sh.

(require 'tokenizers)

(defvar *tmp* (format nil "~a/tl-tok-~a" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time)))
(defvar *made* nil)
(defun tmp (name)
  (let ((path (concat *tmp* "-" name)))
    (unless (member path *made* :test #'equal) (push path *made*))
    path))

(defun message-of (thunk)
  (handler-case (progn (funcall thunk) "no error") (error (e) (condition-message e))))

;;; --- GPT-2's file formats -----------------------------------------------------------------

;; Byte-level: a space is Ġ. Enough of a vocabulary for "hello world".
(json-write-file '(("h" . 0) ("e" . 1) ("l" . 2) ("o" . 3) ("w" . 4) ("r" . 5) ("d" . 6) ("Ġ" . 7)
                   ("he" . 8) ("ll" . 9) ("hell" . 10) ("hello" . 11) ("Ġw" . 12) ("or" . 13)
                   ("Ġwor" . 14) ("Ġworl" . 15) ("Ġworld" . 16) ("<|endoftext|>" . 17))
                 (tmp "vocab.json"))
(write-file (tmp "merges.txt")
            (format nil "#version: 0.2~%h e~%l l~%he ll~%hell o~%Ġ w~%o r~%Ġw or~%Ġwor l~%Ġworl d~%"))
(defvar *gpt2* (tok:load-gpt2 (tmp "vocab.json") (tmp "merges.txt")))

(deftest gpt2-files
  (is (equal (tok:encode *gpt2* "hello world") '(11 16)))
  (is (equal (tok:encode *gpt2* "hello  world") '(11 7 16)))        ; "  world": Ġ + Ġworld
  (is (equal (tok:encode *gpt2* "hello<|endoftext|>") '(11 17)))
  (is-error error (tok:encode *gpt2* "hello<|endoftext|>" :split-special nil))  ; < is not in it
  (is (equal (tok:decode *gpt2* '(11 7 16 17)) "hello  world<|endoftext|>"))
  (is (equal (tok:decode *gpt2* #(11 17) :skip-special t) "hello"))
  (is (equal (tok:decode *gpt2* (tensor '(11 16) :dtype 'i32)) "hello world"))
  (is (= (tok:vocab-size *gpt2*) 18))
  (is (equal (tok:special-tokens *gpt2*) '(("<|endoftext|>" . 17))))
  (is (= (tok:token-id *gpt2* "Ġworld") 16))
  (is (null (tok:token-id *gpt2* "nope")))
  (is (equal (tok:id-token *gpt2* 7) "Ġ"))
  (is (null (tok:id-token *gpt2* 99)))
  (is (equal (prin1-to-string *gpt2*) "#<tokenizer GPT-2 byte-level BPE, 18 tokens>")))

;;; --- a Llama 2 style tokenizer.json: byte fallback, ▁ for spaces, <s> added ---------------

(defun hex2 (n) (concat (subseq "0123456789ABCDEF" (ash n -4) (1+ (ash n -4)))
                        (subseq "0123456789ABCDEF" (logand n 15) (1+ (logand n 15)))))
(defvar *llama-vocab*
  (append '(("<unk>" . 0) ("<s>" . 1) ("</s>" . 2))
          (loop for b below 256 collect (cons (concat "<0x" (hex2 b) ">") (+ 3 b)))
          '(("▁" . 259) ("h" . 260) ("i" . 261) ("▁h" . 262) ("▁hi" . 263) ("t" . 264)
            ("▁t" . 265) ("here" . 266) ("e" . 267) ("r" . 268) ("he" . 269) ("her" . 270))))
(defvar *llama-added*
  #((("id" . 0) ("content" . "<unk>") ("special" . t))
    (("id" . 1) ("content" . "<s>") ("special" . t))
    (("id" . 2) ("content" . "</s>") ("special" . t))))
(defvar *llama-post-processor*
  '("post_processor" ("type" . "TemplateProcessing")
    ("single" . #((("SpecialToken" ("id" . "<s>") ("type_id" . 0)))
                  (("Sequence" ("id" . "A") ("type_id" . 0)))))
    ("special_tokens" ("<s>" ("id" . "<s>") ("ids" . #(1)) ("tokens" . #("<s>"))))))
(defvar *llama-decoder*
  '("decoder" ("type" . "Sequence")
    ("decoders" . #((("type" . "Replace") ("pattern" ("String" . "▁")) ("content" . " "))
                    (("type" . "ByteFallback")) (("type" . "Fuse"))
                    (("type" . "Strip") ("content" . " ") ("start" . 1) ("stop" . 0))))))
(defun llama-json (&key (merges #(#("▁" "h") #("▁h" "i") #("h" "e") #("he" "r") #("her" "e") #("▁" "t")))
                     (normalizer '(("type" . "Sequence")
                                   ("normalizers" . #((("type" . "Prepend") ("prepend" . "▁"))
                                                      (("type" . "Replace") ("pattern" ("String" . " "))
                                                       ("content" . "▁"))))))
                     (pre-tokenizer :null) (model-type "BPE"))
  (list '("version" . "1.0")
        (cons "added_tokens" *llama-added*)
        (cons "normalizer" normalizer)
        (cons "pre_tokenizer" pre-tokenizer)
        *llama-post-processor*
        *llama-decoder*
        (list "model" (cons "type" model-type) '("unk_token" . "<unk>") '("fuse_unk" . t)
              '("byte_fallback" . t) (cons "vocab" *llama-vocab*) (cons "merges" merges))))
(defun load-llama (name &rest options)
  (json-write-file (apply #'llama-json options) (tmp name))
  (tok:load-hf (tmp name)))
(defvar *llama* (load-llama "llama.json"))

(deftest llama-byte-fallback
  (is (equal (tok:encode *llama* "hi there") '(263 265 266)))
  (is (equal (tok:encode *llama* "hi there" :add-special t) '(1 263 265 266)))
  ;; é is not in the vocabulary: its two UTF-8 bytes, C3 A9, as <0xC3> <0xA9>.
  (is (equal (tok:encode *llama* "hé") (list 262 (+ 3 195) (+ 3 169))))
  (is (equal (tok:decode *llama* (tok:encode *llama* "hé  there😀")) "hé  there😀"))
  ;; As Hugging Face's: Strip removes the space only at the very start of the text.
  (is (equal (tok:decode *llama* (tok:encode *llama* "hi" :add-special t)) "<s> hi"))
  (is (equal (tok:decode *llama* (tok:encode *llama* "hi" :add-special t) :skip-special t) "hi"))
  ;; Half a character: U+FFFD by default, the raw byte with :lossy nil.
  (is (equal (tok:decode *llama* (list 263 (+ 3 195))) "hi\xef\xbf\xbd"))
  (is (equal (tok:decode *llama* (list 263 (+ 3 195)) :lossy nil) "hi\xc3"))
  (is (equal (tok:special-tokens *llama*) '(("<unk>" . 0) ("<s>" . 1) ("</s>" . 2))))
  (is (= (tok:vocab-size *llama*) 271)))

(deftest llama-variants
  ;; Merges written as "a b" strings instead of pairs.
  (let ((strings (load-llama "llama-strings.json"
                             :merges #("▁ h" "▁h i" "h e" "he r" "her e" "▁ t"))))
    (is (equal (tok:encode strings "hi there") '(263 265 266))))
  ;; Newer Llama 2 files: no normalizer, a Metaspace pre-tokenizer that prepends ▁ once.
  (let ((meta (load-llama "llama-metaspace.json" :normalizer :null
                          :pre-tokenizer '(("type" . "Metaspace") ("replacement" . "▁")
                                           ("prepend_scheme" . "first") ("split" . :false)))))
    (is (equal (tok:encode meta "hi there") '(263 265 266)))
    (is (equal (tok:encode meta "hi there" :add-special t) '(1 263 265 266)))))

(deftest tokenizer-errors
  (is-error error (tok:encode *gpt2* "hello!"))
  (is (equal (message-of (lambda () (tok:encode *gpt2* "hello!")))
             "tok:encode: the character \"!\" is not in the vocabulary, which has no unk_token"))
  (is (equal (message-of (lambda () (load-llama "wordpiece.json" :model-type "WordPiece")))
             (format nil "tok:load-hf: ~a: model: the model type \"WordPiece\" is not supported (only BPE)"
                     (tmp "wordpiece.json"))))
  (is (equal (message-of (lambda () (load-llama "ws.json" :pre-tokenizer '(("type" . "Whitespace")))))
             (format nil "tok:load-hf: ~a: tokenizer.json: the pre_tokenizer \"Whitespace\" is not supported (supported: Sequence, ByteLevel, Split, Metaspace)"
                     (tmp "ws.json"))))
  (is (equal (message-of (lambda () (load-llama "bad-merge.json" :merges #("▁ q"))))
             (format nil "tok:load-hf: ~a: merge 1 (\"▁\" \"q\") uses \"q\", which is not in the vocabulary"
                     (tmp "bad-merge.json"))))
  (write-file (tmp "broken.json") (format nil "{~%  \"model\": {,~%}"))
  (is-error read-error (tok:load-hf (tmp "broken.json")))
  (is (string-contains (message-of (lambda () (tok:load-hf (tmp "broken.json"))))
                       "broken.json: parse error at line 2, column 13"))
  (is-error file-error (tok:load-hf "/nonexistent/tokenizer.json"))
  (is-error file-error (tok:load-gpt2 (tmp "vocab.json") "/nonexistent/merges.txt"))
  (write-file (tmp "bad-merges.txt") (format nil "#version: 0.2~%h e~%one~%"))
  (is (equal (message-of (lambda () (tok:load-gpt2 (tmp "vocab.json") (tmp "bad-merges.txt"))))
             (format nil "tok:load-gpt2: ~a:3: expected two tokens separated by one space, got \"one\""
                     (tmp "bad-merges.txt"))))
  (is-error index-error (tok:decode *llama* '(1 5000)))
  (is-error type-error (tok:decode *llama* '(1 "x")))
  (is-error type-error (tok:encode "not a tokenizer" "text"))
  (is-error type-error (tok:encode *llama* 42)))

(unwind-protect (run-tests)
  (dolist (path *made*) (when (probe-file path) (delete-file path))))
