;;; SPDX-License-Identifier: Apache-2.0
;;; json-read and json-write (issue 21): round trips, the value mapping, Unicode escapes,
;;; integer range, depth limits, errors with line and column, and real config.json files.

(defun json-error-text (text &rest options)
  (handler-case (progn (apply #'json-read text options) "no error")
    (read-error (e) (condition-message e))))

(defun roundtrip (text) (json-write (json-read text)))

(deftest json-values
  (is (= (json-read "42") 42))
  (is (= (json-read "-9223372036854775808") -9223372036854775808))
  (is (= (json-read "9223372036854775807") 9223372036854775807))
  (is (floatp (json-read "1.0")))
  (is (= (json-read "2.5e3") 2500.0))
  (is (eq (json-read "true") t))
  (is (eq (json-read "false") :false))
  (is (eq (json-read "null") :null))
  (is (equal (json-read "\"a\\\"b\\\\c\\n\"") "a\"b\\c\n"))
  (is (equal (json-read "[]") #()))
  (is (equal (json-read "[1, [2, 3], \"x\"]") #(1 #(2 3) "x")))
  (is (equal (json-read "[1, [2, 3]]" :array-as :list) '(1 (2 3))))
  (is (equal (json-read "{\"a\": 1, \"b\": {\"c\": [true]}}" :object-as :alist)
             '(("a" . 1) ("b" ("c" . #(t))))))
  (is (equal (json-read "{}" :object-as :alist) nil))
  (let ((h (json-read "{\"z\": 1, \"a\": 2, \"m\": {\"k\": null}}")))
    (is (hash-table-p h))
    (is (= (gethash "z" h) 1))
    (is (eq (gethash "k" (gethash "m" h)) :null))
    (is (equal (hash-table-keys h) '("z" "a" "m"))))     ; the text's key order
  ;; A repeated key keeps its last value in a hash table, both in an alist.
  (is (= (gethash "a" (json-read "{\"a\": 1, \"a\": 2}")) 2))
  (is (equal (json-read "{\"a\": 1, \"a\": 2}" :object-as :alist) '(("a" . 1) ("a" . 2)))))

(deftest json-unicode
  (is (equal (json-read "\"caf\\u00e9\"") "café"))
  (is (equal (json-read "\"\\u65e5\\u672c\"") "日本"))
  (is (equal (json-read "\"\\ud83d\\ude00\"") "😀"))              ; a surrogate pair
  (is (equal (json-read "\"raw ✓ UTF-8 😀\"") "raw ✓ UTF-8 😀"))
  (is (equal (json-write "tab\tnl\ncontrol\x01") "\"tab\\tnl\\ncontrol\\u0001\""))
  (is (equal (json-write "😀 é") "\"😀 é\"")))

(deftest json-write-values
  (is (equal (json-write 1) "1"))
  (is (equal (json-write 1.0) "1.0"))
  (is (equal (json-write -0.5) "-0.5"))
  (is (equal (json-write 1e300) "1e+300"))
  (is (equal (json-write (list t :false :null)) "[true,false,null]"))
  (is (equal (json-write nil) "[]"))
  (is (equal (json-write #(1 "a" #())) "[1,\"a\",[]]"))
  (is (equal (json-write '(("a" . 1) (:b . "x") (c . #(1)))) "{\"a\":1,\"b\":\"x\",\"c\":[1]}"))
  (is (equal (json-write '((1 2) (3))) "[[1,2],[3]]"))
  (is (equal (json-write 'sym) "\"sym\""))
  (let ((h (make-hash-table :test 'equal)))
    (setf (gethash "k" h) #(1 2))
    (setf (gethash "gone" h) 0)
    (remhash "gone" h)
    (is (equal (json-write h) "{\"k\":[1,2]}")))
  (is (equal (json-write (json-read "{\"a\": [1, {\"b\": null}], \"c\": {}}") :pretty t)
             (format nil "{~%  \"a\": [~%    1,~%    {~%      \"b\": null~%    }~%  ],~%  \"c\": {}~%}~%"))))

(deftest json-round-trips
  (dolist (text '("{\"a\":[1,2.5,true,false,null,\"x\"],\"b\":{}}"
                  "[[],[[]],{},\"\",0,-1,1.5e-07]"
                  "{\"nested\":{\"deeper\":{\"list\":[1,[2,[3]]]}}}"
                  "\"é日😀\""))
    (is (equal (roundtrip text) text)))
  ;; Every float reads back as the same float.
  (dolist (x (list 0.1 1.0e-300 123456.789 -2.5 1.7976931348623157e308))
    (is (= (json-read (json-write x)) x)))
  (let ((path (format nil "~a/tl-json-~a.json" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time))))
    (json-write-file '(("x" . #(1 2 3))) path :pretty t)
    (is (equal (json-read-file path :object-as :alist) '(("x" . #(1 2 3)))))
    (delete-file path)))

(deftest json-errors
  (is (equal (json-error-text "{\"a\": 1,}")
             "json-read: parse error at line 1, column 9: syntax error while parsing object key - unexpected '}'; expected string literal"))
  (is (equal (json-error-text (format nil "{~%  \"a\": [1, 2~%  \"b\": 3~%}"))
             "json-read: parse error at line 3, column 5: syntax error while parsing array - unexpected string literal; expected ']'"))
  (is (equal (json-error-text "[1, 2] 3")
             "json-read: parse error at line 1, column 8: syntax error while parsing value - unexpected number literal; expected end of input"))
  (is (equal (json-error-text "")
             "json-read: parse error at line 1, column 1: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal"))
  (is (equal (json-error-text "[1, 123456789012345678901]")
             "json-read: parse error at line 1, column 5: the integer 123456789012345678901 does not fit in 64 bits (write it as a float, 123456789012345678901.0)"))
  (is (equal (json-error-text "9223372036854775808")
             "json-read: parse error at line 1, column 1: the integer 9223372036854775808 does not fit in 64 bits (write it as a float, 9223372036854775808.0)"))
  (is (equal (json-error-text "[1e400]")
             "json-read: parse error at line 1, column 2: number overflow parsing '1e400'"))
  (is (equal (json-error-text "\"\\ud83d\"")
             "json-read: parse error at line 1, column 8: syntax error while parsing value - invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF; last read: '\"\\ud83d\"'"))
  (is (string-contains (json-error-text (concat "\"" (byte-string 255) "\"")) "ill-formed UTF-8"))
  (is (string-contains (json-error-text "[tru]") "line 1, column 5: syntax error while parsing value - invalid literal"))
  ;; Deep nesting is an error, not a crash; the limit can be raised.
  (let ((deep (concat (make-string 100000 "[") (make-string 100000 "]"))))
    (is (equal (json-error-text deep)
               "json-read: parse error at line 1, column 1001: nesting deeper than 1000 (:max-depth)"))
    (is (vectorp (json-read deep :max-depth 100000))))
  (is-error read-error (json-read "[[[1]]]" :max-depth 2))
  (is-error type-error (json-read 42))
  (is-error program-error (json-read "1" :objects :alist))
  (is-error type-error (json-read "1" :object-as :plist))
  (is-error file-error (json-read-file "/nonexistent/config.json"))
  (is (string-contains (handler-case (json-read-file "/dev/null") (read-error (e) (condition-message e)))
                       "json-read-file: /dev/null: parse error at line 1, column 1"))
  ;; What JSON cannot hold.
  (is-error type-error (json-write (exp 1000.0)))
  (is-error type-error (json-write (byte-string 255)))
  (is-error type-error (json-write (lambda (x) x)))
  (is-error type-error (json-write '(("a" . 1) . 2)))
  (let ((cycle (list 1 2)))
    (setf (cdr (cdr cycle)) cycle)
    (is-error type-error (json-write cycle)))
  (let ((v (vector 1)))
    (setf (aref v 0) v)
    (is (string-contains (handler-case (json-write v) (error (e) (condition-message e)))
                         "nesting deeper than 1000"))))

;; Hugging Face's GPT-2 config.json, as published.
(defvar *gpt2-config* "{
  \"activation_function\": \"gelu_new\",
  \"architectures\": [
    \"GPT2LMHeadModel\"
  ],
  \"attn_pdrop\": 0.1,
  \"bos_token_id\": 50256,
  \"embd_pdrop\": 0.1,
  \"eos_token_id\": 50256,
  \"initializer_range\": 0.02,
  \"layer_norm_epsilon\": 1e-05,
  \"model_type\": \"gpt2\",
  \"n_ctx\": 1024,
  \"n_embd\": 768,
  \"n_head\": 12,
  \"n_layer\": 12,
  \"n_positions\": 1024,
  \"resid_pdrop\": 0.1,
  \"summary_activation\": null,
  \"summary_first_dropout\": 0.1,
  \"summary_proj_to_labels\": true,
  \"summary_type\": \"cls_index\",
  \"summary_use_proj\": true,
  \"task_specific_params\": {
    \"text-generation\": {
      \"do_sample\": true,
      \"max_length\": 50
    }
  },
  \"vocab_size\": 50257
}")

;; Llama 3's config.json (Meta-Llama-3-8B), as published.
(defvar *llama-config* "{
  \"architectures\": [\"LlamaForCausalLM\"],
  \"attention_bias\": false,
  \"attention_dropout\": 0.0,
  \"bos_token_id\": 128000,
  \"eos_token_id\": 128001,
  \"hidden_act\": \"silu\",
  \"hidden_size\": 4096,
  \"initializer_range\": 0.02,
  \"intermediate_size\": 14336,
  \"max_position_embeddings\": 8192,
  \"model_type\": \"llama\",
  \"num_attention_heads\": 32,
  \"num_hidden_layers\": 32,
  \"num_key_value_heads\": 8,
  \"pretraining_tp\": 1,
  \"rms_norm_eps\": 1e-05,
  \"rope_scaling\": null,
  \"rope_theta\": 500000.0,
  \"tie_word_embeddings\": false,
  \"torch_dtype\": \"bfloat16\",
  \"transformers_version\": \"4.40.0.dev0\",
  \"use_cache\": true,
  \"vocab_size\": 128256
}")

(deftest json-config-files
  (let ((gpt2 (json-read *gpt2-config*)))
    (is (equal (gethash "model_type" gpt2) "gpt2"))
    (is (= (gethash "n_embd" gpt2) 768))
    (is (integerp (gethash "vocab_size" gpt2)))
    (is (= (gethash "layer_norm_epsilon" gpt2) 1e-05))
    (is (eq (gethash "summary_activation" gpt2) :null))
    (is (equal (gethash "architectures" gpt2) #("GPT2LMHeadModel")))
    (is (eq (gethash "do_sample" (gethash "text-generation" (gethash "task_specific_params" gpt2))) t))
    ;; Read, written and read again: the same table.
    (is (equal (json-write (json-read (json-write gpt2 :pretty t))) (json-write gpt2))))
  (let ((llama (json-read *llama-config* :object-as :alist)))
    (is (equal (cdr (assoc "model_type" llama :test #'equal)) "llama"))
    (is (= (cdr (assoc "num_key_value_heads" llama :test #'equal)) 8))
    (is (floatp (cdr (assoc "rope_theta" llama :test #'equal))))
    (is (= (cdr (assoc "rope_theta" llama :test #'equal)) 500000.0))
    (is (eq (cdr (assoc "tie_word_embeddings" llama :test #'equal)) :false))
    (is (equal (json-read (json-write llama) :object-as :alist) llama))))

(run-tests)
