// SPDX-License-Identifier: Apache-2.0
// Where the library's messages go: debug output (TENSORLISP_DEBUG), warnings, progress. No
// library code prints; it calls tl::log, which hands each message to the sink the host set
// (tlisp: standard error; an embedding program: tl::Interpreter::set_log). With no sink set,
// messages go to standard error, so a program that sets nothing still sees warnings.
#pragma once

#include <functional>
#include <string_view>

namespace tl {

// Receives whole messages, each ending in a newline. Also declared, for hosts, in
// include/tensorlisp/tensorlisp.hpp.
using LogSink = std::function<void(std::string_view)>;

// Sets the process's sink (an empty function: standard error); returns the one it replaces.
LogSink set_log_sink(LogSink sink);

// Formats like printf and hands the text to the sink.
[[gnu::format(printf, 1, 2)]] void log(const char* format, ...);

}  // namespace tl
