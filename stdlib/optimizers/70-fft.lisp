;;; SPDX-License-Identifier: Apache-2.0
;;; Fourier transforms: where FFTW's external kernels (support/fftw.h, the host devices) do not
;;; run, each is replaced by the transform's generated kernels (stdlib/tensor/68-fft.lisp:
;;; matmuls by DFT tables, Cooley-Tukey steps, Bluestein's convolution), which fuse with their
;;; neighbors and run on every device.

(defoptimizer-set fft "Fourier transforms on the GPUs: FFTW's kernels are host code, so the
generated transforms take their place.")

(defoptimizer-set fft-generated "Fourier transforms by generated kernels on every backend,
the CPU too (off by default; (optimizer-enable 'fft-generated) to compare them with FFTW's).")

(defun %fft-generated (name x)
  "(%fft-generated NAME X) The generated graph of FFTW kernel NAME on X (its operand): what the
rules of the fft sets put in its place."
  (let ((*%fft-lazy-tables* t))
    (cond ((equal name "fft-c2c") (view-as-real (%fft-last (view-as-complex x) -1)))
          ((equal name "fft-c2c-inverse") (view-as-real (%fft-last (view-as-complex x) 1)))
          ((equal name "fft-r2c") (view-as-real (%r2c-generated x)))
          (t (let* ((m (nth (- (ndim x) 2) (shape x)))
                    (n (if (equal name "fft-c2r-even") (* 2 (- m 1)) (- (* 2 m) 1))))
               (%c2r-generated (view-as-complex x) n))))))

(defmacro %def-fft-rules (kernel)
  `(progn
     (defoptimizer ,(intern (concat "generated-" kernel "-on-gpu"))
       ,(format nil "FFTW's ~a is host code: a GPU computes the generated transform." kernel)
       (extern ,kernel ?x) :backend :gpu :set fft
       => (%fft-generated ,kernel ?x))
     (defoptimizer ,(intern (concat "generated-" kernel))
       ,(format nil "~a by the generated transform (the fft-generated set)." kernel)
       (extern ,kernel ?x) :set fft-generated
       => (%fft-generated ,kernel ?x))))

(%def-fft-rules "fft-c2c")
(%def-fft-rules "fft-c2c-inverse")
(%def-fft-rules "fft-r2c")
(%def-fft-rules "fft-c2r-even")
(%def-fft-rules "fft-c2r-odd")

(optimizer-disable 'fft-generated)
