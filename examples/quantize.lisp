;;; SPDX-License-Identifier: Apache-2.0
;;; Writes a Hugging Face GPT-2 or Llama checkpoint folder (or a GGUF file) as a GGUF file whose
;;; weight matrices are quantized (q8_0: 8 bits a weight, q4_0: 4) or stored as f16 or f32:
;;;   build/tlisp examples/quantize.lisp --model DIR --out FILE.gguf [--type q8_0|q4_0|f16|f32]
;;; The folder's tokenizer.json is copied next to FILE.gguf, where examples/generate.lisp looks
;;; for it:  build/tlisp examples/generate.lisp --model FILE.gguf --quantize stored --prompt ...
;;; Prints each file's size and the time taken.

(require 'hf)

(defun option-text (name default)
  (let ((v (command-line-option name default))) (and v (format nil "~a" v))))

(defvar *model* (option-text "--model" nil))
(defvar *out* (option-text "--out" nil))
(defvar *type* (let ((type (option-text "--type" "q8_0")))
                 (if (member type '("q8_0" "q4_0" "f16" "f32") :test #'equal)
                     (intern type)
                     (error 'type-error "quantize: --type must be q8_0, q4_0, f16 or f32, got ~a" type))))

(defun file-mib (path) (/ (file-size path) 1048576.0))

(defun folder-of (path)
  ;; The folder a path names: itself, or a .gguf file's.
  (if (string-suffix-p ".gguf" path)
      (let ((slash (position #\/ path :from-end t))) (if slash (subseq path 0 (+ slash 1)) "./"))
      (if (string-suffix-p "/" path) path (concat path "/"))))

(defun run ()
  (let* ((t0 (get-internal-real-time))
         (checkpoint (hf:load-checkpoint *model*)))
    (format t "~a: ~a, ~a tensors~%" *model* (hf:config checkpoint "model_type")
            (length (hf:tensor-names checkpoint)))
    (ensure-directories-exist (folder-of *out*))
    (hf:save-gguf checkpoint *out* :type *type*)
    (format t "wrote ~a (~a, ~,2f MiB) in ~,1f s~%" *out* *type* (file-mib *out*)
            (/ (- (get-internal-real-time) t0) internal-time-units-per-second))
    (let ((tokenizer (concat (folder-of *model*) "tokenizer.json"))
          (beside (concat (folder-of *out*) "tokenizer.json")))
      (when (and (probe-file tokenizer) (not (equal tokenizer beside)))
        (write-file beside (read-file tokenizer))
        (format t "copied ~a to ~a~%" tokenizer beside)))))

(if (and *model* *out*)
    (run)
    (format t "usage: tlisp examples/quantize.lisp --model DIR --out FILE.gguf [--type q8_0|q4_0|f16|f32]~%"))
