// SPDX-License-Identifier: Apache-2.0
// safetensors files (what Hugging Face models ship in), with a strict parser for the JSON
// header: every tensor's bytes lie inside the data section, match its shape and dtype, and
// overlap no other tensor's.
#pragma once

#include <optional>
#include <unordered_set>
#include <utility>

#include "tensor/io/file.h"

namespace tl::tensor::io {

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin, end;  // byte offsets into the data section
};

// The __metadata__ of a file: (key, value) string pairs, in file order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> tensors;  // sorted by offset
  SafetensorsMetadata metadata;
  std::uint64_t data_start = 0;
};

// An open safetensors file whose header has been read and checked; the data is read only
// when asked for. A malformed header throws a file-error, a dtype TensorLisp lacks a
// dtype-error, both naming the function and the file. `ctx` must outlive the reader.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const FileCtx& ctx);
  const SafetensorsHeader& header() const { return header_; }
  // The entries named by `names`, in that order; a name the file does not hold is a
  // file-error naming it.
  std::vector<const SafetensorsEntry*> find(const std::vector<std::string>& names) const;
  // The data of one of this file's entries.
  Array read(const SafetensorsEntry& entry);

 private:
  const FileCtx& ctx_;
  InFile file_;
  SafetensorsHeader header_;
};

// The safetensors name of a dtype: its name in capitals (F32, BF16, BOOL).
std::string safetensors_dtype_name(DType t);

// Throws the program-error for a tensor name that is reserved (__metadata__) or already in
// `seen`.
void check_safetensors_name(const FileCtx& ctx, const std::string& name, const std::unordered_set<std::string>& seen);

// Writes `tensors` to ctx.path in that order, with `metadata` (when given, even empty) as
// __metadata__. Names are checked as check_safetensors_name does. A failed write removes the
// partial file and throws a file-error.
void write_safetensors(const FileCtx& ctx, const std::vector<std::pair<std::string, Array>>& tensors,
                       const std::optional<SafetensorsMetadata>& metadata);

}  // namespace tl::tensor::io
