// SPDX-License-Identifier: Apache-2.0
// GGUF files (llama.cpp's format): a checked parser for the header (metadata and tensor
// table) and the readers of tensor data, with Q8_0 and Q4_0 blocks dequantized to f32 or kept
// as q8_0 and q4_0 tensors.
#include "tensor/io/gguf.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "tensor/quant.h"

namespace tl::tensor::io {

namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::uint64_t kDefaultAlignment = 32;
constexpr std::uint32_t kMaxDims = 4;  // ggml's GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;      // arrays of arrays; bounds the recursion

// The ggml tensor types GGUF files may hold: name, elements per block, bytes per block
// (gguf-py's GGML_QUANT_SIZES). Sizes are known for every type, so the header check covers
// tensors of types this reader cannot decode.
struct TypeInfo {
  std::uint32_t id;
  const char* name;
  std::uint32_t block;
  std::uint32_t block_bytes;
};
constexpr std::uint32_t kQK = 256;  // elements per block of the k-quants
constexpr TypeInfo kTypes[] = {
    {0, "F32", 1, 4},
    {1, "F16", 1, 2},
    {2, "Q4_0", 32, 2 + 16},
    {3, "Q4_1", 32, 2 + 2 + 16},
    {6, "Q5_0", 32, 2 + 4 + 16},
    {7, "Q5_1", 32, 2 + 2 + 4 + 16},
    {8, "Q8_0", 32, 2 + 32},
    {9, "Q8_1", 32, 4 + 4 + 32},
    {10, "Q2_K", kQK, 2 + 2 + kQK / 16 + kQK / 4},
    {11, "Q3_K", kQK, 2 + kQK / 4 + kQK / 8 + 12},
    {12, "Q4_K", kQK, 2 + 2 + kQK / 2 + 12},
    {13, "Q5_K", kQK, 2 + 2 + kQK / 2 + kQK / 8 + 12},
    {14, "Q6_K", kQK, 2 + kQK / 2 + kQK / 4 + kQK / 16},
    {15, "Q8_K", kQK, 4 + kQK + kQK / 8},
    {16, "IQ2_XXS", kQK, 2 + kQK / 4},
    {17, "IQ2_XS", kQK, 2 + kQK / 4 + kQK / 32},
    {18, "IQ3_XXS", kQK, 2 + kQK / 4 + kQK / 8},
    {19, "IQ1_S", kQK, 2 + kQK / 8 + kQK / 16},
    {20, "IQ4_NL", 32, 2 + 16},
    {21, "IQ3_S", kQK, 2 + kQK / 4 + kQK / 8 + kQK / 32 + 4},
    {22, "IQ2_S", kQK, 2 + kQK / 4 + kQK / 16},
    {23, "IQ4_XS", kQK, 2 + 2 + kQK / 2 + kQK / 64},
    {24, "I8", 1, 1},
    {25, "I16", 1, 2},
    {26, "I32", 1, 4},
    {27, "I64", 1, 8},
    {28, "F64", 1, 8},
    {29, "IQ1_M", kQK, kQK / 8 + kQK / 16 + kQK / 32},
    {30, "BF16", 1, 2},
    {34, "TQ1_0", kQK, 2 + 4 * 13},
    {35, "TQ2_0", kQK, 2 + 64},
};
constexpr std::uint32_t kQ4_0 = 2, kQ8_0 = 8;

const TypeInfo* type_info(std::uint32_t type) {
  for (const TypeInfo& t : kTypes) {
    if (t.id == type) return &t;
  }
  return nullptr;
}

// Bytes of a scalar metadata value of type t (0 for strings and arrays).
std::size_t scalar_bytes(GgufValueType t) {
  constexpr std::size_t kBytes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return kBytes[static_cast<std::uint32_t>(t)];
}

// Reads the header front to back through a window of the file, so that a header of many
// megabytes (a tokenizer's vocabulary) costs a few large reads. Every read is checked
// against the file's size first: a count or a length is never trusted.
class HeaderParser {
 public:
  HeaderParser(const FileCtx& ctx, InFile& file) : ctx_(ctx), file_(file) {}

