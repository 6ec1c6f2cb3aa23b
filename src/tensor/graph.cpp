// SPDX-License-Identifier: Apache-2.0
// Hash-consed graph nodes and the shape/dtype rule of every primitive op.
// (Over 800 lines: one make_* function per op of ops.def, each with its rule and messages, and
// the write-after-read bookkeeping of assigns; they share the hash-consing table.)
#include "tensor/graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "support/check.h"

namespace tl::tensor {

void Buffer::unpin() const {
  if (--pins_ == 0) retired_.clear();
}

void Buffer::retire() const {
  if (pins_ > 0 && (!bytes_.empty() || keep_)) retired_.push_back(Retired{std::move(bytes_), keep_});
}

void Buffer::prepare_write() {
  if (host_stale_) fetch();
  if (outside_ != nullptr) {
    adopt();
  } else if (pins_ > 0) {
    host_memory::Bytes b(size_);
    if (size_ > 0) std::memcpy(b.data(), bytes_.data(), size_);
    retire();
    bytes_ = std::move(b);
  }
}

void Buffer::set_bytes(host_memory::Bytes b) {
  TL_CHECK(b.size() == size_, "Buffer::set_bytes: a different size");
  retire();
  bytes_ = std::move(b);
  host_stale_ = false;
  outside_ = nullptr;
  keep_.reset();
  device.reset();
}

void Buffer::set_device(std::shared_ptr<DeviceCopy> copy) {
  device = std::move(copy);
  retire();
  host_stale_ = true;
  bytes_ = host_memory::Bytes();  // the host memory goes until it is needed again
  outside_ = nullptr;
  keep_.reset();
}

void Buffer::adopt() const {
  host_memory::Bytes b(size_);
  if (size_ > 0) std::memcpy(b.data(), outside_, size_);
  retire();
  bytes_ = std::move(b);
  outside_ = nullptr;
  keep_.reset();
}

void Buffer::fetch() const {
  host_memory::Bytes b(size_);
  if (size_ > 0) device->download(b.data(), size_);
  bytes_ = std::move(b);
  host_stale_ = false;
}

namespace {
constexpr OpInfo kOps[] = {
#define OP(e, name, arity, group, work, dtypes, doc) {name, arity, OpGroup::group, work, DTypeRule::dtypes, doc},
#include "tensor/ops.def"
#undef OP
};

std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

[[noreturn]] void fail(const char* type, const std::string& msg) { throw GraphError(type, msg); }

std::string axes_str(const std::vector<std::int64_t>& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? " " : "") + std::to_string(a[i]);
  return s + ")";
}

// Known-false comparisons only: symbolic dims are checked when the graph is realized.
bool known_negative(const Dim& d) { return d.is_const() && d.value() < 0; }
bool known_less(const Dim& a, const Dim& b) {
  Dim diff = a - b;
  return diff.is_const() && diff.value() < 0;
}
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }

std::optional<Op> op_from_name(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (name == kOps[i].name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

const char* reduce_kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Prod: return "prod";
  }
  return "?";
}

// --- references ----------------------------------------------------------------------------

NodeRef::NodeRef(Node* n) : n_(n) {
  if (n_) ++n_->refs;
}
NodeRef::NodeRef(const NodeRef& o) : n_(o.n_) {
  if (n_) ++n_->refs;
}
NodeRef::~NodeRef() {
  if (n_ && --n_->refs == 0) n_->graph->release(n_);
}

void Graph::release(Node* n) {
  dying_.push_back(n);
  if (releasing_) return;
  releasing_ = true;
  while (!dying_.empty()) {
    Node* d = dying_.back();
    dying_.pop_back();
    if (!d->retired) table_.erase(d);
    if (d->overwritten) --overwritten_count;
    if (d->custom_grad) dead_custom_grads.push_back(d->id);
    delete d;  // dropping d->src may push more nodes onto dying_
  }
  releasing_ = false;
}

Graph::~Graph() {
  // Nodes still referenced from outside outlive the table only in a host bug; detach them.
  for (Node* n : table_) n->graph = nullptr;
}

bool Graph::Eq::operator()(const Node* a, const Node* b) const {
  if (a->op != b->op || a->dtype != b->dtype || a->hash != b->hash) return false;
  if (a->shape != b->shape || a->src.size() != b->src.size()) return false;
  for (std::size_t i = 0; i < a->src.size(); ++i) {
    if (a->src[i].get() != b->src[i].get()) return false;
  }
  return a->axes == b->axes && a->ranges == b->ranges && a->reduce_kind == b->reduce_kind &&
         std::memcmp(&a->fvalue, &b->fvalue, sizeof(double)) == 0 && a->ivalue == b->ivalue &&
         a->name == b->name && a->buffer == b->buffer && a->bindings == b->bindings && a->grad == b->grad;
}

