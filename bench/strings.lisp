;;; SPDX-License-Identifier: Apache-2.0
;;; Building a large string from 200,000 formatted pieces, then splitting it again.
(let ((parts nil))
  (dotimes (i 200000)
    (push (format nil "item-~d" i) parts))
  (let ((text (string-join (reverse parts) ",")))
    (print (list (length text) (length (string-split text ","))))))
