// SPDX-License-Identifier: Apache-2.0
// Wall-clock time for the runtime's reports.
#pragma once

#include <chrono>

namespace tl::runtime {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tl::runtime
