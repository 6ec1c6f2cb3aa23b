// SPDX-License-Identifier: Apache-2.0
// gguf-header and load-gguf on arbitrary bytes: the metadata of every type, the tensor
// table, alignment, bounds and overlap checks, and Q8_0/Q4_0 dequantization.
#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::load_through_lisp(data, size, ".gguf",
                              "(gguf-header ~a)"
                              "(dolist (e (load-gguf ~a))"
                              "  (shape (cdr e))"
                              "  (to-list (sum (cast (cdr e) 'f64))))");
  return 0;
}
