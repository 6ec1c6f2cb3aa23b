;;; SPDX-License-Identifier: Apache-2.0
;;; Issue 26: the backend conformance suite (tlisp test-backend, stdlib/conformance.lisp) finds a
;;; wrong backend. A rule that only the CPU backend runs makes neg the identity there; the report
;;; must fail neg, forward and backward, and pass what neg is not part of.
(require 'conformance)

(defoptimizer wrong-neg "A deliberate miscompilation: neg does nothing on the CPU."
  (neg ?x) :backend :cpu => ?x)

(defvar report nil)
(defvar failures
  (let ((path (format nil "~a/tl-conformance-~a.md" (or (getenv "TMPDIR") "/tmp") (get-internal-real-time))))
    (prog1 (conformance:report 'cpu :only "neg" :out path :quiet t)
      (setq report (read-file path))
      (delete-file path))))

(format t "failures found: ~a~%" (> failures 0))
(format t "the neg row fails: ~a~%"
        (let ((row (subseq report (search "| neg | primitive |" report))))
          (and (search "**FAIL** max error" (subseq row 0 (position #\Newline row))) t)))
(format t "and its gradient: ~a~%"
        (let ((row (subseq report (search "| neg | primitive |" report))))
          (and (search "**FAIL** f64: max error" (subseq row 0 (position #\Newline row))) t)))
(format t "integers too (i32): ~a~%" (and (search "| neg | primitive | **FAIL**" report) t))

;; Without the rule, the same cases pass.
(optimizer-disable 'wrong-neg)
(format t "failures without the rule: ~a~%" (conformance:report 'cpu :only "neg" :quiet t :out "/dev/null"))
