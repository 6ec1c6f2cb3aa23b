// SPDX-License-Identifier: Apache-2.0
// The BPE merge loop (Hugging Face tokenizers' algorithm: merge the lowest-ranked adjacent pair,
// the leftmost of equal ranks, until none is in the table), with a cache of whole words, plus
// GPT-2's byte-to-character map and small UTF-8 helpers.
#include "text/bpe.h"

#include <cstdio>
#include <queue>

namespace tl::text {

const std::array<std::string, 256>& byte_chars() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      // Printable Latin-1 bytes stand for themselves; the rest take code points from 256 on.
      bool printable =
          (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      append_utf8(t[static_cast<std::size_t>(b)], printable
                                                      ? static_cast<std::uint32_t>(b)
                                                      : 256u + static_cast<std::uint32_t>(extra++));
    }
    return t;
  }();
  return table;
}

int char_byte(std::uint32_t code_point) {
  static const std::array<int, 324> inverse = [] {
    std::array<int, 324> inv;
    inv.fill(-1);
    for (int b = 0; b < 256; ++b) {
      std::size_t i = 0;
      inv[next_code_point(byte_chars()[static_cast<std::size_t>(b)], i)] = b;
    }
    return inv;
  }();
  return code_point < inverse.size() ? inverse[code_point] : -1;
}

std::uint32_t next_code_point(std::string_view s, std::size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return c;
  }
  std::uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
  for (std::size_t k = 1; k < len; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) {
      ++i;
      return c;
    }
    cp = (cp << 6) | (cc & 0x3f);
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::size_t valid_utf8_length(std::string_view s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  std::uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
  for (std::size_t k = 1; k < len; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  static const std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (std::size_t len = valid_utf8_length(bytes, i)) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

void Bpe::add_token(const std::string& text, std::int32_t id) {
  if (id < 0)
    throw TokenizerError("error", "token \"" + text + "\" has a negative id " + std::to_string(id));
  if (static_cast<std::size_t>(id) >= tokens_.size())
    tokens_.resize(static_cast<std::size_t>(id) + 1);
  tokens_[static_cast<std::size_t>(id)] = text;
  ids_.emplace(text, id);
}

void Bpe::add_merge(const std::string& a, const std::string& b) {
  std::int32_t ia = find(a);
  std::int32_t ib = find(b);
  std::int32_t merged = find(a + b);
  if (ia < 0 || ib < 0 || merged < 0) {
    const std::string& missing = ia < 0 ? a : ib < 0 ? b : a + b;
    throw TokenizerError("error", "merge " + std::to_string(merges_.size() + 1) + " (\"" + a +
                                      "\" \"" + b + "\") uses \"" + missing +
                                      "\", which is not in the vocabulary");
  }
  // A pair listed twice keeps its first (higher-priority) rank.
  merges_.emplace(pair_key(ia, ib), Merge{static_cast<std::int32_t>(merges_.size()), merged});
}

void Bpe::finish(const std::string& unk_token, bool byte_fallback, bool ignore_merges,
                 bool fuse_unk) {
  unk_ = unk_token.empty() ? -1 : find(unk_token);
  if (!unk_token.empty() && unk_ < 0) {
    throw TokenizerError("error", "the unk_token \"" + unk_token + "\" is not in the vocabulary");
  }
  byte_fallback_ = byte_fallback;
  ignore_merges_ = ignore_merges;
  fuse_unk_ = fuse_unk;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byte_ids_[static_cast<std::size_t>(b)] = find(name);
  }
  cache_.clear();
}

std::int32_t Bpe::find(std::string_view text) const {
  auto it = ids_.find(std::string(text));
  return it == ids_.end() ? -1 : it->second;
}

void Bpe::encode_word(std::string_view word, std::vector<std::int32_t>& out) {
  if (word.empty()) return;
  if (ignore_merges_) {
    std::int32_t whole = find(word);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  std::string key(word);
  if (auto it = cache_.find(key); it != cache_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
    return;
  }
  // One symbol per character; a character the vocabulary lacks becomes its <0xXX> byte
  // tokens (byte fallback) or the unk token.
  std::vector<std::int32_t> ids;
  std::size_t i = 0;
  std::string ch;
  while (i < word.size()) {
    std::size_t start = i;
    next_code_point(word, i);
    ch.assign(word.substr(start, i - start));
    std::int32_t id = find(ch);
    if (id >= 0) {
      ids.push_back(id);
      continue;
    }
    bool all_bytes = byte_fallback_;
    for (std::size_t k = start; k < i && all_bytes; ++k)
      all_bytes = byte_ids_[static_cast<unsigned char>(word[k])] >= 0;
    if (all_bytes) {
      for (std::size_t k = start; k < i; ++k)
        ids.push_back(byte_ids_[static_cast<unsigned char>(word[k])]);
    } else if (unk_ >= 0) {
      if (!(fuse_unk_ && !ids.empty() && ids.back() == unk_)) ids.push_back(unk_);
    } else {
      throw TokenizerError(
          "error", "the character \"" + ch + "\" is not in the vocabulary, which has no unk_token" +
                       (byte_fallback_ ? " and lacks its <0xXX> byte tokens" : ""));
    }
  }
  merge_symbols(ids);
  // A bounded cache: common words repeat, and a long text's rare words must not grow it forever.
  if (cache_.size() >= 100000) cache_.clear();
  if (word.size() <= 256) cache_.emplace(std::move(key), ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

// Merges in rank order with a heap, as Hugging Face's Word::merge_all: each entry names the
// left symbol of a pair; entries made stale by earlier merges are skipped when popped.
void Bpe::merge_symbols(std::vector<std::int32_t>& ids) {
  const auto n = static_cast<std::int32_t>(ids.size());
  if (n < 2 || merges_.empty()) return;
  struct Symbol {
    std::int32_t id, prev, next;
    bool alive;
  };
  std::vector<Symbol> syms(static_cast<std::size_t>(n));
  for (std::int32_t k = 0; k < n; ++k)
    syms[static_cast<std::size_t>(k)] =
        Symbol{ids[static_cast<std::size_t>(k)], k - 1, k + 1 < n ? k + 1 : -1, true};
  struct Entry {
    std::int32_t rank, pos, id;
    bool operator>(const Entry& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto consider = [&](std::int32_t left) {
    if (left < 0) return;
    std::int32_t right = syms[static_cast<std::size_t>(left)].next;
    if (right < 0) return;
    auto it = merges_.find(pair_key(syms[static_cast<std::size_t>(left)].id,
                                    syms[static_cast<std::size_t>(right)].id));
    if (it != merges_.end()) heap.push(Entry{it->second.rank, left, it->second.id});
  };
  for (std::int32_t k = 0; k + 1 < n; ++k) consider(k);
  while (!heap.empty()) {
    Entry top = heap.top();
    heap.pop();
    Symbol& left = syms[static_cast<std::size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = syms[static_cast<std::size_t>(left.next)];
    auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.id != top.id || it->second.rank != top.rank) continue;
    left.id = top.id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<std::size_t>(right.next)].prev = top.pos;
    consider(left.prev);
    consider(top.pos);
  }
  ids.clear();
  for (std::int32_t k = 0; k >= 0; k = syms[static_cast<std::size_t>(k)].next)
    ids.push_back(syms[static_cast<std::size_t>(k)].id);
}

}  // namespace tl::text
