// SPDX-License-Identifier: Apache-2.0
// json-read on arbitrary bytes (issue 21). Malformed text is a read-error; a crash, hang,
// leak or sanitizer report is a bug, and so is a value that json-write cannot write, or whose
// text does not read back to a value written as the same text.
#include <string>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tl::fuzz::write_temp(data, size, ".json");
  const std::string form = "(let ((v (handler-case (json-read-file \"" + path +
                           "\" :max-depth 64)"
                           "           (read-error () :unreadable))))"
                           "  (or (eq v :unreadable)"
                           "      (let ((text (json-write v)))"
                           "        (equal (json-write (json-read text :max-depth 64)) text))))";
  bool same = true;
  try {
    same = tl::fuzz::interpreter().eval(form, "<fuzz>").truthy();
  } catch (const tl::Error& e) {
    if (e.kind() == tl::ErrorKind::Internal) __builtin_trap();
    same = false;  // json-write refused a value json-read made
  }
  if (!same) __builtin_trap();
  return 0;
}
