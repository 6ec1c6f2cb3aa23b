;;; SPDX-License-Identifier: Apache-2.0
;;; Times a Hugging Face GPT-2 checkpoint through hf:generate, as bench/llm/torch_ref.py times
;;; PyTorch: prefill of PREFILL tokens (one pass filling the KV cache) and greedy decode
;;; of DECODE tokens after a PROMPT-token prompt (one captured step per token), each run once
;;; to warm up (compiling its kernels), then the best of 2 (prefill) or 3 (decode) runs; then
;;; the first greedy ids (to compare with PyTorch's) and the peak resident memory.
;;; With --quantize q8_0 or q4_0 the weights are quantized as they load (hf:load :quantize);
;;; with --dtype bf16 or f16 they are cast to it (f32 by default; matmuls then multiply and sum
;;; in f32 and round their results to the dtype).
;;;   build/tlisp bench/llm/gpt2.lisp --model DIR [--prefill 512] [--prompt 16] [--decode 32]
;;;                                   [--quantize q8_0|q4_0] [--dtype f32|bf16|f16]

(require 'hf)

(defvar *dir* (format nil "~a" (command-line-option "--model" "")))
(defvar *prefill* (command-line-option "--prefill" 512))
(defvar *prompt* (command-line-option "--prompt" 16))
(defvar *decode* (command-line-option "--decode" 32))
(defvar *quantize* (let ((q (command-line-option "--quantize" nil))) (and q (intern (format nil "~a" q)))))
(defvar *dtype* (intern (format nil "~a" (command-line-option "--dtype" "f32"))))

(defun prompt-ids (n vocab run)
  ;; The same ids torch_ref.py uses: (7919 i + 11 RUN) mod VOCAB.
  (loop for i below n collect (mod (+ (* 7919 i) (* 11 run)) vocab)))

(defun peak-rss-mib ()
  ;; VmHWM of /proc/self/status, in MiB.
  (let ((line (find-if (lambda (l) (string-prefix-p "VmHWM:" l))
                       (string-split (read-file "/proc/self/status") (string (code-char 10))))))
    (floor (parse-integer (string-trim " kB" (subseq line 6))) 1024)))

(unless (member *dtype* '(f32 f16 bf16))
  (error "gpt2.lisp: --dtype must be f32, f16 or bf16, got ~a" *dtype*))
(defvar model (hf:load *dir* :quantize *quantize* :dtype *dtype*))
(defvar vocab (hf:config (hf:model-config model) "vocab_size"))
(defun measure (runs key thunk)
  ;; Calls THUNK with 0 .. RUNS: run 0 warms up (compiling the kernels). Returns the list
  ;; (FIRST BEST): run 0's hf:*generate-stats* and those of the later run least in KEY.
  (let ((first nil) (best nil))
    (dotimes (run (+ runs 1))
      (funcall thunk run)
      (let ((s hf:*generate-stats*))
        (cond ((= run 0) (setq first s))
              ((or (null best) (< (getf s key) (getf best key))) (setq best s)))))
    (list first best)))

(destructuring-bind (first best)
    (measure 2 :prefill-seconds
             (lambda (run) (hf:generate model (prompt-ids *prefill* vocab run) :max-new-tokens 1)))
  (let ((s (getf best :prefill-seconds)))
    (format t "tlisp prefill ~a tokens: ~,3f s, ~,1f tokens/s ~
               (best of 2; first run, compiling: ~,3f s)~%"
            *prefill* s (/ *prefill* s) (getf first :prefill-seconds))))
(defvar continuation nil)
(destructuring-bind (first best)
    (measure 3 :decode-seconds
             (lambda (run)
               (setq continuation (hf:generate model (prompt-ids *prompt* vocab (+ run 3))
                                               :max-new-tokens (+ 1 *decode*)))))
  (flet ((ms (s) (/ (* 1000 (getf s :decode-seconds)) (getf s :decode-tokens))))
    (format t "tlisp decode ~a tokens: ~,2f ms/token ~
               (best of 3; first run, compiling: ~,2f ms/token)~%"
            (getf best :decode-tokens) (ms best) (ms first))))
(format t "tlisp greedy: ~{~a~^ ~}~%" (subseq continuation 0 (min 8 (length continuation))))
(format t "tlisp peak rss: ~a MiB~%" (peak-rss-mib))
