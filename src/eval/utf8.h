// SPDX-License-Identifier: Apache-2.0
// UTF-8 for characters and strings: strings hold UTF-8 text, characters are code points.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tl::eval {

// Appends the UTF-8 encoding of code point CP.
inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the code point at byte POS of TEXT and advances POS past it. A byte that does not
// start a well-formed sequence decodes as itself (so byte strings still index one byte each).
inline std::uint32_t next_utf8(std::string_view text, std::size_t& pos) {
  auto b0 = static_cast<unsigned char>(text[pos]);
  std::size_t extra = b0 >= 0xC2 && b0 < 0xE0 ? 1 : b0 >= 0xE0 && b0 < 0xF0 ? 2 : b0 >= 0xF0 && b0 < 0xF5 ? 3 : 0;
  if (extra == 0 || pos + extra >= text.size()) {
    ++pos;
    return b0;
  }
  std::uint32_t cp = b0 & (0x3Fu >> extra);
  for (std::size_t k = 1; k <= extra; ++k) {
    auto b = static_cast<unsigned char>(text[pos + k]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3Fu);
  }
  pos += extra + 1;
  return cp;
}

// Whether the 8 bytes of TEXT from POS exist and are all ASCII (8 code points, 1 byte each):
// the strings' length and index walks step over ASCII text a word at a time.
inline bool ascii8(std::string_view text, std::size_t pos) {
  if (text.size() - pos < 8) return false;
  std::uint64_t word;
  std::memcpy(&word, text.data() + pos, 8);
  return (word & 0x8080808080808080ull) == 0;
}

// The number of code points in TEXT (as next_utf8 counts them).
inline std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    if (ascii8(text, pos)) {
      pos += 8;
      n += 8;
    } else {
      next_utf8(text, pos);
      ++n;
    }
  }
  return n;
}

// The byte offset of code point INDEX in TEXT, or npos when TEXT has fewer code points.
inline std::size_t utf8_offset(std::string_view text, std::size_t index) {
  std::size_t pos = 0;
  while (index > 0 && pos < text.size()) {
    if (index >= 8 && ascii8(text, pos)) {
      pos += 8;
      index -= 8;
    } else {
      next_utf8(text, pos);
      --index;
    }
  }
  return index == 0 && pos <= text.size() ? pos : std::string_view::npos;
}

}  // namespace tl::eval
