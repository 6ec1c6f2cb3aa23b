;;; SPDX-License-Identifier: Apache-2.0
;;; An unknown dtype name.
;; expect: tensor-dtype.lisp:5:1: dtype error: zeros: unknown dtype f128 (expected one of f32 f64 f16 bf16 i8 i16 i32 i64 u8 u32 bool c64 c128 q8_0 q4_0)

(zeros '(2) :dtype 'f128)
