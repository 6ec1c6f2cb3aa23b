;;; SPDX-License-Identifier: Apache-2.0
;;; An integer literal too large for 64 bits is a read error, not a silent wrap-around.
;; expect: read-integer-overflow.lisp:6:15: read error: integer 9223372036854775808 does not fit in 64 bits
;; expect: ^^^^^^^^^^^^^^^^^^^

(defvar *big* 9223372036854775808)
