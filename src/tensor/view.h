// SPDX-License-Identifier: Apache-2.0
// Views: how a movement-op chain maps indices of its result to elements of a buffer, with no
// copy. A View is (shape, strides, offset, validity mask); a ViewStack composes views where
// one strided view cannot express the chain (e.g. a reshape of a transposed tensor).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tensor/dim.h"

namespace tl::tensor {

using Range = std::pair<Dim, Dim>;  // [begin, end)

struct View {
  Shape shape;
  std::vector<Dim> strides;
  Dim offset;
  // Per axis, the valid index range; outside it the element reads as 0 (padding). Empty when
  // every index is valid.
  std::vector<Range> mask;

  static View contiguous(const Shape& shape);
  bool is_contiguous() const;  // row-major, offset 0, no mask
  bool operator==(const View& o) const;
};

class ViewStack {
 public:
  explicit ViewStack(const Shape& base) : views_{View::contiguous(base)} {}
  const Shape& shape() const { return views_.back().shape; }
  const std::vector<View>& views() const { return views_; }

  // Each returns the composed stack. Arguments are checked by the graph's shape rules
  // beforehand; these only compose.
  ViewStack reshape(const Shape& shape) const;
  ViewStack permute(const std::vector<int>& order) const;
  ViewStack expand(const Shape& shape) const;
  ViewStack pad(const std::vector<Range>& pads) const;      // (before, after) per axis
  ViewStack shrink(const std::vector<Range>& ranges) const;  // [begin, end) per axis
  ViewStack flip(const std::vector<bool>& axes) const;
  std::string str() const;

 private:
  ViewStack() = default;
  std::vector<View> views_;  // views_.back() is applied first to an output index
  void drop_identity_views();
};

// A View with every dimension evaluated: what executors index with.
struct ConcreteView {
  std::vector<std::int64_t> shape, strides;
  std::int64_t offset = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> mask;
};

class ConcreteViewStack {
 public:
  ConcreteViewStack(const ViewStack& vs, const Bindings& b);
  // Maps an index of the outer shape to a buffer element; false when it falls in padding.
  bool index(const std::int64_t* idx, std::int64_t& out) const;
  // True when the stack is a plain strided view (one view, no mask): index() is then
  // offset + sum(idx * strides).
  bool is_simple() const { return views_.size() == 1 && views_[0].mask.empty(); }
  const std::vector<ConcreteView>& views() const { return views_; }

 private:
  std::vector<ConcreteView> views_;
};

}  // namespace tl::tensor
