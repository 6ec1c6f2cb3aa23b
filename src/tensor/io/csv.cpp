// SPDX-License-Identifier: Apache-2.0
// The CSV reader: fields split and unquoted per line, each parsed strictly for the dtype
// asked for (no silent truncation or wrapping, issue 19).
#include "tensor/io/csv.h"

#include <charconv>
#include <cmath>

namespace tl::tensor::io {

namespace {

// The fields of one line, unquoting "..." (with "" for a quote).
std::vector<std::string> split_fields(const std::string& line, char delim) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

// " (MIN to MAX)" for an integer dtype.
std::string range_text(DType t) {
  return " (" + std::to_string(int_min(t)) + " to " + std::to_string(int_max(t)) + ")";
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

// The value of a field read into integer (or bool) dtype t: an integer ("12", "-3") or a
// number whose value is one ("4.0", "1e3"). Anything else is an error, not a truncation or a
// wrap (issue 19): a fraction, a value outside t's range, nan or inf.
std::int64_t parse_int_field(const FileCtx& ctx, const std::string& where, const char* b, const char* e, DType t) {
  const std::string type(dtype_name(t));
  std::int64_t i = 0;
  auto [ip, iec] = std::from_chars(b, e, i);
  if (ip == e && iec == std::errc()) {
    if (!fits_int(i, t)) ctx.fail(where + " is out of range for " + type + range_text(t));
    return i;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (p != e || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    ctx.fail(where + " is not a number");
  }
  if (!std::isfinite(v)) {
    ctx.fail(where + " cannot be converted to " + type + " (only float dtypes hold nan and inf)");
  }
  if (iec == std::errc::result_out_of_range || ec == std::errc::result_out_of_range) {
    ctx.fail(where + " is out of range for " + type + range_text(t));
  }
  if (v != std::trunc(v)) ctx.fail(where + " is not an integer, as dtype " + type + " needs");
  auto exact = truncate_to_int(v, t);
  if (!exact) ctx.fail(where + " is out of range for " + type + range_text(t));
  return *exact;
}

// The value of a field read into a float dtype: a number, or nan / inf / infinity in any case.
double parse_float_field(const FileCtx& ctx, const std::string& where, const char* b, const std::string& text) {
  const char* e = text.data() + text.size();
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && p == e) return v;
  std::string low = text;
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (low == "nan") return std::nan("");
  if (low == "inf" || low == "+inf" || low == "infinity") return INFINITY;
  if (low == "-inf" || low == "-infinity") return -INFINITY;
  ctx.fail(where + " is not a number");
}

// Element i of float buffer b becomes v, rounded to its dtype.
void store_float(Buffer& b, std::size_t i, double v) {
  auto* p = b.bytes().data();
  switch (b.dtype) {
    case DType::F32: {
      const auto f = static_cast<float>(v);
      std::memcpy(p + i * 4, &f, 4);
      return;
    }
    case DType::F64: std::memcpy(p + i * 8, &v, 8); return;
    case DType::F16:
    case DType::BF16: {
      const auto f = static_cast<float>(v);
      const std::uint16_t h = b.dtype == DType::F16 ? float_to_half(f) : float_to_bf16(f);
      std::memcpy(p + i * 2, &h, 2);
      return;
    }
    default: return;  // not a float dtype: read_csv keeps those apart
  }
}

// Element i of integer or bool buffer b becomes v, which fits its dtype.
void store_int(Buffer& b, std::size_t i, std::int64_t v) {
  auto* p = b.bytes().data();
  switch (dtype_size(b.dtype)) {
    case 1: p[i] = b.dtype == DType::Bool ? v != 0 : static_cast<std::uint8_t>(v); return;
    case 2: {
      const auto x = static_cast<std::int16_t>(v);
      std::memcpy(p + i * 2, &x, 2);
      return;
    }
    case 4: {
      const auto x = static_cast<std::uint32_t>(v);
      std::memcpy(p + i * 4, &x, 4);
      return;
    }
    default: std::memcpy(p + i * 8, &v, 8); return;
  }
}

}  // namespace

CsvTable read_csv(const FileCtx& ctx, const CsvOptions& options) {
  ByteStream f(ctx);
  const DType dtype = options.dtype;
  const bool header = options.header;
  std::vector<std::string> names;
  std::vector<double> values;      // float dtypes
  std::vector<std::int64_t> ints;  // integer and bool dtypes
  std::size_t width = 0, rows = 0, line_no = 0;
  std::string line;
  const bool is_float = tensor::is_float(dtype);
  while (f.read_line(line)) {
    ++line_no;
    if (static_cast<std::int64_t>(line_no) <= options.skip) continue;
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split_fields(line, options.delimiter);
    if (header && names.empty() && rows == 0) {
      for (auto& s : fields) names.push_back(trim(s));
      width = names.size();
      continue;
    }
    if (width == 0) width = fields.size();
    if (fields.size() != width) {
      ctx.fail("line " + std::to_string(line_no) + " has " + std::to_string(fields.size()) + " fields, but " +
               (header ? "the header has " : "the first row has ") + std::to_string(width));
    }
    for (std::size_t j = 0; j < fields.size(); ++j) {
      std::string t = trim(fields[j]);
      if (t.empty()) {
        if (!is_float) {
          ctx.fail("line " + std::to_string(line_no) + ", column " + std::to_string(j + 1) +
                   " is empty (a float dtype reads empty fields as nan)");
        }
        values.push_back(std::nan(""));
        continue;
      }
      const std::string where =
          "line " + std::to_string(line_no) + ", column " + std::to_string(j + 1) + ": \"" + t + "\"";
      const char* b = t.data();
      if (*b == '+') ++b;
      if (is_float) {
        values.push_back(parse_float_field(ctx, where, b, t));
      } else {
        ints.push_back(parse_int_field(ctx, where, b, t.data() + t.size(), dtype));
      }
    }
    ++rows;
  }
  auto buf = std::make_shared<Buffer>(dtype, is_float ? values.size() : ints.size());
  for (std::size_t i = 0; i < values.size(); ++i) store_float(*buf, i, values[i]);
  for (std::size_t i = 0; i < ints.size(); ++i) store_int(*buf, i, ints[i]);
  Array array{std::move(buf), {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(width)}};
  return CsvTable{std::move(array), std::move(names)};
}

}  // namespace tl::tensor::io
