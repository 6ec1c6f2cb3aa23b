// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/io/: .npy and safetensors files written and read back through the
// plain C++ readers and writers, with no interpreter, GGUF files built byte by byte, and the
// errors of malformed headers.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tensor/io/gguf.h"
#include "tensor/io/npy.h"
#include "tensor/io/safetensors.h"

using tl::ConditionError;
using tl::tensor::Buffer;
using tl::tensor::DType;
namespace io = tl::tensor::io;

namespace {

// A path in the temporary directory, unique to this process, removed when the test ends.
struct TempPath {
  std::string path;
  explicit TempPath(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("tl-io-test-" + std::to_string(getpid()) + "-" + name))
                 .string()) {}
  ~TempPath() { std::filesystem::remove(path); }
};

// An array of dtype t and this shape whose bytes are 0, 1, 2, ... (mod 256).
io::Array counting_array(DType t, std::vector<std::int64_t> shape) {
  std::size_t count = 1;
  for (auto d : shape) count *= static_cast<std::size_t>(d);
  auto buf = std::make_shared<Buffer>(t, count);
  for (std::size_t i = 0; i < buf->size_bytes(); ++i) {
    buf->bytes()[i] = static_cast<std::uint8_t>(i * 7 + 1);
  }
  return io::Array{std::move(buf), std::move(shape)};
}

