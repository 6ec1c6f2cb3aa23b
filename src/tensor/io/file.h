// SPDX-License-Identifier: Apache-2.0
// What the tensor file formats share: the file and function an error is about, checked
// reads and writes, byte order, and a cursor for parsing text headers. Plain C++: errors are
// tl::ConditionError (file-error, dtype-error), which the evaluator turns into conditions.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/condition_error.h"
#include "tensor/dtype.h"
#include "tensor/graph.h"

namespace tl::tensor::io {

inline constexpr bool kHostIsLittleEndian = std::endian::native == std::endian::little;

// The element dtypes (not the quantized block formats, which only GGUF files hold). A complex
// array's buffer has dtype c64 or c128 (interleaved real and imaginary parts).
#define TL_IO_ELEMENT_Bool(e) DType::e,
#define TL_IO_ELEMENT_Unsigned(e) DType::e,
#define TL_IO_ELEMENT_Signed(e) DType::e,
#define TL_IO_ELEMENT_Float(e) DType::e,
#define TL_IO_ELEMENT_Quant(e)
#define TL_IO_ELEMENT_Complex(e) DType::e,
inline constexpr DType kAllDTypes[] = {
#define TL_X(e, name, bytes, cat) TL_IO_ELEMENT_##cat(e)
    TL_DTYPES(TL_X)
#undef TL_X
};

// A tensor's contiguous row-major data in host memory and its shape: what a reader returns
// and a writer takes. Bool elements are 0 or 1.
struct Array {
  std::shared_ptr<Buffer> buffer;
  std::vector<std::int64_t> shape;
};

// The function and the file an operation is about: every error names both. The readers and
// writers below keep a reference to it, so it must outlive them.
struct FileCtx {
  const char* fn;  // the Lisp function (or other caller) named in messages: "load-npy"
  std::string path;
  // Called between chunks of input, so that a long load can be stopped (it throws); may be
  // empty.
  std::function<void()> on_poll;

  // Throws `load-npy: "x.npy" <problem>` as a file-error (or a dtype-error).
  [[noreturn]] void fail(const std::string& problem, const char* type = "file-error") const {
    throw ConditionError(type, std::string(fn) + ": \"" + path + "\" " + problem);
  }
  [[noreturn]] void fail_dtype(const std::string& problem) const { fail(problem, "dtype-error"); }
  void poll() const {
    if (on_poll) on_poll();
  }
};

// S in double quotes with JSON escapes: for headers, and for names echoed in messages.
std::string json_quoted(const std::string& s);

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

std::string errno_text();  // strerror(errno)

// A file opened for reading. Callers check offsets against size() before reading, so a
// short read means the file changed or the device failed.
class InFile {
 public:
  explicit InFile(const FileCtx& ctx);
  std::uint64_t size() const { return size_; }
  // Reads in chunks of 64 MiB, polling between them, so Ctrl-C stops a large tensor's load.
  void read(std::uint64_t offset, void* dst, std::size_t n);
  std::string read_string(std::uint64_t offset, std::size_t n);
  // A buffer of `count` elements of dtype t over bytes [offset, offset + count * size) of the
  // file mapped into memory (private: writes stay in memory), or null when mapping does not
  // pay or cannot be done (small data, data not aligned to its element size, a big-endian
  // host, bools, a file system without mmap); the caller then reads. The pages are read
  // when first touched. A file truncated by someone else while mapped is not detected.
  std::shared_ptr<Buffer> map(std::uint64_t offset, DType t, std::size_t count);

 private:
  const FileCtx& ctx_;
  FilePtr file_;
  std::uint64_t size_ = 0;
};

// A file read from start to end as it is, or inflated when it starts with the gzip magic
// bytes (as zlib's gzread does, but strict): every gzip member's CRC and length are checked,
// and a stream cut short or damaged raises a file-error naming the file (issue 19).
class ByteStream {
 public:
  explicit ByteStream(const FileCtx& ctx);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Up to n bytes into dst; fewer only at the end of the data.
  std::size_t read(void* dst, std::size_t n);
  // The next line without its '\n' (the last may lack one); false at the end of the data.
  bool read_line(std::string& line);

 private:
  bool fill_input();  // false at the end of the file
  std::size_t read_raw(void* dst, std::size_t n);

  const FileCtx& ctx_;
  FilePtr file_;
  bool gzip_ = false;
  bool in_member_ = false;  // inside a gzip member, before its trailer has been checked
  std::unique_ptr<z_stream> zs_;
  std::vector<unsigned char> input_;
  std::string pending_;  // read but not yet returned by read_line
};

// A file being written. A failed write removes the partial file before raising the error.
class OutFile {
 public:
  explicit OutFile(const FileCtx& ctx);
  void write(const void* p, std::size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, file_.get()) != n) fail_write();
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  void close();

 private:
  [[noreturn]] void fail_write();
  const FileCtx& ctx_;
  FilePtr file_;
};

// Converts elements of `size` bytes between little- and big-endian order, in place.
void swap_byte_order(Buffer& b);

// Makes every bool byte 0 or 1, the only values the kernels expect; other dtypes unchanged.
void normalize_bools(Buffer& b);

std::uint64_t read_le(const std::uint8_t* p, int bytes);

std::string le_bytes(std::uint64_t v, int bytes);

// Bytes of data for `shape` with elements of `elem` bytes; nullopt when the count does not
// fit in 63 bits. Zero axes are left out of the check, because other code multiplies the
// remaining dimensions.
std::optional<std::uint64_t> data_bytes(const std::vector<std::int64_t>& shape, std::size_t elem);

std::string shape_text(const std::vector<std::int64_t>& shape, const char* open, const char* close,
                       const char* sep = ", ");

// Writes a buffer in little-endian order (a byte-swapped copy on a big-endian host).
void write_little_endian(OutFile& out, const Buffer& b);

// A cursor over header text (a Python literal or JSON) with the pieces both parsers share.
class HeaderCursor {
 protected:
  HeaderCursor(const FileCtx& ctx, std::string_view text) : ctx_(ctx), text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    ctx_.fail("has a malformed header: " + what + " at byte " + std::to_string(pos_) + " of the header");
  }
  bool at_end() const { return pos_ >= text_.size(); }
  bool at_digit() const { return !at_end() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  void skip_space() {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool at(char c) {
    skip_space();
    return !at_end() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  void expect_end(const char* what) {
    skip_space();
    if (!at_end()) fail(std::string("unexpected text after the ") + what);
  }
  // Decimal digits (at least one) as a non-negative integer.
  std::int64_t parse_digits() {
    if (!at_digit()) fail("expected a digit");
    std::int64_t v = 0;
    for (; at_digit(); ++pos_) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
        fail("an integer too large");
      }
    }
    return v;
  }

  const FileCtx& ctx_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace tl::tensor::io
