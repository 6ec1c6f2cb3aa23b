// SPDX-License-Identifier: Apache-2.0
// Composition of movement ops into view stacks, and indexing through them.
#include "tensor/view.h"

#include <algorithm>

namespace tl::tensor {

View View::contiguous(const Shape& shape) {
  return View{shape, contiguous_strides(shape), Dim(0), {}};
}

bool View::is_contiguous() const {
  if (!mask.empty() || offset != Dim(0)) return false;
  auto cs = contiguous_strides(shape);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != Dim(1) && strides[i] != cs[i]) return false;
  }
  return true;
}

bool View::operator==(const View& o) const {
  return shape == o.shape && strides == o.strides && offset == o.offset && mask == o.mask;
}

namespace {

bool full_range(const View& v, std::size_t axis) {
  return v.mask.empty() || (v.mask[axis].first == Dim(0) && v.mask[axis].second == v.shape[axis]);
}

// Reshape within one view when the merged or split axes are laid out contiguously relative to
// each other (and any mask survives). Returns nullopt when a new view is needed.
std::optional<View> reshape_view(const View& v, const Shape& shape) {
  if (v.is_contiguous()) return View::contiguous(shape);
  // Axes of size 1 carry no layout: drop them from the old view (if fully valid).
  std::vector<std::size_t> old_axes;
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] == Dim(1)) {
      if (!full_range(v, i)) return std::nullopt;
      continue;
    }
    old_axes.push_back(i);
  }
  std::vector<std::size_t> new_axes;
  for (std::size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] != Dim(1)) new_axes.push_back(j);
  }
  View out{shape, std::vector<Dim>(shape.size(), Dim(0)), v.offset, {}};
  bool masked = !v.mask.empty();
  if (masked) out.mask.assign(shape.size(), Range{Dim(0), Dim(1)});
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < old_axes.size() && j < new_axes.size()) {
    // Grow a group of old axes [i, i2) and new axes [j, j2) until their sizes agree.
    std::size_t i2 = i + 1;
    std::size_t j2 = j + 1;
    Dim po = v.shape[old_axes[i]];
    Dim pn = shape[new_axes[j]];
    while (po != pn) {
      if (po.divide_exact(pn) && j2 < new_axes.size()) {
        pn = pn * shape[new_axes[j2++]];
      } else if (pn.divide_exact(po) && i2 < old_axes.size()) {
        po = po * v.shape[old_axes[i2++]];
      } else {
        return std::nullopt;
      }
    }
    // The old axes of the group must be mergeable: stride[k] == stride[k+1] * size[k+1].
    for (std::size_t k = i; k + 1 < i2; ++k) {
      std::size_t a = old_axes[k];
      std::size_t b = old_axes[k + 1];
      if (v.strides[a] != v.strides[b] * v.shape[b]) return std::nullopt;
    }
    if (masked) {
      bool one_to_one = i2 - i == 1 && j2 - j == 1;
      if (one_to_one) {
        out.mask[new_axes[j]] = v.mask[old_axes[i]];
      } else {
        for (std::size_t k = i; k < i2; ++k) {
          if (!full_range(v, old_axes[k])) return std::nullopt;
        }
        for (std::size_t k = j; k < j2; ++k) out.mask[new_axes[k]] = Range{Dim(0), shape[new_axes[k]]};
      }
    }
    Dim stride = v.strides[old_axes[i2 - 1]];
    for (std::size_t k = j2; k-- > j;) {
      out.strides[new_axes[k]] = stride;
      stride = stride * shape[new_axes[k]];
    }
    i = i2;
    j = j2;
  }
  if (i != old_axes.size() || j != new_axes.size()) return std::nullopt;
  return out;
}

}  // namespace

void ViewStack::drop_identity_views() {
  // A contiguous view under another indexes its buffer by identity: it can go.
  while (views_.size() > 1 && views_.front().is_contiguous()) views_.erase(views_.begin());
  // Two views where the outer one is contiguous of the inner's shape: the inner suffices.
  while (views_.size() > 1 && views_.back().is_contiguous() &&
         views_.back().shape == views_[views_.size() - 2].shape) {
    views_.pop_back();
  }
}

ViewStack ViewStack::reshape(const Shape& shape) const {
  ViewStack out = *this;
  if (auto merged = reshape_view(views_.back(), shape)) {
    out.views_.back() = std::move(*merged);
  } else {
    out.views_.push_back(View::contiguous(shape));
  }
  out.drop_identity_views();
  return out;
}

ViewStack ViewStack::permute(const std::vector<int>& order) const {
  ViewStack out = *this;
  const View& v = views_.back();
  View& w = out.views_.back();
  for (std::size_t i = 0; i < order.size(); ++i) {
    w.shape[i] = v.shape[order[i]];
    w.strides[i] = v.strides[order[i]];
    if (!v.mask.empty()) w.mask[i] = v.mask[order[i]];
  }
  return out;
}

namespace {

// True when the axis's valid range provably lies within [0, size). Bounds shifted by a shrink
// of a symbolic axis may not; such a mask is clamped only when the view is made concrete.
bool mask_in_bounds(const View& v, std::size_t axis) {
  if (v.mask.empty()) return true;
  const auto& [lo, hi] = v.mask[axis];
  return lo.provably_nonnegative() && (v.shape[axis] - hi).provably_nonnegative();
}

}  // namespace

