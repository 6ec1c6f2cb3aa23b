// SPDX-License-Identifier: Apache-2.0
// Internal errors (check.h).
#include "support/check.h"

#include <cstring>

#include "tensorlisp/error.hpp"

namespace tl {

void internal_error(const char* file, int line, const char* condition, const std::string& message) {
  // The path from src/ on, whatever folder the build ran in.
  const char* src = std::strstr(file, "src/");
  std::string where = std::string(src != nullptr ? src : file) + ":" + std::to_string(line);
  if (condition != nullptr) where += std::string(", ") + condition + " failed";
  throw Error(ErrorKind::Internal, "internal", "internal-error",
              message + " (a bug in TensorLisp at " + where + "; please report it)");
}

}  // namespace tl
