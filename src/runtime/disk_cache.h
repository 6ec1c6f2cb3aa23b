// SPDX-License-Identifier: Apache-2.0
// The on-disk kernel cache: compiled code by kernel text and target, so a second process
// skips compiling. Each entry is one regular file holding a magic number, the full key and a
// checksum of the code; an entry that is truncated, corrupt, for another key, too large or
// not a regular file is ignored (and replaced when the kernel is compiled again, if it is a
// file or a symlink). Files are written atomically.
#pragma once

#include <optional>
#include <string>

namespace tl::runtime {

class DiskCache {
 public:
  // `dir` empty: the cache is off (the API layer chooses it: TENSORLISP_CACHE_DIR and friends).
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  // The code stored for `key`. Only a regular file (not a symlink, directory or device) of at
  // most 256 MiB whose header, key and checksum match is used; for any other entry, nullopt,
  // with the reason in *rejected when given (a missing entry leaves it alone).
  std::optional<std::string> load(const std::string& key, std::string* rejected = nullptr) const;
  // Best effort: a cache that cannot be written is not an error.
  void store(const std::string& key, const std::string& code) const;
  // The file an entry for `key` lives in.
  std::string path_for(const std::string& key) const;

 private:
  std::string dir_;
};

}  // namespace tl::runtime
