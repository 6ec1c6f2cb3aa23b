// SPDX-License-Identifier: Apache-2.0
// Tensor files: NumPy .npy and safetensors, loaded into tensors and saved from them.
#pragma once

#include "eval/interp.h"

namespace tl::tensor {

// Registers load-npy, save-npy, load-safetensors, save-safetensors, safetensors-metadata and
// safetensors-header.
// A missing, unreadable or malformed file raises file-error; an element type that the other
// side cannot represent raises dtype-error. Both name the function, the path and the problem.
void register_file_builtins(eval::Interp& in);

}  // namespace tl::tensor