  GgufHeader parse() {
    GgufHeader h;
    if (file_.size() < 4 || u32("the magic number") != kMagic) {
      ctx_.fail("is not a GGUF file: it does not start with \"GGUF\"");
    }
    h.version = u32("the version");
    if (h.version == 1) ctx_.fail("is a GGUF version 1 file, which is not supported (only versions 2 and 3)");
    if (h.version == 0x02000000 || h.version == 0x03000000) {
      ctx_.fail("is a big-endian GGUF file, which is not supported");
    }
    if (h.version != 2 && h.version != 3) {
      ctx_.fail("has GGUF version " + std::to_string(h.version) + ", which is not supported (only 2 and 3)");
    }
    const std::uint64_t tensor_count = u64("the tensor count");
    const std::uint64_t kv_count = u64("the metadata count");
    // The least each entry can take: a key's length, its type and a one-byte value; a
    // tensor's name length, dimension count, type and offset.
    check_count(kv_count, 8 + 4 + 1, "metadata entries");
    check_count(tensor_count, 8 + 4 + 4 + 8, "tensors");
    std::unordered_set<std::string> keys;
    for (std::uint64_t i = 0; i < kv_count; ++i) {
      std::string key = string("a metadata key");
      if (!keys.insert(key).second) ctx_.fail("has the metadata key " + json_quoted(key) + " twice");
      const auto type = value_type("the type of metadata " + json_quoted(key));
      GgufValue v = value(type, key, 0);
      if (key == "general.alignment") h.alignment = alignment(v);
      h.metadata.emplace_back(std::move(key), std::move(v));
    }
    std::unordered_set<std::string> names;
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
      h.tensors.push_back(tensor_info());
      if (!names.insert(h.tensors.back().name).second) {
        ctx_.fail("has the tensor " + json_quoted(h.tensors.back().name) + " twice");
      }
    }
    // The data section starts at the next multiple of the alignment (at the end of the file
    // when there are no tensors and no padding).
    // A file cut inside that padding has no data section: every tensor of data then fails
    // the bounds check of check_tensors, which names it.
    const std::uint64_t end = pos_;
    const std::uint64_t pad = (h.alignment - end % h.alignment) % h.alignment;
    h.data_start = std::min(end + pad, file_.size());
    check_tensors(h);
    return h;
  }

 private:
  // Makes bytes [pos_, pos_ + n) available in the window, or fails naming `what`.
  const std::uint8_t* take(std::uint64_t n, const std::string& what) {
    if (n > file_.size() || pos_ > file_.size() - n) {
      ctx_.fail("is truncated: it ends inside " + what + " (byte " + std::to_string(pos_) + " of " +
                std::to_string(file_.size()) + ")");
    }
    if (pos_ < window_start_ || pos_ + n > window_start_ + window_.size()) {
      constexpr std::uint64_t kWindow = std::uint64_t{1} << 20;
      const std::uint64_t len = std::min(file_.size() - pos_, std::max(n, kWindow));
      window_.resize(static_cast<std::size_t>(len));
      file_.read(pos_, window_.data(), window_.size());
      window_start_ = pos_;
    }
    const std::uint8_t* p = window_.data() + (pos_ - window_start_);
    pos_ += n;
    return p;
  }
  std::uint32_t u32(const std::string& what) { return static_cast<std::uint32_t>(read_le(take(4, what), 4)); }
  std::uint64_t u64(const std::string& what) { return read_le(take(8, what), 8); }
  std::string string(const std::string& what) {
    const std::uint64_t n = u64("the length of " + what);
    const std::uint8_t* p = take(n, what);
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }
  GgufValueType value_type(const std::string& what) {
    const std::uint32_t t = u32(what);
    if (t > static_cast<std::uint32_t>(GgufValueType::F64)) {
      ctx_.fail("has " + what + " " + std::to_string(t) + ", which GGUF does not define");
    }
    return static_cast<GgufValueType>(t);
  }
  // Fails unless `count` entries of at least `least` bytes each fit in the rest of the file.
  void check_count(std::uint64_t count, std::uint64_t least, const char* what) {
    const std::uint64_t rest = file_.size() - pos_;
    if (count > rest / least) {
      ctx_.fail("is truncated or corrupt: it claims " + std::to_string(count) + " " + what + ", more than its " +
                std::to_string(rest) + " remaining bytes can hold");
    }
  }

