// SPDX-License-Identifier: Apache-2.0
// Small helpers the backend libraries share: error messages into the caller's buffer, and
// option strings ("key=value key=value").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tensorlisp/backend.h"

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

// Kernel parameters for a GPU launch as the JIT's entry points take them (backend.h): one
// pointer per buffer, the vars, then begin and end; and the launches that cover the launch's
// iterations: `count` threads in blocks of `block`, or with thread groups `count` blocks of
// `group` threads; several launches when one grid cannot hold them all. Calls
// launch_one(blocks, threads_per_block, params) for each, with begin set; returns the first
// nonzero result.
template <class F>
int launch_grid(void* const* buffers, std::size_t buffer_count, const std::int64_t* vars, std::size_t var_count,
                const tl_launch& launch, unsigned block, F&& launch_one) {
  const std::int64_t count = launch.count;
  std::vector<void*> ptrs(buffers, buffers + buffer_count);
  std::vector<std::int64_t> ints(vars, vars + var_count);
  ints.push_back(0);      // begin
  ints.push_back(count);  // end
  std::vector<void*> params;
  for (auto& ptr : ptrs) params.push_back(&ptr);
  for (auto& v : ints) params.push_back(&v);
  constexpr std::int64_t kMaxBlocks = 0x7fffffff;
  const bool groups = launch.group > 0;
  const unsigned threads = groups ? static_cast<unsigned>(launch.group) : block;
  const std::int64_t per_block = groups ? 1 : block;  // iterations
  const std::int64_t per_launch = kMaxBlocks * per_block;
  std::int64_t& begin = ints[var_count];
  for (begin = 0; begin < count; begin += per_launch) {
    const std::int64_t n = std::min(per_launch, count - begin);
    if (int r = launch_one(static_cast<unsigned>((n + per_block - 1) / per_block), threads, params.data()); r != 0) return r;
  }
  return 0;
}

}  // namespace tl::backend_util
