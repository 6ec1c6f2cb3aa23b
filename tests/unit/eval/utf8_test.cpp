// SPDX-License-Identifier: Apache-2.0
// Unit tests for the strings' UTF-8 walks: utf8_length and utf8_offset step over ASCII eight
// bytes at a time, and must count exactly as decoding one code point at a time does.
#include "eval/utf8.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

namespace {

using tl::eval::next_utf8;

std::size_t length_by_code_point(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size(); ++n) next_utf8(text, pos);
  return n;
}

std::size_t offset_by_code_point(const std::string& text, std::size_t index) {
  std::size_t pos = 0;
  for (; index > 0 && pos < text.size(); --index) next_utf8(text, pos);
  return index == 0 ? pos : std::string::npos;
}

}  // namespace

TEST_CASE("utf8: length and offsets match a code point at a time walk", "[eval][utf8]") {
  // Pieces: ASCII, two-, three- and four-byte characters, a lone continuation byte, a
  // truncated sequence and an invalid lead byte (each decodes as one code point per byte).
  const char* pieces[] = {"a",    "Z",        "0",    " ",        "\xC3\xA9",        "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                          "\x80", "\xE2\x82", "\xFF", "abcdefgh", "0123456789abcdef"};
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    int count = static_cast<int>(rng() % 12);
    for (int i = 0; i < count; ++i) text += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
    INFO("text of " << text.size() << " bytes, trial " << trial);
    std::size_t n = length_by_code_point(text);
    REQUIRE(tl::eval::utf8_length(text) == n);
    for (std::size_t index = 0; index <= n + 9; ++index) {
      INFO("index " << index);
      REQUIRE(tl::eval::utf8_offset(text, index) == offset_by_code_point(text, index));
    }
  }
  CHECK(tl::eval::utf8_length("") == 0);
  CHECK(tl::eval::utf8_length("abcdefgh\xC3\xA9") == 9);
  CHECK(tl::eval::utf8_offset("abcdefgh\xC3\xA9xyz", 9) == 10);
  CHECK(tl::eval::utf8_offset("abcdefgh", 8) == 8);
  CHECK(tl::eval::utf8_offset("abcdefgh", 9) == std::string::npos);
}
