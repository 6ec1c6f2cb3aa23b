// SPDX-License-Identifier: Apache-2.0
// Tensors as Lisp values: the per-interpreter tensor runtime (graph table, realize hook,
// RNG state) and the heap object that holds a graph node, with conversions between Lisp
// data and shapes, dims and dtypes.
#pragma once

#include <functional>
#include <memory>

#include "eval/interp.h"
#include "schedule/schedule.h"
#include "tensor/graph.h"

namespace tl::tensor {

// Computes a node into a contiguous buffer; `extra` gives variable values from the caller.
using RealizeFn = std::function<std::shared_ptr<Buffer>(const Node*, const Bindings& extra)>;
// Computes several nodes together (work they share runs once).
using RealizeManyFn =
    std::function<std::vector<std::shared_ptr<Buffer>>(const std::vector<const Node*>&, const Bindings& extra)>;

// Watches a function being traced by (jit f): the random keys it draws.
struct Tracer {
  virtual ~Tracer() = default;
  virtual void on_rng_key(const std::shared_ptr<Buffer>& key, std::uint64_t draw) = 0;
  // A check (%guard) on the one-element bool `flag`: a replay signals `type` with `message`
  // when the flag it computes is false.
  virtual void on_guard(const std::shared_ptr<Buffer>& flag, const std::string& type, const std::string& message) = 0;
};

struct TensorRuntime : eval::Interp::Extension {
  explicit TensorRuntime(eval::Interp* in) : interp(in) {}
  eval::Interp* interp;
  Graph graph;
  RealizeFn realize;          // the selected device
  RealizeManyFn realize_many;  // the same for several nodes (null: one realize each)
  std::string device = "ref";
  // What kind of code it runs: "host" (the CPU, ref), or "gpu" (a GPU target, simulated
  // included). Optimizer rules restricted to a :backend match the name or the kind.
  std::string device_kind = "host";
  // The options the selected device's scheduler works with (a JIT device's, or those the next
  // one gets): what (graph->dot X :stage :kernels) draws. Unset: the defaults.
  std::function<schedule::Options()> schedule_options;
  std::size_t realized_bytes = 0;  // total bytes realized, for (tensor-stats)
  std::uint64_t host_reads = 0;    // tensor data read into Lisp values (item, aref, print, save)
  // The random generator: a seed and the number of random tensors drawn since it was set.
  std::int64_t rng_seed = 0;
  std::uint64_t rng_draws = 0;
  Tracer* tracer = nullptr;  // set while (jit f) traces f
};

// A new u32 buffer (seed mod 2^32, draw mod 2^32, seed div 2^32 mod 2^32): the Threefry key and
// second counter word of the next random draw; advances the draw count.
std::shared_ptr<Buffer> next_rng_key(TensorRuntime& rt);
// The key of draw number `draw` under `seed`.
std::shared_ptr<Buffer> rng_key(std::int64_t seed, std::uint64_t draw);

struct TensorObj : eval::Foreign {
  std::shared_ptr<TensorRuntime> rt;  // declared first: outlives `node`
  NodeRef node;
  // A complex tensor (c64, c128): `node` holds its parts, a real f32/f64 node of shape S + (2)
  // with (real, imaginary) along the last axis (NumPy's complex storage); the tensor has shape
  // S and dtype complex_of(node->dtype). The graph, autograd and every executor see the parts
  // only, so a gradient is the parts' gradients: PyTorch's convention, dL/dx + i dL/dy.
  bool complex = false;
  const char* type_name() const override { return "tensor"; }
  void print(std::string& out) const override;
  // A realized tensor's buffer, or the one a view of it reads (eval::Foreign).
  std::pair<const void*, std::size_t> held_memory() const override;
};

// The shape and dtype the tensor has as a Lisp value (a complex tensor's, not its parts').
Shape value_shape(const TensorObj* t);
DType value_dtype(const TensorObj* t);

// The runtime of an interpreter (created by install_tensor_runtime).
TensorRuntime& runtime(eval::Interp& in);
std::shared_ptr<TensorRuntime> install_tensor_runtime(eval::Interp& in, RealizeFn realize);

// The interpreter's graph, set to record the current call's span on the nodes built next.
Graph& graph_at_call(eval::Interp& in);

bool is_tensor(eval::Value v);
TensorObj* as_tensor(eval::Value v);
eval::Value make_tensor(eval::Interp& in, NodeRef node);
// A complex tensor whose parts are `parts` (a real f32/f64 node whose last axis has size 2).
eval::Value make_complex_tensor(eval::Interp& in, NodeRef parts);
// make_tensor or make_complex_tensor, as `complex` says.
eval::Value make_tensor_like(eval::Interp& in, NodeRef node, bool complex);
// Argument i as a tensor node; a type error naming fn otherwise, and a dtype-error for a
// complex tensor (a function that takes complex tensors asks for tensor_arg_any).
const NodeRef& arg_tensor(eval::Interp& in, const char* fn, eval::Value* args, int i);
// The same, as the tensor object (to realize or replace its node).
TensorObj* tensor_arg(eval::Interp& in, const char* fn, eval::Value* args, int i);
// Argument i as a tensor object, complex or not.
TensorObj* tensor_arg_any(eval::Interp& in, const char* fn, eval::Value* args, int i);
// The dtype-error for a complex tensor given to fn, which does not take one.
[[noreturn]] void refuse_complex(eval::Interp& in, const std::string& fn, DType t);

// Realizes the tensor in place: its node becomes a buffer node holding the result, so the
// graph that computed it can be freed.
const Buffer& realize(eval::Interp& in, TensorObj* t, const Bindings& extra = {});
// "file:line:col" of a span in IN's sources, for messages about nodes.
std::string span_text(eval::Interp& in, const Span& s);
// Realizes several tensors at once.
void realize_all(eval::Interp& in, const std::vector<TensorObj*>& ts);
// realize, for reading the data into Lisp (counted: a jitted function must not do it).
const Buffer& read_back(eval::Interp& in, TensorObj* t);

// A symbolic dimension with a value, made by (dim NAME VALUE): where a dimension goes it is
// the variable NAME, and with-dims binds NAME to VALUE for the graph built inside. Passed to a
// jit function, it keys the capture by its name only, so every value replays one trace.
struct BoundDim : eval::Foreign {
  std::string name;
  std::int64_t value = 0;
  bool value_read = false;  // dim-value read it (a jit trace then cannot replay other values)
  const char* type_name() const override { return "dim"; }
  void print(std::string& out) const override { out += "#<dim " + name + " = " + std::to_string(value) + ">"; }
};
// V as a BoundDim, or null.
BoundDim* as_bound_dim(eval::Value v);

eval::Value dim_to_lisp(eval::Interp& in, const Dim& d);
Dim dim_from_lisp(eval::Interp& in, const char* fn, eval::Value v);
eval::Value shape_to_lisp(eval::Interp& in, const Shape& s);
Shape shape_from_lisp(eval::Interp& in, const char* fn, eval::Value v);
DType dtype_from_lisp(eval::Interp& in, const char* fn, eval::Value v);
eval::Value dtype_to_lisp(eval::Interp& in, DType t);
// Integer list argument (axes, orders).
std::vector<std::int64_t> ints_from_lisp(eval::Interp& in, const char* fn, eval::Value v);

// NumPy-like text of a realized buffer of this shape (middle of large axes elided); `complex`:
// the buffer holds (real, imaginary) pairs, one per element of `shape`, printed as 1.5-2.j.
std::string format_buffer(const Buffer& b, const std::vector<std::int64_t>& shape, const std::string& indent,
                          bool complex = false);

void register_tensor_builtins(eval::Interp& in);
void register_prim_builtins(eval::Interp& in);
void register_grad_builtins(eval::Interp& in);
void register_model_builtins(eval::Interp& in);

}  // namespace tl::tensor
