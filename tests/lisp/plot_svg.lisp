;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 26: training curves as SVG without Python (stdlib/plot.lisp), and nn:fit's :plot.
(require 'plot)

(defvar stem (format nil "~a/tl-plot-~a" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time)))
(defun path (name) (concat stem "-" name))
(defvar nan (item (sum (div (tensor '(0.0)) 0.0))))  ; Lisp arithmetic has none

(defun occurrences (needle text)
  (let ((n 0) (at 0))
    (loop (let ((p (search needle text :start2 at)))
            (if p (setq n (+ n 1) at (+ p 1)) (return n))))))

(let* ((file (plot:lines (path "two.svg")
                         (list (list "train <a&b>" '(2.3 1.1 0.8 0.6 0.5))
                               (list "test" '((1 2.2) (3 0.9) (5 0.7))))
                         :title "loss" :x-label "epoch" :y-label "cross-entropy"))
       (svg (read-file file)))
  (format t "returns the file: ~a~%" (equal file (path "two.svg")))
  (format t "an SVG document: ~a~%" (and (eql 0 (search "<svg xmlns=\"http://www.w3.org/2000/svg\"" svg))
                                          (search "</svg>" svg) t))
  (format t "one line per series: ~a~%" (occurrences "<polyline" svg))
  (format t "five points, three points: ~a~%"
          (let* ((a (search "points=\"" svg)) (b (search "points=\"" svg :start2 (+ a 1))))
            (list (occurrences "," (subseq svg a (search "\"/>" svg :start2 a)))
                  (occurrences "," (subseq svg b (search "\"/>" svg :start2 b))))))
  (format t "legend text escaped: ~a~%" (and (search "train &lt;a&amp;b&gt;" svg) (not (search "<a&b>" svg)) t))
  (format t "labels: ~a~%" (and (search ">epoch<" svg) (search ">cross-entropy<" svg) (search ">loss<" svg) t))
  (format t "round ticks: ~a~%" (and (search ">0.5<" svg) (search ">1<" svg) (search ">2<" svg) t)))

;; A tensor of values, a log scale, and points that are not finite left out.
(let ((svg (read-file (plot:lines (path "log.svg")
                                  (list (list "loss" (tensor '(100.0 10.0 1.0 0.1 0.01)))
                                        (list "nan" (list 1.0 nan 3.0)))
                                  :log-y t :y-label "loss"))))
  (format t "log scale: ~a~%" (and (search "(log scale)" svg) (search ">100<" svg) (search ">0.01<" svg) t))
  (format t "a NaN point is left out: ~a~%"
          (let ((b (search "points=\"" svg :start2 (+ 1 (search "points=\"" svg)))))
            (occurrences "," (subseq svg b (search "\"/>" svg :start2 b))))))

(format t "one point: ~a~%" (occurrences "<circle" (read-file (plot:lines (path "one.svg") (list (list "x" '(5)))))))
(defmacro is-error (form)
  `(handler-case (progn ,form "no error") (error (e) (format nil "~a" e))))
(format t "~a~%" (is-error (plot:lines (path "bad.svg") nil)))
(format t "~a~%" (is-error (plot:lines (path "bad.svg") (list (list "s" '(1 "two" 3))))))
(format t "no finite points is an error: ~a~%"
        (and (search "plot:lines: no finite points to draw in" (is-error (plot:lines (path "bad.svg") (list (list "s" (list nan))))))
             t))

;; nn:fit draws its curves after each epoch.
(require 'nn)
(require 'optim)
(manual-seed 3)
(let* ((x (randn '(256 4)))
       (y (cast (gt (sum x :axis 1) 0.0) 'i32))
       (model (nn:sequential (nn:linear 4 16) #'relu (nn:linear 16 2)))
       (opt (optim:adam (parameters model) :lr 1e-2)))
  (with-output-to-string (*standard-output*)
    (nn:fit model opt x y :epochs 2 :batch-size 32 :test-x x :test-y y :plot (path "fit.svg")))
  (format t "nn:fit :plot wrote the loss and the accuracy: ~a ~a~%"
          (occurrences "<polyline" (read-file (path "fit.svg")))
          (occurrences "<polyline" (read-file (path "fit-accuracy.svg")))))

(dolist (f '("two.svg" "log.svg" "one.svg" "fit.svg" "fit-accuracy.svg"))
  (delete-file (path f)))
