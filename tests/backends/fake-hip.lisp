;;; SPDX-License-Identifier: Apache-2.0
;;; The HIP backend on a fake runtime (tests/backends/fake_hip.cpp): it loads through its
;;; runtime file, queries the device, loads the gfx90a code objects LLVM's AMDGPU target and
;;; ld.lld make, and launches with the arguments each kernel's descriptor declares; the fake
;;; checks launches and refuses to run them, so a launch error here means the launch got as
;;; far as the runtime with the right arguments.
(use-backend 'hip)
(format t "device: ~a~%" (device-info))
(defvar x (realize (tensor '(1.0 2.0 3.0))))
(handler-case (realize (+ x 1.0))
  (device-error (e) (format t "launch: ~a~%" (condition-message e))))
;; A reduce split across thread groups: blocks of exactly the group's threads.
(handler-case (realize (sum (+ (reshape x '(3 1)) (ones '(3 1000))) :axis 1))
  (device-error (e) (format t "groups: ~a~%" (condition-message e))))
(handler-case (realize (+ (ones '(2000 1000)) 1.0))
  (device-error (e) (format t "out of memory: ~a~%" (condition-message e))))
(format t "still usable: ~a~%" (to-list x))
(use-backend 'ref)
(format t "on ref: ~a~%" (to-list (+ x 1.0)))
