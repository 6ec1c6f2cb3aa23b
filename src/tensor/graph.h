// SPDX-License-Identifier: Apache-2.0
// The lazy tensor graph: immutable, hash-consed nodes of primitive ops (ops.def). Building
// the same expression twice gives the same node. The make_* functions apply each op's shape
// and dtype rule and throw GraphError on a violation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "support/condition_error.h"
#include "support/host_memory.h"
#include "support/span.h"
#include "tensor/dim.h"
#include "tensor/dtype.h"
#include "tensor/view.h"

namespace tl::tensor {

enum class Op : std::uint8_t {
#define OP(e, name, arity, group, work, dtypes, doc) e,
#include "tensor/ops.def"
#undef OP
};
enum class OpGroup : std::uint8_t { Source, Unary, Binary, Ternary, Reduce, Movement, Index, Memory, Escape };

// TL_IF_ELEMENTWISE_##group(...) expands to its arguments for the elementwise groups of
// ops.def and to nothing for the others: X-macros over ops.def use it to pick those ops.
#define TL_IF_ELEMENTWISE_Source(...)
#define TL_IF_ELEMENTWISE_Unary(...) __VA_ARGS__
#define TL_IF_ELEMENTWISE_Binary(...) __VA_ARGS__
#define TL_IF_ELEMENTWISE_Ternary(...) __VA_ARGS__
#define TL_IF_ELEMENTWISE_Reduce(...)
#define TL_IF_ELEMENTWISE_Movement(...)
#define TL_IF_ELEMENTWISE_Index(...)
#define TL_IF_ELEMENTWISE_Memory(...)
#define TL_IF_ELEMENTWISE_Escape(...)
#define TL_IF_NOT_ELEMENTWISE_Source(...) __VA_ARGS__
#define TL_IF_NOT_ELEMENTWISE_Unary(...)
#define TL_IF_NOT_ELEMENTWISE_Binary(...)
#define TL_IF_NOT_ELEMENTWISE_Ternary(...)
#define TL_IF_NOT_ELEMENTWISE_Reduce(...) __VA_ARGS__
#define TL_IF_NOT_ELEMENTWISE_Movement(...) __VA_ARGS__
#define TL_IF_NOT_ELEMENTWISE_Index(...) __VA_ARGS__
#define TL_IF_NOT_ELEMENTWISE_Memory(...) __VA_ARGS__
#define TL_IF_NOT_ELEMENTWISE_Escape(...) __VA_ARGS__

// The dtypes an elementwise op takes (ops.def): Numbers are all but bool; Integral, the
// integers and bool; Compare takes any and gives bool.
enum class DTypeRule : std::uint8_t { Any, Numbers, Floats, Ints, Integral, Compare };

struct OpInfo {
  const char* name;
  int arity;
  OpGroup group;
  int work;  // arithmetic per element, relative to an add (ops.def)
  DTypeRule dtypes;
  const char* doc;
};
const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
std::optional<Op> op_from_name(std::string_view name);
constexpr int kOpCount = 0
#define OP(e, name, arity, group, work, dtypes, doc) +1
#include "tensor/ops.def"
#undef OP
    ;

enum class ReduceKind : std::uint8_t { Sum, Max, Prod };
const char* reduce_kind_name(ReduceKind k);

// Host memory holding a realized tensor, contiguous and row-major. Backends will own
// device memory behind the same object.
// A copy of a buffer's data in a device's own memory (a GPU's), made by the JIT device that
// ran kernels on it; destroying it gives the memory back to that device's pool.
struct DeviceCopy {
  virtual ~DeviceCopy() = default;
  // Copies the first `bytes` bytes of the data to host memory `dst`; a device-error when the
  // device fails.
  virtual void download(void* dst, std::size_t bytes) const = 0;
  void* ptr = nullptr;
  const void* pool = nullptr;  // the device memory it belongs to
};

// A tensor's data: host bytes, and a copy in a device's own memory (a GPU's) when one put it
// there. A buffer a device computed may hold its data only there until the host reads it:
// bytes() fetches it first.
struct Buffer {
  DType dtype;
  // The device's copy: a cache of the host bytes, so it may be set on a const buffer. Whoever
  // writes the bytes in place (an assign) resets it.
  mutable std::shared_ptr<DeviceCopy> device;
  // Host bytes uninitialized when made: the producer writes every element.
  // A byte count past size_t raises std::length_error, which builtins report as a storage-error.
  Buffer(DType t, std::size_t count) : dtype(t), size_(checked_bytes(t, count)), bytes_(size_) {}
  // Data that is on the device only, so far.
  Buffer(DType t, std::size_t count, std::shared_ptr<DeviceCopy> on_device)
      : dtype(t), device(std::move(on_device)), size_(storage_bytes(t, count)), host_stale_(true) {}
  // Data in memory the buffer does not own: `keep` holds it alive while the buffer uses it
  // (a mapping of a file, a host's array). Nothing writes it: a kernel that updates the buffer
  // in place copies the data into memory of the buffer's own first (PlanMemory::pointer_to_write).
  Buffer(DType t, std::size_t count, std::shared_ptr<void> keep, void* data)
      : dtype(t), size_(storage_bytes(t, count)), outside_(static_cast<std::uint8_t*>(data)), keep_(std::move(keep)) {}
  std::size_t count() const { return storage_count(dtype, size_); }
  static std::size_t checked_bytes(DType t, std::size_t count) { return storage_bytes(t, count); }
  std::size_t size_bytes() const { return size_; }
  // The host bytes, downloaded from the device first when only the device has the data (and
  // copied into memory of the buffer's own when it is outside memory: data() avoids that).
  const host_memory::Bytes& bytes() const {
    if (host_stale_) fetch();
    if (outside_ != nullptr) adopt();
    return bytes_;
  }
  host_memory::Bytes& bytes() {
    if (host_stale_) fetch();
    if (outside_ != nullptr) adopt();
    return bytes_;
  }
  // The host data, wherever it lives.
  void* data() {
    if (outside_ != nullptr) return outside_;
    return bytes().data();
  }
  const void* data() const {
    if (outside_ != nullptr) return outside_;
    return bytes().data();
  }
  // Whether the data lives in outside memory (a mapped file).
  bool outside() const { return outside_ != nullptr; }
  // Whether the host bytes hold the data (else only the device copy does).
  bool on_host() const { return !host_stale_; }
  // Pins: while a host holds a pointer to the data (the C API's tl_tensor_data, a NumPy array
  // over a tensor), memory the buffer lets go of (an assign replacing its bytes, outside data
  // adopted) is kept, and freed with the last unpin. The host's pointer keeps reading the data
  // as it was when pinned. Not thread-safe: under the interpreter's lock.
  void pin() const { ++pins_; }
  void unpin() const;
  // Before a kernel writes the host bytes in place: outside or pinned memory is copied into
  // memory of the buffer's own, which the kernel then writes (the pins keep the old).
  void prepare_write();
  // The data becomes `b` (host bytes of the same size); the device copy is dropped.
  void set_bytes(host_memory::Bytes b);
  // The data becomes the device's `copy`; the host bytes are fetched when next read.
  void set_device(std::shared_ptr<DeviceCopy> copy);