NodeRef Graph::intern(Node&& proto, bool keep_grad) {
  if (is_complex(proto.dtype)) {
    // Complex tensors reach the graph as their real parts (tensor_value.h); a node of a complex
    // dtype is a bug in the caller.
    fail("internal-error", std::string(op_name(proto.op)) + ": a graph node cannot have the complex dtype " +
                               std::string(dtype_name(proto.dtype)));
  }
  if (!keep_grad && !proto.src.empty()) {
    proto.grad = false;
    if (grad_enabled) {
      for (const auto& s : proto.src) proto.grad = proto.grad || s->grad;
    }
  }
  proto.has_assign = proto.op == Op::Assign;
  for (const auto& s : proto.src) proto.has_assign = proto.has_assign || s->has_assign;
  if (!scoped_bindings.empty()) {
    std::vector<std::string> vars;
    for (const auto& d : proto.shape) d.collect_vars(vars);
    for (const auto& [b, e] : proto.ranges) {
      b.collect_vars(vars);
      e.collect_vars(vars);
    }
    for (const auto& v : vars) {
      if (auto it = scoped_bindings.find(v); it != scoped_bindings.end()) proto.bindings.emplace(v, it->second);
    }
  }
  std::size_t h = mix(static_cast<std::size_t>(proto.op), static_cast<std::size_t>(proto.dtype));
  h = mix(h, proto.grad ? 1 : 0);
  for (const auto& d : proto.shape) h = mix(h, d.hash());
  for (const auto& s : proto.src) h = mix(h, std::hash<const void*>{}(s.get()));
  for (auto a : proto.axes) h = mix(h, static_cast<std::size_t>(a));
  for (const auto& [b, e] : proto.ranges) h = mix(mix(h, b.hash()), e.hash());
  std::uint64_t bits;
  std::memcpy(&bits, &proto.fvalue, 8);
  h = mix(mix(mix(h, bits), static_cast<std::size_t>(proto.ivalue)), static_cast<std::size_t>(proto.reduce_kind));
  h = mix(h, std::hash<std::string>{}(proto.name));
  h = mix(h, std::hash<const void*>{}(proto.buffer.get()));
  proto.hash = h;
  auto it = table_.find(&proto);
  if (it != table_.end()) return NodeRef(*it);
  Node* n = new Node(std::move(proto));
  n->graph = this;
  n->refs = 0;
  n->id = next_id_++;
  if (!n->span.valid()) n->span = current_span;
  table_.insert(n);
  return NodeRef(n);
}

std::optional<std::int64_t> checked_shape_bytes(DType t, const std::vector<std::int64_t>& shape) {
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(t));
  for (std::int64_t d : shape) {
    if (d != 0 && __builtin_mul_overflow(bytes, d, &bytes)) return std::nullopt;
  }
  return bytes / static_cast<std::int64_t>(dtype_block(t));  // a quantized type's size is a block's
}

std::shared_ptr<Buffer> allocate_buffer(DType t, const std::vector<std::int64_t>& shape) {
  std::string what = std::string(dtype_name(t)) + " tensor of shape (";
  for (std::size_t i = 0; i < shape.size(); ++i) what += (i ? " " : "") + std::to_string(shape[i]);
  what += ")";
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      fail("shape-error", "realize: a " + what + " has too many elements");
    }
  }
  auto bytes = checked_shape_bytes(t, shape);
  if (!bytes) fail("shape-error", "realize: a " + what + " has too many elements");
  try {
    return std::make_shared<Buffer>(t, static_cast<std::size_t>(count));
  } catch (const std::bad_alloc&) {
    fail("storage-error",
         "realize: out of memory for " + std::to_string(*bytes) + " bytes, a " + what);
  }
}

// --- sources ---------------------------------------------------------------------------------

namespace {
// Every node's concrete dimensions, times its element size, must fit in int64 (zero axes left
// out): element counts, strides and byte sizes computed from the shape then cannot overflow.
// A wrapped count read out of bounds, or made a count of 0 that loops forever (issue 19).
void check_size(Op op, DType t, const Shape& shape) {
  std::vector<std::int64_t> dims;
  for (const auto& d : shape) {
    if (d.is_const() && d.value() > 0) dims.push_back(d.value());
  }
  if (!checked_shape_bytes(t, dims)) {
    fail("shape-error", std::string(op_name(op)) + ": shape " + shape_str(shape) +
                            " has too many elements (" + std::string(dtype_name(t)) +
                            " data of more than 2^63 bytes)");
  }
}

Node proto(Op op, DType t, Shape shape) {
  check_size(op, t, shape);
  Node n;
  n.op = op;
  n.dtype = t;
  n.shape = std::move(shape);
  return n;
}

void check_shape(const char* op, const Shape& shape) {
  for (const auto& d : shape) {
    if (known_negative(d)) fail("shape-error", std::string(op) + ": negative dimension in shape " + shape_str(shape));
  }
}
}  // namespace

