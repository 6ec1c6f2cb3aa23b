// SPDX-License-Identifier: Apache-2.0
// tl::Error: the one exception type that TensorLisp raises, inside the core and to hosts.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace tl {

namespace detail {
struct Payload;  // the Lisp condition object that travels with an error; internal
}

// A source location: file name, 1-based line and column, and the length of the span.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  int length = 0;
  bool valid() const { return line > 0; }
};

// Why an error happened. User: the program, its input or the machine is at fault.
// Internal: an invariant of TensorLisp broke (a bug; the message names the C++ file and line).
enum class ErrorKind { User, Internal };

// An error with everything needed to show it: the phase that raised it (read, eval, shape,
// ...), the condition type (`type-error`, `unbound-variable`, ...), the message, where it
// happened, the offending source line and a short Lisp backtrace. what() returns the whole
// report formatted as `file:line:col: <phase> error: <message>` plus source line, caret and
// backtrace.
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string phase, std::string type, std::string message);

  ErrorKind kind() const { return kind_; }
  const std::string& phase() const { return phase_; }
  // The Lisp condition type, e.g. "type-error", "unbound-variable", "simple-error".
  const std::string& type() const { return type_; }
  // The message alone, with no location or backtrace.
  const std::string& message() const { return message_; }
  const SourceLocation& location() const { return location_; }
  // The text of the source line the location points into ("" when unknown).
  const std::string& source_line() const { return source_line_; }
  // Innermost call first, e.g. "(fib 3) at fib.lisp:2:5".
  const std::vector<std::string>& backtrace() const { return backtrace_; }
  // The full report, formatted as described above.
  const char* what() const noexcept override;

  // Setters used by the core while the error travels outwards.
  void set_location(SourceLocation loc, std::string source_line);
  void set_backtrace(std::vector<std::string> frames);
  void set_message(std::string message);
  bool has_location() const { return location_.valid(); }
  const std::shared_ptr<detail::Payload>& payload() const { return payload_; }
  void set_payload(std::shared_ptr<detail::Payload> payload) { payload_ = std::move(payload); }

 private:
  void format() const;
  ErrorKind kind_;
  std::string phase_;
  std::string type_;
  std::string message_;
  SourceLocation location_;
  std::string source_line_;
  std::vector<std::string> backtrace_;
  mutable std::string what_;        // the report, built on first use
  mutable bool formatted_ = false;
  std::shared_ptr<detail::Payload> payload_;
};

}  // namespace tl
