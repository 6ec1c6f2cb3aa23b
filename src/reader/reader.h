// SPDX-License-Identifier: Apache-2.0
// The S-expression reader. It reads one form at a time from a text and reports whether a form
// was complete, the text ended inside a form (so a REPL can ask for more), or it was malformed
// (a tl::Error of phase "read" with the span of the problem).
#pragma once

#include <string_view>

#include "eval/interp.h"

namespace tl::reader {

enum class ReadStatus { Form, End, NeedsMore };

class Reader {
 public:
  // `file` is the SourceMap id of `text`; spans of every form point into it.
  Reader(eval::Interp& interp, std::uint32_t file, std::string_view text);
  Reader(eval::Interp& interp, std::uint32_t file, std::string_view text, std::uint32_t first_line);
  // Reads the next form into `out` (and its span into `span`). End: only whitespace and
  // comments remain. NeedsMore: the text ends inside a form. Throws tl::Error on bad syntax.
  ReadStatus next(eval::Value& out, Span& span);
  // Offset just after the last complete form.
  std::size_t offset() const { return pos_; }
  // After NeedsMore: what is left open and where it starts (for an end-of-input error).
  Span incomplete_span() const { return incomplete_.open; }
  const char* incomplete_message() const { return incomplete_.what; }

 private:
  struct Incomplete {
    Span open;         // where the unfinished construct started
    const char* what;  // what is unfinished, for the error at the end of a file
    bool paren = false;
  };
  Incomplete incomplete_{Span{}, "", false};
  eval::Value read_form(Span& span);
  eval::Value read_list(Span open, char close);
  eval::Value read_string(Span open);
  eval::Value read_atom(Span start);
  eval::Value read_dispatch(Span start);
  eval::Value wrap(eval::Symbol* head, Span span, Span inner_span, eval::Value inner);
  void skip_space();
  Span here(std::uint32_t len = 1) const;
  [[noreturn]] void fail(Span span, std::string message);
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool at_end() const { return pos_ >= text_.size(); }
  // Lets Ctrl-C stop the reading of a huge text (issue 19); cheap enough to call per character.
  void poll() {
    if ((++polls_ & 0xffff) == 0) interp_.check_interrupt(0x10000);
  }
  void advance();

  eval::Interp& interp_;
  std::uint32_t file_;
  std::string_view text_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t col_ = 1;
  std::size_t polls_ = 0;
};

// Parses a number token ("12", "-2.", "1e-3", ".5"); false if it is not one. Sets
// `overflow` for an integer that does not fit in 64 bits.
bool parse_number(std::string_view token, eval::Value& out, bool& overflow);

}  // namespace tl::reader