// Padding and expanding change which indices a mask admits, which is only exact when the
// mask lies within its axis. Otherwise the op goes on a new view over the current one, whose
// mask is then clamped to its own (smaller) shape when made concrete.
ViewStack ViewStack::expand(const Shape& shape) const {
  ViewStack out = *this;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const View& v = out.views_.back();
    if (v.shape[i] == shape[i] || v.mask.empty()) continue;
    if (!mask_in_bounds(v, i) || !v.mask[i].first.is_const() || !v.mask[i].second.is_const()) {
      out.views_.push_back(View::contiguous(v.shape));
      break;
    }
  }
  View& w = out.views_.back();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (w.shape[i] == shape[i]) continue;
    w.shape[i] = shape[i];
    w.strides[i] = Dim(0);
    if (!w.mask.empty()) {
      bool valid = w.mask[i].first.value() < w.mask[i].second.value();
      w.mask[i] = valid ? Range{Dim(0), shape[i]} : Range{Dim(0), Dim(0)};
    }
  }
  return out;
}

ViewStack ViewStack::pad(const std::vector<Range>& pads) const {
  ViewStack out = *this;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    bool moves = pads[i].first != Dim(0) || pads[i].second != Dim(0);
    if (moves && !mask_in_bounds(out.views_.back(), i)) {
      out.views_.push_back(View::contiguous(out.shape()));
      break;
    }
  }
  View& w = out.views_.back();
  if (w.mask.empty()) {
    for (const auto& d : w.shape) w.mask.push_back(Range{Dim(0), d});
  }
  for (std::size_t i = 0; i < pads.size(); ++i) {
    const Dim& before = pads[i].first;
    w.offset = w.offset - before * w.strides[i];
    w.mask[i] = Range{w.mask[i].first + before, w.mask[i].second + before};
    w.shape[i] = w.shape[i] + before + pads[i].second;
  }
  return out;
}

ViewStack ViewStack::shrink(const std::vector<Range>& ranges) const {
  ViewStack out = *this;
  View& w = out.views_.back();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const Dim& b = ranges[i].first;
    w.offset = w.offset + b * w.strides[i];
    w.shape[i] = ranges[i].second - b;
    if (!w.mask.empty()) {
      // Shift the valid range and clamp what can be clamped exactly: a constant lower bound
      // below 0, a bound a constant past the end.
      Dim lo = w.mask[i].first - b;
      Dim hi = w.mask[i].second - b;
      if (lo.is_const() && lo.value() < 0) lo = Dim(0);
      if (hi.is_const() && hi.value() < 0) hi = Dim(0);
      if (auto over = (lo - w.shape[i]).as_const(); over && *over > 0) lo = w.shape[i];
      if (auto over = (hi - w.shape[i]).as_const(); over && *over > 0) hi = w.shape[i];
      if (lo.is_const() && hi.is_const() && hi.value() < lo.value()) hi = lo;
      w.mask[i] = Range{lo, hi};
    }
  }
  return out;
}

ViewStack ViewStack::flip(const std::vector<bool>& axes) const {
  ViewStack out = *this;
  View& w = out.views_.back();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i]) continue;
    w.offset = w.offset + (w.shape[i] - Dim(1)) * w.strides[i];
    w.strides[i] = -w.strides[i];
    if (!w.mask.empty()) w.mask[i] = Range{w.shape[i] - w.mask[i].second, w.shape[i] - w.mask[i].first};
  }
  return out;
}

std::string ViewStack::str() const {
  std::string s;
  for (const auto& v : views_) {
    if (!s.empty()) s += " <- ";
    s += "view" + shape_str(v.shape) + " strides " + shape_str(v.strides) + " offset " + v.offset.str();
    if (!v.mask.empty()) {
      s += " mask (";
      for (const auto& [b, e] : v.mask) s += "[" + b.str() + "," + e.str() + ")";
      s += ")";
    }
  }
  return s;
}

ConcreteViewStack::ConcreteViewStack(const ViewStack& vs, const Bindings& b) {
  for (const auto& v : vs.views()) {
    ConcreteView c;
    c.shape = eval_shape(v.shape, b);
    c.strides = eval_shape(v.strides, b);
    c.offset = v.offset.eval(b);
    bool all_valid = true;
    for (std::size_t i = 0; i < v.mask.size(); ++i) {
      std::int64_t lo = std::max<std::int64_t>(0, v.mask[i].first.eval(b));
      std::int64_t hi = std::min<std::int64_t>(c.shape[i], v.mask[i].second.eval(b));
      if (hi < lo) hi = lo;
      if (lo != 0 || hi != c.shape[i]) all_valid = false;
      c.mask.emplace_back(lo, hi);
    }
    if (all_valid) c.mask.clear();
    views_.push_back(std::move(c));
  }
}

bool ConcreteViewStack::index(const std::int64_t* idx, std::int64_t& out) const {
  std::int64_t local[16];
  std::vector<std::int64_t> big;
  const std::int64_t* cur = idx;
  for (std::size_t n = views_.size(); n-- > 0;) {
    const ConcreteView& v = views_[n];
    std::int64_t flat = v.offset;
    for (std::size_t i = 0; i < v.shape.size(); ++i) {
      if (!v.mask.empty() && (cur[i] < v.mask[i].first || cur[i] >= v.mask[i].second)) return false;
      flat += cur[i] * v.strides[i];
    }
    if (n == 0) {
      out = flat;
      return true;
    }
    // Unravel into the next view's shape.
    const auto& inner = views_[n - 1].shape;
    std::int64_t* dst = local;
    if (inner.size() > 16) {
      big.assign(inner.size(), 0);
      dst = big.data();
    }
    for (std::size_t i = inner.size(); i-- > 0;) {
      dst[i] = inner[i] == 0 ? 0 : flat % inner[i];
      flat = inner[i] == 0 ? 0 : flat / inner[i];
    }
    cur = dst;
  }
  return false;
}

}  // namespace tl::tensor
