;;; SPDX-License-Identifier: Apache-2.0
;;; A runtime file whose library is not there: a device-error naming it and where it looked.
;; expect: device-missing-library.lisp:7:1: device error: backend fake: cannot load library tensorlisp-fake
;; expect: libtensorlisp-fake.so: cannot open shared object file

(defbackend fake :library "tensorlisp-fake" :target :host)
(use-backend 'fake)
