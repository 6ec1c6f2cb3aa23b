// SPDX-License-Identifier: Apache-2.0
// tl::Error: construction and the formatted report that what() returns.
#include "tensorlisp/error.hpp"

namespace tl {

Error::Error(ErrorKind kind, std::string phase, std::string type, std::string message)
    : kind_(kind), phase_(std::move(phase)), type_(std::move(type)), message_(std::move(message)) {
  format();
}

const char* Error::what() const noexcept { return what_.c_str(); }

void Error::set_location(SourceLocation loc, std::string source_line) {
  location_ = std::move(loc);
  source_line_ = std::move(source_line);
  format();
}

void Error::set_backtrace(std::vector<std::string> frames) {
  backtrace_ = std::move(frames);
  format();
}

void Error::set_message(std::string message) {
  message_ = std::move(message);
  format();
}

void Error::format() {
  std::string out;
  if (location_.valid()) {
    out += location_.file + ":" + std::to_string(location_.line) + ":" +
           std::to_string(location_.column) + ": ";
  }
  out += phase_;
  out += kind_ == ErrorKind::Internal ? " internal error: " : " error: ";
  out += message_;
  if (location_.valid() && !source_line_.empty()) {
    out += "\n  " + source_line_ + "\n  ";
    int col = location_.column > 0 ? location_.column - 1 : 0;
    for (int i = 0; i < col && i < static_cast<int>(source_line_.size()); ++i) {
      out += source_line_[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
    }
    int len = location_.length > 0 ? location_.length : 1;
    int room = static_cast<int>(source_line_.size()) - col;
    if (room > 0 && len > room) len = room;
    out += std::string(static_cast<size_t>(len), '^');
  }
  if (!backtrace_.empty()) {
    out += "\nbacktrace:";
    for (const auto& frame : backtrace_) out += "\n  " + frame;
  }
  what_ = std::move(out);
}

}  // namespace tl