namespace {
// Nothing but quantize makes blocks: a constant or iota of a quantized dtype is an error.
void refuse_quantized(const char* op, DType t) {
  if (is_quantized(t)) {
    fail("dtype-error", std::string(op) + ": nothing computes into " + std::string(dtype_name(t)) +
                            " blocks; make a float tensor and quantize it, e.g. (quantize (ones '(2 32)) '" +
                            std::string(dtype_name(t)) + ")");
  }
}
}  // namespace

NodeRef Graph::make_const_float(double v, DType t, const Shape& shape) {
  refuse_quantized("const", t);
  if (!is_float(t)) {
    // A float outside int64 (nan, inf, 1e300) has no integer; casting it is undefined (issue 19).
    auto i = truncate_to_int(v, DType::I64);
    if (!i) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", v);
      fail("dtype-error", std::string("const: ") + text + " cannot be converted to " +
                              std::string(dtype_name(t)));
    }
    return make_const_int(*i, t, shape);
  }
  check_shape("const", shape);
  Node n = proto(Op::Const, t, shape);
  n.fvalue = round_to_dtype(v, t);
  if (n.fvalue == 0) n.fvalue = std::signbit(n.fvalue) ? -0.0 : 0.0;
  return intern(std::move(n));
}

NodeRef Graph::make_const_int(std::int64_t v, DType t, const Shape& shape) {
  refuse_quantized("const", t);
  if (is_float(t)) return make_const_float(static_cast<double>(v), t, shape);
  check_shape("const", shape);
  Node n = proto(Op::Const, t, shape);
  n.ivalue = wrap_int(v, t);
  return intern(std::move(n));
}

NodeRef Graph::make_buffer(std::shared_ptr<Buffer> b, const Shape& shape, Bindings bindings, std::string tag) {
  Node n = proto(Op::Buffer, b->dtype, shape);
  n.buffer = std::move(b);
  n.bindings = std::move(bindings);
  n.name = std::move(tag);
  return intern(std::move(n));
}

Node identity_of(const Node& n) {
  Node p;
  p.op = n.op;
  p.dtype = n.dtype;
  p.shape = n.shape;
  p.src = n.src;
  p.axes = n.axes;
  p.ranges = n.ranges;
  p.reduce_kind = n.reduce_kind;
  p.fvalue = n.fvalue;
  p.ivalue = n.ivalue;
  p.name = n.name;
  p.buffer = n.buffer;
  p.bindings = n.bindings;
  p.grad = n.grad;
  p.span = n.span;
  return p;
}

NodeRef Graph::make_detached(const NodeRef& x) {
  if (!x->grad) return x;
  Node p = identity_of(*x);
  p.grad = false;
  NodeRef d = intern(std::move(p), true);
  if (x->cached() && !d->cached()) d->set_cached(x->cached());
  return d;
}

NodeRef Graph::with_grad(const NodeRef& b, bool grad) {
  if (b->grad == grad) return b;
  Node p = identity_of(*b);
  p.grad = grad;
  return intern(std::move(p), true);
}

NodeRef Graph::make_iota(const Shape& shape, int axis, DType t) {
  refuse_quantized("iota", t);
  if (axis < 0 || axis >= static_cast<int>(shape.size())) {
    fail("index-error", "iota: axis " + std::to_string(axis) + " out of range for shape " + shape_str(shape));
  }
  if (t == DType::Bool) fail("dtype-error", "iota: dtype bool cannot hold indices");
  check_shape("iota", shape);
  Node n = proto(Op::Iota, t, shape);
  n.axes = {axis};
  return intern(std::move(n));
}

// --- elementwise -----------------------------------------------------------------------------

namespace {
// The dtype-error when dtype t is not one elementwise OP takes (its DTypeRule in ops.def).
void check_operand_dtype(Op op, DType t) {
  const std::string name = op_name(op);
  const std::string got = std::string(dtype_name(t));
  switch (op_info(op).dtypes) {
    case DTypeRule::Any:
    case DTypeRule::Compare: return;
    case DTypeRule::Numbers:
      if (t == DType::Bool) fail("dtype-error", name + ": not defined for bool" + (op == Op::Neg ? " (use logical-not)" : ""));
      return;
    case DTypeRule::Floats:
      if (!is_float(t)) fail("dtype-error", name + ": needs a float tensor, got " + got + " (cast it first)");
      return;
    case DTypeRule::Ints:
      if (!is_int(t)) fail("dtype-error", name + ": needs integer tensors, got " + got);
      return;
    case DTypeRule::Integral:
      if (is_float(t)) fail("dtype-error", name + ": needs integer or bool tensors, got " + got);
      return;
  }
}
}  // namespace