 private:
  void fetch() const;
  void adopt() const;  // copies outside data into bytes_ and lets the outside memory go
  void retire() const;  // a pinned buffer keeps the memory it is about to let go of
  std::size_t size_;
  mutable host_memory::Bytes bytes_;
  mutable bool host_stale_ = false;
  mutable std::uint8_t* outside_ = nullptr;
  mutable std::shared_ptr<void> keep_;
  mutable int pins_ = 0;
  struct Retired {
    host_memory::Bytes bytes;
    std::shared_ptr<void> keep;
  };
  mutable std::vector<Retired> retired_;
};

// Raised by the shape and dtype rules; `type` is the Lisp condition ("shape-error", ...).
using GraphError = tl::ConditionError;

// A new buffer for a tensor of dtype t and concrete `shape`, for realize. Element and byte
// counts are multiplied with overflow checks; a count that overflows is a shape-error, memory
// that cannot be had a storage-error naming the size and the shape (issue 19).
std::shared_ptr<Buffer> allocate_buffer(DType t, const std::vector<std::int64_t>& shape);

// The number of bytes of dtype t that `shape` (concrete, non-negative) covers, with zero
// axes left out, so every partial product of the shape fits too; nullopt past INT64_MAX.
std::optional<std::int64_t> checked_shape_bytes(DType t, const std::vector<std::int64_t>& shape);

class Graph;
struct Node;

// Counted reference to a node. Nodes die when the last reference goes (iteratively, so
// long chains do not exhaust the C stack).
class NodeRef {
 public:
  NodeRef() = default;
  explicit NodeRef(Node* n);
  NodeRef(const NodeRef& o);
  NodeRef(NodeRef&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  NodeRef& operator=(NodeRef o) noexcept {
    std::swap(n_, o.n_);
    return *this;
  }
  ~NodeRef();
  Node* get() const { return n_; }
  Node* operator->() const { return n_; }
  const Node& operator*() const { return *n_; }
  explicit operator bool() const { return n_ != nullptr; }
  bool operator==(const NodeRef& o) const { return n_ == o.n_; }

 private:
  Node* n_ = nullptr;
};

struct Node {
  Op op;
  DType dtype;
  Shape shape;
  std::vector<NodeRef> src;
  // Op arguments (which are meaningful depends on op; the rest stay empty or zero).
  std::vector<std::int64_t> axes;  // reduce axes, permute order, flip mask (0/1), iota or gather axis
  std::vector<Range> ranges;       // pad (before, after), shrink [begin, end)
  ReduceKind reduce_kind = ReduceKind::Sum;
  double fvalue = 0;               // const of a float dtype
  std::int64_t ivalue = 0;         // const of an integer or bool dtype
  std::string name;                // extern kernel name; buffer tag
  std::shared_ptr<Buffer> buffer;  // buffer
  Bindings bindings;               // values of variables in its shape (a buffer) or ranges (with-dims)
  // Autograd: gradients flow through this node (a leaf marked with requires-grad!, or an op
  // with such a source, built while gradients are on). Part of the identity, so a detached
  // copy or a value built under no-grad is a node of its own.
  bool grad = false;
  // Not part of the identity:
  Span span;                       // the form that first built this node
  std::size_t hash = 0;
  std::uint32_t id = 0;            // creation order, for printing
  mutable std::int32_t refs = 0;
  Graph* graph = nullptr;
  // A cache of the realized value of this node (set for roots that were realized), valid
  // until the graph's epoch changes (an assign wrote into a buffer).
  std::shared_ptr<Buffer> cached() const;
  void set_cached(std::shared_ptr<Buffer> b) const;
  mutable std::shared_ptr<Buffer> realized_;
  mutable std::uint64_t realized_epoch_ = 0;
  bool has_assign = false;  // an assign is among this node and its sources
  // Autograd. A buffer that realized a node gradients flow through keeps that node here, so
  // backward can go on through it; a leaf that requires a gradient accumulates it here.
  NodeRef origin;
  NodeRef grad_value;
  // A custom gradient (with-custom-grad): backward sends this node's gradient to a Lisp rule
  // (kept by the Lisp side under this node's id) giving the gradients of `custom_inputs`,
  // instead of going through the ops that computed it.
  bool custom_grad = false;
  std::vector<NodeRef> custom_inputs;
  // Write-after-read (issue 19). A node that read a buffer an assign then wrote in place is
  // taken out of the hash-consing table (`retired`: an equal expression built afterwards is a
  // new node, reading the new data). Without gradients it is moved onto a snapshot of the old
  // data, so it keeps its value; with gradients it is `overwritten` instead (no copy), and
  // realizing it uncached or differentiating through it is an error naming the assign.
  bool retired = false;
  bool overwritten = false;
  Span overwritten_at;
};

// The hash-consing table and node factory. One per interpreter runtime.
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // The span recorded on nodes built from now on (set by the Lisp layer per call).
  Span current_span;
  // Whether ops built from now on carry gradients from their sources (off under no-grad).
  bool grad_enabled = true;
  // Values of symbolic dimensions given by an enclosing with-dims: a node built from now on
  // whose shape or ranges name one of them carries its value (Node::bindings), so the graph
  // keeps meaning what it meant when built and its kernels stay symbolic in it.
  Bindings scoped_bindings;
  // Advancing it makes every cached realization stale (for a host that writes buffers
  // behind the graph's back). Assigns need not: they retire the readers of what they write
  // (retire_readers), eager and replayed alike.
  std::uint64_t epoch = 0;
  // Live nodes marked overwritten (while there are none, realizes skip the check for them).
  std::uint64_t overwritten_count = 0;
  // Ids of nodes with a custom gradient that have died since the Lisp side last looked, so
  // it can drop their rules.
  std::vector<std::uint32_t> dead_custom_grads;
  std::size_t live_nodes() const { return table_.size(); }

