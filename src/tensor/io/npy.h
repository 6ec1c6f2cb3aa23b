// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files: writes format 1.0, reads 1.0 to 3.0, with a strict parser for the
// Python-literal header.
#pragma once

#include "tensor/io/file.h"

namespace tl::tensor::io {

// The array in the .npy file ctx.path. Big-endian data is converted and Fortran-order data
// rearranged into row-major order. A missing, unreadable, truncated or malformed file throws
// a file-error; a dtype TensorLisp lacks (or a structured one) a dtype-error or file-error.
Array read_npy(const FileCtx& ctx);

// Whether NPY has a type for dtype t (every dtype but bf16).
bool npy_supports(DType t);

// Throws the dtype-error save-npy raises for a dtype NPY cannot hold (bf16); nothing else.
void check_npy_dtype(const FileCtx& ctx, DType t);

// Writes `array` to ctx.path as format 1.0 (2.0 when the header needs it), little-endian,
// row-major. A failed write removes the partial file and throws a file-error.
void write_npy(const FileCtx& ctx, const Array& array);

}  // namespace tl::tensor::io
