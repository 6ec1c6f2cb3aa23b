;;; SPDX-License-Identifier: Apache-2.0
;;; Devices: backends are described by runtime files (defbackend) and selected with
;;; use-backend. `ref`, the reference executor, is always there.

(defvar *backends* nil
  "The known backends: an alist of (name . properties), filled by defbackend.
  (listp *backends*)  ; => t")

(defmacro defbackend (name &rest properties)
  "(defbackend NAME &key library target options limits search doc) Describes backend NAME for the
JIT: LIBRARY is the shared library implementing the backend ABI (\"builtin\" for one linked into
TensorLisp), TARGET the code it runs (:host, :nvptx, :amdgpu), OPTIONS the string of key=value
words its library is started with (before the user's), LIMITS the device's limits and SEARCH
the kernel shapes the tuner tries (both property lists; see use-backend). The JIT reads
:max-threads-per-block and :shared-memory-per-block from LIMITS, and :block (threads per
block) and :group (threads per thread group of a reduce, 0 for none) from SEARCH.
  (progn (defbackend doc-ex-backend :library \"builtin\" :target :host)
         (prog1 (getf (cdr (assoc 'doc-ex-backend *backends*)) :target)
           (setq *backends* (remove 'doc-ex-backend *backends* :key #'car))))  ; => :host"
  `(progn
     (setq *backends* (cons (cons ',name ',properties)
                            (remove-if (lambda (b) (eq (car b) ',name)) *backends*)))
     ',name))

(defun use-backend (name &key (options (or (getenv "TENSORLISP_DEVICE_OPTIONS") ""))
                             (tune (member (getenv "TENSORLISP_TUNE") '("1" "t" "yes") :test #'equal)))
  "(use-backend NAME &key options tune) Realizes tensors on backend NAME from now on: cpu, ref (the
reference executor) or one with a runtime file NAME.lisp on TENSORLISP_PATH. OPTIONS is a string
of key=value words for the backend, e.g. \"threads=1\" (default: TENSORLISP_DEVICE_OPTIONS),
after the runtime file's own :options. With TUNE true (default: TENSORLISP_TUNE=1), the first run
of each GPU kernel times the launch shapes of the runtime file's :search (block and thread-group
sizes) and keeps the fastest. Returns NAME.
  (let ((old (device))) (prog1 (use-backend 'ref) (use-backend old)))  ; => ref"
  (let ((name (if (stringp name) (intern (string-downcase name)) name)))
    (unless (symbolp name)
      (error 'type-error "use-backend: expected a backend name, got ~s" name))
    (if (eq name 'ref)
        (%use-backend "ref" "" "")
        (let ((desc (cdr (assoc name *backends*))))
          (unless desc
            (let ((file (%find-backend-file (symbol-name name))))
              (when file (load file))
              (setq desc (cdr (assoc name *backends*)))))
          (unless desc
            (error 'device-error "use-backend: no backend named ~a (known: ~a; a backend needs a runtime file ~a.lisp on TENSORLISP_PATH)"
                   name (string-join (mapcar #'symbol-name (cons 'ref (mapcar #'car *backends*))) " ") name))
          (handler-case
              (%use-backend (symbol-name name) (getf desc :library)
                            (string-trim (concat (or (getf desc :options) "") " " options))
                            (getf desc :limits) (getf desc :search) tune)
            (device-error (e)
              ;; Say what can be used instead.
              (error 'device-error "~a; devices available here: ~a" (condition-message e)
                     (string-join (remove-duplicates (list "ref" "cpu" (symbol-name (device))) :from-end t
                                                     :test #'equal)
                                  ", "))))))
    name))

(defun to-device (x &optional (target (device)))
  "(to-device X [DEVICE]) Realizes X and puts its data in DEVICE's own memory (a GPU's), where
kernels read it from then on without copying; returns X. Tensors are realized on the current
device, so DEVICE must be it (the default); on the CPU and ref this only realizes X. Any tensor
the current device needs is copied there by itself: to-device is for moving data ahead of time.
  (to-list (to-device (tensor '(1 2))))  ; => (1 2)"
  (let ((target (if (stringp target) (intern (string-downcase target)) target)))
    (unless (eq target (device))
      (error 'device-error "to-device: tensors are realized on the current device, ~a, not ~a: (use-backend '~a) first"
             (device) target target))
    (%to-device x)))
