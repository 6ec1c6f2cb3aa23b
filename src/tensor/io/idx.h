// SPDX-License-Identifier: Apache-2.0
// The IDX format of MNIST and Fashion-MNIST (plain or gzip-compressed, as Debian ships them):
// two zero bytes, a type code, the number of dimensions, the sizes as big-endian u32, then
// the elements, big-endian.
#pragma once

#include "tensor/io/file.h"

namespace tl::tensor::io {

// The array in the IDX file ctx.path (gzip-compressed or not). A truncated, damaged or
// malformed file throws a file-error; an unknown element type a dtype-error.
Array read_idx(const FileCtx& ctx);

}  // namespace tl::tensor::io
