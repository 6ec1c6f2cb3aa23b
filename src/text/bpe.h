// SPDX-License-Identifier: Apache-2.0
// Byte-pair encoding: a vocabulary, a merge table ranked by priority, and the merge loop that
// turns one pre-tokenized word into token ids (bpe.cpp). Knows nothing of Lisp.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tl::text {

// A tokenizer failure: a bad vocabulary or configuration, or text the model cannot encode.
// `type` is the Lisp condition the builtins raise ("error", "file-error", "read-error").
struct TokenizerError : std::runtime_error {
  TokenizerError(std::string type_name, const std::string& message)
      : std::runtime_error(message), type(std::move(type_name)) {}
  std::string type;
};

// GPT-2's reversible map from bytes to printable characters (bytes_to_unicode in its
// encoder.py): byte b becomes the UTF-8 text byte_chars()[b].
const std::array<std::string, 256>& byte_chars();
// The inverse, for code points below 324; -1 for characters the map does not produce.
int char_byte(std::uint32_t code_point);

// Decodes the UTF-8 character at s[i], advancing i; an invalid byte is returned as itself
// (0x80..0xff) and skipped.
std::uint32_t next_code_point(std::string_view s, std::size_t& i);
// Appends code point `cp` as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp);
// The length (1 to 4) of the UTF-8 sequence at s[i], or 0 when the bytes there are not valid
// UTF-8 (truncated, an overlong form, a surrogate, past U+10FFFF).
std::size_t valid_utf8_length(std::string_view s, std::size_t i);
// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD, as Rust's from_utf8_lossy.
std::string utf8_lossy(std::string_view bytes);

class Bpe {
 public:
  // Adds token `text` with `id` (a later duplicate of the text keeps the first id).
  void add_token(const std::string& text, std::int32_t id);
  // Adds the merge (a, b) with the next rank; a, b and a+b must be tokens.
  void add_merge(const std::string& a, const std::string& b);
  // Call once every token and merge is in: resolves unk and the <0xXX> byte tokens.
  void finish(const std::string& unk_token, bool byte_fallback, bool ignore_merges, bool fuse_unk);

  // Appends the ids of `word` (one pre-tokenized piece) to `out`.
  void encode_word(std::string_view word, std::vector<std::int32_t>& out);

  std::int32_t find(std::string_view text) const;  // -1 when absent
  const std::vector<std::string>& tokens() const { return tokens_; }
  std::size_t merge_count() const { return merges_.size(); }

 private:
  struct Merge {
    std::int32_t rank;
    std::int32_t id;  // the merged token
  };
  static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
           static_cast<std::uint32_t>(b);
  }
  void merge_symbols(std::vector<std::int32_t>& ids);

  std::vector<std::string> tokens_;  // id -> text ("" for ids the model does not use)
  std::unordered_map<std::string, std::int32_t> ids_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::int32_t unk_ = -1;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  bool fuse_unk_ = false;
  std::array<std::int32_t, 256> byte_ids_{};
  std::unordered_map<std::string, std::vector<std::int32_t>> cache_;
};

}  // namespace tl::text
