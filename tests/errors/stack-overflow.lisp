;;; SPDX-License-Identifier: Apache-2.0
;;; Unbounded non-tail recursion: a stack-overflow error at the recursive call, repeated frames compressed.
;; expect: stack-overflow.lisp:8:8: eval error: stack overflow (recursion too deep;
;; expect: in runaway called at stack-overflow.lisp:8:8 (
;; expect: in runaway called at stack-overflow.lisp:10:1

(defun runaway (n)
  (+ 1 (runaway (+ n 1))))

(runaway 0)