NodeRef Graph::dequantized(const NodeRef& x) { return is_quantized(x->dtype) ? make_cast(x, DType::F32) : x; }

NodeRef Graph::make_unary(Op op, const NodeRef& x_in) {
  if (op_info(op).group != OpGroup::Unary || op == Op::Cast || op == Op::Bitcast) {
    fail("internal-error", std::string("make_unary: ") + op_name(op) + " is not a unary op");
  }
  const NodeRef x = dequantized(x_in);
  check_operand_dtype(op, x->dtype);
  Node n = proto(op, x->dtype, x->shape);
  n.src = {x};
  return intern(std::move(n));
}

NodeRef Graph::make_cast(const NodeRef& x, DType t, bool bitcast) {
  if (is_quantized(t) && t != x->dtype) {
    fail("dtype-error", std::string(bitcast ? "bitcast" : "cast") + ": nothing computes into " +
                            std::string(dtype_name(t)) + "; quantize a float tensor instead, e.g. (quantize x '" +
                            std::string(dtype_name(t)) + ")");
  }
  if (bitcast && is_quantized(x->dtype)) {
    fail("dtype-error", "bitcast: a " + std::string(dtype_name(x->dtype)) + " tensor's elements are not whole bytes");
  }
  if (bitcast && dtype_size(t) != dtype_size(x->dtype)) {
    fail("dtype-error", "bitcast: " + std::string(dtype_name(x->dtype)) + " and " + std::string(dtype_name(t)) +
                            " differ in size");
  }
  if (!bitcast && t == x->dtype) return x;
  Node n = proto(bitcast ? Op::Bitcast : Op::Cast, t, x->shape);
  n.src = {x};
  return intern(std::move(n));
}

NodeRef Graph::make_binary(Op op, const NodeRef& a_in, const NodeRef& b_in) {
  const NodeRef a = dequantized(a_in), b = dequantized(b_in);
  const char* name = op_name(op);
  if (a->shape != b->shape) {
    fail("shape-error", std::string(name) + ": shapes differ, " + shape_str(a->shape) + " and " + shape_str(b->shape));
  }
  if (a->dtype != b->dtype) {
    fail("dtype-error", std::string(name) + ": dtypes differ, " + std::string(dtype_name(a->dtype)) + " and " +
                            std::string(dtype_name(b->dtype)));
  }
  DType t = a->dtype;
  check_operand_dtype(op, t);
  DType out = op_info(op).dtypes == DTypeRule::Compare ? DType::Bool : t;
  Node n = proto(op, out, a->shape);
  n.src = {a, b};
  return intern(std::move(n));
}

NodeRef Graph::make_where(const NodeRef& c, const NodeRef& a_in, const NodeRef& b_in) {
  const NodeRef a = dequantized(a_in), b = dequantized(b_in);
  if (c->dtype != DType::Bool) fail("dtype-error", "where: the condition must be bool, got " + std::string(dtype_name(c->dtype)));
  if (a->shape != b->shape || c->shape != a->shape) {
    fail("shape-error", "where: shapes differ, " + shape_str(c->shape) + ", " + shape_str(a->shape) + " and " +
                            shape_str(b->shape));
  }
  if (a->dtype != b->dtype) {
    fail("dtype-error", "where: dtypes differ, " + std::string(dtype_name(a->dtype)) + " and " +
                            std::string(dtype_name(b->dtype)));
  }
  Node n = proto(Op::Where, a->dtype, a->shape);
  n.src = {c, a, b};
  return intern(std::move(n));
}

// --- reduce ----------------------------------------------------------------------------------

NodeRef Graph::make_reduce(ReduceKind k, const NodeRef& x_in, std::vector<std::int64_t> axes) {
  const NodeRef x = dequantized(x_in);
  const auto rank = static_cast<std::int64_t>(x->shape.size());
  for (auto& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) {
      fail("index-error", std::string("reduce: axis out of range for shape ") + shape_str(x->shape));
    }
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    fail("index-error", "reduce: repeated axis in " + axes_str(axes));
  }
  if (x->dtype == DType::Bool && k != ReduceKind::Max) {
    fail("dtype-error", std::string("reduce: ") + reduce_kind_name(k) + " of a bool tensor (cast it first)");
  }
  if (axes.empty()) return x;
  Shape shape = x->shape;
  for (auto a : axes) shape[a] = Dim(1);
  Node n = proto(Op::Reduce, x->dtype, shape);
  n.src = {x};
  n.axes = std::move(axes);
  n.reduce_kind = k;
  return intern(std::move(n));
}

