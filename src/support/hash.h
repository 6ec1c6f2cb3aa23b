// SPDX-License-Identifier: Apache-2.0
// 64-bit FNV-1a, for names and checksums that must be the same in every process.
#pragma once

#include <cstdint>
#include <string_view>

namespace tl {

inline std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace tl
