;;; SPDX-License-Identifier: Apache-2.0
;;; A script that shares its name with a library module (modules.lisp loads it): its require
;;; means the library's optim, not this file again.
(require 'optim)
(defvar *script-named-optim* (fboundp 'optim:make))
