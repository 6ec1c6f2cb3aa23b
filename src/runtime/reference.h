// SPDX-License-Identifier: Apache-2.0
// The reference executor: realizes any primitive graph with plain C++ loops, op by op, on
// host memory. Slow on purpose and plainly correct; every backend is tested against it.
#pragma once

#include <memory>
#include <vector>

#include "tensor/graph.h"

namespace tl::runtime {

// Computes `root` into a new contiguous buffer (or returns the buffer it already holds).
// Variables in shapes take their values from buffer nodes in the graph and from `extra`;
// an unbound or conflicting variable is a GraphError.
std::shared_ptr<tensor::Buffer> realize_reference(const tensor::Node* root, const tensor::Bindings& extra);
// Several roots in one computation: shared work once, and every assign's write after all
// reads (so a root that reads an assigned buffer sees its data from before this realize).
std::vector<std::shared_ptr<tensor::Buffer>> realize_reference_many(const std::vector<const tensor::Node*>& roots,
                                                                    const tensor::Bindings& extra);

// Checks what a symbolic graph can only check once its variables have values: no dimension
// is negative, buffers hold as many elements as their shapes say, shrinks stay in bounds.
// Throws GraphError (shape-error or index-error); std::out_of_range for an unbound variable.
void check_graph(const tensor::Node* root, const tensor::Bindings& b);

// The message for an unbound variable `name` at realize time.
std::string unbound_message(const std::string& name);

// Collects the variable values the graph's buffers carry, merged with `extra`.
tensor::Bindings collect_bindings(const tensor::Node* root, const tensor::Bindings& extra);

}  // namespace tl::runtime
