;;; SPDX-License-Identifier: Apache-2.0
;;; plot: line charts as SVG files, e.g. training curves, with no Python. (require 'plot)
;;;
;;;   (plot:lines "loss.svg" (list (list "train" '(2.3 1.1 0.8 0.6)) (list "test" '(2.2 1.2 0.9 0.8)))
;;;               :title "cross-entropy" :x-label "epoch" :y-label "loss")

(defvar plot:*colors* '("#1f77b4" "#d62728" "#2ca02c" "#ff7f0e" "#9467bd" "#8c564b" "#e377c2" "#17becf")
  "The colors of successive series, as SVG colors.
  (first plot:*colors*)  ; => \"#1f77b4\"")

(defun plot:%finite-p (v)
  (and (numberp v) (= v v) (< (abs v) 1e300)))

(defun plot:%points (name data)
  "DATA as a list of (x y): a list of numbers is y at x = 1, 2, ..., a list of pairs is (x y),
a tensor is its elements (flattened) as y. Points with a non-finite coordinate are left out."
  (let* ((data (if (tensorp data) (to-list (reshape (cast data 'f64) (list (numel data)))) data))
         (points (if (and data (consp (first data)))
                     (mapcar (lambda (p)
                               (unless (and (consp p) (consp (cdr p)) (numberp (first p)) (numberp (second p)))
                                 (error 'type-error "plot: series ~s: ~s is no (x y) pair" name p))
                               (list (float (first p)) (float (second p))))
                             data)
                     (let ((i 0))
                       (mapcar (lambda (y)
                                 (unless (numberp y) (error 'type-error "plot: series ~s: ~s is no number" name y))
                                 (setq i (+ i 1))
                                 (list (float i) (float y)))
                               data)))))
    (remove-if-not (lambda (p) (and (plot:%finite-p (first p)) (plot:%finite-p (second p)))) points)))

(defun plot:%nice-step (span ticks)
  "A step of 1, 2 or 5 times a power of ten giving about TICKS intervals over SPAN."
  (let* ((raw (/ span (max ticks 1)))
         (power (expt 10.0 (floor (log raw 10))))
         (f (/ raw power)))
    (* power (cond ((<= f 1.0) 1.0) ((<= f 2.0) 2.0) ((<= f 5.0) 5.0) (t 10.0)))))

(defun plot:%range (lo hi &optional (pad 0.0))
  "LO and HI, never an empty range, widened by PAD times the span on each side."
  (if (= lo hi)
      (let ((d (if (= lo 0) 1.0 (* 0.1 (abs lo))))) (list (- lo d) (+ hi d)))
      (let ((d (* pad (- hi lo)))) (list (- lo d) (+ hi d)))))

(defun plot:%ticks (lo hi)
  (let* ((step (plot:%nice-step (- hi lo) 5))
         (start (* step (ceiling (- (/ lo step) 1e-9)))))
    (loop for v = start then (+ v step)
          while (<= v (+ hi (* 1e-9 step)))
          collect (if (< (abs v) (* 1e-9 step)) 0.0 v))))

(defun plot:%label (v)
  "A tick label: short, no trailing zeros."
  (cond ((= v (round v)) (format nil "~d" (round v)))
        ((or (>= (abs v) 1e5) (< (abs v) 1e-3)) (format nil "~,1e" v))
        (t (string-right-trim "0" (format nil "~,4f" v)))))

(defun plot:lines (file series &key title x-label y-label log-y (width 640) (height 400))
  "(plot:lines FILE SERIES &key title x-label y-label log-y (width 640) (height 400)) Draws
SERIES as lines into the SVG file FILE and returns FILE. SERIES is a list of (NAME DATA):
DATA is a list of y values (at x = 1, 2, ...), a list of (x y) pairs, or a tensor of y values.
Each series gets a color and a legend entry; axes get ticks at round numbers; LOG-Y draws the
y axis on a log scale (only positive values are drawn). Non-finite points (a NaN loss) are left
out of the line.
  (plot:lines \"/tmp/loss.svg\" (list (list \"train\" '(2.3 1.1 0.8)) (list \"test\" '(2.2 1.2 0.9))))  ; => \"/tmp/loss.svg\""
  (unless (and (listp series) series)
    (error 'type-error "plot:lines: SERIES must be a non-empty list of (NAME DATA), got ~s" series))
  (let* ((curves (mapcar (lambda (s)
                           (unless (and (consp s) (consp (cdr s)))
                             (error 'type-error "plot:lines: each series is (NAME DATA), got ~s" s))
                           (let ((pts (plot:%points (first s) (second s))))
                             (when log-y
                               (setq pts (mapcar (lambda (p) (list (first p) (log (second p) 10)))
                                                 (remove-if-not (lambda (p) (> (second p) 0)) pts))))
                             (list (first s) pts)))
                         series))
         (all (apply #'append (mapcar #'second curves))))
    (unless all (error "plot:lines: no finite points to draw in ~a" file))
    (let* ((xr (plot:%range (reduce #'min (mapcar #'first all)) (reduce #'max (mapcar #'first all))))
           (yr (plot:%range (reduce #'min (mapcar #'second all)) (reduce #'max (mapcar #'second all)) 0.04))
           (x0 (first xr)) (x1 (second xr)) (y0 (first yr)) (y1 (second yr))
           (left 70) (right (- width 20)) (top (if title 40 20)) (bottom (- height 50)))
      (flet ((px (x) (+ left (* (- right left) (/ (- x x0) (- x1 x0)))))
             (py (y) (- bottom (* (- bottom top) (/ (- y y0) (- y1 y0))))))
       (write-file
        file
        (with-output-to-string (out)
        (format out "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"~d\" height=\"~d\" viewBox=\"0 0 ~d ~d\" font-family=\"sans-serif\" font-size=\"12\">~%"
                width height width height)
        (format out "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>~%")
        (when title
          (format out "<text x=\"~d\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">~a</text>~%"
                  (round (+ left right) 2) (xml-escape title)))
        ;; Grid, ticks and their labels.
        (dolist (v (plot:%ticks x0 x1))
          (format out "<line x1=\"~,1f\" y1=\"~d\" x2=\"~,1f\" y2=\"~d\" stroke=\"#e0e0e0\"/>~%" (px v) top (px v) bottom)
          (format out "<text x=\"~,1f\" y=\"~d\" text-anchor=\"middle\">~a</text>~%" (px v) (+ bottom 16) (plot:%label v)))
        (dolist (v (plot:%ticks y0 y1))
          (format out "<line x1=\"~d\" y1=\"~,1f\" x2=\"~d\" y2=\"~,1f\" stroke=\"#e0e0e0\"/>~%" left (py v) right (py v))
          (format out "<text x=\"~d\" y=\"~,1f\" text-anchor=\"end\" dominant-baseline=\"middle\">~a</text>~%"
                  (- left 6) (py v) (if log-y (plot:%label (expt 10.0 v)) (plot:%label v))))
        (format out "<rect x=\"~d\" y=\"~d\" width=\"~d\" height=\"~d\" fill=\"none\" stroke=\"#444\"/>~%"
                left top (- right left) (- bottom top))
        (when x-label
          (format out "<text x=\"~d\" y=\"~d\" text-anchor=\"middle\">~a</text>~%"
                  (round (+ left right) 2) (- height 12) (xml-escape x-label)))
        (when y-label
          (format out "<text transform=\"translate(16 ~d) rotate(-90)\" text-anchor=\"middle\">~a~a</text>~%"
                  (round (+ top bottom) 2) (xml-escape y-label) (if log-y " (log scale)" "")))
        ;; The curves, then the legend.
        (let ((i 0))
          (dolist (c curves)
            (let ((color (nth (mod i (length plot:*colors*)) plot:*colors*)))
              (when (second c)
                (format out "<polyline fill=\"none\" stroke=\"~a\" stroke-width=\"2\" points=\"" color)
                (dolist (p (second c)) (format out "~,1f,~,1f " (px (first p)) (py (second p))))
                (format out "\"/>~%")
                (when (= 1 (length (second c)))
                  (format out "<circle cx=\"~,1f\" cy=\"~,1f\" r=\"3\" fill=\"~a\"/>~%"
                          (px (first (first (second c)))) (py (second (first (second c)))) color)))
              (format out "<line x1=\"~d\" y1=\"~d\" x2=\"~d\" y2=\"~d\" stroke=\"~a\" stroke-width=\"2\"/>~%"
                      (- right 140) (+ top 14 (* 18 i)) (- right 120) (+ top 14 (* 18 i)) color)
              (format out "<text x=\"~d\" y=\"~d\" dominant-baseline=\"middle\">~a</text>~%"
                      (- right 114) (+ top 14 (* 18 i)) (xml-escape (first c))))
            (setq i (+ i 1))))
        (format out "</svg>~%"))))
      file)))

(defun plot:history (file history &key (title "training"))
  "(plot:history FILE HISTORY &key title) Draws a training history, a plist as nn:fit's
:history keeps it (:loss, a list of (step loss); :test-accuracy, a list of (epoch percent)),
into the SVG file FILE: the loss curve, and the accuracy curve in a second file FILE with
-accuracy before its extension when there is one. Returns the files written.
  (plot:history \"/tmp/tl-doc-history.svg\" '(:loss ((1 2.0) (2 1.0)) :test-accuracy ((1 80.0) (2 90.0))))  ; => (\"/tmp/tl-doc-history.svg\" \"/tmp/tl-doc-history-accuracy.svg\")"
  (let ((written (list (plot:lines file (list (list "training loss" (getf history :loss)))
                                   :title title :x-label "step" :y-label "loss"))))
    (when (getf history :test-accuracy)
      (let* ((dot (position #\. file :from-end t))
             (acc (if dot (concat (subseq file 0 dot) "-accuracy" (subseq file dot)) (concat file "-accuracy"))))
        (push (plot:lines acc (list (list "test accuracy" (getf history :test-accuracy)))
                          :title title :x-label "epoch" :y-label "accuracy %")
              written)))
    (reverse written)))

(provide 'plot)

(defvar plot:*colormaps*
  '((viridis (0.267 0.005 0.329) (0.283 0.141 0.458) (0.254 0.265 0.530) (0.207 0.372 0.553) (0.164 0.471 0.558)
             (0.128 0.567 0.551) (0.135 0.659 0.518) (0.267 0.749 0.441) (0.478 0.821 0.318) (0.741 0.873 0.150)
             (0.993 0.906 0.144))
    (magma (0.001 0.000 0.014) (0.078 0.054 0.211) (0.232 0.060 0.437) (0.390 0.100 0.502) (0.550 0.161 0.506)
           (0.716 0.215 0.475) (0.868 0.288 0.409) (0.967 0.439 0.360) (0.994 0.624 0.427) (0.996 0.812 0.573)
           (0.987 0.991 0.750))
    (gray (0.0 0.0 0.0) (1.0 1.0 1.0)))
  "Colormaps by name: RGB colors (0 to 1) evenly spaced from the lowest value to the highest,
between which plot:image interpolates (viridis and magma at matplotlib's colors for 0, 0.1, ... 1).
  (length (cdr (assoc 'viridis plot:*colormaps*)))  ; => 11")

(defun plot:image (file values &key (colormap 'viridis) vmin vmax (origin :lower))
  "(plot:image FILE VALUES &key (colormap 'viridis) vmin vmax (origin :lower)) Writes the 2-d
tensor VALUES as a PNG image (one pixel per element), each value's color from COLORMAP (a name
in plot:*colormaps*) between VMIN and VMAX (default: the smallest and largest finite values);
ORIGIN :lower puts row 0 at the bottom (a spectrogram's low frequencies), :upper at the top.
Returns FILE.
  (plot:image \"/tmp/tl-doc-image.png\" (reshape (arange 12 :dtype 'f32) '(3 4)))  ; => \"/tmp/tl-doc-image.png\""
  (let* ((v (cast (%as-tensor values) 'f32))
         (colors (cdr (assoc colormap plot:*colormaps*))))
    (unless colors
      (error 'value-error "plot:image: unknown colormap ~s (known: ~{~a~^ ~})" colormap (mapcar #'car plot:*colormaps*)))
    (unless (= (ndim v) 2) (error 'shape-error "plot:image: VALUES must be 2-d, got shape ~s" (shape v)))
    (let* ((finite (logical-not (logical-or (isnan v) (isinf v))))
           ;; (No finite value at all: the range 0 .. 1; NaN and inf take the lowest color.)
           (lo (or vmin (let ((m (item (amin (where finite v +inf+))))) (if (= m +inf+) 0.0 m))))
           (hi (or vmax (let ((m (item (amax (where finite v (- +inf+)))))) (if (= m (- +inf+)) 1.0 m))))
           (span (if (> hi lo) (- hi lo) 1.0))
           (k (length colors))
           ;; Position along the colormap, 0 .. k-1: the lower color's index and the fraction past it.
           (pos (mul (clip (div (sub (where finite v lo) lo) span) 0.0 1.0) (float (- k 1))))
           (base (minimum (floor pos) (float (- k 2))))
           (frac (sub pos base))
           (table (tensor colors :dtype 'f32))
           (idx (cast (reshape base (list (numel base))) 'i32))
           (c0 (index-select table idx))
           (c1 (index-select table (add idx 1)))
           (f (reshape frac (list (numel frac) 1)))
           (rgb (reshape (add c0 (mul (sub c1 c0) f)) (append (shape v) '(3)))))
      (save-png (if (eq origin :lower) (flip rgb 0) rgb) file))))
