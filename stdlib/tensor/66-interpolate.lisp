;;; SPDX-License-Identifier: Apache-2.0
;;; Resizing images (interpolate): nearest and bilinear, one spatial axis at a time, each as
;;; index-select of the source rows with weights computed here from the (static) sizes.

(defun %resize-sources (fn mode in out scale align-corners)
  ;; For each of OUT positions along an axis of IN: a list (I0 I1 W1), the two source rows
  ;; and the weight of the second, following torch.nn.functional.interpolate's coordinate
  ;; maps. SCALE is the user's scale factor or nil (then IN/OUT is used).
  (let ((step (if scale (/ 1.0 scale) (/ (float in) out))))
    (loop for o from 0 below out
          collect (case mode
                    (:nearest
                     (let ((i (min (floor (* o step)) (- in 1)))) (list i i 0.0)))
                    (:bilinear
                     (let* ((src (if align-corners
                                     (if (> out 1) (* o (/ (float (- in 1)) (- out 1))) 0.0)
                                     (max 0.0 (- (* (+ o 0.5) step) 0.5))))
                            (i0 (min (floor src) (- in 1)))
                            (i1 (min (+ i0 1) (- in 1))))
                       (list i0 i1 (- src i0))))
                    (t (error 'type-error "~a: mode must be :nearest or :bilinear, got ~s" fn mode))))))

(defun %resize-axis (x axis out mode scale align-corners)
  ;; X resized to OUT along AXIS.
  (let* ((in (nth axis (tensor-shape x)))
         (srcs (%resize-sources 'interpolate mode in out scale align-corners))
         (rows0 (index-select x (mapcar #'first srcs) :axis axis)))
    (if (eq mode :nearest)
        rows0
        (let* ((wshape (%replace-nth (make-list (ndim x) 1) axis out))
               (w1 (reshape (tensor (mapcar #'third srcs) :dtype (tensor-dtype x)) wshape))
               (rows1 (index-select x (mapcar #'second srcs) :axis axis)))
          ;; r0 + w1 (r1 - r0) would round differently from torch's (1 - w1) r0 + w1 r1.
          (add (mul rows0 (sub 1 w1)) (mul rows1 w1))))))

(defcomposite interpolate (x &key size scale-factor (mode :nearest) align-corners)
  "(interpolate X &key size scale-factor (mode :nearest) align-corners) X (batch C H W)
resized to SIZE (an integer or a list (H' W')) or by SCALE-FACTOR (a number or a list; the
size is floor(H * factor)), as torch.nn.functional.interpolate for 4-d input: MODE
:nearest takes source row floor(i * H / H'), :bilinear weighs the two nearest source rows
and columns, with the centers of the corner pixels aligned when ALIGN-CORNERS, else the
pixels' edges (half-pixel centers). Differentiable with respect to X.
  (to-list (interpolate (tensor '((((1 2))))) :scale-factor 2))  ; => ((((1 1 2 2) (1 1 2 2))))
  (to-list (interpolate (tensor '((((0.0 1.0))))) :size '(1 4) :mode :bilinear))  ; => ((((0.0 0.25 0.75 1.0))))
  (to-list (interpolate (tensor '((((0.0 1.0))))) :size '(1 3) :mode :bilinear
                        :align-corners t))  ; => ((((0.0 0.5 1.0))))"
  (let ((x (%as-tensor x)))
    (unless (= (ndim x) 4)
      (error 'shape-error "interpolate: expected an input of shape (batch channels height width), got ~s" (tensor-shape x)))
    (when (and (eq mode :nearest) align-corners)
      (error 'type-error "interpolate: align-corners applies to :bilinear only"))
    (when (eq (not size) (not scale-factor))
      (error 'type-error "interpolate: give exactly one of :size and :scale-factor"))
    (let* ((x (if (eq mode :bilinear) (%float-tensor x) x))
           (hw (cddr (tensor-shape x)))
           (scales (cond ((null scale-factor) (list nil nil))
                         ((numberp scale-factor) (list scale-factor scale-factor))
                         (t scale-factor)))
           (out (cond ((integerp size) (list size size))
                      (size size)
                      (t (mapcar (lambda (d s) (floor (* d s))) hw scales)))))
      (unless (and (= (length out) 2) (every (lambda (d) (and (integerp d) (> d 0))) out))
        (error 'shape-error "interpolate: the output size ~s must be two positive integers" out))
      (%resize-axis (%resize-axis x 2 (first out) mode (first scales) align-corners)
                    3 (second out) mode (second scales) align-corners))))
