// SPDX-License-Identifier: Apache-2.0
// load-npy on arbitrary bytes: the header parser, dtypes, byte order, Fortran order, sizes.
#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::load_through_lisp(data, size, ".npy",
                              "(let ((x (load-npy ~a)))"
                              "  (list (shape x) (dtype x) (to-list (sum (cast x 'f64)))))");
  return 0;
}
