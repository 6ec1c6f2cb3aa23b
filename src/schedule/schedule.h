// SPDX-License-Identifier: Apache-2.0
// The scheduler: cuts a graph into kernels. A kernel computes one node into a new buffer;
// everything between that node and the buffers it reads is fused into it: elementwise ops
// inline, movement ops become index arithmetic, and a reduce takes its elementwise input
// in its inner loop.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "tensor/graph.h"

namespace tl::schedule {

using tensor::Node;

struct Schedule {
  // The nodes computed into buffers, in dependency order; the last is `result`.
  std::vector<const Node*> kernels;
  // The node whose buffer holds the root's elements in row-major order: the root, or, when
  // the root only reshapes a computed node, that node (so no copy is made).
  const Node* result = nullptr;
  // With several roots: each one's node, in order (result is the last).
  std::vector<const Node*> results;
  // Nodes read as buffers that are not computed here (buffer nodes and realized nodes).
  std::vector<const Node*> inputs;
  // kernels and inputs as a set: what a kernel reads from memory instead of inlining.
  std::unordered_set<const Node*> materialized;
};

// Schedules the computation of `root`. Nodes that already hold data are inputs.
Schedule make_schedule(const Node* root);
// Schedules several roots at once: work they share is computed once.
Schedule make_schedule(const std::vector<const Node*>& roots);

// The schedule as text, one line per kernel: the node it computes, how many ops it runs, the
// reduces fused into it (row fusion) and what it reads (inputs and other kernels, by index).
std::string schedule_str(const Schedule& s);

// True when the node holds data already (a buffer, or a realized node).
inline bool holds_data(const Node* n) { return n->op == tensor::Op::Buffer || n->cached() != nullptr; }

}  // namespace tl::schedule