  // One scalar of type t appended to v.
  void scalar(GgufValueType t, GgufValue& v, const std::string& what) {
    using T = GgufValueType;
    if (t == T::String) {
      v.texts.push_back(string(what));
      return;
    }
    const std::size_t n = scalar_bytes(t);
    const std::uint64_t raw = read_le(take(n, what), static_cast<int>(n));
    switch (t) {
      case T::I8: v.ints.push_back(static_cast<std::int8_t>(raw)); break;
      case T::I16: v.ints.push_back(static_cast<std::int16_t>(raw)); break;
      case T::I32: v.ints.push_back(static_cast<std::int32_t>(raw)); break;
      case T::U8:
      case T::U16:
      case T::U32:
      case T::U64:
      case T::I64: v.ints.push_back(static_cast<std::int64_t>(raw)); break;
      case T::Bool:
        if (raw > 1) ctx_.fail("has " + what + " that is a bool of value " + std::to_string(raw));
        v.ints.push_back(static_cast<std::int64_t>(raw));
        break;
      case T::F32: v.reals.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(raw))); break;
      case T::F64: v.reals.push_back(std::bit_cast<double>(raw)); break;
      default: break;  // String and Array are handled by the callers
    }
  }

  GgufValue value(GgufValueType type, const std::string& key, int depth) {
    const std::string what = "metadata " + json_quoted(key);
    GgufValue v;
    v.type = type;
    if (type != GgufValueType::Array) {
      scalar(type, v, what);
      return v;
    }
    if (depth >= kMaxArrayDepth) {
      ctx_.fail("has " + what + " with arrays nested more than " + std::to_string(kMaxArrayDepth) + " deep");
    }
    v.is_array = true;
    v.type = value_type("the element type of " + what);
    const std::uint64_t count = u64("the length of " + what);
    const std::size_t least = v.type == GgufValueType::String  ? 8
                              : v.type == GgufValueType::Array ? 12
                                                               : scalar_bytes(v.type);
    check_count(count, least, ("elements in " + what).c_str());
    for (std::uint64_t i = 0; i < count; ++i) {
      if (v.type == GgufValueType::Array) {
        v.items.push_back(value(GgufValueType::Array, key, depth + 1));
      } else {
        scalar(v.type, v, what);
      }
    }
    return v;
  }

  std::uint64_t alignment(const GgufValue& v) {
    const std::uint64_t a = v.ints.empty() ? 0 : static_cast<std::uint64_t>(v.ints[0]);
    if (v.is_array || v.type != GgufValueType::U32 || a == 0 || (a & (a - 1)) != 0) {
      ctx_.fail("has general.alignment that is not a u32 power of two");
    }
    return a;
  }

  GgufTensorInfo tensor_info() {
    GgufTensorInfo t;
    t.name = string("a tensor name");
    const std::string what = "tensor " + json_quoted(t.name);
    const std::uint32_t n_dims = u32("the dimension count of " + what);
    if (n_dims > kMaxDims) {
      ctx_.fail("has " + what + " with " + std::to_string(n_dims) + " dimensions (at most " + std::to_string(kMaxDims) +
                ")");
    }
    std::vector<std::int64_t> dims;  // fastest-varying first, as stored
    for (std::uint32_t i = 0; i < n_dims; ++i) {
      const std::uint64_t d = u64("the dimensions of " + what);
      if (d > static_cast<std::uint64_t>(INT64_MAX))
        ctx_.fail("has " + what + " with a dimension of " + std::to_string(d));
      dims.push_back(static_cast<std::int64_t>(d));
    }
    t.shape.assign(dims.rbegin(), dims.rend());
    t.type = u32("the type of " + what);
    t.offset = u64("the data offset of " + what);
    return t;
  }

  // Sizes from type and shape, alignment, bounds and overlap of every tensor's data.
  void check_tensors(GgufHeader& h) {
    const std::uint64_t data_size = file_.size() - h.data_start;
    std::vector<const GgufTensorInfo*> by_offset;
    for (GgufTensorInfo& t : h.tensors) {
      const std::string what = "tensor " + json_quoted(t.name);
      const TypeInfo* info = type_info(t.type);
      if (info == nullptr)
        ctx_.fail_dtype("has " + what + " of type " + std::to_string(t.type) + ", which GGUF does not define");
      std::uint64_t count = 1;
      for (std::int64_t d : t.shape) {
        if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count) ||
            count > static_cast<std::uint64_t>(INT64_MAX)) {
          ctx_.fail("has " + what + " of shape " + shape_text(t.shape, "(", ")", " ") + ", too many elements");
        }
      }
      const std::int64_t row = t.shape.empty() ? 1 : t.shape.back();
      if (row % info->block != 0) {
        ctx_.fail("has " + what + " of type " + info->name + " whose rows of " + std::to_string(row) +
                  " elements are not whole blocks of " + std::to_string(info->block));
      }
      if (__builtin_mul_overflow(count / info->block, std::uint64_t{info->block_bytes}, &t.bytes)) {
        ctx_.fail("has " + what + " of shape " + shape_text(t.shape, "(", ")", " ") + ", too many bytes");
      }
      if (t.offset % h.alignment != 0) {
        ctx_.fail("has " + what + " at data offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
                  std::to_string(h.alignment));
      }
      if (t.offset > data_size || t.bytes > data_size - t.offset) {
        ctx_.fail("is truncated: " + what + " (" + std::to_string(t.bytes) + " bytes at data offset " +
                  std::to_string(t.offset) + ") ends beyond the " + std::to_string(data_size) + " bytes of data");
      }
      by_offset.push_back(&t);
    }
    std::stable_sort(by_offset.begin(), by_offset.end(),
                     [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
    const GgufTensorInfo* last = nullptr;  // of the non-empty tensors so far, the one ending last
    for (const GgufTensorInfo* t : by_offset) {
      if (t->bytes == 0) continue;
      if (last != nullptr && t->offset < last->offset + last->bytes) {
        ctx_.fail("has tensors " + json_quoted(last->name) + " and " + json_quoted(t->name) + " whose data overlap");
      }
      if (last == nullptr || t->offset + t->bytes > last->offset + last->bytes) last = t;
    }
  }

  const FileCtx& ctx_;
  InFile& file_;
  std::uint64_t pos_ = 0;
  std::uint64_t window_start_ = 0;
  std::vector<std::uint8_t> window_;
};

}  // namespace

