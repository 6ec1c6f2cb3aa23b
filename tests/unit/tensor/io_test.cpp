// SPDX-License-Identifier: Apache-2.0
// Unit tests for tensor/io/: .npy and safetensors files written and read back through the
// plain C++ readers and writers, with no interpreter, and the errors of malformed headers.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

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
