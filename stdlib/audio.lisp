;;; SPDX-License-Identifier: Apache-2.0
;;; audio: mel filter banks and spectrograms, as torchaudio has them. (require 'audio)
;;;
;;;   (let* ((w (load-wav "speech.wav"))
;;;          (mel (audio:mel-spectrogram (first w) (second w) :n-fft 1024 :hop-length 256 :n-mels 80)))
;;;     (plot:image "mel.png" (audio:amplitude-to-db (first (unstack mel)) :top-db 80)))
;;;
;;; Reading and writing WAV files (load-wav, save-wav), the short-time transforms (stft, istft)
;;; and the windows are in the core library.

(defun audio:hz-to-mel (f &key (mel-scale 'htk))
  "(audio:hz-to-mel F &key (mel-scale 'htk)) Frequency F (Hz, a number or tensor) in mels: HTK's
2595 log10(1 + F/700), or Slaney's (linear below 1 kHz, logarithmic above) as librosa.
  (round (audio:hz-to-mel 1000.0))  ; => 1000"
  (progn
    (case mel-scale
      (htk (if (tensorp f) (mul 2595.0 (div (log (add 1.0 (div f 700.0))) (log 10.0)))
               (* 2595.0 (/ (log (+ 1.0 (/ f 700.0))) (log 10.0)))))
      (slaney
       (let ((step (/ 200.0 3)) (logstep (/ (log 6.4) 27.0)))
         (if (tensorp f)
             (where (ge f 1000.0) (add 15.0 (div (log (div f 1000.0)) logstep)) (div f step))
             (if (>= f 1000.0) (+ 15.0 (/ (log (/ f 1000.0)) logstep)) (/ f step)))))
      (t (error 'value-error "audio:hz-to-mel: mel-scale must be htk or slaney, got ~s" mel-scale)))))

(defun audio:mel-to-hz (m &key (mel-scale 'htk))
  "(audio:mel-to-hz M &key (mel-scale 'htk)) The inverse of audio:hz-to-mel.
  (round (audio:mel-to-hz (audio:hz-to-mel 440.0)))  ; => 440"
  (case mel-scale
    (htk (if (tensorp m) (mul 700.0 (sub (pow 10.0 (div m 2595.0)) 1.0))
             (* 700.0 (- (expt 10.0 (/ m 2595.0)) 1.0))))
    (slaney
     (let ((step (/ 200.0 3)) (logstep (/ (log 6.4) 27.0)))
       (if (tensorp m)
           (where (ge m 15.0) (mul 1000.0 (exp (mul logstep (sub m 15.0)))) (mul m step))
           (if (>= m 15.0) (* 1000.0 (exp (* logstep (- m 15.0)))) (* m step)))))
    (t (error 'value-error "audio:mel-to-hz: mel-scale must be htk or slaney, got ~s" mel-scale))))

(defun audio:mel-filterbank (n-freqs n-mels sample-rate &key (f-min 0.0) f-max norm (mel-scale 'htk) (dtype 'f32))
  "(audio:mel-filterbank N-FREQS N-MELS SAMPLE-RATE &key (f-min 0.0) f-max norm (mel-scale 'htk)
(dtype 'f32)) The (N-FREQS N-MELS) matrix of triangular filters, evenly spaced in mels from
F-MIN to F-MAX (default SAMPLE-RATE/2), over the N-FREQS frequencies of an rfft (0 to
SAMPLE-RATE/2), as torchaudio.functional.melscale_fbanks; NORM 'slaney scales each filter to
unit area.
  (shape (audio:mel-filterbank 201 40 16000))  ; => (201 40)"
  (unless (and (integerp n-freqs) (> n-freqs 1) (integerp n-mels) (> n-mels 0))
    (error 'value-error "audio:mel-filterbank: N-FREQS must be above 1 and N-MELS positive, got ~s and ~s" n-freqs n-mels))
  (let* ((f-max (or f-max (/ sample-rate 2.0)))
         (freqs (linspace 0.0 (/ sample-rate 2.0) n-freqs :dtype 'f64))
         (m-pts (linspace (audio:hz-to-mel (float f-min) :mel-scale mel-scale)
                          (audio:hz-to-mel (float f-max) :mel-scale mel-scale) (+ n-mels 2) :dtype 'f64))
         (f-pts (audio:mel-to-hz m-pts :mel-scale mel-scale))
         (diff (sub (slice f-pts '(1 nil)) (slice f-pts '(0 -1))))                 ; (n-mels + 1)
         (slopes (sub (unsqueeze f-pts 0) (unsqueeze freqs 1)))                      ; (n-freqs n-mels+2)
         (down (div (neg (slice slopes t '(0 -2))) (slice diff '(0 -1))))
         (up (div (slice slopes t '(2 nil)) (slice diff '(1 nil))))
         (fb (maximum 0.0 (minimum down up))))
    (cast (if (eq norm 'slaney)
              (mul fb (div 2.0 (sub (slice f-pts (list 2 (+ n-mels 2))) (slice f-pts (list 0 n-mels)))))
              fb)
          dtype)))

(defun audio:spectrogram (x &key (n-fft 400) hop-length win-length window (center t) (power 2.0) normalized)
  "(audio:spectrogram X &key (n-fft 400) hop-length win-length window (center t) (power 2.0)
normalized) |stft(X)|^POWER (frequencies frames), or (batch frequencies frames) for a batch of
signals: a Hann window of WIN-LENGTH by default, as torchaudio.transforms.Spectrogram.
  (shape (audio:spectrogram (zeros '(1600))))  ; => (201 9)"
  (let* ((win (or win-length n-fft))
         (w (or window (hann-window win :dtype (if (member (dtype x) '(f64 c128)) 'f64 'f32))))
         (s (stft x n-fft :hop-length (or hop-length (floor win 2)) :win-length win :window w :center center
                  :normalized normalized)))
    (if (eql power 1) (abs s) (pow (abs s) power))))

(defun audio:mel-spectrogram (x sample-rate &key (n-fft 400) hop-length win-length window (center t) (power 2.0)
                                  (n-mels 128) (f-min 0.0) f-max norm (mel-scale 'htk))
  "(audio:mel-spectrogram X SAMPLE-RATE &key (n-fft 400) hop-length win-length window (center t)
(power 2.0) (n-mels 128) (f-min 0.0) f-max norm (mel-scale 'htk)) The spectrogram of X through
the mel filter bank: (n-mels frames), or a batch of them, as
torchaudio.transforms.MelSpectrogram (hop-length win-length/2 by default).
  (shape (audio:mel-spectrogram (zeros '(1600)) 16000 :n-mels 40))  ; => (40 9)"
  (let* ((spec (audio:spectrogram x :n-fft n-fft :hop-length hop-length :win-length win-length :window window
                                    :center center :power power))
         (fb (audio:mel-filterbank (+ (floor n-fft 2) 1) n-mels sample-rate :f-min f-min :f-max f-max :norm norm
                                   :mel-scale mel-scale :dtype (dtype spec))))
    (matmul (transpose fb) spec)))

(defun audio:amplitude-to-db (x &key (multiplier 10.0) (amin 1e-10) (ref 1.0) top-db)
  "(audio:amplitude-to-db X &key (multiplier 10.0) (amin 1e-10) (ref 1.0) top-db) X in decibels,
MULTIPLIER log10(max(X, AMIN) / REF) (10 for powers, 20 for amplitudes), floored TOP-DB below the
maximum when given, as torchaudio.transforms.AmplitudeToDB.
  (mapcar #'round (to-list (audio:amplitude-to-db (tensor '(1.0 100.0 0.0)) :top-db 80)))  ; => (0 20 -60)"
  (let* ((db (mul multiplier (div (log (maximum x amin)) (log 10.0))))
         (db (sub db (* multiplier (/ (log (max ref amin)) (log 10.0))))))
    (if top-db (maximum db (sub (amax db) top-db)) db)))