std::string gguf_type_name(std::uint32_t type) {
  const TypeInfo* info = type_info(type);
  return info != nullptr ? info->name : "type " + std::to_string(type);
}

std::optional<DType> gguf_load_dtype(std::uint32_t type) {
  switch (type) {
    case 0:
    case kQ4_0:
    case kQ8_0: return DType::F32;
    case 1: return DType::F16;
    case 30: return DType::BF16;
    case 24: return DType::I8;
    case 25: return DType::I16;
    case 26: return DType::I32;
    case 27: return DType::I64;
    case 28: return DType::F64;
    default: return std::nullopt;
  }
}

GgufReader::GgufReader(const FileCtx& ctx) : ctx_(ctx), file_(ctx), header_(HeaderParser(ctx, file_).parse()) {}

std::vector<const GgufTensorInfo*> GgufReader::find(const std::vector<std::string>& names) const {
  std::unordered_map<std::string, const GgufTensorInfo*> by_name;
  for (const GgufTensorInfo& t : header_.tensors) by_name.emplace(t.name, &t);
  std::vector<const GgufTensorInfo*> chosen;
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) ctx_.fail("has no tensor " + json_quoted(name));
    chosen.push_back(it->second);
  }
  return chosen;
}

namespace {

// The ggml type a dtype is written as, or nullopt.
std::optional<std::uint32_t> gguf_type_of(DType t) {
  switch (t) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return kQ4_0;
    case DType::Q8_0: return kQ8_0;
    case DType::C64:
    case DType::C128: return std::nullopt;
    case DType::I8: return 24;
    case DType::I16: return 25;
    case DType::I32: return 26;
    case DType::I64: return 27;
    case DType::F64: return 28;
    case DType::BF16: return 30;
    case DType::Bool:
    case DType::U8:
    case DType::U32: return std::nullopt;
  }
  return std::nullopt;
}

