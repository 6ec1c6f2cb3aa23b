// SPDX-License-Identifier: Apache-2.0
// Tensor files: NumPy .npy (writes v1.0, reads v1.0-3.0) and safetensors, each with a strict
// parser for its header. Malformed input of any kind becomes a Lisp error, never a crash.
#include "tensor/files.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "eval/builtins.h"
#include "tensor/tensor_value.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

constexpr bool kHostIsLittleEndian = std::endian::native == std::endian::little;

constexpr DType kAllDTypes[] = {
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
};

// S in double quotes with JSON escapes: for headers, and for names echoed in messages.
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

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

std::string errno_text() { return std::strerror(errno); }

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
  void read(std::uint64_t offset, void* dst, std::size_t n) {
    if (n == 0) return;
    if (fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
        std::fread(dst, 1, n, file_.get()) != n) {
      ctx_.fail("cannot be read at byte " + std::to_string(offset) + " (did it change?)");
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
void swap_byte_order(Buffer& b) {
  std::size_t size = dtype_size(b.dtype);
  if (size == 1) return;
  for (std::size_t i = 0; i + size <= b.bytes.size(); i += size) {
    std::reverse(b.bytes.begin() + i, b.bytes.begin() + i + size);
  }
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

// Bytes of data for `shape` with elements of `elem` bytes; nullopt when the count does not
// fit in 63 bits. Zero axes are left out of the check, because other code multiplies the
// remaining dimensions.
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

std::string shape_text(const std::vector<std::int64_t>& shape, const char* open, const char* close,
                       const char* sep = ", ") {
  std::string s = open;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? sep : "") + std::to_string(shape[i]);
  return s + close;
}

// A tensor of data read from a file. Bool bytes other than 0 become 1, the only values the
// kernels expect.
Value make_loaded_tensor(Interp& in, std::shared_ptr<Buffer> buf,
                         const std::vector<std::int64_t>& shape) {
  if (buf->dtype == DType::Bool) {
    for (auto& b : buf->bytes) b = b != 0;
  }
  in.heap.account_external(buf->bytes.size());
  return make_tensor(in, graph_at_call(in).make_buffer(std::move(buf), Shape(shape.begin(), shape.end())));
}

// A tensor's contiguous data and concrete shape, for writing. Realizes the tensor.
struct SavedData {
  std::shared_ptr<Buffer> buffer;
  std::vector<std::int64_t> shape;
};

SavedData realize_for_save(Interp& in, TensorObj* t) {
  realize(in, t);
  SavedData d{t->node->buffer, eval_shape(t->node->shape, t->node->bindings)};
  auto bytes = data_bytes(d.shape, dtype_size(d.buffer->dtype));
  if (!bytes || *bytes != d.buffer->bytes.size()) {
    throw tl::Error(ErrorKind::Internal, "eval", "internal-error",
                    "a realized buffer of " + std::to_string(d.buffer->bytes.size()) +
                        " bytes does not match its shape " + shape_str(t->node->shape) + " (" +
                        __FILE__ + ":" + std::to_string(__LINE__) + ")");
  }
  return d;
}

// Writes a buffer in little-endian order (a byte-swapped copy on a big-endian host).
void write_little_endian(OutFile& out, const Buffer& b) {
  if (kHostIsLittleEndian) return out.write(b.data(), b.bytes.size());
  Buffer copy = b;
  swap_byte_order(copy);
  out.write(copy.data(), copy.bytes.size());
}

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

// --- NPY -------------------------------------------------------------------------------------

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr std::size_t kNpyMagicSize = 6;

// The NPY type code of a dtype ("f4", "u1"): its kind letter and size. bf16 has none ("").
std::string npy_code(DType t) {
  if (t == DType::BF16) return "";
  constexpr char kKind[] = {'b', 'u', 'i', 'f'};  // by DCat
  return kKind[static_cast<int>(dtype_category(t))] + std::to_string(dtype_size(t));
}

// The descr NumPy writes for a dtype ("<f4", "|u1"): 1-byte types have no byte order.
// Only for dtypes with a code.
std::string npy_descr(DType t) { return (dtype_size(t) == 1 ? "|" : "<") + npy_code(t); }

// The header dictionary, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// Reads the Python literal NumPy writes as the header: a dict with exactly the keys descr (a
// string), fortran_order (True or False) and shape (a tuple of integers).
class NpyHeaderParser : HeaderCursor {
 public:
  NpyHeaderParser(const FileCtx& ctx, std::string_view text) : HeaderCursor(ctx, text) {}

  NpyHeader parse() {
    NpyHeader h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!at('}')) {
      std::string key = parse_string();
      expect(':');
      if (key == "descr" && !has_descr) {
        if (at('[')) ctx_.fail("has a structured dtype (a list of fields), which is not supported");
        h.descr = parse_string();
        has_descr = true;
      } else if (key == "fortran_order" && !has_order) {
        h.fortran_order = parse_bool();
        has_order = true;
      } else if (key == "shape" && !has_shape) {
        h.shape = parse_shape();
        has_shape = true;
      } else {
        fail("unexpected or repeated key " + json_quoted(key));
      }
      if (!accept(',')) break;
    }
    expect('}');
    expect_end("dictionary");
    if (!has_descr || !has_order || !has_shape) {
      const char* missing = !has_descr ? "descr" : !has_order ? "fortran_order" : "shape";
      ctx_.fail("has a malformed header: it lacks the key '" + std::string(missing) + "'");
    }
    return h;
  }

 private:
  std::string parse_string() {
    if (!at('\'') && !at('"')) fail("expected a quoted string");
    char quote = text_[pos_++];
    std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("an unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos) fail("an escape in a string");
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    skip_space();
    for (std::string_view word : {"True", "False"}) {
      if (text_.substr(pos_, word.size()) != word) continue;
      pos_ += word.size();
      return word == "True";
    }
    fail("expected True or False");
  }
  // (), (5,), (2, 3): a trailing comma is allowed (Python needs it for one item).
  std::vector<std::int64_t> parse_shape() {
    std::vector<std::int64_t> shape;
    expect('(');
    while (!at(')')) {
      skip_space();
      shape.push_back(parse_digits());
      if (!at_end() && text_[pos_] == 'L') ++pos_;  // a Python 2 long
      if (!accept(',')) break;
    }
    expect(')');
    return shape;
  }
};

// The dtype of an NPY descr and whether its data is big-endian; a dtype-error otherwise.
std::pair<DType, bool> npy_dtype(const FileCtx& ctx, const std::string& descr) {
  const char order = descr.empty() ? '=' : descr[0];
  const bool has_order = order != '\0' && std::strchr("<>|=", order) != nullptr;
  const std::string code = has_order ? descr.substr(1) : descr;
  std::string supported;
  for (DType t : kAllDTypes) {
    if (t == DType::BF16) continue;
    supported += " " + npy_descr(t);
    if (code != npy_code(t) || (order == '|' && dtype_size(t) != 1)) continue;
    bool big = order == '>' || (order == '=' && !kHostIsLittleEndian);
    return {t, big && dtype_size(t) > 1};
  }
  ctx.fail_dtype("has dtype " + json_quoted(descr) +
                 ", which TensorLisp does not support (supported:" + supported + ")");
}

// Data stored in Fortran (column-major) order, rewritten in C (row-major) order.
std::shared_ptr<Buffer> fortran_to_c_order(const Buffer& src,
                                           const std::vector<std::int64_t>& shape) {
  auto out = std::make_shared<Buffer>(src.dtype, src.count());
  const std::size_t elem = dtype_size(src.dtype);
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> stride(rank), index(rank, 0);
  for (std::size_t k = 0; k < rank; ++k) stride[k] = k == 0 ? 1 : stride[k - 1] * shape[k - 1];
  for (std::size_t i = 0; i < src.count(); ++i) {
    std::int64_t from = 0;
    for (std::size_t k = 0; k < rank; ++k) from += index[k] * stride[k];
    std::memcpy(out->bytes.data() + i * elem, src.bytes.data() + from * elem, elem);
    for (std::size_t k = rank; k-- > 0;) {  // the next index in row-major order
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

Value load_npy(const FileCtx& ctx) {
  InFile file(ctx);
  const std::uint64_t size = file.size();
  std::uint8_t prelude[12] = {};
  file.read(0, prelude, static_cast<std::size_t>(std::min<std::uint64_t>(size, sizeof prelude)));
  if (size < kNpyMagicSize || std::memcmp(prelude, kNpyMagic, kNpyMagicSize) != 0) {
    ctx.fail("is not an NPY file: it does not start with \\x93NUMPY");
  }
  if (size < 8) ctx.fail("is truncated: it ends inside the NPY version number");
  const int major = prelude[6], minor = prelude[7];
  if (major < 1 || major > 3 || minor != 0) {
    ctx.fail("has NPY format version " + std::to_string(major) + "." + std::to_string(minor) +
             " (supported: 1.0, 2.0, 3.0)");
  }
  const int len_bytes = major == 1 ? 2 : 4;
  const std::uint64_t header_start = 8 + len_bytes;
  if (size < header_start) ctx.fail("is truncated: it ends inside the header length");
  const std::uint64_t header_len = read_le(prelude + 8, len_bytes);
  if (header_len > size - header_start) {
    ctx.fail("is truncated: header length says " + std::to_string(header_len) +
             " bytes, file has " + std::to_string(size - header_start) + " after the length");
  }
  std::string text = file.read_string(header_start, static_cast<std::size_t>(header_len));
  NpyHeader h = NpyHeaderParser(ctx, text).parse();
  auto [dtype, big_endian] = npy_dtype(ctx, h.descr);
  auto bytes = data_bytes(h.shape, dtype_size(dtype));
  if (!bytes) ctx.fail("has shape " + shape_text(h.shape, "(", ")") + ", too large to load");
  const std::uint64_t data_start = header_start + header_len;
  const std::uint64_t have = size - data_start;
  const std::string want = std::to_string(*bytes);
  if (have < *bytes) {
    ctx.fail("is truncated: header says " + want + " bytes of data, file has " +
             std::to_string(have));
  }
  if (have > *bytes) {
    ctx.fail("has " + std::to_string(have - *bytes) + " bytes after its data (header says " + want +
             " bytes)");
  }
  auto buf = std::make_shared<Buffer>(dtype, static_cast<std::size_t>(*bytes / dtype_size(dtype)));
  file.read(data_start, buf->data(), buf->bytes.size());
  if (big_endian == kHostIsLittleEndian) swap_byte_order(*buf);
  if (h.fortran_order && h.shape.size() > 1) buf = fortran_to_c_order(*buf, h.shape);
  return make_loaded_tensor(ctx.in, std::move(buf), h.shape);
}

void save_npy(const FileCtx& ctx, TensorObj* t) {
  const std::string descr = npy_descr(t->node->dtype);
  if (npy_code(t->node->dtype).empty()) {
    ctx.fail_dtype("cannot hold " + std::string(dtype_name(t->node->dtype)) +
                   " data: NPY has no such type; cast the tensor first, e.g. (cast x 'f32)");
  }
  SavedData d = realize_for_save(ctx.in, t);
  std::string shape =
      d.shape.size() == 1 ? "(" + std::to_string(d.shape[0]) + ",)" : shape_text(d.shape, "(", ")");
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Spaces and a newline end the header so the data starts at a multiple of 64 bytes, as
  // NumPy writes it. Version 1.0 stores the length in 2 bytes; longer headers need 2.0.
  const int major = 12 + header.size() + 64 > 0xffff ? 2 : 1;
  const std::size_t prelude = major == 1 ? 10 : 12;
  header.append((64 - (prelude + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  OutFile out(ctx);
  out.write(kNpyMagic, kNpyMagicSize);
  out.write(std::string{static_cast<char>(major), 0});
  out.write(le_bytes(header.size(), major == 1 ? 2 : 4));
  out.write(header);
  write_little_endian(out, *d.buffer);
  out.close();
}

// --- JSON (the subset safetensors headers use) -----------------------------------------------

struct JsonMember;
struct Json {
  enum class Kind { Object, Array, String, Integer } kind = Kind::Integer;
  std::string text;                 // String
  std::int64_t integer = 0;         // Integer
  std::vector<Json> items;          // Array
  std::vector<JsonMember> members;  // Object, in file order
};
struct JsonMember {
  std::string key;
  Json value;
};

const char* json_kind_name(Json::Kind k) {
  constexpr const char* kNames[] = {"an object", "an array", "a string", "an integer"};
  return kNames[static_cast<int>(k)];
}

// A strict JSON reader for objects, arrays, strings and integers: no floats, booleans or
// null (safetensors headers have none), no duplicate keys, no trailing commas.
class JsonParser : HeaderCursor {
 public:
  JsonParser(const FileCtx& ctx, std::string_view text) : HeaderCursor(ctx, text) {}

  Json parse_document() {
    Json v = parse_value(0);
    expect_end("header object");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;  // safetensors needs 3; bounds the recursion

  Json parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    skip_space();
    if (at_end()) fail("an unexpected end");
    const char c = text_[pos_];
    Json v;
    if (c == '{' || c == '[') {
      v.kind = c == '{' ? Json::Kind::Object : Json::Kind::Array;
      ++pos_;
      if (accept(c == '{' ? '}' : ']')) return v;
      do {
        if (c == '[') {
          v.items.push_back(parse_value(depth + 1));
          continue;
        }
        if (!at('"')) fail("expected a string key");
        std::string key = parse_string();
        for (const auto& m : v.members) {
          if (m.key == key) fail("a repeated key " + json_quoted(key));
        }
        expect(':');
        v.members.push_back({std::move(key), parse_value(depth + 1)});
      } while (accept(','));
      expect(c == '{' ? '}' : ']');
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.text = parse_string();
    } else if (c == '-' || at_digit()) {
      v.kind = Json::Kind::Integer;
      v.integer = parse_integer();
    } else {
      fail("an unexpected character " + json_quoted(std::string(1, c)));
    }
    return v;
  }
  std::int64_t parse_integer() {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (!at_end() && text_[pos_] == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      fail("a number with a leading zero");
    }
    std::int64_t v = parse_digits();
    if (!at_end() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      fail("a number that is not an integer");
    }
    return negative ? -v : v;
  }
  unsigned parse_hex4() {
    unsigned v = 0;
    const char* p = text_.data() + pos_;
    if (text_.size() - pos_ < 4 || std::from_chars(p, p + 4, v, 16).ptr != p + 4) {
      fail("a bad \\u escape");
    }
    pos_ += 4;
    return v;
  }
  static void append_utf8(std::string& out, unsigned cp) {
    const int extra = cp < 0x80 ? 0 : cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
    static constexpr unsigned kLead[] = {0x00, 0xc0, 0xe0, 0xf0};
    out += static_cast<char>(kLead[extra] | (cp >> (6 * extra)));
    for (int i = extra - 1; i >= 0; --i) out += static_cast<char>(0x80 | ((cp >> (6 * i)) & 0x3f));
  }
  std::string parse_string() {
    ++pos_;  // the opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("an unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = at_end() ? '\0' : text_[pos_++];
      constexpr std::string_view kEscapes = "\"\\/bfnrt", kMeanings = "\"\\/\b\f\n\r\t";
      if (std::size_t k = kEscapes.find(e); k != std::string_view::npos) {
        out += kMeanings[k];
        continue;
      }
      if (e != 'u') fail("an unknown escape " + json_quoted(std::string("\\") + e));
      unsigned cp = parse_hex4();
      if (cp >= 0xdc00 && cp < 0xe000) fail("a lone low surrogate");
      if (cp >= 0xd800 && cp < 0xdc00) {
        if (text_.substr(pos_, 2) != "\\u") fail("a high surrogate without its low half");
        pos_ += 2;
        unsigned low = parse_hex4();
        if (low < 0xdc00 || low >= 0xe000) fail("a high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
      append_utf8(out, cp);
    }
  }
};

// --- safetensors ------------------------------------------------------------------------------

// The safetensors name of a dtype: its name in capitals (F32, BF16, BOOL).
std::string safetensors_dtype_name(DType t) {
  std::string name(dtype_name(t));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

struct StTensor {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin, end;  // byte offsets into the data section
};

struct StHeader {
  std::vector<StTensor> tensors;  // sorted by offset
  std::vector<std::pair<std::string, std::string>> metadata;
  std::uint64_t data_start = 0;
};

// Field `key` of a tensor's entry, which must be of `kind`.
const Json& entry_field(const FileCtx& ctx, const Json& entry, const std::string& tensor,
                        const char* key, Json::Kind kind) {
  for (const auto& m : entry.members) {
    if (m.key != key) continue;
    if (m.value.kind != kind) {
      ctx.fail("has tensor " + json_quoted(tensor) + " whose " + key + " is " +
               json_kind_name(m.value.kind) + ", not " + json_kind_name(kind));
    }
    return m.value;
  }
  ctx.fail("has tensor " + json_quoted(tensor) + " without " + key);
}

StTensor parse_tensor_entry(const FileCtx& ctx, const std::string& name, const Json& entry,
                            std::uint64_t data_size) {
  const std::string what = "has tensor " + json_quoted(name);
  if (entry.kind != Json::Kind::Object) {
    ctx.fail(what + " described by " + json_kind_name(entry.kind));
  }
  for (const auto& m : entry.members) {
    if (m.key != "dtype" && m.key != "shape" && m.key != "data_offsets") {
      ctx.fail(what + " with the unknown field " + json_quoted(m.key));
    }
  }
  StTensor t{name, DType::F32, {}, 0, 0};
  const std::string& dtype = entry_field(ctx, entry, name, "dtype", Json::Kind::String).text;
  auto known = std::find_if(std::begin(kAllDTypes), std::end(kAllDTypes),
                            [&](DType dt) { return dtype == safetensors_dtype_name(dt); });
  if (known == std::end(kAllDTypes)) {
    std::string supported;
    for (DType dt : kAllDTypes) supported += " " + safetensors_dtype_name(dt);
    ctx.fail_dtype(what + " of dtype " + json_quoted(dtype) +
                   ", which TensorLisp does not support (supported:" + supported + ")");
  }
  t.dtype = *known;
  for (const Json& d : entry_field(ctx, entry, name, "shape", Json::Kind::Array).items) {
    if (d.kind != Json::Kind::Integer || d.integer < 0) {
      ctx.fail(what + " whose shape is not a list of sizes");
    }
    t.shape.push_back(d.integer);
  }
  const auto& offsets = entry_field(ctx, entry, name, "data_offsets", Json::Kind::Array).items;
  if (offsets.size() != 2 || offsets[0].kind != Json::Kind::Integer ||
      offsets[1].kind != Json::Kind::Integer || offsets[0].integer < 0 ||
      offsets[1].integer < offsets[0].integer) {
    ctx.fail(what + " whose data_offsets are not [BEGIN, END] with 0 <= BEGIN <= END");
  }
  t.begin = static_cast<std::uint64_t>(offsets[0].integer);
  t.end = static_cast<std::uint64_t>(offsets[1].integer);
  const std::string where =
      "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end > data_size) {
    ctx.fail(what + " with " + where + " beyond the " + std::to_string(data_size) +
             " bytes of data");
  }
  auto bytes = data_bytes(t.shape, dtype_size(t.dtype));
  if (!bytes || *bytes != t.end - t.begin) {
    ctx.fail(what + " of dtype " + dtype + " and shape " + shape_text(t.shape, "[", "]") + " (" +
             (bytes ? std::to_string(*bytes) : "too many") + " bytes) but " + where + " (" +
             std::to_string(t.end - t.begin) + " bytes)");
  }
  return t;
}

// Reads and checks the header: every tensor's bytes lie inside the data section, match its
// shape and dtype, and overlap no other tensor's.
StHeader read_safetensors_header(const FileCtx& ctx, InFile& file) {
  const std::uint64_t size = file.size();
  if (size < 8) {
    ctx.fail("is not a safetensors file: it is " + std::to_string(size) +
             " bytes, too short for the header length");
  }
  std::uint8_t len[8];
  file.read(0, len, 8);
  const std::uint64_t header_len = read_le(len, 8);
  if (header_len > size - 8) {
    ctx.fail("is truncated: header length says " + std::to_string(header_len) +
             " bytes, file has " + std::to_string(size - 8) + " after the length");
  }
  Json root =
      JsonParser(ctx, file.read_string(8, static_cast<std::size_t>(header_len))).parse_document();
  if (root.kind != Json::Kind::Object) {
    ctx.fail("has a malformed header: it is " + std::string(json_kind_name(root.kind)));
  }
  StHeader h;
  h.data_start = 8 + header_len;
  for (const auto& m : root.members) {
    if (m.key != "__metadata__") {
      h.tensors.push_back(parse_tensor_entry(ctx, m.key, m.value, size - h.data_start));
      continue;
    }
    if (m.value.kind != Json::Kind::Object) ctx.fail("has __metadata__ that is not an object");
    for (const auto& kv : m.value.members) {
      if (kv.value.kind != Json::Kind::String) {
        ctx.fail("has __metadata__ entry " + json_quoted(kv.key) + " that is not a string");
      }
      h.metadata.emplace_back(kv.key, kv.value.text);
    }
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const StTensor& a, const StTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const StTensor* last = nullptr;  // of the non-empty tensors so far, the one ending last
  for (const auto& t : h.tensors) {
    if (t.begin == t.end) continue;
    if (last != nullptr && t.begin < last->end) {
      ctx.fail("has tensors " + json_quoted(last->name) + " and " + json_quoted(t.name) +
               " whose data overlap");
    }
    if (last == nullptr || t.end > last->end) last = &t;
  }
  return h;
}

// A list of (name . value) conses for i below n, built on the value stack so that each part
// stays rooted.
template <typename NameOf, typename ValueOf>
Value make_alist(Interp& in, std::size_t n, NameOf name_of, ValueOf value_of) {
  Interp::StackMark mark(in);
  Value* base = in.sp;
  for (std::size_t i = 0; i < n; ++i) {
    in.push(value_of(i));
    in.sp[-1] = in.cons(in.make_string(name_of(i)), in.sp[-1]);
  }
  return in.list_from(base, n);
}

Value load_safetensors(const FileCtx& ctx) {
  InFile file(ctx);
  StHeader h = read_safetensors_header(ctx, file);
  auto name_of = [&](std::size_t i) { return h.tensors[i].name; };
  return make_alist(ctx.in, h.tensors.size(), name_of, [&](std::size_t i) {
    const StTensor& t = h.tensors[i];
    auto buf = std::make_shared<Buffer>(t.dtype, (t.end - t.begin) / dtype_size(t.dtype));
    file.read(h.data_start + t.begin, buf->data(), buf->bytes.size());
    if (!kHostIsLittleEndian) swap_byte_order(*buf);
    return make_loaded_tensor(ctx.in, std::move(buf), t.shape);
  });
}

Value safetensors_metadata(const FileCtx& ctx) {
  InFile file(ctx);
  StHeader h = read_safetensors_header(ctx, file);
  auto key_of = [&](std::size_t i) { return h.metadata[i].first; };
  return make_alist(ctx.in, h.metadata.size(), key_of,
                    [&](std::size_t i) { return ctx.in.make_string(h.metadata[i].second); });
}

// The (key . value) pairs of an alist or a hash table, in order.
std::vector<std::pair<Value, Value>> pairs_of(Interp& in, const char* fn, Value v, int arg,
                                              const char* what) {
  std::vector<std::pair<Value, Value>> out;
  if (eval::is_kind(v, eval::ObjKind::HashTable)) {
    for (const auto& [k, x] : eval::as_hash(v)->entries) {
      if (k.tag == eval::Tag::Obj && k.o == nullptr) continue;  // a removed entry
      out.emplace_back(k, x);
    }
    return out;
  }
  if (!eval::is_list(v)) in.type_error(fn, arg, what, v);
  for (Value item : eval::list_items(in, fn, v, arg)) {
    if (!eval::is_cons(item)) in.type_error(fn, arg, what, v);
    out.emplace_back(eval::car(item), eval::cdr(item));
  }
  return out;
}

std::string name_text(Interp& in, const char* fn, Value k, const char* what) {
  if (eval::is_string(k)) return eval::as_string(k)->text;
  if (eval::is_symbol(k) && !k.is_nil()) return eval::as_symbol(k)->name;
  in.error("type-error",
           std::string(fn) + ": " + what + " must be a string or a symbol, got " + in.repr(k));
}

void save_safetensors(const FileCtx& ctx, Value tensors, Value metadata) {
  Interp& in = ctx.in;
  const char* fn = ctx.fn;
  std::string header = "{";
  if (!metadata.is_nil()) {
    std::string fields;
    for (auto [k, v] : pairs_of(in, fn, metadata, 4, "an alist or hash table of strings")) {
      if (!eval::is_string(v)) {
        in.error("type-error",
                 std::string(fn) + ": metadata values must be strings, got " + in.repr(v));
      }
      fields += (fields.empty() ? "" : ",") + json_quoted(name_text(in, fn, k, "a metadata key")) +
                ":" + json_quoted(eval::as_string(v)->text);
    }
    header += "\"__metadata__\":{" + fields + "},";
  }
  std::vector<std::string> names;
  std::vector<SavedData> data;
  std::uint64_t offset = 0;
  for (auto [k, v] :
       pairs_of(in, fn, tensors, 2, "an alist ((name . tensor) ...) or a hash table")) {
    std::string name = name_text(in, fn, k, "a tensor name");
    if (name == "__metadata__" || std::find(names.begin(), names.end(), name) != names.end()) {
      in.error("program-error", std::string(fn) + ": the tensor name " + json_quoted(name) +
                                    " is " + (name == "__metadata__" ? "reserved" : "given twice"));
    }
    if (!is_tensor(v)) {
      in.error("type-error", std::string(fn) + ": the value for " + json_quoted(name) +
                                 " must be a tensor, got " + in.repr(v));
    }
    const SavedData& d = data.emplace_back(realize_for_save(in, as_tensor(v)));
    names.push_back(name);
    const std::uint64_t end = offset + d.buffer->bytes.size();
    header += json_quoted(name) + ":{\"dtype\":\"" + safetensors_dtype_name(d.buffer->dtype) +
              "\",\"shape\":" + shape_text(d.shape, "[", "]", ",") + ",\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(end) + "]},";
    offset = end;
  }
  if (header.back() == ',') header.pop_back();
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  OutFile out(ctx);
  out.write(le_bytes(header.size(), 8));
  out.write(header);
  for (const auto& d : data) write_little_endian(out, *d.buffer);
  out.close();
}

FileCtx file_ctx(Interp& in, const char* fn, Args a, int i) {
  return FileCtx{in, fn, eval::arg_string(in, fn, a, i)->text};
}

}  // namespace

void register_file_builtins(Interp& in) {
  TL_BUILTIN(
      in, "load-npy", 1, 1, "(load-npy PATH)",
      "The tensor stored in the NumPy .npy file PATH (format 1.0, 2.0 or 3.0). Dtypes: f2 f4 "
      "f8 i1 i2 i4 i8 u1 u4 b1. Big-endian data is converted; Fortran-order data is "
      "rearranged into row-major order.",
      [](Interp& in, Args a, N) -> Value { return load_npy(file_ctx(in, "load-npy", a, 0)); });
  TL_BUILTIN(
      in, "save-npy", 2, 2, "(save-npy TENSOR PATH)",
      "Writes TENSOR (realizing it) to PATH as a NumPy .npy file: format 1.0, little-endian, "
      "row-major. bf16 has no NPY type: cast to f32 first. Returns PATH.",
      [](Interp& in, Args a, N) -> Value {
        if (!is_tensor(a[0])) in.type_error("save-npy", 1, "a tensor", a[0]);
        save_npy(file_ctx(in, "save-npy", a, 1), as_tensor(a[0]));
        return a[1];
      });
  TL_BUILTIN(in, "load-safetensors", 1, 1, "(load-safetensors PATH)",
             "The tensors of the safetensors file PATH as an alist ((name . tensor) ...), in the "
             "order of their data in the file.",
             [](Interp& in, Args a, N) -> Value {
               return load_safetensors(file_ctx(in, "load-safetensors", a, 0));
             });
  TL_BUILTIN(
      in, "save-safetensors", 2, 4, "(save-safetensors PATH TENSORS &key metadata)",
      "Writes TENSORS, an alist ((name . tensor) ...) or a hash table from names to tensors, "
      "to PATH as a safetensors file, in that order, realizing them. :metadata, an alist or "
      "hash table of strings, is stored as __metadata__. Returns PATH.",
      [](Interp& in, Args a, N n) -> Value {
        FileCtx ctx = file_ctx(in, "save-safetensors", a, 0);
        bool has_metadata = false;
        Value metadata = eval::keyword_arg(a, 2, n, "metadata", &has_metadata);
        if (n > 2 && !has_metadata) {
          in.error("program-error",
                   "save-safetensors: expected :metadata after TENSORS, got " + in.repr(a[2]));
        }
        save_safetensors(ctx, a[1], metadata);
        return a[0];
      });
  TL_BUILTIN(in, "safetensors-metadata", 1, 1, "(safetensors-metadata PATH)",
             "The __metadata__ of the safetensors file PATH as an alist of strings ((key . value) "
             "...); nil when it has none.",
             [](Interp& in, Args a, N) -> Value {
               return safetensors_metadata(file_ctx(in, "safetensors-metadata", a, 0));
             });
}

}  // namespace tl::tensor
