// SPDX-License-Identifier: Apache-2.0
// An exception that stages below the evaluator (graph, runtime) throw for user errors; the
// evaluator turns it into a Lisp condition of `type` located at the current call.
#pragma once

#include <stdexcept>
#include <string>

namespace tl {

struct ConditionError : std::runtime_error {
  std::string type;  // "shape-error", "dtype-error", "index-error", "device-error", ...
  ConditionError(std::string type_, const std::string& message)
      : std::runtime_error(message), type(std::move(type_)) {}
};

}  // namespace tl
