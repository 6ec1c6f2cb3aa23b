// SPDX-License-Identifier: Apache-2.0
// Kernel cache files: "TLKC1\n", key size and code size (8 bytes each, little-endian), a
// 64-bit FNV-1a checksum of key and code, then the key and the code.
#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/hash.h"

namespace tl::runtime {

namespace {

constexpr char kMagic[] = "TLKC1\n";
constexpr std::size_t kMagicSize = 6;
constexpr std::size_t kHeaderSize = kMagicSize + 24;
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{256} << 20;  // far above any kernel

// The checksum of an entry: key, a separator byte, code.
std::uint64_t checksum(const std::string& key, const std::string& code) {
  return fnv1a(code, fnv1a("\xff", fnv1a(key)));
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string DiskCache::path_for(const std::string& key) const {
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.kernel", static_cast<unsigned long long>(fnv1a(key)));
  return dir_ + "/" + name;
}

std::optional<std::string> DiskCache::load(const std::string& key, std::string* rejected) const {
  if (!enabled()) return std::nullopt;
  auto reject = [&](const std::string& why) -> std::optional<std::string> {
    if (rejected != nullptr) *rejected = why;
    return std::nullopt;
  };
  // Only a regular file of bounded size is read: a directory made every realize fail, and a
  // symlink to /dev/zero was read until memory ran out (issue 19). O_NOFOLLOW refuses any
  // symlink, O_NONBLOCK keeps a FIFO from blocking the open.
  const int fd = ::open(path_for(key).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) return reject("is a symbolic link");
    return reject(std::string("cannot be opened: ") + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return reject("is not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < kHeaderSize) return reject("is shorter than its header");
  if (size > kMaxEntryBytes) {
    return reject("is larger than " + std::to_string(kMaxEntryBytes) + " bytes");
  }
  std::string data(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return reject("cannot be read in full");
    got += static_cast<std::size_t>(n);
  }
  if (data.compare(0, kMagicSize, kMagic) != 0) return reject("lacks the magic number TLKC1");
  const std::uint64_t key_size = get_u64(data.data() + kMagicSize);
  const std::uint64_t code_size = get_u64(data.data() + kMagicSize + 8);
  const std::uint64_t sum = get_u64(data.data() + kMagicSize + 16);
  if (key_size > size || code_size > size || size - kHeaderSize != key_size + code_size) {
    return reject("has sizes in its header that do not match the file");
  }
  if (key_size != key.size() || data.compare(kHeaderSize, key_size, key) != 0) {
    return reject("is for another kernel with the same hash");
  }
  std::string code = data.substr(kHeaderSize + key_size);
  if (checksum(key, code) != sum) return reject("fails its checksum");
  return code;
}

void DiskCache::store(const std::string& key, const std::string& code) const {
  if (!enabled()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::string data(kMagic, kMagicSize);
  put_u64(data, key.size());
  put_u64(data, code.size());
  put_u64(data, checksum(key, code));
  data += key;
  data += code;
  const std::string path = path_for(key);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f) {
      f.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace tl::runtime
