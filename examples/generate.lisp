;;; SPDX-License-Identifier: Apache-2.0
;;; Text generation with a Hugging Face GPT-2 or Llama checkpoint folder (config.json,
;;; model.safetensors or a sharded index, and tokenizer.json or vocab.json + merges.txt), or a
;;; GGUF file (its tokenizer.json next to it):
;;;   build/tlisp examples/generate.lisp --model DIR|FILE.gguf --prompt TEXT [--max-new-tokens 64]
;;;       [--temperature T] [--top-k K] [--top-p P] [--seed S] [--dtype f32|stored]
;;;       [--quantize q8_0|q4_0|stored]
;;; --quantize q8_0 or q4_0 quantizes the weight matrices as they load (8 or 4 bits a weight:
;;; about a quarter or an eighth of f32's memory, and decoding, which reads every weight once a
;;; token, about twice as fast); stored keeps a GGUF file's Q8_0/Q4_0 blocks as they are (by
;;; default they are dequantized to f32). Greedy by default; --temperature > 0 samples (with --top-k and --top-p). Prints the text as
;;; it is generated, then tokens/s for the prompt (prefill, one pass) and for decoding (one
;;; captured step per token over a KV cache). Stops at the config's eos_token_id.

(require 'hf)
(require 'tokenizers)

(defun option-text (name default)
  (let ((v (command-line-option name default))) (and v (format nil "~a" v))))

(defvar *dir* (option-text "--model" nil))
(defvar *prompt* (option-text "--prompt" "Hello"))
(defvar *new* (command-line-option "--max-new-tokens" 64))
(defvar *temperature* (command-line-option "--temperature" 0))
(defvar *top-k* (command-line-option "--top-k" nil))
(defvar *top-p* (command-line-option "--top-p" nil))
(defvar *seed* (command-line-option "--seed" 0))
(defvar *dtype* (if (equal (option-text "--dtype" "f32") "stored") nil 'f32))
(defvar *quantize*
  (let ((q (option-text "--quantize" nil)))
    (cond ((null q) nil)
          ((equal q "stored") :stored)
          ((member q '("q8_0" "q4_0") :test #'equal) (intern q))
          (t (error 'type-error "generate: --quantize must be q8_0, q4_0 or stored, got ~a" q)))))

(defun stop-ids (config)
  ;; eos_token_id may be an id or a list of ids (Llama 3)
  (let ((eos (hf:config config "eos_token_id")))
    (cond ((integerp eos) (list eos))
          ((vectorp eos) (coerce eos 'list))
          (t nil))))

(defun tokenizer-dir (path)
  ;; A .gguf file's folder (its tokenizer.json is kept next to it), else PATH itself.
  (let ((n (length path)))
    (if (and (> n 5) (string-equal (subseq path (- n 5)) ".gguf"))
        (let ((slash (position #\/ path :from-end t)))
          (if slash (subseq path 0 (max slash 1)) "."))
        path)))

(defun run ()
  (let* ((tokenizer (tok:load (tokenizer-dir *dir*)))
         (model (hf:load *dir* :dtype *dtype* :quantize *quantize*))
         (config (hf:model-config model))
         (ids (tok:encode tokenizer *prompt* :add-special t))
         (new nil)
         (shown ""))
    (format t "~a (~a, ~a prompt tokens)~%~a" *dir* (hf:config config "model_type") (length ids)
            *prompt*)
    ;; Streaming: print what the new tokens decode to as it grows, holding back a character
    ;; whose bytes are not all there yet (it decodes to U+FFFD until they are).
    (hf:generate model ids :max-new-tokens *new* :temperature *temperature* :top-k *top-k*
                           :top-p *top-p* :seed *seed* :stop (stop-ids config)
                           :on-token (lambda (id)
                                       (setq new (append new (list id)))
                                       (let ((text (tok:decode tokenizer new :skip-special t)))
                                         (unless (string-suffix-p "�" text)
                                           (princ (subseq text (length shown)))
                                           (setq shown text)))))
    (princ (subseq (tok:decode tokenizer new :skip-special t) (length shown)))
    (flet ((report (what tokens seconds)
             (format t "~a: ~a tokens in ~,3f s (~,1f tokens/s)~%" what tokens seconds
                     (/ tokens (max 1e-9 seconds)))))
      (let ((s hf:*generate-stats*))
        (terpri)
        (report "prefill" (getf s :prefill-tokens) (getf s :prefill-seconds))
        (report "decode" (getf s :decode-tokens) (getf s :decode-seconds))))))

(if *dir*
    (run)
    (format t "usage: tlisp examples/generate.lisp --model DIR --prompt TEXT [--max-new-tokens N]~%~
               [--temperature T] [--top-k K] [--top-p P] [--seed S] [--dtype f32|stored]~%~
               [--quantize q8_0|q4_0|stored]~%"))
