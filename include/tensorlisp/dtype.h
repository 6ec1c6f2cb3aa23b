/* SPDX-License-Identifier: Apache-2.0 */
/* Element types as the C interfaces name them: the backend ABI (include/tensorlisp/backend.h)
 * and the embedding C API (include/tensorlisp/tensorlisp.h). The numbers are part of both
 * ABIs: they never change, and new types are added at the end. */
#ifndef TENSORLISP_DTYPE_H
#define TENSORLISP_DTYPE_H

typedef enum tl_dtype_t {
  TL_DTYPE_BOOL = 0, /* one byte, 0 or 1 */
  TL_DTYPE_U8,
  TL_DTYPE_I8,
  TL_DTYPE_I16,
  TL_DTYPE_U32,
  TL_DTYPE_I32,
  TL_DTYPE_I64,
  TL_DTYPE_F16,  /* IEEE half: uint16_t bit patterns */
  TL_DTYPE_BF16, /* bfloat16: uint16_t bit patterns */
  TL_DTYPE_F32,
  TL_DTYPE_F64,
  /* Never dtypes: they make every 32-bit value one the enum can hold, so that C++ code given
   * any int by a C caller (and checking it) has defined behaviour. */
  TL_DTYPE_INVALID_ = -1,
  TL_DTYPE_MAX_ENUM_ = 0x7fffffff
} tl_dtype_t;

#endif /* TENSORLISP_DTYPE_H */
