// SPDX-License-Identifier: Apache-2.0
// PNG images: writes 8-bit grayscale, RGB or RGBA (zlib-compressed, no filtering).
#pragma once

#include "tensor/io/file.h"

namespace tl::tensor::io {

// Writes `pixels` (u8 (height width [channels]), channels 1, 3 or 4) to ctx.path as a PNG.
void write_png(const FileCtx& ctx, const Array& pixels);

}  // namespace tl::tensor::io
