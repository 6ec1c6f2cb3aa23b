// SPDX-License-Identifier: Apache-2.0
// The toolchain settings a codegen test uses: from the environment, as the API layer reads them
// (api/devices.cpp), since the runtime reads none itself.
#pragma once

#include <cstdlib>
#include <string>

#include "runtime/toolchain.h"

namespace tl::test {

inline runtime::ToolchainSettings toolchain_settings() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  runtime::ToolchainSettings s;
  s.cuda_dirs = {env("CUDA_HOME"), env("CUDA_PATH")};
  s.ld_lld = env("TENSORLISP_LD_LLD");
  const std::string path = env("PATH");
  for (std::size_t i = 0; i <= path.size();) {
    std::size_t j = path.find(':', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) s.search_path.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return s;
}

}  // namespace tl::test
