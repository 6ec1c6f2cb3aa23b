// SPDX-License-Identifier: Apache-2.0
// load-wav on arbitrary bytes: the RIFF chunk walk, the format chunk (plain and extensible),
// every sample encoding, odd chunk padding, sizes past the end of the file.
#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::load_through_lisp(data, size, ".wav",
                              "(let ((w (load-wav ~a)))"
                              "  (list (shape (first w)) (second w) (to-list (sum (cast (first w) 'f64)))))");
  return 0;
}
