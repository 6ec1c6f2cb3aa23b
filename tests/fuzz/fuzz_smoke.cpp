// SPDX-License-Identifier: Apache-2.0
// The smallest target: evaluates an integer expression built from the input's bytes, to show
// the shape of a target and keep the fuzz harness itself tested. The reader, evaluator and
// loaders have targets of their own.
#include "fuzz_common.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::fuzz::InputScope scope;
  std::string form = "(+ 0";
  for (std::size_t i = 0; i < size && i < 64; ++i) form += " " + std::to_string(data[i]);
  form += ")";
  try {
    tl::fuzz::interpreter().eval(form, "<fuzz>");
  } catch (const tl::Error&) {
  }
  return 0;
}