// --- movement --------------------------------------------------------------------------------

NodeRef Graph::make_reshape(const NodeRef& x, const Shape& shape) {
  check_shape("reshape", shape);
  check_size(Op::Reshape, x->dtype, shape);  // before shape_numel multiplies the dimensions
  if (shape_numel(shape) != shape_numel(x->shape)) {
    fail("shape-error", "reshape: cannot reshape " + shape_str(x->shape) + " (" + shape_numel(x->shape).str() +
                            " elements) to " + shape_str(shape) + " (" + shape_numel(shape).str() + " elements)");
  }
  if (shape == x->shape) return x;
  // (A reshape of a reshape is merged by the views optimizer rules, reshape-reshape.)
  Node n = proto(Op::Reshape, x->dtype, shape);
  n.src = {x};
  return intern(std::move(n));
}

NodeRef Graph::make_permute(const NodeRef& x, std::vector<std::int64_t> order) {
  const auto rank = x->shape.size();
  std::vector<bool> seen(rank, false);
  bool ok = order.size() == rank;
  for (auto& a : order) {
    if (a < 0) a += static_cast<std::int64_t>(rank);
    if (!ok || a < 0 || a >= static_cast<std::int64_t>(rank) || seen[a]) {
      ok = false;
      break;
    }
    seen[a] = true;
  }
  if (!ok) fail("shape-error", "permute: " + axes_str(order) + " is not a permutation of the axes of " + shape_str(x->shape));
  bool identity = true;
  for (std::size_t i = 0; i < rank; ++i) identity = identity && order[i] == static_cast<std::int64_t>(i);
  if (identity) return x;
  Shape shape(rank);
  for (std::size_t i = 0; i < rank; ++i) shape[i] = x->shape[order[i]];
  Node n = proto(Op::Permute, x->dtype, shape);
  n.src = {x};
  n.axes = std::move(order);
  return intern(std::move(n));
}

NodeRef Graph::make_expand(const NodeRef& x, const Shape& shape) {
  if (shape.size() != x->shape.size()) {
    fail("shape-error", "expand: cannot expand " + shape_str(x->shape) + " to " + shape_str(shape) +
                            " (ranks differ; reshape first)");
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (x->shape[i] != shape[i] && x->shape[i] != Dim(1)) {
      fail("shape-error", "expand: cannot expand " + shape_str(x->shape) + " to " + shape_str(shape) + " (axis " +
                              std::to_string(i) + " has size " + x->shape[i].str() + ", not 1)");
    }
  }
  check_shape("expand", shape);
  if (shape == x->shape) return x;
  Node n = proto(Op::Expand, x->dtype, shape);
  n.src = {x};
  return intern(std::move(n));
}

NodeRef Graph::make_pad(const NodeRef& x_in, std::vector<Range> pads) {
  const NodeRef x = dequantized(x_in);  // the new elements are zeros, which have no block
  if (pads.size() != x->shape.size()) {
    fail("shape-error", "pad: " + std::to_string(pads.size()) + " (before after) pairs for shape " + shape_str(x->shape));
  }
  bool none = true;
  Shape shape = x->shape;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    if (known_negative(pads[i].first) || known_negative(pads[i].second)) {
      fail("shape-error", "pad: negative padding on axis " + std::to_string(i) + " (use shrink to cut)");
    }
    none = none && pads[i].first == Dim(0) && pads[i].second == Dim(0);
    shape[i] = shape[i] + pads[i].first + pads[i].second;
  }
  if (none) return x;
  Node n = proto(Op::Pad, x->dtype, shape);
  n.src = {x};
  n.ranges = std::move(pads);
  return intern(std::move(n));
}

NodeRef Graph::make_shrink(const NodeRef& x, std::vector<Range> ranges) {
  if (ranges.size() != x->shape.size()) {
    fail("shape-error", "shrink: " + std::to_string(ranges.size()) + " ranges for shape " + shape_str(x->shape));
  }
  bool none = true;
  Shape shape = x->shape;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto& [b, e] = ranges[i];
    if (known_negative(b) || known_less(e, b) || known_less(x->shape[i], e)) {
      fail("index-error", "shrink: range [" + b.str() + ", " + e.str() + ") out of bounds for axis " +
                              std::to_string(i) + " of size " + x->shape[i].str());
    }
    none = none && b == Dim(0) && e == x->shape[i];
    shape[i] = e - b;
  }
  if (none) return x;
  Node n = proto(Op::Shrink, x->dtype, shape);
  n.src = {x};
  n.ranges = std::move(ranges);
  return intern(std::move(n));
}

