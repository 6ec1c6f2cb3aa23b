// SPDX-License-Identifier: Apache-2.0
// The source map: names and texts of everything read, for error locations and carets.
#include "support/span.h"

namespace tl {

std::uint32_t SourceMap::add(std::string name, std::string text, std::uint32_t first_line) {
  entries_.push_back(Entry{std::move(name), std::move(text), first_line, false});
  return static_cast<std::uint32_t>(entries_.size() - 1);
}

void SourceMap::set_library(std::uint32_t file) {
  if (file < entries_.size()) entries_[file].library = true;
}

bool SourceMap::is_library(std::uint32_t file) const {
  return file < entries_.size() && entries_[file].library;
}

std::uint32_t SourceMap::first_line(std::uint32_t file) const {
  return file < entries_.size() ? entries_[file].first_line : 1;
}

const std::string& SourceMap::name(std::uint32_t file) const {
  return entries_.at(file < entries_.size() ? file : 0).name;
}

std::string SourceMap::line_text(std::uint32_t file, std::uint32_t line) const {
  if (file >= entries_.size() || line < entries_[file].first_line) return "";
  const std::string& text = entries_[file].text;
  size_t pos = 0;
  for (std::uint32_t l = entries_[file].first_line; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

SourceLocation SourceMap::location(Span span) const {
  SourceLocation loc;
  if (!span.valid()) return loc;
  loc.file = name(span.file);
  loc.line = static_cast<int>(span.line);
  loc.column = static_cast<int>(span.col);
  loc.length = static_cast<int>(span.len);
  return loc;
}

void SourceMap::forget_text(std::uint32_t file) {
  // clear() would keep the text's buffer; swapping with an empty string frees it.
  if (file < entries_.size()) std::string().swap(entries_[file].text);
}

}  // namespace tl
