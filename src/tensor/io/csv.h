// SPDX-License-Identifier: Apache-2.0
// CSV of numbers: rows of fields split by a delimiter (quoted fields allowed), an optional
// header line, gzip-compressed files read as they are.
#pragma once

#include "tensor/io/file.h"

namespace tl::tensor::io {

struct CsvOptions {
  char delimiter = ',';
  bool header = false;  // the first line (after `skip`) names the columns
  DType dtype = DType::F32;
  std::int64_t skip = 0;  // leading lines dropped before anything else
};

struct CsvTable {
  Array array;                     // (rows columns) of options.dtype
  std::vector<std::string> names;  // the header's column names; empty without a header
};

// The numbers of the CSV file ctx.path. Blank lines are skipped. Every row must have the
// same number of fields; a field that is not a number (or, for an integer dtype, not an
// integer in its range) is a file-error naming its line and column; an empty field is NaN in
// a float dtype and an error otherwise.
CsvTable read_csv(const FileCtx& ctx, const CsvOptions& options);

}  // namespace tl::tensor::io
