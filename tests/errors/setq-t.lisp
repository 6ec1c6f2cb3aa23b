;;; SPDX-License-Identifier: Apache-2.0
;;; t is a constant too.
;; expect: setq-t.lisp:5:7: eval error: setq: cannot assign to the constant t

(setq t nil)
