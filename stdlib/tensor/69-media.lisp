;;; SPDX-License-Identifier: Apache-2.0
;;; Sound and pictures in and out: WAV audio (load-wav is a builtin) and PNG images.

(defun save-wav (samples path &key sample-rate (encoding 'pcm16))
  "(save-wav SAMPLES PATH &key sample-rate (encoding 'pcm16)) Writes SAMPLES (a tensor (frames)
or (channels frames), values in [-1, 1]) to PATH as a WAV file of SAMPLE-RATE Hz: 16-bit PCM
(values clipped to [-1, 1]) or, with :encoding 'f32, 32-bit floats. Returns PATH.
  (save-wav (sin (mul (arange 800 :dtype 'f32) 0.1)) \"/tmp/tl-doc-save-wav.wav\" :sample-rate 8000)  ; => \"/tmp/tl-doc-save-wav.wav\""
  (unless (and (integerp sample-rate) (> sample-rate 0))
    (error 'value-error "save-wav: :sample-rate must be a positive integer (Hz), got ~s" sample-rate))
  (let ((x (%as-tensor samples)))
    (when (%complexp x) (error 'dtype-error "save-wav: SAMPLES must be real, got ~a" (dtype x)))
    (unless (member (ndim x) '(1 2))
      (error 'shape-error "save-wav: SAMPLES must be (frames) or (channels frames), got shape ~s" (shape x)))
    (%write-wav (cast (if (= (ndim x) 1) (unsqueeze x 0) x) 'f32) path sample-rate encoding)))

(defun save-png (pixels path)
  "(save-png PIXELS PATH) Writes PIXELS (a tensor (height width) of gray levels, or (height
width 3) RGB or (height width 4) RGBA) to PATH as an 8-bit PNG image: u8 values as they are,
floats from [0, 1] (clipped), as matplotlib's imsave. Returns PATH.
  (save-png (reshape (arange 16 :dtype 'f32) '(4 4)) \"/tmp/tl-doc-save-png.png\")  ; => \"/tmp/tl-doc-save-png.png\""
  (let* ((x (%as-tensor pixels)))
    (unless (or (= (ndim x) 2) (and (= (ndim x) 3) (member (car (last (shape x))) '(1 3 4))))
      (error 'shape-error "save-png: PIXELS must be (height width) or (height width 1|3|4), got shape ~s" (shape x)))
    (%write-png (if (eq (dtype x) 'u8)
                    x
                    (cast (round (mul (clip (cast x 'f32) 0.0 1.0) 255.0)) 'u8))
                path)))