NodeRef Graph::make_flip(const NodeRef& x, std::vector<std::int64_t> mask) {
  if (mask.size() != x->shape.size()) fail("shape-error", "flip: axis mask does not match shape " + shape_str(x->shape));
  if (std::all_of(mask.begin(), mask.end(), [](std::int64_t m) { return m == 0; })) return x;
  Node n = proto(Op::Flip, x->dtype, x->shape);
  n.src = {x};
  n.axes = std::move(mask);
  return intern(std::move(n));
}

// --- indexed loads ---------------------------------------------------------------------------

namespace {
// The shape and dtype rule shared by gather and scatter-add: INDEX is an integer tensor of X's
// shape but along AXIS.
void check_index(const char* op, const NodeRef& x, const NodeRef& index, std::int64_t axis) {
  const auto rank = static_cast<std::int64_t>(x->shape.size());
  if (axis < 0 || axis >= rank) {
    fail("shape-error", std::string(op) + ": axis " + std::to_string(axis) + " out of range for shape " +
                            shape_str(x->shape));
  }
  if (!is_int(index->dtype)) {
    fail("dtype-error", std::string(op) + ": indices must be an integer tensor, got " +
                            std::string(dtype_name(index->dtype)));
  }
  bool fits = index->shape.size() == x->shape.size();
  for (std::int64_t i = 0; fits && i < rank; ++i) {
    fits = i == axis || index->shape[static_cast<std::size_t>(i)] == x->shape[static_cast<std::size_t>(i)];
  }
  if (!fits) {
    fail("shape-error", std::string(op) + ": an index of shape " + shape_str(index->shape) + " for a tensor of shape " +
                            shape_str(x->shape) + " along axis " + std::to_string(axis) +
                            " (it needs the tensor's shape but along that axis)");
  }
}
}  // namespace

NodeRef Graph::make_gather(const NodeRef& x_in, const NodeRef& index, std::int64_t axis) {
  const NodeRef x = dequantized(x_in);  // an embedding table's rows, dequantized where read
  check_index("gather", x, index, axis);
  Node n = proto(Op::Gather, x->dtype, index->shape);
  n.src = {x, index};
  n.axes = {axis};
  return intern(std::move(n));
}

NodeRef Graph::make_scatter_add(const NodeRef& x_in, const NodeRef& index, const NodeRef& src_in, std::int64_t axis) {
  const NodeRef x = dequantized(x_in), src = dequantized(src_in);
  check_index("scatter-add", x, index, axis);
  if (src->shape != index->shape) {
    fail("shape-error", "scatter-add: the values have shape " + shape_str(src->shape) + " but the index " +
                            shape_str(index->shape));
  }
  if (src->dtype != x->dtype) {
    fail("dtype-error", "scatter-add: dtypes differ, " + std::string(dtype_name(x->dtype)) + " and " +
                            std::string(dtype_name(src->dtype)));
  }
  Node n = proto(Op::ScatterAdd, x->dtype, x->shape);
  n.src = {x, index, src};
  n.axes = {axis};
  return intern(std::move(n));
}

// --- memory and escape -----------------------------------------------------------------------

NodeRef Graph::make_copy(const NodeRef& x) {
  if (is_quantized(x->dtype) && x->op != Op::Buffer) {
    fail("dtype-error", "copy: a view of a " + std::string(dtype_name(x->dtype)) +
                            " tensor cannot be made contiguous in its blocks; dequantize it first, e.g. (cast x 'f32)");
  }
  Node n = proto(Op::Copy, x->dtype, x->shape);
  n.src = {x};
  return intern(std::move(n));
}

NodeRef Graph::make_assign(const NodeRef& target, const NodeRef& value_in) {
  if (target->op != Op::Buffer) fail("type-error", "assign: the target must be a realized tensor");
  if (is_quantized(target->dtype))
    fail("dtype-error", "assign: cannot write into a " + std::string(dtype_name(target->dtype)) + " tensor");
  const NodeRef value = dequantized(value_in);
  if (target->shape != value->shape || target->dtype != value->dtype) {
    fail("shape-error", "assign: target is " + shape_str(target->shape) + " " + std::string(dtype_name(target->dtype)) +
                            ", value is " + shape_str(value->shape) + " " + std::string(dtype_name(value->dtype)));
  }
  Node n = proto(Op::Assign, target->dtype, target->shape);
  n.src = {target, value};
  return intern(std::move(n));
}

