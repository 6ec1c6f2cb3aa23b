;;; SPDX-License-Identifier: Apache-2.0
;;; Times a Hugging Face GPT-2 checkpoint through hf:generate, as bench/llm/torch_ref.py times
;;; PyTorch: prefill of PREFILL tokens (one pass filling the KV cache) and greedy decode
;;; of DECODE tokens after a PROMPT-token prompt (one captured step per token), each run once
;;; to warm up (compiling its kernels) and once measured; then the first greedy ids (to compare
;;; with PyTorch's) and the peak resident memory.
;;;   build/tlisp bench/llm/gpt2.lisp --model DIR [--prefill 512] [--prompt 16] [--decode 32]

(require 'hf)

(defvar *dir* (format nil "~a" (command-line-option "--model" "")))
(defvar *prefill* (command-line-option "--prefill" 512))
(defvar *prompt* (command-line-option "--prompt" 16))
(defvar *decode* (command-line-option "--decode" 32))

(defun prompt-ids (n vocab run)
  ;; The same ids torch_ref.py uses: (7919 i + 11 RUN) mod VOCAB.
  (loop for i below n collect (mod (+ (* 7919 i) (* 11 run)) vocab)))

(defun peak-rss-mib ()
  ;; VmHWM of /proc/self/status, in MiB.
  (let ((line (find-if (lambda (l) (string-prefix-p "VmHWM:" l))
                       (string-split (read-file "/proc/self/status") (string (code-char 10))))))
    (floor (parse-integer (string-trim " kB" (subseq line 6))) 1024)))

(defvar model (hf:load *dir*))
(defvar vocab (hf:config (hf:model-config model) "vocab_size"))
(defvar stats nil)
(dotimes (run 2)
  (hf:generate model (prompt-ids *prefill* vocab run) :max-new-tokens 1)
  (when (= run 0) (setq stats (getf hf:*generate-stats* :prefill-seconds))))
(let ((s (getf hf:*generate-stats* :prefill-seconds)))
  (format t "tlisp prefill ~a tokens: ~,3f s, ~,1f tokens/s (first run, compiling: ~,3f s)~%"
          *prefill* s (/ *prefill* s) stats))
(defvar continuation nil)
(dotimes (run 2)
  (setq continuation (hf:generate model (prompt-ids *prompt* vocab (+ run 2)) :max-new-tokens (+ 1 *decode*)))
  (when (= run 0) (setq stats hf:*generate-stats*)))
(let ((s hf:*generate-stats*))
  (format t "tlisp decode ~a tokens: ~,2f ms/token (first run, compiling: ~,2f ms/token)~%"
          (getf s :decode-tokens) (/ (* 1000 (getf s :decode-seconds)) (getf s :decode-tokens))
          (/ (* 1000 (getf stats :decode-seconds)) (getf stats :decode-tokens))))
(format t "tlisp greedy: ~{~a~^ ~}~%" (subseq continuation 0 (min 8 (length continuation))))
(format t "tlisp peak rss: ~a MiB~%" (peak-rss-mib))
