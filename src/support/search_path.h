// SPDX-License-Identifier: Apache-2.0
// TENSORLISP_PATH: the folders, in order, that modules, backend runtime files and backend
// libraries are looked for in.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace tl {

// The non-empty entries of the colon-separated TENSORLISP_PATH (none when it is unset).
inline std::vector<std::string> tensorlisp_path() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("TENSORLISP_PATH");
  if (env == nullptr) return dirs;
  std::string all = env;
  for (std::size_t start = 0; start <= all.size();) {
    std::size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    if (end > start) dirs.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

}  // namespace tl
