// SPDX-License-Identifier: Apache-2.0
// Test helper: a buffer node of zeros in a graph.
#pragma once

#include <cstring>
#include <memory>

#include "tensor/graph.h"

namespace tl::test {

inline tensor::NodeRef zero_buffer(tensor::Graph& g, tensor::DType t, const tensor::Shape& shape) {
  std::int64_t n = 1;
  for (const auto& d : shape) n *= d.value();
  auto buf = std::make_shared<tensor::Buffer>(t, static_cast<std::size_t>(n));
  std::memset(buf->data(), 0, buf->size_bytes());
  return g.make_buffer(buf, shape);
}

}  // namespace tl::test
