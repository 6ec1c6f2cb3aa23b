// SPDX-License-Identifier: Apache-2.0
// The scheduler: cuts a graph into kernels. A kernel computes one node into a new buffer;
// everything between that node and the buffers it reads is fused into it: elementwise ops
// inline, movement ops become index arithmetic, and a reduce takes its elementwise input
// in its inner loop.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tensor/graph.h"

namespace tl::schedule {

using tensor::Node;

// How a kernel computes its node. The scheduler decides it; the lowering follows it and
// never decides fusion itself.
enum class KernelKind : std::uint8_t {
  Elementwise,  // one pass over the output's elements
  Reduce,       // a reduce's loops: the output is the reduce, or elementwise work on its result
  Rows,         // per row, one pass per fused row-wise reduce, then one writing the output
  ViewAssign,   // an assign through a view: only the view's elements of its target, in place
  ScatterAdd,   // a copy of the first source, then each value added where its index points
  Extern,       // an external kernel (a BLAS call) on its sources' buffers
  // A sum over some axes of softmax weights times values (attention's softmax(S) V), as one
  // pass per row over those axes: a running max, a running sum of the exponentials and the
  // output row, rescaled when the max grows (the online softmax of FlashAttention). The
  // weights (and the scores under them) are never stored.
  OnlineSoftmax,
};
const char* kernel_kind_name(KernelKind k);

// What an OnlineSoftmax kernel computes: out = sum over the axes of `contraction` of
// weights x values, where weights = exp(x - max(x)) / sum(exp(x - max(x))) along those axes.
struct OnlineSoftmax {
  const Node* contraction = nullptr;  // the reduce :sum of (mul WEIGHTS' VALUES'), the kernel's node
  const Node* weights = nullptr;      // (mul EXP (recip (expand SUM))): the softmax
  const Node* max = nullptr;          // (reduce :max X axes)
  const Node* sum = nullptr;          // (reduce :sum EXP axes)
  const Node* exp = nullptr;          // exp(x - max(x)) as the graph has it (exp2 of a scaled difference)
  const Node* scores = nullptr;       // X
  const Node* values = nullptr;       // VALUES': the other operand
  // WEIGHTS': the operand of the product that reads WEIGHTS (through views, and for f16 or bf16
  // weights the cast to f32 that matmul widens them by)
  const Node* weights_read = nullptr;
  // The axes of the contraction's output along which the weights are broadcast (the values'
  // own axes: attention's head dimension); the others are the rows.
  std::vector<bool> value_axes;
};

// How the scheduler fuses. The default is what the JIT uses unless told otherwise.
struct Options {
  // OnlineSoftmax kernels: Auto takes them where they beat storing the weights (see
  // schedule.cpp); Always wherever the shape of the graph allows; Never leaves attention as
  // three kernels (scores, softmax, product).
  enum class Online : std::uint8_t { Auto, Always, Never };
  Online online_softmax = Online::Auto;
  // Whether the kernels run on the CPU (Auto also takes attention there where its blocked kernel
  // applies: f32, keys and values in multiples of 16).
  bool host = true;
};

// One kernel of a schedule: what it computes, how, what it reads, and what it costs.
struct ScheduledKernel {
  const Node* out = nullptr;  // the node computed into a buffer
  KernelKind kind = KernelKind::Elementwise;
  const Node* reduce = nullptr;   // Reduce: the reduce whose loops it runs (out, or under out's epilogue)
  std::vector<const Node*> rows;  // Rows: the fused reduces, in dependency order (inner first)
  OnlineSoftmax online;           // OnlineSoftmax: what it computes
  std::vector<const Node*> reads;  // the materialized nodes it reads (inputs and kernels)
  tensor::Shape iteration;  // the elements its innermost statements run for
  int ops = 0;              // arithmetic ops per element of `iteration`, fused work included
  tensor::Dim flops = 0;    // each op's work times the elements it computes (a reduce: reads)
  tensor::Dim bytes = 0;    // bytes of the buffers it reads and the one it writes
};

struct Schedule {
  // The nodes computed into buffers, in dependency order; the last is `result`.
  std::vector<const Node*> kernels;
  // One description per kernel, in the same order.
  std::vector<ScheduledKernel> items;
  // The node whose buffer holds the root's elements in row-major order: the root, or, when
  // the root only reshapes a computed node, that node (so no copy is made).
  const Node* result = nullptr;
  // With several roots: each one's node, in order (result is the last).
  std::vector<const Node*> results;
  // Nodes read as buffers that are not computed here (buffer nodes and realized nodes).
  std::vector<const Node*> inputs;
  // kernels and inputs as a set: what a kernel reads from memory instead of inlining.
  std::unordered_set<const Node*> materialized;
  // The OnlineSoftmax kernels, by node.
  std::unordered_map<const Node*, OnlineSoftmax> online;
};

// Schedules the computation of `root`. Nodes that already hold data are inputs.
Schedule make_schedule(const Node* root, const Options& options = {});
// Schedules several roots at once: work they share is computed once.
Schedule make_schedule(const std::vector<const Node*>& roots, const Options& options = {});

// The description of a kernel of S computing OUT (a node S materializes, or one more whose
// sources it does: a copy made after scheduling).
ScheduledKernel describe(const Schedule& s, const Node* out);

// The schedule as text, one line per kernel: its kind, the node it computes, how many ops it
// runs, the reduces fused into it (row fusion), what it reads (inputs and other kernels, by
// index) and its cost estimate (flops, and bytes read and written).
std::string schedule_str(const Schedule& s);

// The node whose value a kernel for n stores: a copy's or an assign's source, else n.
inline const Node* value_source(const Node* n) {
  if (n->op == tensor::Op::Copy) return n->src[0].get();
  if (n->op == tensor::Op::Assign) return n->src[1].get();
  return n;
}

// True when the node holds data already (a buffer, or a realized node).
inline bool holds_data(const Node* n) { return n->op == tensor::Op::Buffer || n->cached() != nullptr; }

}  // namespace tl::schedule
