// SPDX-License-Identifier: Apache-2.0
// What the loader fuzz targets share: the input is written to a file and a Lisp form loads it
// (and reads the result's shape and a sum of its elements, so lazy parts run too). Errors
// (tl::Error: a malformed file is a file-error or dtype-error) are expected; a crash, leak,
// hang or sanitizer report is a bug (issue 19).
#pragma once
#include "fuzz_common.h"

#include <string>

namespace tl::fuzz {

// Runs FORM with every ~a in it replaced by the path of a file holding DATA (named with
// SUFFIX), catching tl::Error.
inline void load_through_lisp(const std::uint8_t* data, std::size_t size, const std::string& suffix,
                              const std::string& form) {
  InputScope scope;
  const std::string path = write_temp(data, size, suffix);
  std::string text;
  for (std::size_t i = 0; i < form.size(); ++i) {
    if (form.compare(i, 2, "~a") == 0) {
      text += "\"" + path + "\"";
      ++i;
    } else {
      text += form[i];
    }
  }
  try {
    interpreter().eval(text, "<fuzz>");
  } catch (const tl::Error&) {
  }
}

}  // namespace tl::fuzz