NodeRef Graph::make_assign_view(const NodeRef& target, const NodeRef& view, const NodeRef& value_in) {
  if (target->op != Op::Buffer) fail("type-error", "assign: the target must be a realized tensor");
  if (is_quantized(target->dtype))
    fail("dtype-error", "assign: cannot write into a " + std::string(dtype_name(target->dtype)) + " tensor");
  const NodeRef value = dequantized(value_in);
  if (view->shape != value->shape || view->dtype != value->dtype || view->dtype != target->dtype) {
    fail("shape-error", "assign: target view is " + shape_str(view->shape) + " " + std::string(dtype_name(view->dtype)) +
                            ", value is " + shape_str(value->shape) + " " + std::string(dtype_name(value->dtype)));
  }
  Node n = proto(Op::Assign, target->dtype, target->shape);
  n.src = {target, value, view};
  return intern(std::move(n));
}

void Graph::prepare_writes(const std::vector<const Node*>& roots,
                           const std::function<std::string(const Span&)>& where,
                           const std::function<void()>& collect) {
  // The graph this realize computes: nodes reachable from the roots through nodes that hold
  // no data, with how many of its edges reach each; and the buffers its assigns write.
  std::unordered_map<const Node*, int> edges;
  std::unordered_set<const Node*> targets;
  std::unordered_map<const Buffer*, const Node*> writer;  // the assign writing each buffer
  std::vector<const Node*> stack(roots.begin(), roots.end());
  std::unordered_set<const Node*> seen(roots.begin(), roots.end());
  const Node* needs_overwritten = nullptr;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->op == Op::Buffer || n->cached()) continue;
    if (n->overwritten && needs_overwritten == nullptr) needs_overwritten = n;
    if (n->op == Op::Assign) {
      targets.insert(n->src[0].get());
      auto [it, first] = writer.emplace(n->src[0]->buffer.get(), n);
      if (!first) {
        // Which would win is not something a program should depend on.
        fail("type-error", "realize: two assigns write into the same tensor (built at " + where(it->second->span) + " and " +
                               where(n->span) + "); realize one before the other");
      }
    }
    for (const auto& s : n->src) {
      ++edges[s.get()];
      if (seen.insert(s.get()).second) stack.push_back(s.get());
    }
  }
  if (needs_overwritten != nullptr) {
    const Node* n = needs_overwritten;
    fail("type-error", std::string("realize: a value computed by ") + op_name(n->op) + " (built at " +
                           where(n->span) + ") read a tensor that an assign then wrote in place (at " +
                           where(n->overwritten_at) +
                           "); its old data is gone: realize it before the assign, or compute it again after");
  }
  if (targets.empty()) return;
  std::unordered_set<const Buffer*> written;
  for (const Node* t : targets) written.insert(t->buffer.get());
  retire_readers(written, edges, roots, collect);
}

// A copy of buffer node N's data as it is before a write. (Handing the readers the buffer
// itself and giving N a new one would copy nothing, but this realize's own kernels read N's
// buffer too, and executors write assigns in place.) From a GPU this is a download: readers
// that need it are rare once dead ones are collected.
std::shared_ptr<Buffer> Graph::snapshot_of(const Node* n) {
  const std::shared_ptr<Buffer>& b = n->buffer;
  auto copy = std::make_shared<Buffer>(b->dtype, b->count());
  if (b->size_bytes() > 0) std::memcpy(copy->data(), b->data(), b->size_bytes());
  return copy;
}