  NodeRef make_const_float(double v, DType t, const Shape& shape);
  NodeRef make_const_int(std::int64_t v, DType t, const Shape& shape);
  // `tag` (kept in the node's name) tells apart nodes of one buffer that must stay distinct,
  // such as the arguments of a traced function.
  NodeRef make_buffer(std::shared_ptr<Buffer> b, const Shape& shape, Bindings bindings = {}, std::string tag = {});
  NodeRef make_iota(const Shape& shape, int axis, DType t);
  // X, or when it is quantized X cast to f32: every op but the views and cast reads a
  // quantized tensor so (the cast fuses into the kernel that reads it: no f32 copy is made).
  NodeRef dequantized(const NodeRef& x);
  NodeRef make_unary(Op op, const NodeRef& x);
  NodeRef make_cast(const NodeRef& x, DType t, bool bitcast = false);
  NodeRef make_binary(Op op, const NodeRef& a, const NodeRef& b);
  NodeRef make_where(const NodeRef& c, const NodeRef& a, const NodeRef& b);
  NodeRef make_reduce(ReduceKind k, const NodeRef& x, std::vector<std::int64_t> axes);
  NodeRef make_reshape(const NodeRef& x, const Shape& shape);
  NodeRef make_permute(const NodeRef& x, std::vector<std::int64_t> order);
  NodeRef make_expand(const NodeRef& x, const Shape& shape);
  NodeRef make_pad(const NodeRef& x, std::vector<Range> pads);
  NodeRef make_shrink(const NodeRef& x, std::vector<Range> ranges);
  NodeRef make_flip(const NodeRef& x, std::vector<std::int64_t> axes_mask);
  // X's elements at INDEX along AXIS (ops.def's gather): INDEX, an integer tensor of X's rank
  // and of X's shape but along AXIS, gives the result's shape.
  NodeRef make_gather(const NodeRef& x, const NodeRef& index, std::int64_t axis);
  // X with SRC's elements added at INDEX along AXIS (ops.def's scatter-add): INDEX and SRC
  // have one shape, X's but along AXIS. Gather's gradient.
  NodeRef make_scatter_add(const NodeRef& x, const NodeRef& index, const NodeRef& src, std::int64_t axis);
  NodeRef make_copy(const NodeRef& x);
  NodeRef make_assign(const NodeRef& target, const NodeRef& value);
  // An assign of VALUE into the elements of TARGET that VIEW (movement ops over TARGET, of
  // VALUE's shape) shows: the rest of TARGET keeps its data. Executors write only the view's
  // elements, so writing one row of a large buffer costs that row (issue 19).
  NodeRef make_assign_view(const NodeRef& target, const NodeRef& view, const NodeRef& value);
  // Before realizing ROOTS: for every buffer an assign among them writes into, the live
  // nodes outside this realize that read it are retired and either moved onto a snapshot of
  // the data (no gradients) or marked overwritten (see Node::retired). A graph that needs an
  // overwritten node's value is a "realize" condition error.
  // `where` formats a span for that message.
  // `collect` runs the Lisp collector (dead readers need no snapshot).
  void prepare_writes(const std::vector<const Node*>& roots, const std::function<std::string(const Span&)>& where,
                      const std::function<void()>& collect = {});
  // The same for writes into the WRITTEN buffers by other means (a jit replay); EDGES and
  // ROOTS describe the graph being realized, whose own nodes need no snapshot.
  void retire_readers(const std::unordered_set<const Buffer*>& written,
                      const std::unordered_map<const Node*, int>& edges = {}, const std::vector<const Node*>& roots = {},
                      const std::function<void()>& collect = {});
  std::shared_ptr<Buffer> snapshot_of(const Node* n);
  NodeRef make_extern(const std::string& name, std::vector<NodeRef> srcs, DType t, const Shape& shape);

