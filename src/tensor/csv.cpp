// SPDX-License-Identifier: Apache-2.0
// CSV of numbers: rows of fields split by a delimiter (quoted fields allowed), an optional
// header line, gzip-compressed files read as they are. Every row must have the same number of
// fields; a field that is not a number is an error naming its line and column, an empty field
// is NaN in a float tensor.
#include <charconv>
#include <cmath>
#include <cstring>

#include "eval/builtins.h"
#include "runtime/elements.h"
#include "tensor/file_io.h"
#include "tensor/tensor_value.h"

namespace tl::tensor::file_io {

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
std::int64_t parse_int_field(const FileCtx& ctx, const std::string& where, const char* b,
                             const char* e, DType t) {
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

Value load_csv(Interp& in, const FileCtx& ctx, char delim, bool header, DType dtype, std::int64_t skip) {
  ByteStream f(ctx);
  std::vector<std::string> names;
  std::vector<double> values;       // float dtypes
  std::vector<std::int64_t> ints;  // integer and bool dtypes
  std::size_t width = 0, rows = 0, line_no = 0;
  std::string line;
  auto next_line = [&]() { return f.read_line(line); };
  const bool is_float = tensor::is_float(dtype);
  while (next_line()) {
    ++line_no;
    if (static_cast<std::int64_t>(line_no) <= skip) continue;
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split_fields(line, delim);
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
      const std::string where = "line " + std::to_string(line_no) + ", column " +
                                std::to_string(j + 1) + ": \"" + t + "\"";
      const char* b = t.data();
      if (*b == '+') ++b;
      if (!is_float) {
        ints.push_back(parse_int_field(ctx, where, b, t.data() + t.size(), dtype));
        continue;
      }
      double v = 0;
      auto [p, ec] = std::from_chars(b, t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size()) {
        std::string low = t;
        for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (low == "nan") v = std::nan("");
        else if (low == "inf" || low == "+inf" || low == "infinity") v = INFINITY;
        else if (low == "-inf" || low == "-infinity") v = -INFINITY;
        else ctx.fail(where + " is not a number");
      }
      values.push_back(v);
    }
    ++rows;
  }
  auto buf = std::make_shared<Buffer>(dtype, is_float ? values.size() : ints.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    runtime::store_float(*buf, static_cast<std::int64_t>(i), values[i]);
  }
  for (std::size_t i = 0; i < ints.size(); ++i) {
    runtime::store_int(*buf, static_cast<std::int64_t>(i), ints[i]);
  }
  Value t = make_loaded_tensor(in, std::move(buf), {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(width)});
  if (!header) return t;
  Interp::StackMark mark(in);
  in.push(t);
  Value* base = in.sp;
  for (const auto& n : names) in.push(in.make_string(n));
  Value list = in.list_from(base, names.size());
  in.push(list);
  return in.cons(t, list);
}

}  // namespace

void register_csv_builtins(Interp& in) {
  TL_BUILTIN(in, "load-csv", 1, 9, "(load-csv PATH &key (delimiter \",\") header (dtype 'f32) (skip 0))",
             "The numbers of the CSV file PATH as a (rows columns) tensor of DTYPE. With :header t the first "
             "line names the columns and the result is (TENSOR . NAMES). Fields may be quoted; empty fields "
             "are nan (float dtypes only); :skip drops that many leading lines; .gz files are read as they are.",
             [](Interp& in, Value* a, std::uint32_t n) -> Value {
               FileCtx ctx = file_ctx(in, "load-csv", a, 0);
               for (std::uint32_t i = 1; i < n; i += 2) {
                 static const char* known[] = {"delimiter", "header", "dtype", "skip"};
                 bool ok = eval::is_symbol(a[i]) && eval::as_symbol(a[i])->is_keyword() && i + 1 < n;
                 if (ok) {
                   ok = false;
                   for (const char* k : known) ok = ok || eval::as_symbol(a[i])->name == k;
                 }
                 if (!ok) in.error("type-error", "load-csv: expected :delimiter, :header, :dtype or :skip with a value, got " + in.repr(a[i]));
               }
               bool has = false;
               std::string delim = ",";
               Value d = eval::keyword_arg(a, 1, n, "delimiter", &has);
               if (has) {
                 if (!eval::is_string(d) || eval::as_string(d)->text.size() != 1) {
                   in.error("type-error", "load-csv: the delimiter must be a one-character string, got " + in.repr(d));
                 }
                 delim = eval::as_string(d)->text;
               }
               const bool header = eval::keyword_arg(a, 1, n, "header").truthy();
               Value dt = eval::keyword_arg(a, 1, n, "dtype", &has);
               const DType dtype = has ? dtype_from_lisp(in, "load-csv", dt) : DType::F32;
               Value sk = eval::keyword_arg(a, 1, n, "skip", &has);
               if (has && (!sk.is_int() || sk.i < 0)) in.error("type-error", "load-csv: :skip must be a non-negative integer, got " + in.repr(sk));
               const std::int64_t skip = has ? sk.i : 0;
               return load_csv(in, ctx, delim[0], header, dtype, skip);
             });
}

}  // namespace tl::tensor::file_io