void Graph::retire_readers(const std::unordered_set<const Buffer*>& written,
                           const std::unordered_map<const Node*, int>& edges, const std::vector<const Node*>& roots,
                           const std::function<void()>& collect) {
  auto find_readers = [&] {
    std::vector<Node*> found;
    for (Node* c : table_) {
      // A realized tensor owns the buffer it was realized into, which is also cached on the
      // node that computed it: the write must not change that node's value (an equal
      // expression built later finds the node). It is computed again when next needed.
      if (c->realized_ && written.count(c->realized_.get())) c->realized_.reset();
      for (const auto& s : c->src) {
        if (s->op == Op::Buffer && written.count(s->buffer.get())) {
          found.push_back(c);
          break;
        }
      }
    }
    return found;
  };
  std::vector<Node*> readers = find_readers();
  // A reader outside the realize without gradients would need a snapshot (a copy, and from a
  // GPU a download). It is most often garbage the collector has not reached yet: collect,
  // and look again.
  if (collect) {
    bool snapshot = false;
    for (Node* c : readers) {
      snapshot = snapshot || (!c->grad && !edges.count(c) && std::find(roots.begin(), roots.end(), c) == roots.end());
    }
    if (snapshot) {
      collect();
      readers = find_readers();
    }
  }
  std::unordered_map<const Buffer*, NodeRef> snapshots;
  for (Node* c : readers) {
    table_.erase(c);
    c->retired = true;
    // A node of this realize is computed now, from the data before the write: when nothing
    // outside the realize holds it, it is dropped after; when something does, its old value
    // is gone after the write (it is not materialized), so it is marked overwritten. It is
    // not moved onto a snapshot: a jit trace of this realize must read the buffer itself.
    auto e = edges.find(c);
    const bool is_root = std::find(roots.begin(), roots.end(), c) != roots.end();
    const bool inside_realize = e != edges.end() || is_root;
    if (inside_realize) {
      const int inside = (e != edges.end() ? e->second : 0) + (is_root ? 1 : 0);
      if (c->refs <= inside) continue;
    }
    if (c->grad || inside_realize) {
      ++overwritten_count;
      c->overwritten = true;
      c->overwritten_at = current_span;
      continue;
    }
    for (auto& s : c->src) {
      if (s->op != Op::Buffer || !written.count(s->buffer.get())) continue;
      NodeRef& snap = snapshots[s->buffer.get()];
      if (!snap) snap = make_buffer(snapshot_of(s.get()), s->shape, s->bindings, "snapshot");
      s = snap;
    }
  }
}

NodeRef Graph::make_extern(const std::string& name, std::vector<NodeRef> srcs, DType t, const Shape& shape) {
  for (NodeRef& s : srcs) s = dequantized(s);
  Node n = proto(Op::Extern, t, shape);
  n.src = std::move(srcs);
  n.name = name;
  return intern(std::move(n));
}

// --- views and printing ----------------------------------------------------------------------

ViewStack view_of(const Node* n, const Node** base) {
  std::vector<const Node*> chain;
  while (op_info(n->op).group == OpGroup::Movement) {
    chain.push_back(n);
    n = n->src[0].get();
  }
  *base = n;
  ViewStack vs(n->shape);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Node* m = *it;
    switch (m->op) {
      case Op::Reshape: vs = vs.reshape(m->shape); break;
      case Op::Permute: vs = vs.permute(std::vector<int>(m->axes.begin(), m->axes.end())); break;
      case Op::Expand: vs = vs.expand(m->shape); break;
      case Op::Pad: vs = vs.pad(m->ranges); break;
      case Op::Shrink: vs = vs.shrink(m->ranges); break;
      case Op::Flip: vs = vs.flip(std::vector<bool>(m->axes.begin(), m->axes.end())); break;
#include "tensor/elementwise_cases.inc"
      case Op::Const:
      case Op::Buffer:
      case Op::Iota:
      case Op::Reduce:
      case Op::Gather:
      case Op::ScatterAdd:
      case Op::Copy:
      case Op::Assign:
      case Op::Extern: break;  // the loop above stops at them
    }
  }
  return vs;
}

std::string node_str(const Node* n, int max_depth) {
  std::string s = "(";
  s += op_name(n->op);
  switch (n->op) {
    case Op::Const: {
      if (is_float(n->dtype)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", n->fvalue);
        s += std::string(" ") + buf;
      } else {
        s += " " + std::to_string(n->ivalue);
      }
      break;
    }
    case Op::Buffer: s += "#" + std::to_string(n->id); break;
    case Op::Reduce: s += std::string(" :") + reduce_kind_name(n->reduce_kind) + " " + axes_str(n->axes); break;
    case Op::Iota:
    case Op::Permute:
    case Op::Gather:
    case Op::ScatterAdd:
    case Op::Flip: s += " " + axes_str(n->axes); break;
    case Op::Pad:
    case Op::Shrink: {
      s += " (";
      for (std::size_t i = 0; i < n->ranges.size(); ++i) {
        s += (i ? " (" : "(") + n->ranges[i].first.str() + " " + n->ranges[i].second.str() + ")";
      }
      s += ")";
      break;
    }
    case Op::Extern: s += " \"" + n->name + "\""; break;
#include "tensor/elementwise_cases.inc"
    case Op::Reshape:
    case Op::Expand:
    case Op::Copy:
    case Op::Assign: break;  // nothing besides the op's name and sources
  }
  if (op_info(n->op).group == OpGroup::Source || n->op == Op::Cast || n->op == Op::Bitcast ||
      n->op == Op::Reshape || n->op == Op::Expand) {
    s += " " + std::string(dtype_name(n->dtype)) + " " + shape_str(n->shape);
  }
  for (const auto& src : n->src) {
    s += " ";
    s += max_depth > 0 ? node_str(src.get(), max_depth - 1) : "...";
  }
  return s + ")";
}

}  // namespace tl::tensor
