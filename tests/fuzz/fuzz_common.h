// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz targets: one interpreter for the whole run (start-up loads the prelude
// and the tensor library, far too slow to repeat per input), the clean-up after each input,
// and a temporary file for loaders that read from a path.
#pragma once
#include <tensorlisp/tensorlisp.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "eval/interp.h"

namespace tl::fuzz {

inline Interpreter& interpreter() {
  static Interpreter* interp = new Interpreter();  // lives for the process; never freed
  return *interp;
}

// Brackets the run of one input so that it ends with as many frees as mallocs: after each
// new input libFuzzer runs it again and, when that run mallocs more than it frees, stops the
// process for a LeakSanitizer scan of its few hundred megabytes, 50 times the cost of a run
// (and after 1000 scans gives up checking for leaks). So the garbage the input left is
// collected, and the texts it read, which the interpreter keeps to quote in later errors, are
// dropped. Declare one at the start of each input's run, after any one-time set-up.
class InputScope {
 public:
  InputScope() : first_source_(interpreter().internal().sources.size()) {}
  ~InputScope() {
    eval::Interp& in = interpreter().internal();
    for (std::uint32_t file = first_source_; file < in.sources.size(); ++file) {
      in.sources.forget_text(file);
    }
    in.collect();
  }
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;

 private:
  std::uint32_t first_source_;
};

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
