// SPDX-License-Identifier: Apache-2.0
// nn:load of arbitrary bytes into a small model with an optimizer: a checkpoint that is not
// one, has the wrong names, shapes or dtypes, or is damaged must be an error, and the model
// must stay usable afterwards.
#include "loader_target.h"

namespace {

bool define_model() {
  tl::fuzz::interpreter().eval(
      "(require 'nn) (require 'optim)"
      "(defvar *fuzz-model* (nn:sequential (nn:linear 3 2) (nn:linear 2 1)))"
      "(defvar *fuzz-opt* (optim:adam (parameters *fuzz-model*) :lr 0.01))",
      "<fuzz-setup>");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool ready = define_model();
  (void)ready;
  tl::fuzz::load_through_lisp(data, size, ".safetensors",
                              "(unwind-protect (nn:load *fuzz-model* ~a :optimizer *fuzz-opt*)"
                              "  (to-list (funcall *fuzz-model* (ones '(1 3)))))");
  return 0;
}
