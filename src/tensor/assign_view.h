// SPDX-License-Identifier: Apache-2.0
// Assigning into a view: the write goes through to the realized buffer the view looks at
// (issue 19), as a KV cache or an index update needs.
#pragma once

#include "tensor/graph.h"

namespace tl::tensor {

// An assign that writes VALUE (VIEW's shape and dtype) through VIEW, a chain of movement ops
// over a realized buffer: only the view's elements of the base change. Reshape,
// permute, flip and shrink views are always writable; a view with pad or expand is when each
// of its elements is a distinct element of the base (a strided slice), else a shape-error,
// as is a view of a value that is not realized.
NodeRef assign_through_view(Graph& g, const NodeRef& view, const NodeRef& value);

// Whether N is a movement op (a view of another node).
bool is_view(const Node* n);

}  // namespace tl::tensor
