// SPDX-License-Identifier: Apache-2.0
// load-csv on arbitrary bytes. The first byte picks the options (dtype, header, delimiter,
// lines skipped); the rest is the file, plain or gzip-compressed.
#include "loader_target.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kDTypes[] = {"f32", "f64", "i32", "i64", "u8", "i8", "bool", "f16"};
  const unsigned opts = data[0];
  std::string form = "(let ((r (load-csv ~a :dtype '" + std::string(kDTypes[opts & 7]) +
                     ((opts & 8) ? " :header t" : "") + ((opts & 16) ? " :delimiter \";\"" : "") +
                     " :skip " + std::to_string((opts >> 5) & 3) + ")))" +
                     " (let ((x (if (consp r) (car r) r)))"
                     "   (list (shape x) (to-list (sum (cast x 'f64))))))";
  tl::fuzz::load_through_lisp(data + 1, size - 1, ".csv", form);
  return 0;
}
