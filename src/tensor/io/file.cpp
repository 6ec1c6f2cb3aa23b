// SPDX-License-Identifier: Apache-2.0
// The helpers the tensor file formats share: checked file reads and writes, gzip input, byte
// order and the text of shapes and names in messages.
#include "tensor/io/file.h"

#include <sys/mman.h>
#include <unistd.h>

namespace tl::tensor::io {

std::string json_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string errno_text() { return std::strerror(errno); }

// --- InFile, OutFile ----------------------------------------------------------------------

InFile::InFile(const FileCtx& ctx) : ctx_(ctx) {
  std::error_code ec;
  if (std::filesystem::is_directory(ctx.path, ec)) ctx.fail("is a directory, not a file");
  file_.reset(std::fopen(ctx.path.c_str(), "rb"));
  if (!file_) ctx.fail("cannot be opened: " + errno_text());
  off_t end = fseeko(file_.get(), 0, SEEK_END) == 0 ? ftello(file_.get()) : -1;
  if (end < 0) ctx.fail("cannot be read: " + errno_text());
  size_ = static_cast<std::uint64_t>(end);
}

std::shared_ptr<Buffer> InFile::map(std::uint64_t offset, DType t, std::size_t count) {
  constexpr std::size_t kMinBytes = std::size_t{1} << 20;  // smaller tensors are read
  // A quantized block starts with its f16 scale: 2-byte alignment.
  const std::size_t elem = is_quantized(t) ? 2 : dtype_size(t);
  std::size_t n = 0;
  if (is_quantized(t)) n = storage_bytes(t, count);
  if (!kHostIsLittleEndian || t == DType::Bool || (!is_quantized(t) && __builtin_mul_overflow(count, elem, &n)) ||
      n < kMinBytes || offset % elem != 0 || offset > size_ || n > size_ - offset) {
    return nullptr;
  }
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t start = offset - offset % page;
  const std::size_t length = static_cast<std::size_t>(offset - start) + n;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(file_.get()), static_cast<off_t>(start));
  if (p == MAP_FAILED) return nullptr;
  std::shared_ptr<void> mapping(p, [length](void* q) { munmap(q, length); });
  return std::make_shared<Buffer>(t, count, std::move(mapping), static_cast<std::uint8_t*>(p) + (offset - start));
}

void InFile::read(std::uint64_t offset, void* dst, std::size_t n) {
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

std::string InFile::read_string(std::uint64_t offset, std::size_t n) {
  std::string s(n, '\0');
  read(offset, s.data(), n);
  return s;
}

OutFile::OutFile(const FileCtx& ctx) : ctx_(ctx) {
  file_.reset(std::fopen(ctx.path.c_str(), "wb"));
  if (!file_) ctx.fail("cannot be opened for writing: " + errno_text());
}

void OutFile::close() {
  if (std::fclose(file_.release()) != 0) fail_write();
}

void OutFile::fail_write() {
  std::string why = errno_text();
  file_.reset();
  std::remove(ctx_.path.c_str());
  ctx_.fail("could not be written: " + why);
}

// --- ByteStream ------------------------------------------------------------------------------

namespace {
constexpr std::size_t kInputChunk = 1 << 16;
}  // namespace

ByteStream::ByteStream(const FileCtx& ctx) : ctx_(ctx), zs_(std::make_unique<z_stream>()) {
  std::error_code ec;
  if (std::filesystem::is_directory(ctx.path, ec)) ctx.fail("is a directory, not a file");
  file_.reset(std::fopen(ctx.path.c_str(), "rb"));
  if (!file_) ctx.fail("cannot be opened: " + errno_text());
  input_.resize(kInputChunk);
  *zs_ = z_stream{};
  fill_input();
  gzip_ = zs_->avail_in >= 2 && zs_->next_in[0] == 0x1f && zs_->next_in[1] == 0x8b;
  // 16 + the window size: a gzip wrapper, whose CRC-32 and length inflate checks.
  if (gzip_ && inflateInit2(zs_.get(), 16 + MAX_WBITS) != Z_OK) {
    ctx.fail("cannot be inflated: out of memory");
  }
  in_member_ = gzip_;
}

ByteStream::~ByteStream() {
  if (gzip_) inflateEnd(zs_.get());
}

bool ByteStream::fill_input() {
  if (zs_->avail_in > 0) return true;
  ctx_.poll();  // between chunks of input: Ctrl-C stops a long load
  const std::size_t got = std::fread(input_.data(), 1, input_.size(), file_.get());
  if (got == 0 && std::ferror(file_.get())) ctx_.fail("cannot be read: " + errno_text());
  zs_->next_in = input_.data();
  zs_->avail_in = static_cast<uInt>(got);
  return got > 0;
}

std::size_t ByteStream::read_raw(void* dst, std::size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  std::size_t done = 0;
  while (done < n && fill_input()) {
    const std::size_t k = std::min<std::size_t>(n - done, zs_->avail_in);
    std::memcpy(out + done, zs_->next_in, k);
    zs_->next_in += k;
    zs_->avail_in -= static_cast<uInt>(k);
    done += k;
  }
  return done;
}

std::size_t ByteStream::read(void* dst, std::size_t n) {
  if (!gzip_) return read_raw(dst, n);
  auto* out = static_cast<unsigned char*>(dst);
  std::size_t done = 0;
  // A read that fills dst may stop before a member's trailer; the next read checks it, so a
  // read returns less than n only after every trailer so far has passed.
  while (done < n) {
    if (!in_member_) {
      if (!fill_input()) break;  // the end of the last member is the end of the data
      if (zs_->next_in[0] != 0x1f) ctx_.fail("has bytes after its gzip data");
      inflateReset(zs_.get());  // another member (gzip files may be concatenated)
      in_member_ = true;
    }
    if (!fill_input()) ctx_.fail("is truncated: its gzip data ends early");
    zs_->next_out = out + done;
    zs_->avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, 1u << 30));
    const int rc = inflate(zs_.get(), Z_NO_FLUSH);
    done = static_cast<std::size_t>(zs_->next_out - out);
    if (rc == Z_STREAM_END) {
      in_member_ = false;
    } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
      ctx_.fail(std::string("is damaged (gzip: ") + (zs_->msg ? zs_->msg : "bad data") + ")");
    } else if (rc == Z_MEM_ERROR) {
      ctx_.fail("cannot be inflated: out of memory");
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_->avail_in == 0)) {
      ctx_.fail("is damaged (gzip: inflate made no progress)");
    }
  }
  return done;
}

