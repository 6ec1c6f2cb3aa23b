// SPDX-License-Identifier: Apache-2.0
// GGUF files (llama.cpp's format, versions 2 and 3): the metadata, the tensor table and the
// tensor data, F32/F16/BF16 (and the integer types) as stored, Q8_0 and Q4_0 dequantized to
// f32. The file is untrusted: every count, size and offset is checked before it is used.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensor/io/file.h"

namespace tl::tensor::io {

// The types of metadata values, numbered as in the file.
enum class GgufValueType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

// A metadata value. A scalar is held as an array of one: integers and bools in `ints` (a
// U64 as its bit pattern, so one above 2^63-1 reads as negative there), floats in `reals`,
// strings in `texts`; an array of arrays in `items`. Arrays of numbers stay compact, since
// tokenizer vocabularies hold hundreds of thousands of entries.
struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  bool is_array = false;  // then `type` is the elements' type
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> texts;
  std::vector<GgufValue> items;  // type == Array: the elements, each an array
};

struct GgufTensorInfo {
  std::string name;
  std::uint32_t type = 0;           // the ggml type number (0 F32, 1 F16, 8 Q8_0, ...)
  std::vector<std::int64_t> shape;  // row-major: the file's dimensions (fastest first) reversed
  std::uint64_t offset = 0;         // into the data section
  std::uint64_t bytes = 0;          // of stored data
};

struct GgufHeader {
  std::uint32_t version = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // file order
  std::vector<GgufTensorInfo> tensors;                      // file order
  std::uint64_t alignment = 32;                             // general.alignment, or 32
  std::uint64_t data_start = 0;                             // file offset of the data section
};

// The name of ggml type `type` ("Q8_0", "BF16"), or "type N" for a number GGUF does not know.
std::string gguf_type_name(std::uint32_t type);

// The dtype a tensor of ggml type `type` loads as (f32 for the quantized types read), or
// nullopt when TensorLisp cannot read that type.
std::optional<DType> gguf_load_dtype(std::uint32_t type);

// An open GGUF file whose header has been read and checked: every tensor's data lies inside
// the file, at an aligned offset, of the size its type and shape imply, overlapping no other.
// Data is read only when asked for. A malformed file is a file-error, a tensor type that
// cannot be read a dtype-error naming the tensor and the type. `ctx` must outlive the reader.
class GgufReader {
 public:
  explicit GgufReader(const FileCtx& ctx);
  const GgufHeader& header() const { return header_; }
  // The tensors named by `names`, in that order; a name the file does not hold is a
  // file-error naming it.
  std::vector<const GgufTensorInfo*> find(const std::vector<std::string>& names) const;
  // The data of one of this file's tensors, in gguf_load_dtype of its type.
  // QUANTIZED: Q8_0 and Q4_0 data stays in its blocks, a q8_0 or q4_0 tensor, instead of
  // being dequantized to f32.
  Array read(const GgufTensorInfo& t, bool quantized = false);

 private:
  const FileCtx& ctx_;
  InFile file_;
  GgufHeader header_;
};

// Writes a GGUF version 3 file: METADATA in order (each value as GgufValue holds it; a scalar
// is an array of one with is_array false), then TENSORS, each row-major with its dimensions
// stored fastest first, its data aligned to 32 bytes. Dtypes f32, f16, bf16, f64, i8, i16,
// i32, i64, q8_0 and q4_0 are written as the ggml types of those names; another (bool, u8,
// u32) is a dtype-error naming the tensor.
void write_gguf(const FileCtx& ctx, const std::vector<std::pair<std::string, GgufValue>>& metadata,
                const std::vector<std::pair<std::string, Array>>& tensors);

}  // namespace tl::tensor::io
