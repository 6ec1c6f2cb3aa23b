// SPDX-License-Identifier: Apache-2.0
// NumPy-like printing of tensor data: one width for every element, 4 decimals (or
// scientific notation for very large or small magnitudes), the middle of long axes elided.
#include <cmath>
#include <cstdio>

#include "bindings/tensor_value.h"
#include "runtime/elements.h"

namespace tl::tensor {

namespace {

constexpr std::int64_t kElideAbove = 1000;  // elements; NumPy's default threshold
constexpr std::int64_t kEdgeItems = 3;

struct Formatter {
  const Buffer& buf;
  std::vector<std::int64_t> shape, strides;
  bool elide = false;
  bool complex = false;  // element k is the pair at 2k, 2k + 1
  enum class Style { Int, Bool, Integral, Fixed, Sci } style = Style::Fixed;
  int width = 1;

  std::string element(std::int64_t k) const {
    switch (style) {
      case Style::Bool: return runtime::load_int(buf, k) ? "t" : "nil";
      case Style::Int: return std::to_string(runtime::load_int(buf, k));
      default: break;
    }
    if (!complex) return number(runtime::load_float(buf, k));
    // NumPy's form: 1.5000-2.0000j, the imaginary part's sign between the two.
    const double re = runtime::load_float(buf, 2 * k), im = runtime::load_float(buf, 2 * k + 1);
    std::string i = number(im);
    const bool negative = i[0] == '-';
    return number(re) + (negative ? "-" : "+") + (negative ? i.substr(1) : i) + "j";
  }

  std::string number(double v) const {
    char tmp[64];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (style == Style::Integral) std::snprintf(tmp, sizeof tmp, "%.0f.", v);
    else if (style == Style::Fixed) std::snprintf(tmp, sizeof tmp, "%.4f", v);
    else std::snprintf(tmp, sizeof tmp, "%.4e", v);
    return tmp;
  }

  // Visits the indices shown along an axis (all, or the edges around an ellipsis = -1).
  std::vector<std::int64_t> shown(std::int64_t n) const {
    std::vector<std::int64_t> out;
    if (elide && n > 2 * kEdgeItems) {
      for (std::int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
      out.push_back(-1);
      for (std::int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    }
    return out;
  }

  void scan(std::size_t axis, std::int64_t base, const std::function<void(std::int64_t)>& f) const {
    if (axis == shape.size()) {
      f(base);
      return;
    }
    for (auto i : shown(shape[axis])) {
      if (i >= 0) scan(axis + 1, base + i * strides[axis], f);
    }
  }

  void choose_style() {
    if (buf.dtype == DType::Bool) style = Style::Bool;
    else if (!runtime::reads_float(buf.dtype)) style = Style::Int;
    else {
      bool integral = true;
      double max_abs = 0, min_abs = INFINITY;
      scan(0, 0, [&](std::int64_t k) {
        for (int part = 0; part < (complex ? 2 : 1); ++part) {
          double v = runtime::load_float(buf, complex ? 2 * k + part : k);
          if (!std::isfinite(v)) continue;
          if (v != std::trunc(v)) integral = false;
          max_abs = std::max(max_abs, std::fabs(v));
          if (v != 0) min_abs = std::min(min_abs, std::fabs(v));
        }
      });
      if (max_abs >= 1e8 || (min_abs < 1e-4 && !integral)) style = Style::Sci;
      else style = integral ? Style::Integral : Style::Fixed;
    }
    scan(0, 0, [&](std::int64_t k) { width = std::max(width, static_cast<int>(element(k).size())); });
  }

  void emit(std::string& out, std::size_t axis, std::int64_t base, const std::string& indent) const {
    if (axis == shape.size()) {
      std::string e = element(base);
      out.append(static_cast<std::size_t>(width) - e.size(), ' ');
      out += e;
      return;
    }
    out += '[';
    bool first = true;
    const bool last_axis = axis + 1 == shape.size();
    for (auto i : shown(shape[axis])) {
      if (!first) {
        if (last_axis) {
          out += ' ';
        } else {
          out.append(shape.size() - axis - 1, '\n');
          out += indent;
          out.append(axis + 1, ' ');
        }
      }
      first = false;
      if (i < 0) {
        out += "...";
        continue;
      }
      emit(out, axis + 1, base + i * strides[axis], indent);
    }
    out += ']';
  }
};

}  // namespace

std::string format_buffer(const Buffer& b, const std::vector<std::int64_t>& shape, const std::string& indent,
                          bool complex) {
  Formatter f{b, shape, std::vector<std::int64_t>(shape.size())};
  f.complex = complex;
  std::int64_t n = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    f.strides[i] = n;
    n *= shape[i];
  }
  if (n == 0) return "[]";
  f.elide = n > kElideAbove;
  f.choose_style();
  std::string out;
  f.emit(out, 0, 0, indent);
  return out;
}

}  // namespace tl::tensor