std::string gguf_string(const std::string& s) { return le_bytes(s.size(), 8) + s; }

// One value's bytes after its type (an array: its element type and count, then the elements).
std::string gguf_value_bytes(const GgufValue& v) {
  using T = GgufValueType;
  std::string out;
  const std::size_t count = v.type == T::String                    ? v.texts.size()
                            : v.type == T::Array                   ? v.items.size()
                            : v.type == T::F32 || v.type == T::F64 ? v.reals.size()
                                                                   : v.ints.size();
  if (v.is_array) out += le_bytes(static_cast<std::uint32_t>(v.type), 4) + le_bytes(count, 8);
  for (std::size_t i = 0; i < count; ++i) {
    switch (v.type) {
      case T::String: out += gguf_string(v.texts[i]); break;
      case T::Array: out += gguf_value_bytes(v.items[i]); break;  // an array: its type, count, elements
      case T::F32: {
        const float f = static_cast<float>(v.reals[i]);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        out += le_bytes(bits, 4);
        break;
      }
      case T::F64: {
        std::uint64_t bits;
        std::memcpy(&bits, &v.reals[i], 8);
        out += le_bytes(bits, 8);
        break;
      }
      default: out += le_bytes(static_cast<std::uint64_t>(v.ints[i]), static_cast<int>(scalar_bytes(v.type))); break;
    }
  }
  return out;
}

}  // namespace

