// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files: writes format 1.0, reads 1.0 to 3.0, with a strict parser for the
// Python-literal header.
#include "tensor/io/npy.h"

namespace tl::tensor::io {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr std::size_t kNpyMagicSize = 6;

// The NPY type code of a dtype ("f4", "u1", "c8"): its kind letter and size. bf16 has none ("").
std::string npy_code(DType t) {
  if (t == DType::BF16 || is_quantized(t)) return "";
  constexpr char kKind[] = {'b', 'u', 'i', 'f', '?', 'c'};  // by DCat
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
  // An empty descr once reached descr.substr(1) and escaped as std::out_of_range (issue 19).
  if (descr.empty()) ctx.fail("has a malformed header: its descr is empty (expected e.g. '<f4')");
  const bool has_order = std::strchr("<>|=", descr[0]) != nullptr && descr[0] != '\0';
  const char order = has_order ? descr[0] : '=';
  const std::string code = has_order ? descr.substr(1) : descr;
  std::string supported;
  for (DType t : kAllDTypes) {
    if (t == DType::BF16) continue;
    supported += " " + npy_descr(t);
    if (code != npy_code(t) || (order == '|' && dtype_size(t) != 1)) continue;
    bool big = order == '>' || (order == '=' && !kHostIsLittleEndian);
    return {t, big && dtype_size(t) > 1};
  }
  ctx.fail_dtype("has dtype " + json_quoted(descr) + ", which TensorLisp does not support (supported:" + supported +
                 ")");
}

// Data stored in Fortran (column-major) order, rewritten in C (row-major) order.
std::shared_ptr<Buffer> fortran_to_c_order(const Buffer& src, const std::vector<std::int64_t>& shape) {
  auto out = std::make_shared<Buffer>(src.dtype, src.count());
  const std::size_t elem = dtype_size(src.dtype);
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> stride(rank), index(rank, 0);
  for (std::size_t k = 0; k < rank; ++k) stride[k] = k == 0 ? 1 : stride[k - 1] * shape[k - 1];
  for (std::size_t i = 0; i < src.count(); ++i) {
    std::int64_t from = 0;
    for (std::size_t k = 0; k < rank; ++k) from += index[k] * stride[k];
    std::memcpy(static_cast<std::uint8_t*>(out->data()) + i * elem, static_cast<const std::uint8_t*>(src.data()) + from * elem, elem);
    for (std::size_t k = rank; k-- > 0;) {  // the next index in row-major order
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

Array read_npy(const FileCtx& ctx) {
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
    ctx.fail("is truncated: header length says " + std::to_string(header_len) + " bytes, file has " +
             std::to_string(size - header_start) + " after the length");
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
    ctx.fail("is truncated: header says " + want + " bytes of data, file has " + std::to_string(have));
  }
  if (have > *bytes) {
    ctx.fail("has " + std::to_string(have - *bytes) + " bytes after its data (header says " + want + " bytes)");
  }
  auto buf = std::make_shared<Buffer>(dtype, static_cast<std::size_t>(*bytes / dtype_size(dtype)));
  file.read(data_start, buf->data(), buf->size_bytes());
  if (big_endian == kHostIsLittleEndian) swap_byte_order(*buf);
  if (h.fortran_order && h.shape.size() > 1) buf = fortran_to_c_order(*buf, h.shape);
  normalize_bools(*buf);
  return Array{std::move(buf), std::move(h.shape)};
}

bool npy_supports(DType t) { return !npy_code(t).empty(); }

void check_npy_dtype(const FileCtx& ctx, DType t) {
  if (npy_supports(t)) return;
  ctx.fail_dtype("cannot hold " + std::string(dtype_name(t)) +
                 " data: NPY has no such type; cast the tensor first, e.g. (cast x 'f32)");
}

void write_npy(const FileCtx& ctx, const Array& array) {
  check_npy_dtype(ctx, array.buffer->dtype);
  const std::vector<std::int64_t>& dims = array.shape;
  std::string shape = dims.size() == 1 ? "(" + std::to_string(dims[0]) + ",)" : shape_text(dims, "(", ")");
  std::string header =
      "{'descr': '" + npy_descr(array.buffer->dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
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
  write_little_endian(out, *array.buffer);
  out.close();
}

}  // namespace tl::tensor::io
