// SPDX-License-Identifier: Apache-2.0
// Internal invariants. A broken one is a bug in TensorLisp, never the user's fault: it raises
// tl::Error of kind Internal (Lisp condition internal-error) naming the C++ file and line, so
// hosts and fuzzers can tell it from a user error.
//   TL_CHECK(slot < size, "loop_var: no loop " + std::to_string(loop));
//   TL_UNREACHABLE("lower: unexpected op " + name);
// The message is built only when the check fails.
#pragma once

#include <string>

namespace tl {

[[noreturn]] void internal_error(const char* file, int line, const char* condition, const std::string& message);

}  // namespace tl

#define TL_CHECK(cond, message) ((cond) ? static_cast<void>(0) : ::tl::internal_error(__FILE__, __LINE__, #cond, (message)))
#define TL_UNREACHABLE(message) ::tl::internal_error(__FILE__, __LINE__, nullptr, (message))
