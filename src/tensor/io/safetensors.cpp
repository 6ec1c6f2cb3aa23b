// SPDX-License-Identifier: Apache-2.0
// safetensors files (what Hugging Face models ship in), with a strict parser for the JSON
// header.
#include "tensor/io/safetensors.h"

#include <charconv>
#include <unordered_map>

namespace tl::tensor::io {

namespace {

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
      // The keys so far, for the duplicate check: a scan of the members made a header of
      // 200,000 tensors take 43 s to open (issue 19).
      std::unordered_set<std::string> keys;
      do {
        if (c == '[') {
          v.items.push_back(parse_value(depth + 1));
          continue;
        }
        if (!at('"')) fail("expected a string key");
        std::string key = parse_string();
        if (!keys.insert(key).second) fail("a repeated key " + json_quoted(key));
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

// Field `key` of a tensor's entry, which must be of `kind`.
const Json& entry_field(const FileCtx& ctx, const Json& entry, const std::string& tensor, const char* key,
                        Json::Kind kind) {
  for (const auto& m : entry.members) {
    if (m.key != key) continue;
    if (m.value.kind != kind) {
      ctx.fail("has tensor " + json_quoted(tensor) + " whose " + key + " is " + json_kind_name(m.value.kind) +
               ", not " + json_kind_name(kind));
    }
    return m.value;
  }
  ctx.fail("has tensor " + json_quoted(tensor) + " without " + key);
}

SafetensorsEntry parse_tensor_entry(const FileCtx& ctx, const std::string& name, const Json& entry,
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
  SafetensorsEntry t{name, DType::F32, {}, 0, 0};
  const std::string& dtype = entry_field(ctx, entry, name, "dtype", Json::Kind::String).text;
  // Safetensors' one complex type is C64.
  auto known = std::find_if(std::begin(kAllDTypes), std::end(kAllDTypes),
                            [&](DType dt) { return dt != DType::C128 && dtype == safetensors_dtype_name(dt); });
  if (known == std::end(kAllDTypes)) {
    std::string supported;
    for (DType dt : kAllDTypes) {
      if (dt != DType::C128) supported += " " + safetensors_dtype_name(dt);
    }
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
  if (offsets.size() != 2 || offsets[0].kind != Json::Kind::Integer || offsets[1].kind != Json::Kind::Integer ||
      offsets[0].integer < 0 || offsets[1].integer < offsets[0].integer) {
    ctx.fail(what + " whose data_offsets are not [BEGIN, END] with 0 <= BEGIN <= END");
  }
  t.begin = static_cast<std::uint64_t>(offsets[0].integer);
  t.end = static_cast<std::uint64_t>(offsets[1].integer);
  const std::string where = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end > data_size) {
    ctx.fail(what + " with " + where + " beyond the " + std::to_string(data_size) + " bytes of data");
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
SafetensorsHeader read_safetensors_header(const FileCtx& ctx, InFile& file) {
  const std::uint64_t size = file.size();
  if (size < 8) {
    ctx.fail("is not a safetensors file: it is " + std::to_string(size) + " bytes, too short for the header length");
  }
  std::uint8_t len[8];
  file.read(0, len, 8);
  const std::uint64_t header_len = read_le(len, 8);
  if (header_len > size - 8) {
    ctx.fail("is truncated: header length says " + std::to_string(header_len) + " bytes, file has " +
             std::to_string(size - 8) + " after the length");
  }
  Json root = JsonParser(ctx, file.read_string(8, static_cast<std::size_t>(header_len))).parse_document();
  if (root.kind != Json::Kind::Object) {
    ctx.fail("has a malformed header: it is " + std::string(json_kind_name(root.kind)));
  }
  SafetensorsHeader h;
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
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const SafetensorsEntry* last = nullptr;  // of the non-empty tensors so far, the one ending last
  for (const auto& t : h.tensors) {
    if (t.begin == t.end) continue;
    if (last != nullptr && t.begin < last->end) {
      ctx.fail("has tensors " + json_quoted(last->name) + " and " + json_quoted(t.name) + " whose data overlap");
    }
    if (last == nullptr || t.end > last->end) last = &t;
  }
  return h;
}

}  // namespace

std::string safetensors_dtype_name(DType t) {
  std::string name(dtype_name(t));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

SafetensorsReader::SafetensorsReader(const FileCtx& ctx)
    : ctx_(ctx), file_(ctx), header_(read_safetensors_header(ctx, file_)) {}

std::vector<const SafetensorsEntry*> SafetensorsReader::find(const std::vector<std::string>& names) const {
  std::unordered_map<std::string, const SafetensorsEntry*> by_name;
  for (const SafetensorsEntry& t : header_.tensors) by_name.emplace(t.name, &t);
  std::vector<const SafetensorsEntry*> chosen;
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) ctx_.fail("has no tensor " + json_quoted(name));
    chosen.push_back(it->second);
  }
  return chosen;
}

Array SafetensorsReader::read(const SafetensorsEntry& entry) {
  const std::size_t count = (entry.end - entry.begin) / dtype_size(entry.dtype);
  if (auto mapped = file_.map(header_.data_start + entry.begin, entry.dtype, count)) return Array{std::move(mapped), entry.shape};
  auto buf = std::make_shared<Buffer>(entry.dtype, count);
  file_.read(header_.data_start + entry.begin, buf->data(), buf->size_bytes());
  if (!kHostIsLittleEndian) swap_byte_order(*buf);
  normalize_bools(*buf);
  return Array{std::move(buf), entry.shape};
}

void check_safetensors_name(const FileCtx& ctx, const std::string& name, const std::unordered_set<std::string>& seen) {
  if (name == "__metadata__" || seen.count(name) != 0) {
    throw ConditionError("program-error", std::string(ctx.fn) + ": the tensor name " + json_quoted(name) + " is " +
                                              (name == "__metadata__" ? "reserved" : "given twice"));
  }
}

void write_safetensors(const FileCtx& ctx, const std::vector<std::pair<std::string, Array>>& tensors,
                       const std::optional<SafetensorsMetadata>& metadata) {
  std::string header = "{";
  if (metadata) {
    std::string fields;
    for (const auto& [key, value] : *metadata) {
      fields += (fields.empty() ? "" : ",") + json_quoted(key) + ":" + json_quoted(value);
    }
    header += "\"__metadata__\":{" + fields + "},";
  }
  std::unordered_set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& [name, array] : tensors) {
    check_safetensors_name(ctx, name, names);
    names.insert(name);
    const std::uint64_t end = offset + array.buffer->size_bytes();
    header += json_quoted(name) + ":{\"dtype\":\"" + safetensors_dtype_name(array.buffer->dtype) +
              "\",\"shape\":" + shape_text(array.shape, "[", "]", ",") + ",\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(end) + "]},";
    offset = end;
  }
  if (header.back() == ',') header.pop_back();
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  OutFile out(ctx);
  out.write(le_bytes(header.size(), 8));
  out.write(header);
  for (const auto& [name, array] : tensors) write_little_endian(out, *array.buffer);
  out.close();
}

}  // namespace tl::tensor::io
