;; A backend library loaded through its runtime file on TENSORLISP_PATH and dlopen: the
;; tensors computed on it agree with the reference executor.
(use-backend 'cpu-plugin)
(format t "device: ~a~%" (device))
(defvar x (tensor '((1.0 2.0 3.0) (4.0 5.0 6.0))))
(defvar on-plugin (list (realize (softmax x :axis 1)) (to-list (matmul x (transpose x))) (to-list (sum x :axis 0))))
(use-backend 'ref)
(defvar on-ref (list (realize (softmax x :axis 1)) (to-list (matmul x (transpose x))) (to-list (sum x :axis 0))))
(format t "agrees with ref: ~a~%" (and (allclose (first on-plugin) (first on-ref))
                                       (equal (rest on-plugin) (rest on-ref))))
(format t "matmul: ~a~%" (second on-plugin))
