// SPDX-License-Identifier: Apache-2.0
// The helpers the tensor file formats share, and the registration of their builtins.
#include "tensor/file_io.h"

#include <algorithm>

#include "eval/builtins.h"
#include "tensor/files.h"

namespace tl::tensor {

namespace file_io {

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

void swap_byte_order(Buffer& b) {
  std::size_t size = dtype_size(b.dtype);
  if (size == 1) return;
  for (std::size_t i = 0; i + size <= b.size_bytes(); i += size) {
    std::reverse(b.bytes().begin() + i, b.bytes().begin() + i + size);
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
                       const char* sep) {
  std::string s = open;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? sep : "") + std::to_string(shape[i]);
  return s + close;
}

Value make_loaded_tensor(Interp& in, std::shared_ptr<Buffer> buf,
                         const std::vector<std::int64_t>& shape) {
  if (buf->dtype == DType::Bool) {
    for (auto& b : buf->bytes()) b = b != 0;
  }
  in.heap.account_external(buf->size_bytes());
  return make_tensor(in, graph_at_call(in).make_buffer(std::move(buf), Shape(shape.begin(), shape.end())));
}

SavedData realize_for_save(Interp& in, TensorObj* t) {
  read_back(in, t);
  SavedData d{t->node->buffer, eval_shape(t->node->shape, t->node->bindings)};
  auto bytes = data_bytes(d.shape, dtype_size(d.buffer->dtype));
  if (!bytes || *bytes != d.buffer->size_bytes()) {
    throw tl::Error(ErrorKind::Internal, "eval", "internal-error",
                    "a realized buffer of " + std::to_string(d.buffer->size_bytes()) +
                        " bytes does not match its shape " + shape_str(t->node->shape) + " (" +
                        __FILE__ + ":" + std::to_string(__LINE__) + ")");
  }
  return d;
}

void write_little_endian(OutFile& out, const Buffer& b) {
  if (kHostIsLittleEndian) return out.write(b.data(), b.size_bytes());
  Buffer copy = b;
  swap_byte_order(copy);
  out.write(copy.data(), copy.size_bytes());
}

FileCtx file_ctx(Interp& in, const char* fn, Value* a, int i) {
  return FileCtx{in, fn, eval::arg_string(in, fn, a, i)->text};
}

}  // namespace file_io

void register_file_builtins(eval::Interp& in) {
  file_io::register_npy_builtins(in);
  file_io::register_safetensors_builtins(in);
  file_io::register_idx_builtins(in);
  file_io::register_csv_builtins(in);
}

}  // namespace tl::tensor
