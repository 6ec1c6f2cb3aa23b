// SPDX-License-Identifier: Apache-2.0
// Source spans and the table of source texts they point into.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/condition_error.h"
#include "tensorlisp/error.hpp"

namespace tl {

// A region of source text: file id (an index into a SourceMap), 1-based line and column.
struct Span {
  std::uint32_t file = 0;
  std::uint32_t line = 0;
  std::uint32_t col = 0;
  std::uint32_t len = 0;
  bool valid() const { return line != 0; }
};

// Every source text the interpreter has read, so errors can quote the offending line.
class SourceMap {
 public:
  // Registers a text under a name and returns its file id. `first_line` is the line number
  // of the text's first line (a REPL numbers its inputs as one continuing text).
  std::uint32_t add(std::string name, std::string text, std::uint32_t first_line = 1);
  // Marks a text as library code (prelude, stdlib): errors raised inside it are located at
  // the user's code that called into it.
  void set_library(std::uint32_t file);
  bool is_library(std::uint32_t file) const;
  std::uint32_t first_line(std::uint32_t file) const;
  const std::string& name(std::uint32_t file) const;
  std::string line_text(std::uint32_t file, std::uint32_t line) const;
  SourceLocation location(Span span) const;
  // Drops the text of an entry (kept: its name) to bound memory at long REPL sessions.
  void forget_text(std::uint32_t file);
  // How many entries there are: the next text added gets this file id.
  std::uint32_t size() const { return static_cast<std::uint32_t>(entries_.size()); }

 private:
  struct Entry {
    std::string name;
    std::string text;
    std::uint32_t first_line = 1;
    bool library = false;
  };
  std::vector<Entry> entries_{Entry{"<unknown>", "", 1}};
};

}  // namespace tl
