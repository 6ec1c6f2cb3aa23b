// SPDX-License-Identifier: Apache-2.0
// Fusion decisions. Reduces, copies and assigns always end a kernel; an elementwise node is
// recomputed in each consumer unless it is read by several and inlining would repeat
// much work.
#include "schedule/schedule.h"

#include <algorithm>
#include <unordered_map>

namespace tl::schedule {

using tensor::Op;
using tensor::OpGroup;

namespace {

bool is_movement(const Node* n) { return tensor::op_info(n->op).group == OpGroup::Movement; }

const Node* data_source(const Node* n) {
  while (is_movement(n) && !holds_data(n)) n = n->src[0].get();
  return n;
}

// Ops an inlined copy repeats (movement and constants are free).
bool costs_work(const Node* n) {
  switch (tensor::op_info(n->op).group) {
    case OpGroup::Unary:
    case OpGroup::Binary:
    case OpGroup::Ternary: return true;
    default: return false;
  }
}

constexpr int kInlineLimit = 6;  // ops of a shared node recomputed by each consumer, at most
// Nodes fused into one kernel along any path: deeper chains are cut into several kernels,
// which bounds the recursion of lowering and code generation.
constexpr int kMaxFusedDepth = 96;

}  // namespace

Schedule make_schedule(const Node* root) {
  Schedule s;
  // Nodes reachable through unrealized nodes, in post-order (sources first), with how many
  // consumer edges reach each data source (a movement chain counts for its consumer).
  std::vector<const Node*> order;
  std::unordered_map<const Node*, int> uses;
  std::unordered_map<const Node*, bool> visited;
  std::vector<std::pair<const Node*, std::size_t>> stack{{root, 0}};
  visited[root] = true;
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (!holds_data(n) && next < n->src.size()) {
      const Node* c = n->src[next++].get();
      if (!is_movement(n) || n == root) ++uses[data_source(c)];
      if (!visited[c]) {
        visited[c] = true;
        stack.emplace_back(c, 0);
      }
      continue;
    }
    order.push_back(n);
    stack.pop_back();
  }
  // Inline cost of each node: the work ops it repeats up to the next materialized node.
  std::unordered_map<const Node*, int> cost;
  std::unordered_map<const Node*, int> depth;
  auto materialize = [&](const Node* n) {
    if (s.materialized.insert(n).second) {
      if (holds_data(n)) s.inputs.push_back(n);
      else s.kernels.push_back(n);
    }
  };
  for (const Node* n : order) {
    if (holds_data(n)) {
      materialize(n);
      cost[n] = 0;
      depth[n] = 0;
      continue;
    }
    int c = costs_work(n) ? 1 : 0;
    int dep = 1;
    for (const auto& src : n->src) {
      const Node* d = src.get();
      if (!s.materialized.count(d)) {
        c += cost[d];
        dep = std::max(dep, depth[d] + 1);
      }
    }
    bool must = n == root || n->op == Op::Reduce || n->op == Op::Copy || n->op == Op::Assign ||
                n->op == Op::Extern;
    bool shared = uses[n] > 1 && c > kInlineLimit;
    if (must || shared || dep >= kMaxFusedDepth) {
      materialize(n);
      c = 0;
      dep = 0;
    }
    cost[n] = c;
    depth[n] = dep;
  }
  return s;
}

}  // namespace tl::schedule
