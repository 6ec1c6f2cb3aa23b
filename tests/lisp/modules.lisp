;;; SPDX-License-Identifier: Apache-2.0
;;; Modules: load by relative path, require searching the requiring file's folder, once-only loading.
;; The modules live in tests/lisp/modules/ so that they are not run as tests themselves.

(defun show (label value) (format t "~a: ~s~%" label value))

;; modtest-util.lisp is in modules/, not next to this file, so it cannot be required from here yet.
(show "require modtest-util from here"
      (handler-case (require 'modtest-util) (file-error (e) (condition-type e))))

;; load returns the value of the file's last form; loader.lisp requires modtest-greeting,
;; which requires modtest-util, both found in modules/ because that is where the requiring
;; file is.
(show "load returned" (load "modules/loader.lisp"))

;; Modules load only once, whichever file asks for them and whether by symbol or string.
(show "require greeting again" (require 'modtest-greeting))
(show "require by string" (require "modtest-util"))
(show "greeting was loaded once" *greeting-loads*)
(show "functions from the modules" (list (greet "world") (shout "hey")))

;; load has no such memory: loading a file twice evaluates it twice.
(load "modules/modtest-greeting.lisp")
(show "greeting loaded with load" *greeting-loads*)

;; A failed require leaves the definitions made before the error.
(show "broken module's first definition" (broken-helper))

;; provide marks a module as loaded without any file.
(show "provide" (provide 'virtual-module))
(show "require a provided module" (require 'virtual-module))

;; A missing module is a file-error that names it.
(show "missing module"
      (handler-case (require 'no-such-module)
        (file-error (e) (condition-message e))))
(show "bad module name"
      (handler-case (require 42) (type-error (e) (condition-message e))))

;; A script named like a module (modules/optim.lisp) that requires it gets the library's.
(load "modules/optim.lisp")
(show "a script named optim.lisp requires the library's optim" *script-named-optim*)
