// SPDX-License-Identifier: Apache-2.0
// load-idx on arbitrary bytes, plain or gzip-compressed (the seeds hold both): the header,
// sizes, and the gzip stream with its CRC and length checks.
#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::load_through_lisp(data, size, ".idx",
                              "(let ((x (load-idx ~a)))"
                              "  (list (shape x) (to-list (sum (cast x 'f64)))))");
  return 0;
}
