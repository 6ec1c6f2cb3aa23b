// SPDX-License-Identifier: Apache-2.0
// load-safetensors, safetensors-header and safetensors-metadata on arbitrary bytes: the JSON header, the entries,
// offsets and overlap checks.
#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::load_through_lisp(data, size, ".safetensors",
                              "(safetensors-metadata ~a)"
                              "(safetensors-header ~a)"
                              "(dolist (e (load-safetensors ~a))"
                              "  (shape (cdr e))"
                              "  (to-list (sum (cast (cdr e) 'f64))))");
  return 0;
}
