// SPDX-License-Identifier: Apache-2.0
// tl::Error: construction and the formatted report that what() returns.
#include "tensorlisp/error.hpp"

namespace tl {

Error::Error(ErrorKind kind, std::string phase, std::string type, std::string message)
    : kind_(kind), phase_(std::move(phase)), type_(std::move(type)), message_(std::move(message)) {}

const char* Error::what() const noexcept {
  if (!formatted_) format();
  return what_.c_str();
}

void Error::set_location(SourceLocation loc, std::string source_line) {
  location_ = std::move(loc);
  source_line_ = std::move(source_line);
  formatted_ = false;
}

void Error::set_backtrace(std::vector<std::string> frames) {
  backtrace_ = std::move(frames);
  formatted_ = false;
}

void Error::set_message(std::string message) {
  message_ = std::move(message);
  formatted_ = false;
}

void Error::format() const {
  std::string out;
  if (location_.valid()) {
    out += location_.file + ":" + std::to_string(location_.line) + ":" +
           std::to_string(location_.column) + ": ";
  }
  out += phase_;
  out += kind_ == ErrorKind::Internal ? " internal error: " : " error: ";
  out += message_;
  if (location_.valid() && !source_line_.empty()) {
    // Show at most kWidth characters of the line, around the column.
    constexpr int kWidth = 100;
    std::string line = source_line_;
    int col = location_.column > 0 ? location_.column - 1 : 0;
    if (col > static_cast<int>(line.size())) col = static_cast<int>(line.size());
    if (static_cast<int>(line.size()) > kWidth) {
      int start = col > kWidth / 2 ? col - kWidth / 2 : 0;
      bool cut_left = start > 0;
      bool cut_right = start + kWidth < static_cast<int>(line.size());
      line = line.substr(static_cast<size_t>(start), static_cast<size_t>(kWidth));
      col -= start;
      if (cut_left) {
        line.insert(0, "...");
        col += 3;
      }
      if (cut_right) line += "...";
    }
    out += "\n  " + line + "\n  ";
    for (int i = 0; i < col && i < static_cast<int>(line.size()); ++i) {
      out += line[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
    }
    int len = location_.length > 0 ? location_.length : 1;
    int room = static_cast<int>(line.size()) - col;
    if (room > 0 && len > room) len = room;
    if (len > kWidth) len = kWidth;
    out += std::string(static_cast<size_t>(len), '^');
  }
  if (!backtrace_.empty()) {
    out += "\nbacktrace:";
    for (const auto& frame : backtrace_) out += "\n  " + frame;
  }
  what_ = std::move(out);
  formatted_ = true;
}

}  // namespace tl
