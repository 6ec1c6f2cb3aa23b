// SPDX-License-Identifier: Apache-2.0
// Small helpers the backend libraries share: error messages into the caller's buffer, and
// option strings ("key=value key=value").
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace tl::backend_util {

inline void set_error(char* err, std::size_t size, const std::string& msg) {
  if (err != nullptr && size > 0) std::snprintf(err, size, "%s", msg.c_str());
}

// Calls fn(word, key, value) for each space-separated word of `options` (value is empty when
// the word has no '='); stops and returns false as soon as fn does.
template <class F>
bool for_each_option(const char* options, F&& fn) {
  const std::string opts = options != nullptr ? options : "";
  for (std::size_t i = 0; i < opts.size();) {
    std::size_t j = opts.find(' ', i);
    if (j == std::string::npos) j = opts.size();
    const std::string word = opts.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    const auto eq = word.find('=');
    if (!fn(word, word.substr(0, eq), eq == std::string::npos ? std::string() : word.substr(eq + 1))) return false;
  }
  return true;
}

}  // namespace tl::backend_util
