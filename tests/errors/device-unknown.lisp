;;; SPDX-License-Identifier: Apache-2.0
;;; A device with no runtime file: a device-error listing the known ones.
;; expect: device-unknown.lisp:5:1: device error: use-backend: no backend named tpu (known: ref cpu; a backend needs a runtime file tpu.lisp on TENSORLISP_PATH)

(use-backend 'tpu)