bool ByteStream::read_line(std::string& line) {
  std::size_t scanned = 0;  // pending_ before this has no newline: a long line stays linear
  for (;;) {
    if (std::size_t nl = pending_.find('\n', scanned); nl != std::string::npos) {
      line.assign(pending_, 0, nl);
      pending_.erase(0, nl + 1);
      return true;
    }
    scanned = pending_.size();
    char chunk[1 << 14];
    const std::size_t got = read(chunk, sizeof chunk);
    if (got == 0) {
      line = std::move(pending_);
      pending_.clear();
      return !line.empty();
    }
    pending_.append(chunk, got);
  }
}

// --- bytes and text ----------------------------------------------------------------------

void swap_byte_order(Buffer& b) {
  // Each number's bytes: a complex element's two parts separately.
  std::size_t size = dtype_size(b.dtype) / (is_complex(b.dtype) ? 2 : 1);
  if (size == 1) return;
  for (std::size_t i = 0; i + size <= b.size_bytes(); i += size) {
    std::reverse(b.bytes().begin() + i, b.bytes().begin() + i + size);
  }
}

void normalize_bools(Buffer& b) {
  if (b.dtype != DType::Bool) return;
  for (auto& byte : b.bytes()) byte = byte != 0;
}

std::uint64_t read_le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string le_bytes(std::uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::optional<std::uint64_t> data_bytes(const std::vector<std::int64_t>& shape, std::size_t elem) {
  std::uint64_t nonzero = elem;
  bool empty = false;
  for (std::int64_t d : shape) {
    auto size = static_cast<std::uint64_t>(d);
    if (d == 0) empty = true;
    if (d != 0 && __builtin_mul_overflow(nonzero, size, &nonzero)) return {};
  }
  if (nonzero > static_cast<std::uint64_t>(INT64_MAX)) return {};
  return empty ? 0 : nonzero;
}

std::string shape_text(const std::vector<std::int64_t>& shape, const char* open, const char* close, const char* sep) {
  std::string s = open;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? sep : "") + std::to_string(shape[i]);
  return s + close;
}

void write_little_endian(OutFile& out, const Buffer& b) {
  if (kHostIsLittleEndian) return out.write(b.data(), b.size_bytes());
  Buffer copy = b;
  swap_byte_order(copy);
  out.write(copy.data(), copy.size_bytes());
}

}  // namespace tl::tensor::io
