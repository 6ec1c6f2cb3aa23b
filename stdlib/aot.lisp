;;; SPDX-License-Identifier: Apache-2.0
;;; aot: functions of tensors compiled ahead of time, for programs that do not embed
;;; TensorLisp. (require 'aot)
;;;
;;;   tlisp compile examples/aot/mlp.lisp --entry mlp-forward --shapes 4x784 -o build/aot/mlp
;;;   (aot:compile 'mlp-forward (list (zeros '(4 784))) :output "build/aot/mlp")
;;;
;;; The function is traced once on example arguments (as (jit f) traces it): the kernels it
;;; runs and the order they run in become one object file, PREFIX.o, with a C entry point,
;;; and PREFIX.h declares it with the shapes of its inputs and outputs. Weights and other data
;;; the function reads (global tensors) go into the object, or with :weights :arguments into
;;; PREFIX.weights, passed to the entry point as pointers. Only the C library and libm are
;;; needed to link it:
;;;
;;;   #include "mlp.h"
;;;   float x[MLP_FORWARD_IN0_ELEMENTS], y[MLP_FORWARD_OUT0_ELEMENTS];
;;;   int rc = mlp_forward(x, y, NULL);   /* 0, or an error code: mlp_forward_error(rc) */
;;;
;;; What a compiled program cannot do: draw random numbers (pass them in), read tensor data
;;; into Lisp while traced (item, print), call the backend's own kernels (BLAS). Each is an
;;; error naming it. Kernels run on the calling thread, for the CPU named by :cpu (default: this
;;; machine's, with every vector extension it has; "x86-64-v3" runs on any AVX2 machine).

(defun aot:c-name (name)
  "(aot:c-name NAME) NAME (a symbol or string) as a C identifier: lower case, with every
character other than a letter, digit or underscore made an underscore.
  (aot:c-name 'mlp-forward)  ; => \"mlp_forward\""
  (let ((s (string-downcase (if (symbolp name) (symbol-name name) name))))
    (with-output-to-string (out)
      (loop for c across s
            for i from 0
            do (write-char (if (or (alpha-char-p c) (char= c #\_) (and (> i 0) (digit-char-p c))) c #\_) out)))))

(defun aot:%arg-names (fn)
  ;; The parameter names of FN's lambda list, from its usage line, as C names.
  (let* ((d (and (symbolp fn) (%definition fn)))
         (usage (and d (getf d :usage))))
    (when (and usage (> (length usage) 2))
      (let ((words (cdr (string-split (string-trim "()" usage) " "))))
        (mapcar #'aot:c-name (remove-if (lambda (w) (or (equal w "") (eql 0 (search "&" w)))) words))))))

(defun aot:%realize-globals ()
  ;; Realizes every tensor a global variable holds (in lists, vectors and models too), so a
  ;; weight defined lazily, e.g. (defvar *w* (mul (randn '(784 64)) 0.05)), is compiled as
  ;; its value rather than as the kernels that would compute it at every call.
  (let ((seen (make-hash-table :test 'eq)))
    (labels ((walk (v)
               (cond ((tensorp v) (realize v))
                     ((or (consp v) (vectorp v) (model-p v))
                      (unless (gethash v seen)
                        (puthash v t seen)
                        (cond ((consp v) (walk (car v)) (walk (cdr v)))
                              ((model-p v) (dolist (f (model-fields v)) (walk (cdr f))))
                              ((not (stringp v)) (loop for x across v do (walk x)))))))))
      (dolist (s (apropos-list ""))
        (when (boundp s) (walk (symbol-value s)))))))

(defun aot:compile (fn args &key name output (weights :data) (cpu "native") origin)
  "(aot:compile FN ARGS &key name output weights cpu) Compiles FN (a function of tensors, or
its name) for arguments shaped like the tensors ARGS into OUTPUT.o and OUTPUT.h (and
OUTPUT.weights). NAME is the C entry point (default: FN's name as a C identifier); OUTPUT
defaults to NAME in the current folder. WEIGHTS is :data (the tensors FN reads besides its
arguments go into the object) or :arguments (they become parameters after the inputs, their
values written to OUTPUT.weights); tensors held by global variables are realized first, so
they are compiled as data. CPU is the CPU the code is for: \"native\" (this one) or an
LLVM name such as \"x86-64-v3\". The trace runs on the cpu device. Returns a plist (:object
:header :weights :kernels :workspace-bytes).
  (let ((w (tensor '((1.0 2.0) (3.0 4.0)))))
    (getf (aot:compile (lambda (x) (relu (matmul x w))) (list (zeros '(1 2)))
                       :name \"doc_ex_net\" :output \"/tmp/tl-doc-aot/net\")
          :header))  ; => \"/tmp/tl-doc-aot/net.h\""
  (unless (member weights '(:data :arguments))
    (error 'value-error "aot:compile: :weights is :data or :arguments, not ~s" weights))
  (let* ((name (or name (if (symbolp fn) (aot:c-name fn)
                            (error 'value-error "aot:compile: give a :name for an anonymous function"))))
         (output (or output name))
         (old (device)))
    (unless (eq old 'cpu) (use-backend 'cpu))
    (aot:%realize-globals)
    (unwind-protect
         (%compile-function (if (symbolp fn) (symbol-function fn) fn) args name output
                            (eq weights :arguments) cpu
                            (or origin (format nil "~a" (if (symbolp fn) fn "a function")))
                            (aot:%arg-names fn))
      (unless (eq old 'cpu) (use-backend old)))))

(defun aot:parse-shapes (text)
  "(aot:parse-shapes TEXT) The example arguments TEXT describes: shapes separated by commas,
each sizes joined by x and optionally :DTYPE (f32 by default); \"scalar\" is a 0-d tensor.
  (mapcar #'tensor-shape (aot:parse-shapes \"4x784,10:f64\"))  ; => ((4 784) (10))"
  (mapcar (lambda (spec)
            (let* ((parts (string-split (string-trim " " spec) ":"))
                   (dims (first parts))
                   (dtype (if (second parts) (intern (string-downcase (second parts))) 'f32))
                   (shape (if (equal dims "scalar") nil
                              (mapcar (lambda (d)
                                        (let ((n (parse-integer d :junk-allowed t)))
                                          (unless (and n (> n 0) (equal (format nil "~a" n) d))
                                            (error 'value-error "compile: bad size ~s in the shape ~s ~
                                                                 (sizes are positive integers joined by x, e.g. 4x784)"
                                                   d spec))
                                          n))
                                      (string-split dims "x")))))
              (zeros shape :dtype dtype)))
          (remove "" (string-split text ",") :test #'equal)))

(defun aot:%usage ()
  (format t "usage: tlisp compile FILE.lisp --entry NAME --shapes SHAPES [-o PREFIX] [--name C-NAME]~%")
  (format t "                     [--weights data|arguments] [--cpu native|x86-64-v3|...]~%")
  (format t "  Loads FILE and compiles its function NAME, traced on zero tensors of SHAPES, into~%")
  (format t "  PREFIX.o and PREFIX.h: a C entry point that runs without TensorLisp.~%")
  (format t "  SHAPES  one per argument, comma-separated: sizes joined by x, then :DTYPE (default f32),~%")
  (format t "          e.g. 4x784 or 32x8,32x1 or 5:i32; scalar is a 0-d tensor~%")
  (format t "  -o      where to write (default: the C name, in this folder)~%")
  (format t "  --name  the entry point's C name (default: NAME with - made _)~%")
  (format t "  --weights arguments  weights as parameters, their values in PREFIX.weights~%")
  (format t "          (default data: inside the object)~%")
  (format t "  --cpu   the CPU to generate code for (default native: this one); x86-64-v3: any AVX2~%")
  (format t "  See docs/aot.md.~%"))

(defun aot:main (args)
  "(aot:main ARGS) What tlisp compile runs: ARGS are FILE.lisp --entry NAME --shapes SHAPES
[-o PREFIX] [--name C-NAME] [--weights data|arguments] [--cpu CPU]. Loads FILE, compiles the
function NAME for arguments of SHAPES (see aot:parse-shapes) and writes PREFIX.o and
PREFIX.h. Exits with 1 when compiling fails, 2 on bad arguments (so it is shown, not run, here:
tlisp compile --help prints the usage).
  (fboundp 'aot:main)  ; => t"
  (let ((file nil) (entry nil) (shapes nil) (out nil) (name nil) (weights "data") (cpu "native"))
    (loop while args
          do (let ((a (pop args)))
               (cond ((member a '("-o" "--output") :test #'equal) (setq out (pop args)))
                     ((equal a "--entry") (setq entry (pop args)))
                     ((equal a "--shapes") (setq shapes (pop args)))
                     ((equal a "--name") (setq name (pop args)))
                     ((equal a "--weights") (setq weights (pop args)))
                     ((equal a "--cpu") (setq cpu (pop args)))
                     ((member a '("-h" "--help") :test #'equal) (aot:%usage) (exit 0))
                     ((and (null file) (not (eql 0 (search "-" a)))) (setq file a))
                     (t (format t "tlisp compile: unexpected argument ~s~%" a) (exit 2)))))
    (unless (and file entry shapes (member weights '("data" "arguments") :test #'equal))
      (aot:%usage)
      (exit 2))
    (handler-case
        (progn
          (load file)
          (let* ((sym (intern (string-downcase entry))))
            (unless (fboundp sym)
              (error 'value-error "compile: ~a defines no function ~a" file entry))
            (let ((r (aot:compile sym (aot:parse-shapes shapes)
                                  :name (or name (aot:c-name sym)) :output out
                                  :weights (if (equal weights "data") :data :arguments) :cpu cpu
                                  :origin (format nil "~a (~a)" file entry))))
              (format t "compile: ~a kernel calls, ~a bytes of workspace; wrote ~a and ~a~@[ and ~a~]~%"
                      (getf r :kernels) (getf r :workspace-bytes) (getf r :object) (getf r :header)
                      (getf r :weights))
              (exit 0))))
      (error (e)
        (let ((m (condition-message e)))
          (format t "tlisp compile: ~a~%" (if (eql 0 (search "compile: " m)) (subseq m 9) m)))
        (exit 1)))))

(provide 'aot)