void write_gguf(const FileCtx& ctx, const std::vector<std::pair<std::string, GgufValue>>& metadata,
                const std::vector<std::pair<std::string, Array>>& tensors) {
  std::string head = le_bytes(kMagic, 4) + le_bytes(3, 4) + le_bytes(tensors.size(), 8) + le_bytes(metadata.size(), 8);
  for (const auto& [key, v] : metadata) {
    head += gguf_string(key) + le_bytes(static_cast<std::uint32_t>(v.is_array ? GgufValueType::Array : v.type), 4);
    head += gguf_value_bytes(v);
  }
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> offsets;
  for (const auto& [name, array] : tensors) {
    const std::optional<std::uint32_t> type = gguf_type_of(array.buffer->dtype);
    if (!type) {
      ctx.fail_dtype("cannot hold tensor " + json_quoted(name) + " of dtype " +
                     std::string(dtype_name(array.buffer->dtype)) +
                     (is_complex(array.buffer->dtype) ? ": GGUF has no complex type; save (view-as-real z), its parts"
                                                      : ": GGUF has no such type; cast it first, e.g. (cast x 'i32)"));
    }
    if (array.shape.size() > kMaxDims) {
      ctx.fail("cannot hold tensor " + json_quoted(name) + " of " + std::to_string(array.shape.size()) +
               " dimensions: GGUF's tensors have at most 4");
    }
    head += gguf_string(name) + le_bytes(std::max<std::size_t>(array.shape.size(), 1), 4);
    if (array.shape.empty()) head += le_bytes(1, 8);
    for (auto d = array.shape.rbegin(); d != array.shape.rend(); ++d)
      head += le_bytes(static_cast<std::uint64_t>(*d), 8);
    head += le_bytes(*type, 4) + le_bytes(offset, 8);
    offsets.push_back(offset);
    offset += (array.buffer->size_bytes() + kDefaultAlignment - 1) / kDefaultAlignment * kDefaultAlignment;
  }
  head.append((kDefaultAlignment - head.size() % kDefaultAlignment) % kDefaultAlignment, '\0');
  OutFile out(ctx);
  out.write(head);
  for (const auto& [name, array] : tensors) {
    write_little_endian(out, *array.buffer);
    const std::size_t pad = (kDefaultAlignment - array.buffer->size_bytes() % kDefaultAlignment) % kDefaultAlignment;
    out.write(std::string(pad, '\0'));
  }
  out.close();
}

Array GgufReader::read(const GgufTensorInfo& t, bool quantized) {
  const std::optional<DType> dtype = gguf_load_dtype(t.type);
  if (!dtype) {
    ctx_.fail_dtype("has tensor " + json_quoted(t.name) + " of type " + gguf_type_name(t.type) +
                    ", which TensorLisp cannot read (supported: F32 F16 BF16 Q8_0 Q4_0 F64 I8 I16 I32 I64)");
  }
  const std::uint64_t start = header_.data_start + t.offset;
  const TypeInfo& info = *type_info(t.type);
  if (quantized && (t.type == kQ8_0 || t.type == kQ4_0)) {
    // The blocks as they are: a q8_0 or q4_0 tensor (the last axis holds whole blocks).
    const DType q = t.type == kQ8_0 ? DType::Q8_0 : DType::Q4_0;
    const std::size_t count = t.bytes / info.block_bytes * info.block;
    if (auto mapped = file_.map(start, q, count)) return Array{std::move(mapped), t.shape};
    auto buf = std::make_shared<Buffer>(q, count);
    file_.read(start, buf->data(), buf->size_bytes());
    return Array{std::move(buf), t.shape};
  }
  if (info.block == 1) {
    if (auto mapped = file_.map(start, *dtype, t.bytes / info.block_bytes)) return Array{std::move(mapped), t.shape};
    auto buf = std::make_shared<Buffer>(*dtype, t.bytes / info.block_bytes);
    file_.read(start, buf->data(), buf->size_bytes());
    if (!kHostIsLittleEndian) swap_byte_order(*buf);
    return Array{std::move(buf), t.shape};
  }
  // Quantized: read a bounded chunk of blocks at a time and expand it into the f32 buffer.
  const std::size_t n_blocks = t.bytes / info.block_bytes;
  auto buf = std::make_shared<Buffer>(DType::F32, n_blocks * info.block);
  float* out = static_cast<float*>(buf->data());
  constexpr std::size_t kChunkBlocks = 1 << 16;
  std::vector<std::uint8_t> raw;
  for (std::size_t b = 0; b < n_blocks; b += kChunkBlocks) {
    const std::size_t count = std::min(kChunkBlocks, n_blocks - b);
    raw.resize(count * info.block_bytes);
    file_.read(start + static_cast<std::uint64_t>(b) * info.block_bytes, raw.data(), raw.size());
    float* dst = out + b * info.block;
    dequantize_blocks(t.type == kQ8_0 ? DType::Q8_0 : DType::Q4_0, raw.data(), count * info.block, dst);
  }
  return Array{std::move(buf), t.shape};
}

}  // namespace tl::tensor::io
