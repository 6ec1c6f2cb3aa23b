// SPDX-License-Identifier: Apache-2.0
// What the tensor file formats share: the file and function an error is about, checked
// reads and writes, byte order, and a cursor for parsing text headers.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/tensor_value.h"

namespace tl::tensor::file_io {

using eval::Interp;
using eval::Value;

inline constexpr bool kHostIsLittleEndian = std::endian::native == std::endian::little;

inline constexpr DType kAllDTypes[] = {
#define TL_X(e, name, bytes, cat) DType::e,
    TL_DTYPES(TL_X)
#undef TL_X
};

// The function and the file an operation is about: every error names both.
struct FileCtx {
  Interp& in;
  const char* fn;
  std::string path;

  // Raises `load-npy: "x.npy" <problem>` as a file-error (or a dtype-error).
  [[noreturn]] void fail(const std::string& problem, const char* type = "file-error") const {
    in.error(type, std::string(fn) + ": \"" + path + "\" " + problem);
  }
  [[noreturn]] void fail_dtype(const std::string& problem) const { fail(problem, "dtype-error"); }
  // Raises the interrupt when Ctrl-C was pressed: loaders call it between chunks of input.
  void poll() const {
    if (in.interrupt_requested.load(std::memory_order_relaxed)) in.raise_interrupt();
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
  explicit InFile(const FileCtx& ctx) : ctx_(ctx) {
    std::error_code ec;
    if (std::filesystem::is_directory(ctx.path, ec)) ctx.fail("is a directory, not a file");
    file_.reset(std::fopen(ctx.path.c_str(), "rb"));
    if (!file_) ctx.fail("cannot be opened: " + errno_text());
    off_t end = fseeko(file_.get(), 0, SEEK_END) == 0 ? ftello(file_.get()) : -1;
    if (end < 0) ctx.fail("cannot be read: " + errno_text());
    size_ = static_cast<std::uint64_t>(end);
  }
  std::uint64_t size() const { return size_; }
  // Reads in chunks of 64 MiB, so Ctrl-C stops a large tensor's load.
  void read(std::uint64_t offset, void* dst, std::size_t n) {
    if (n == 0) return;
    if (fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0) {
      ctx_.fail("cannot be read at byte " + std::to_string(offset) + " (did it change?)");
    }
    constexpr std::size_t kChunk = std::size_t{64} << 20;
    for (std::size_t done = 0; done < n;) {
      ctx_.poll();
      const std::size_t want = std::min(kChunk, n - done);
      if (std::fread(static_cast<char*>(dst) + done, 1, want, file_.get()) != want) {
        ctx_.fail("cannot be read at byte " + std::to_string(offset + done) + " (did it change?)");
      }
      done += want;
    }
  }
  std::string read_string(std::uint64_t offset, std::size_t n) {
    std::string s(n, '\0');
    read(offset, s.data(), n);
    return s;
  }

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
  explicit OutFile(const FileCtx& ctx) : ctx_(ctx) {
    file_.reset(std::fopen(ctx.path.c_str(), "wb"));
    if (!file_) ctx.fail("cannot be opened for writing: " + errno_text());
  }
  void write(const void* p, std::size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, file_.get()) != n) fail_write();
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  void close() {
    if (std::fclose(file_.release()) != 0) fail_write();
  }

 private:
  [[noreturn]] void fail_write() {
    std::string why = errno_text();
    file_.reset();
    std::remove(ctx_.path.c_str());
    ctx_.fail("could not be written: " + why);
  }
  const FileCtx& ctx_;
  FilePtr file_;
};

// Converts elements of `size` bytes between little- and big-endian order, in place.
void swap_byte_order(Buffer& b);

std::uint64_t read_le(const std::uint8_t* p, int bytes);

std::string le_bytes(std::uint64_t v, int bytes);

// Bytes of data for `shape` with elements of `elem` bytes; nullopt when the count does not
// fit in 63 bits. Zero axes are left out of the check, because other code multiplies the
// remaining dimensions.
std::optional<std::uint64_t> data_bytes(const std::vector<std::int64_t>& shape, std::size_t elem);

std::string shape_text(const std::vector<std::int64_t>& shape, const char* open, const char* close,
                       const char* sep = ", ");

// A tensor of data read from a file. Bool bytes other than 0 become 1, the only values the
// kernels expect.
Value make_loaded_tensor(Interp& in, std::shared_ptr<Buffer> buf,
                         const std::vector<std::int64_t>& shape);

// A tensor's contiguous data and concrete shape, for writing. Realizes the tensor.
struct SavedData {
  std::shared_ptr<Buffer> buffer;
  std::vector<std::int64_t> shape;
};

SavedData realize_for_save(Interp& in, TensorObj* t);

// Writes a buffer in little-endian order (a byte-swapped copy on a big-endian host).
void write_little_endian(OutFile& out, const Buffer& b);

// A cursor over header text (a Python literal or JSON) with the pieces both parsers share.
class HeaderCursor {
 protected:
  HeaderCursor(const FileCtx& ctx, std::string_view text) : ctx_(ctx), text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    ctx_.fail("has a malformed header: " + what + " at byte " + std::to_string(pos_) +
              " of the header");
  }
  bool at_end() const { return pos_ >= text_.size(); }
  bool at_digit() const { return !at_end() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  void skip_space() {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                         text_[pos_] == '\r')) {
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

// The path argument i of builtin fn, with the context for its errors.
FileCtx file_ctx(eval::Interp& in, const char* fn, eval::Value* args, int i);

// Registration, one per format (called by register_file_builtins).
void register_npy_builtins(Interp& in);
void register_safetensors_builtins(Interp& in);
void register_idx_builtins(Interp& in);
void register_csv_builtins(Interp& in);

}  // namespace tl::tensor::file_io