bool same_bytes(const Buffer& a, const Buffer& b) {
  return a.dtype == b.dtype && a.size_bytes() == b.size_bytes() &&
         (a.size_bytes() == 0 || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// The ConditionError `f` throws (its type and message), or a failed check when none.
template <typename F>
ConditionError thrown_by(F f) {
  try {
    f();
  } catch (const ConditionError& e) {
    return e;
  }
  FAIL("no ConditionError thrown");
  return ConditionError("", "");
}

}  // namespace

TEST_CASE("npy files round-trip through write_npy and read_npy", "[io]") {
  TempPath file("round.npy");
  int polls = 0;
  const io::FileCtx ctx{"io_test", file.path, [&] { ++polls; }};
  for (auto [dtype, shape] : std::vector<std::pair<DType, std::vector<std::int64_t>>>{
           {DType::F32, {2, 3}}, {DType::I64, {5}}, {DType::F16, {}}, {DType::U8, {2, 0, 4}}}) {
    io::Array saved = counting_array(dtype, shape);
    io::write_npy(ctx, saved);
    io::Array loaded = io::read_npy(ctx);
    CHECK(loaded.shape == shape);
    CHECK(same_bytes(*loaded.buffer, *saved.buffer));
  }
  CHECK(polls > 0);  // the reader polls between chunks, so a host can stop a long load
}

TEST_CASE("npy bool data reads back as 0 and 1", "[io]") {
  TempPath file("bool.npy");
  const io::FileCtx ctx{"io_test", file.path, {}};
  io::Array saved = counting_array(DType::Bool, {4});
  io::write_npy(ctx, saved);
  io::Array loaded = io::read_npy(ctx);
  REQUIRE(loaded.buffer->size_bytes() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(loaded.buffer->bytes()[i] == 1);
}

TEST_CASE("npy cannot hold bf16", "[io]") {
  TempPath file("bf16.npy");
  const io::FileCtx ctx{"save-npy", file.path, {}};
  ConditionError e = thrown_by([&] { io::write_npy(ctx, counting_array(DType::BF16, {2})); });
  CHECK(e.type == "dtype-error");
  CHECK(std::string(e.what()) == "save-npy: \"" + file.path +
                                     "\" cannot hold bf16 data: NPY has no such type; cast the "
                                     "tensor first, e.g. (cast x 'f32)");
  CHECK_FALSE(std::filesystem::exists(file.path));  // checked before the file is opened
}

TEST_CASE("a malformed npy header is a file-error naming the byte", "[io]") {
  TempPath file("bad.npy");
  const std::string header = "{'descr': '<f4' 'shape': (2,)}";
  write_file(file.path, std::string("\x93NUMPY\x01\x00", 8) + io::le_bytes(header.size(), 2) + header);
  ConditionError e = thrown_by([&] { io::read_npy(io::FileCtx{"load-npy", file.path, {}}); });
  CHECK(e.type == "file-error");
  CHECK(std::string(e.what()) == "load-npy: \"" + file.path +
                                     "\" has a malformed header: expected '}' at byte 16 of the "
                                     "header");
}

TEST_CASE("safetensors files round-trip through write_safetensors and SafetensorsReader", "[io]") {
  TempPath file("round.safetensors");
  const io::FileCtx ctx{"io_test", file.path, {}};
  std::vector<std::pair<std::string, io::Array>> saved = {{"w", counting_array(DType::F32, {2, 2})},
                                                          {"b", counting_array(DType::I32, {3})},
                                                          {"empty", counting_array(DType::BF16, {0, 5})},
                                                          {"flag", counting_array(DType::Bool, {1})}};
  io::write_safetensors(ctx, saved, io::SafetensorsMetadata{{"format", "pt"}, {"k", "v\n"}});

  io::SafetensorsReader reader(ctx);
  const io::SafetensorsHeader& h = reader.header();
  CHECK(h.metadata == io::SafetensorsMetadata{{"format", "pt"}, {"k", "v\n"}});
  REQUIRE(h.tensors.size() == saved.size());
  // In the order of their data: as written, the empty tensor sorted by its offset.
  const std::vector<std::string> order = {"w", "b", "empty", "flag"};
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(h.tensors[i].name == order[i]);
  for (const auto& [name, array] : saved) {
    const io::SafetensorsEntry* entry = reader.find({name}).at(0);
    CHECK(entry->dtype == array.buffer->dtype);
    CHECK(entry->shape == array.shape);
    io::Array loaded = reader.read(*entry);
    CHECK(loaded.shape == array.shape);
    if (array.buffer->dtype != DType::Bool) CHECK(same_bytes(*loaded.buffer, *array.buffer));
  }
  CHECK(reader.read(*reader.find({"flag"}).at(0)).buffer->bytes()[0] == 1);

  ConditionError e = thrown_by([&] { reader.find({"w", "missing"}); });
  CHECK(e.type == "file-error");
  CHECK(std::string(e.what()) == "io_test: \"" + file.path + "\" has no tensor \"missing\"");
}

TEST_CASE("large safetensors tensors are mapped, privately", "[io]") {
  TempPath file("mapped.safetensors");
  const io::FileCtx ctx{"io_test", file.path, {}};
  // 1 MiB and more of f32 (mapped); after 3 bytes of i8, another (unaligned: read); a small
  // one (read).
  std::vector<std::pair<std::string, io::Array>> saved = {{"big", counting_array(DType::F32, {512, 600})},
                                                          {"odd", counting_array(DType::I8, {3})},
                                                          {"shifted", counting_array(DType::F32, {512, 600})},
                                                          {"small", counting_array(DType::F32, {4})}};
  io::write_safetensors(ctx, saved, std::nullopt);
  io::SafetensorsReader reader(ctx);
  REQUIRE(reader.header().data_start % 8 == 0);  // the writer pads its header
  io::Array loaded = reader.read(*reader.find({"big"}).at(0));
  CHECK(loaded.buffer->outside());
  CHECK(same_bytes(*loaded.buffer, *saved[0].second.buffer));
  io::Array shifted = reader.read(*reader.find({"shifted"}).at(0));
  CHECK_FALSE(shifted.buffer->outside());
  CHECK(same_bytes(*shifted.buffer, *saved[2].second.buffer));
  CHECK_FALSE(reader.read(*reader.find({"small"}).at(0)).buffer->outside());
  // Writes stay in memory: the file keeps its data.
  static_cast<float*>(loaded.buffer->data())[7] = -1.0F;
  CHECK(same_bytes(*reader.read(*reader.find({"big"}).at(0)).buffer, *saved[0].second.buffer));
  // bytes() makes the data the buffer's own, with the write.
  CHECK(reinterpret_cast<const float*>(loaded.buffer->bytes().data())[7] == -1.0F);
  CHECK_FALSE(loaded.buffer->outside());
}

TEST_CASE("safetensors names are checked before writing", "[io]") {
  TempPath file("names.safetensors");
  const io::FileCtx ctx{"save-safetensors", file.path, {}};
  std::vector<std::pair<std::string, io::Array>> twice = {{"x", counting_array(DType::F32, {1})},
                                                          {"x", counting_array(DType::F32, {1})}};
  ConditionError e = thrown_by([&] { io::write_safetensors(ctx, twice, std::nullopt); });
  CHECK(e.type == "program-error");
  CHECK(std::string(e.what()) == "save-safetensors: the tensor name \"x\" is given twice");
}

TEST_CASE("a malformed safetensors header is a file-error naming the byte", "[io]") {
  TempPath file("bad.safetensors");
  const std::string header = R"({"x":{},"x":{}})";
  write_file(file.path, io::le_bytes(header.size(), 8) + header);
  ConditionError e = thrown_by([&] { io::SafetensorsReader(io::FileCtx{"load-safetensors", file.path, {}}); });
  CHECK(e.type == "file-error");
  CHECK(std::string(e.what()) == "load-safetensors: \"" + file.path +
                                     "\" has a malformed header: a repeated key \"x\" at byte 11 "
                                     "of the header");
}

// --- GGUF -------------------------------------------------------------------------------------

namespace {

// A GGUF file built byte by byte (version 3, little-endian), as llama.cpp's gguf-py writes it.
struct GgufBuilder {
  std::string kvs, infos, data;
  std::uint64_t n_kv = 0, n_tensors = 0, alignment = 32;

  static std::string str(const std::string& s) { return io::le_bytes(s.size(), 8) + s; }
  void kv(const std::string& key, std::uint32_t type, const std::string& value) {
    kvs += str(key) + io::le_bytes(type, 4) + value;
    ++n_kv;
  }
  // A tensor of row-major `shape`, its data padded to the alignment.
  void tensor(const std::string& name, std::vector<std::uint64_t> shape, std::uint32_t type, const std::string& bytes) {
    infos += str(name) + io::le_bytes(shape.size(), 4);
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) infos += io::le_bytes(*it, 8);
    infos += io::le_bytes(type, 4) + io::le_bytes(data.size(), 8);
    data += bytes;
    data.append((alignment - data.size() % alignment) % alignment, '\0');
    ++n_tensors;
  }
  std::string bytes() const {
    std::string out = "GGUF" + io::le_bytes(3, 4) + io::le_bytes(n_tensors, 8) + io::le_bytes(n_kv, 8) + kvs + infos;
    out.append((alignment - out.size() % alignment) % alignment, '\0');
    return out + data;
  }
};

std::string f32_bytes(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out += io::le_bytes(std::bit_cast<std::uint32_t>(v), 4);
  return out;
}

std::vector<float> floats(const io::Array& a) {
  const float* p = static_cast<const float*>(a.buffer->data());
  return std::vector<float>(p, p + a.buffer->count());
}

// A file with metadata of every type and tensors of F32, F16, BF16, Q8_0 and Q4_0.
GgufBuilder sample_gguf() {
  GgufBuilder g;
  g.alignment = 64;
  g.kv("general.alignment", 4, io::le_bytes(64, 4));
  g.kv("u8", 0, io::le_bytes(200, 1));
  g.kv("i8", 1, io::le_bytes(0xfe, 1));  // -2
  g.kv("u16", 2, io::le_bytes(60000, 2));
  g.kv("i16", 3, io::le_bytes(0xfffd, 2));      // -3
  g.kv("i32", 5, io::le_bytes(0xfffffffc, 4));  // -4
  g.kv("f32", 6, f32_bytes({0.5f}));
  g.kv("bool", 7, io::le_bytes(1, 1));
  g.kv("string", 8, GgufBuilder::str("llama"));
  g.kv("u64", 10, io::le_bytes(~std::uint64_t{0}, 8));  // 2^64-1: its bits, -1, in ints
  g.kv("i64", 11, io::le_bytes(static_cast<std::uint64_t>(-5), 8));
  g.kv("f64", 12, io::le_bytes(std::bit_cast<std::uint64_t>(0.25), 8));
  g.kv("ints", 9, io::le_bytes(5, 4) + io::le_bytes(2, 8) + io::le_bytes(7, 4) + io::le_bytes(0xfffffff8, 4));
  g.kv("nested", 9,
       io::le_bytes(9, 4) + io::le_bytes(1, 8) + io::le_bytes(8, 4) + io::le_bytes(1, 8) + GgufBuilder::str("a"));
  g.tensor("f32", {2, 3}, 0, f32_bytes({1, 2, 3, 4, 5, 6}));
  g.tensor("f16", {2}, 1, io::le_bytes(0x3c00, 2) + io::le_bytes(0xc000, 2));  // 1, -2
  g.tensor("bf16", {1}, 30, io::le_bytes(0x3fc0, 2));                          // 1.5
  // Q8_0: scale 0.5 (f16 0x3800), q = -16, 0, 1, 2, ... 30
  std::string q8 = io::le_bytes(0x3800, 2) + static_cast<char>(-16);
  for (int j = 1; j < 32; ++j) q8 += static_cast<char>(j - 1);
  g.tensor("q8", {1, 32}, 8, q8);
  // Q4_0, two blocks: scale 2 (0x4000), every byte 0x9f: low nibble 15, high nibble 9; then
  // scale -1 (0xbc00), bytes 0x08: q 8 and 0
  g.tensor("q4", {2, 32}, 2,
           io::le_bytes(0x4000, 2) + std::string(16, '\x9f') + io::le_bytes(0xbc00, 2) + std::string(16, '\x08'));
  return g;
}

}  // namespace

TEST_CASE("GGUF metadata of every type and tensors of every supported type read back", "[io]") {
  TempPath file("sample.gguf");
  write_file(file.path, sample_gguf().bytes());
  const io::FileCtx ctx{"io_test", file.path, {}};  // outlives the reader, as it must
  io::GgufReader reader(ctx);
  const io::GgufHeader& h = reader.header();
  CHECK(h.version == 3);
  CHECK(h.alignment == 64);
  CHECK(h.data_start % 64 == 0);
  REQUIRE(h.metadata.size() == 14);
  auto meta = [&](const std::string& key) -> const io::GgufValue& {
    for (const auto& [k, v] : h.metadata) {
      if (k == key) return v;
    }
    FAIL("no metadata " << key);
    return h.metadata[0].second;
  };
  CHECK(meta("u8").ints == std::vector<std::int64_t>{200});
  CHECK(meta("i8").ints == std::vector<std::int64_t>{-2});
  CHECK(meta("u16").ints == std::vector<std::int64_t>{60000});
  CHECK(meta("i16").ints == std::vector<std::int64_t>{-3});
  CHECK(meta("i32").ints == std::vector<std::int64_t>{-4});
  CHECK(meta("f32").reals == std::vector<double>{0.5});
  CHECK(meta("bool").ints == std::vector<std::int64_t>{1});
  CHECK(meta("string").texts == std::vector<std::string>{"llama"});
  CHECK(meta("u64").ints == std::vector<std::int64_t>{-1});
  CHECK(meta("i64").ints == std::vector<std::int64_t>{-5});
  CHECK(meta("f64").reals == std::vector<double>{0.25});
  CHECK(meta("ints").is_array);
  CHECK(meta("ints").ints == std::vector<std::int64_t>{7, -8});
  REQUIRE(meta("nested").items.size() == 1);
  CHECK(meta("nested").items[0].texts == std::vector<std::string>{"a"});

  REQUIRE(h.tensors.size() == 5);
  CHECK(h.tensors[0].shape == std::vector<std::int64_t>{2, 3});
  CHECK(floats(reader.read(h.tensors[0])) == std::vector<float>{1, 2, 3, 4, 5, 6});
  io::Array f16 = reader.read(*reader.find({"f16"}).at(0));
  CHECK(f16.buffer->dtype == DType::F16);
  CHECK(tl::tensor::half_to_float(static_cast<const std::uint16_t*>(f16.buffer->data())[1]) == -2.0f);
  io::Array bf16 = reader.read(*reader.find({"bf16"}).at(0));
  CHECK(bf16.buffer->dtype == DType::BF16);
  CHECK(tl::tensor::bf16_to_float(static_cast<const std::uint16_t*>(bf16.buffer->data())[0]) == 1.5f);
  std::vector<float> q8 = floats(reader.read(*reader.find({"q8"}).at(0)));
  REQUIRE(q8.size() == 32);
  CHECK(q8[0] == -8.0f);
  CHECK(q8[1] == 0.0f);
  CHECK(q8[31] == 15.0f);
  io::Array q4 = reader.read(*reader.find({"q4"}).at(0));
  CHECK(q4.shape == std::vector<std::int64_t>{2, 32});
  std::vector<float> v = floats(q4);
  CHECK(v[0] == 14.0f);   // 2 * (15 - 8)
  CHECK(v[16] == 2.0f);   // 2 * (9 - 8)
  CHECK(v[32] == -0.0f);  // -1 * (8 - 8)
  CHECK(v[48] == 8.0f);   // -1 * (0 - 8)
  CHECK(io::gguf_type_name(12) == "Q4_K");
  CHECK(io::gguf_type_name(99) == "type 99");
}

TEST_CASE("a GGUF file cut at any byte is a file-error, never a read out of bounds", "[io]") {
  const std::string whole = sample_gguf().bytes();
  TempPath file("cut.gguf");
  write_file(file.path, whole);
  std::uint64_t end = 0;  // of the last tensor's data; the padding after it may go
  {
    const io::FileCtx ctx{"load-gguf", file.path, {}};
    io::GgufReader reader(ctx);
    for (const auto& t : reader.header().tensors) end = std::max(end, reader.header().data_start + t.offset + t.bytes);
  }
  REQUIRE(end > whole.size() - 64);
  for (std::size_t n = 0; n < end; ++n) {
    write_file(file.path, whole.substr(0, n));
    ConditionError e = thrown_by([&] { io::GgufReader(io::FileCtx{"load-gguf", file.path, {}}); });
    CHECK(e.type == "file-error");
  }
}

TEST_CASE("malformed GGUF headers are errors naming the tensor or the count", "[io]") {
  TempPath file("bad.gguf");
  auto error_of = [&](const GgufBuilder& g) {
    write_file(file.path, g.bytes());
    const io::FileCtx ctx{"load-gguf", file.path, {}};
    ConditionError e = thrown_by([&] {
      io::GgufReader reader(ctx);
      for (const auto& t : reader.header().tensors) reader.read(t);
    });
    return std::string(e.what()).substr(file.path.size() + 14);  // after load-gguf: "PATH"
  };
  GgufBuilder misaligned;
  misaligned.infos =
      GgufBuilder::str("w") + io::le_bytes(1, 4) + io::le_bytes(1, 8) + io::le_bytes(0, 4) + io::le_bytes(4, 8);
  misaligned.n_tensors = 1;
  misaligned.data = std::string(64, '\0');
  CHECK(error_of(misaligned) == "has tensor \"w\" at data offset 4, not a multiple of the alignment 32");
  GgufBuilder overlap;
  overlap.tensor("a", {16}, 0, std::string(64, '\0'));
  overlap.infos +=
      GgufBuilder::str("b") + io::le_bytes(1, 4) + io::le_bytes(8, 8) + io::le_bytes(0, 4) + io::le_bytes(32, 8);
  overlap.n_tensors = 2;
  CHECK(error_of(overlap) == "has tensors \"a\" and \"b\" whose data overlap");
  GgufBuilder partial_block;
  partial_block.tensor("q", {16}, 8, std::string(34, '\0'));
  CHECK(error_of(partial_block) ==
        "has tensor \"q\" of type Q8_0 whose rows of 16 elements are not whole blocks of 32");
  GgufBuilder huge_bytes;  // 2^62 elements fit in 63 bits, their 2^64 bytes do not
  huge_bytes.tensor("w", {std::uint64_t{1} << 31, std::uint64_t{1} << 31}, 0, "");
  CHECK(error_of(huge_bytes) == "has tensor \"w\" of shape (2147483648 2147483648), too many bytes");
  GgufBuilder dims;
  dims.infos = GgufBuilder::str("w") + io::le_bytes(5, 4);
  dims.n_tensors = 1;
  CHECK(error_of(dims) == "has tensor \"w\" with 5 dimensions (at most 4)");
  GgufBuilder long_array;
  long_array.kv("a", 9, io::le_bytes(0, 4) + io::le_bytes(std::uint64_t{1} << 40, 8));
  CHECK(
      error_of(long_array).starts_with("is truncated or corrupt: it claims 1099511627776 elements in metadata \"a\""));
  GgufBuilder bad_alignment;
  bad_alignment.kv("general.alignment", 4, io::le_bytes(48, 4));
  CHECK(error_of(bad_alignment) == "has general.alignment that is not a u32 power of two");
  GgufBuilder twice;
  twice.kv("k", 0, io::le_bytes(1, 1));
  twice.kv("k", 0, io::le_bytes(1, 1));
  CHECK(error_of(twice) == "has the metadata key \"k\" twice");
  GgufBuilder bad_bool;
  bad_bool.kv("b", 7, io::le_bytes(2, 1));
  CHECK(error_of(bad_bool) == "has metadata \"b\" that is a bool of value 2");
  GgufBuilder unknown_type;
  unknown_type.tensor("w", {1}, 99, std::string(4, '\0'));
  CHECK(error_of(unknown_type) == "has tensor \"w\" of type 99, which GGUF does not define");
}
