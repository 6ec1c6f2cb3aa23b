// SPDX-License-Identifier: Apache-2.0
// Tensor files as Lisp builtins: NumPy .npy and safetensors loaded into tensors and saved from
// them, IDX and CSV loaded (builtins_files.cpp, over the readers and writers of tensor/io/).
#pragma once

#include "eval/interp.h"

namespace tl::tensor {

// Registers load-npy, save-npy, load-safetensors, save-safetensors, safetensors-metadata,
// safetensors-header, load-idx and load-csv.
// A missing, unreadable or malformed file raises file-error; an element type that the other
// side cannot represent raises dtype-error. Both name the function, the path and the problem.
void register_file_builtins(eval::Interp& in);

}  // namespace tl::tensor