  // Interns a fully described node (used by the make_* functions and by rewrites). An op's
  // grad flag is derived from its sources unless `keep_grad` (rewrites, detach).
  NodeRef intern(Node&& proto, bool keep_grad = false);
  // x as a node that gradients do not flow through (the same computation).
  NodeRef make_detached(const NodeRef& x);
  // A buffer node that gradients flow into (requires-grad!), or not.
  NodeRef with_grad(const NodeRef& buffer_node, bool grad);
  void release(Node* n);  // called when a node's count reaches zero

 private:
  struct Hash {
    std::size_t operator()(const Node* n) const { return n->hash; }
  };
  struct Eq {
    bool operator()(const Node* a, const Node* b) const;
  };
  std::unordered_set<Node*, Hash, Eq> table_;
  std::uint32_t next_id_ = 1;
  std::vector<Node*> dying_;
  bool releasing_ = false;
};

// A node description with n's identity (op, sources, arguments, data, grad flag) and span,
// to intern a variant of n.
Node identity_of(const Node& n);

inline std::shared_ptr<Buffer> Node::cached() const {
  return realized_ && graph != nullptr && realized_epoch_ == graph->epoch ? realized_ : nullptr;
}
inline void Node::set_cached(std::shared_ptr<Buffer> b) const {
  realized_ = std::move(b);
  realized_epoch_ = graph != nullptr ? graph->epoch : 0;
}

// Walks a chain of movement ops down to the node that produces data, composing the views.
ViewStack view_of(const Node* n, const Node** base);

// A printed form of the graph: (add (buffer#3 f32 (2 3)) (const 1.0 f32 (2 3))).
// Shared subgraphs print once per occurrence; depth-limited.
std::string node_str(const Node* n, int max_depth = 12);

// The dtype-error text for a result of quantized dtype T that is not its own data (a view of
// blocks, which would have to be computed into blocks): the executors' shared words.
inline std::string quantized_result_message(DType t) {
  const std::string name(dtype_name(t));
  return "realize: a view of a " + name + " tensor would have to be computed into " + name +
         " blocks, which only quantize makes; dequantize it first, e.g. (cast x 'f32)";
}

// Bytes of a tensor of this shape and dtype, stored contiguously (for reports: a quantized
// tensor's symbolic size counts its elements at a block's bytes).
inline Dim shape_bytes(const Shape& s, DType t) {
  const Dim n = shape_numel(s);
  if (is_quantized(t) && n.is_const())
    return Dim(static_cast<std::int64_t>(storage_bytes(t, static_cast<std::size_t>(n.value()))));
  return n * Dim(static_cast<std::int64_t>(dtype_size(t)));
}

}  // namespace tl::tensor
