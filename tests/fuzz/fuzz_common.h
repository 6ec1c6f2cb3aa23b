// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz targets: one interpreter for the whole run (start-up loads the prelude
// and the tensor library, far too slow to repeat per input), and a temporary file for loaders
// that read from a path.
#pragma once
#include <tensorlisp/tensorlisp.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace tl::fuzz {

inline Interpreter& interpreter() {
  static Interpreter* interp = new Interpreter();  // lives for the process; never freed
  return *interp;
}

// Writes DATA to a file of this process (same path each call) ending in SUFFIX; returns it.
inline std::string write_temp(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  std::string path = "/tmp/tl-fuzz-" + std::to_string(getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return path;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace tl::fuzz
