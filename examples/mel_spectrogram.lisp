;;; SPDX-License-Identifier: Apache-2.0
;;; The mel spectrogram of a WAV file, drawn as a PNG image:
;;;   build/tlisp examples/mel_spectrogram.lisp [--wav FILE.wav] [--out FILE.png]
;;;                                             [--n-fft 1024] [--hop 256] [--n-mels 80]
;;; Without --wav it first writes a test signal: two seconds of a chirp rising from 200 Hz to
;;; 4 kHz over a steady 1 kHz tone, 16 kHz, 16-bit. Prints what it read, the loudest band, and
;;; how well istft brings the first channel back from its spectrogram.

(require 'audio)
(require 'plot)

(defun option-text (name default)
  (let ((v (command-line-option name default))) (and v (format nil "~a" v))))
(defun option-int (name default)
  (let ((v (command-line-option name default)))
    (if (integerp v) v (or (parse-integer (format nil "~a" v) :junk-allowed t)
                           (error 'type-error "mel_spectrogram: ~a needs an integer, got ~a" name v)))))

(defvar *tmp* (or (getenv "TMPDIR") "/tmp"))
(defvar *wav* (option-text "--wav" nil))
(defvar *out* (option-text "--out" (format nil "~a/tl-mel-spectrogram.png" *tmp*)))
(defvar *n-fft* (option-int "--n-fft" 1024))
(defvar *hop* (option-int "--hop" 256))
(defvar *n-mels* (option-int "--n-mels" 80))

(defun test-signal (path)
  ;; A chirp whose frequency rises linearly from 200 Hz to 4 kHz in 2 s, and a 1 kHz tone.
  (let* ((rate 16000)
         (tt (div (arange (* 2 rate) :dtype 'f64) (float rate)))
         (chirp (sin (mul (* 2 pi) (mul tt (add 200.0 (mul tt 950.0))))))
         (tone (sin (mul (* 2 pi 1000.0) tt))))
    (save-wav (add (mul 0.5 chirp) (mul 0.2 tone)) path :sample-rate rate)))

(defun run ()
  (let* ((path (or *wav* (test-signal (format nil "~a/tl-mel-test-signal.wav" *tmp*))))
         (w (load-wav path))
         (samples (first w)) (rate (second w))
         (channels (first (shape samples))) (frames (second (shape samples))))
    (format t "~a: ~a channel~:p, ~a Hz, ~,2f s~%" path channels rate (/ frames (float rate)))
    (let* ((mel (audio:mel-spectrogram samples rate :n-fft *n-fft* :hop-length *hop* :n-mels *n-mels*))
           (db (audio:amplitude-to-db (slice mel 0) :top-db 80))
           ;; The loudest band, over time: its filter's center frequency.
           (band (item (argmax (sum (slice mel 0) :axis 1))))
           (edges (audio:mel-to-hz (linspace (audio:hz-to-mel 0.0) (audio:hz-to-mel (/ rate 2.0)) (+ *n-mels* 2)))))
      (format t "mel spectrogram: ~a mels x ~a frames, ~,1f .. ~,1f dB~%" (second (shape mel)) (third (shape mel))
              (item (amin db)) (item (amax db)))
      (format t "loudest band: ~a, around ~,0f Hz~%" band (item (slice edges (+ band 1))))
      (plot:image *out* db)
      (format t "wrote ~a (~a x ~a pixels)~%" *out* (third (shape mel)) (second (shape mel))))
    ;; The spectrogram is invertible: stft, then istft, gives the signal back.
    (let* ((x (slice samples 0))
           (window (hann-window *n-fft*))
           (back (istft (stft x *n-fft* :hop-length *hop* :window window) *n-fft* :hop-length *hop* :window window
                        :length frames)))
      (format t "istft(stft(x)) - x: largest difference ~,2e~%" (item (amax (abs (sub back x))))))))

(run)
