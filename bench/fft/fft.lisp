;;; SPDX-License-Identifier: Apache-2.0
;;; Fourier-transform benchmarks on the current device. Each line:
;;;   NAME  best-ms
;;; the best of several runs after a warm-up. bench/fft/run.sh runs this next to NumPy
;;; (pocketfft) and PyTorch on the same sizes and prints the ratios. The issue 27 targets:
;;; fft-c64-1048576 and rfft-f32-1024x4096 within 1.5x of NumPy. FFT_GENERATED=1 times the
;;; generated transforms instead of FFTW's kernels.

(defun now-ms () (/ (get-internal-real-time) 1e6))

(defun best-ms (thunk reps)
  (funcall thunk)
  (let ((best nil))
    (dotimes (i reps)
      (gc)
      (let ((t0 (now-ms)))
        (funcall thunk)
        (let ((dt (- (now-ms) t0)))
          (when (or (null best) (< dt best)) (setq best dt)))))
    best))

(manual-seed 0)
;; FFT_GENERATED=1: the generated transforms (what the GPUs run) instead of FFTW's kernels.
(when (equal (getenv "FFT_GENERATED") "1") (optimizer-enable 'fft-generated))
(defun bench (name thunk reps) (format t "~a ~,3f~%" name (best-ms thunk reps)))

(let ((z (realize (view-as-complex (randn '(1048576 2)))))
      (z128 (realize (view-as-complex (randn '(1048576 2) :dtype 'f64))))
      (r (realize (randn '(1024 4096))))
      (p (realize (view-as-complex (randn '(256 1031 2)))))
      (img (realize (randn '(16 256 256))))
      (sig (realize (randn '(8 160000)))))
  (bench "fft-c64-1048576" (lambda () (realize (fft z))) 5)
  (bench "fft-c128-1048576" (lambda () (realize (fft z128))) 5)
  (bench "ifft-c64-1048576" (lambda () (realize (ifft z))) 5)
  (bench "rfft-f32-1024x4096" (lambda () (realize (rfft r))) 5)
  (bench "irfft-f32-1024x4096" (lambda () (realize (irfft (rfft r)))) 5)
  (bench "fft-c64-256x1031" (lambda () (realize (fft p))) 5)
  (bench "rfft2-f32-16x256x256" (lambda () (realize (fft2 img))) 5)
  (bench "stft-f32-8x160000" (lambda () (realize (stft sig 512 :hop-length 128 :window (hann-window 512)))) 5))
