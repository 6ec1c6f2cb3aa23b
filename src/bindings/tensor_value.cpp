// SPDX-License-Identifier: Apache-2.0
// Tensor values, the tensor runtime object, and Lisp <-> shape/dtype conversions.
#include "bindings/tensor_value.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "eval/builtins.h"
#include "support/check.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;

TensorRuntime& runtime(Interp& in) {
  for (const auto& ext : in.extensions) {
    if (auto* rt = dynamic_cast<TensorRuntime*>(ext.get())) return *rt;
  }
  TL_UNREACHABLE("the tensor runtime is not installed");
}

std::shared_ptr<TensorRuntime> install_tensor_runtime(Interp& in, RealizeFn realize) {
  auto rt = std::make_shared<TensorRuntime>(&in);
  rt->realize = std::move(realize);
  in.extensions.push_back(rt);
  return rt;
}

Graph& graph_at_call(Interp& in) {
  Graph& g = runtime(in).graph;
  g.current_span = in.call_site;
  return g;
}

bool is_tensor(Value v) {
  return eval::is_kind(v, eval::ObjKind::Foreign) && dynamic_cast<TensorObj*>(static_cast<eval::Foreign*>(v.o));
}

constexpr std::size_t kTensorOverheadBytes = 512;

TensorObj* as_tensor(Value v) { return static_cast<TensorObj*>(static_cast<eval::Foreign*>(v.o)); }

Value make_tensor(Interp& in, NodeRef node) {
  // What a tensor object keeps alive outside the heap, at least: its graph node (shape,
  // sources, arguments) and reference counts. Its data is counted when realized (adopt).
  in.heap.account_external(kTensorOverheadBytes);
  auto* t = in.heap.make<TensorObj>(eval::ObjKind::Foreign);
  for (const auto& ext : in.extensions) {
    if (auto rt = std::dynamic_pointer_cast<TensorRuntime>(ext)) t->rt = rt;
  }
  t->node = std::move(node);
  return Value::object(t);
}

Value make_complex_tensor(Interp& in, NodeRef parts) {
  TL_CHECK(is_float(parts->dtype) && !parts->shape.empty() && parts->shape.back() == Dim(2),
           "complex parts are a float node whose last axis has size 2");
  Value v = make_tensor(in, std::move(parts));
  as_tensor(v)->complex = true;
  return v;
}

Value make_tensor_like(Interp& in, NodeRef node, bool complex) {
  return complex ? make_complex_tensor(in, std::move(node)) : make_tensor(in, std::move(node));
}

Shape value_shape(const TensorObj* t) {
  Shape s = t->node->shape;
  if (t->complex) s.pop_back();
  return s;
}

DType value_dtype(const TensorObj* t) { return t->complex ? complex_of(t->node->dtype) : t->node->dtype; }

void refuse_complex(Interp& in, const std::string& fn, DType t) {
  in.error("dtype-error", fn + ": not defined for complex tensors (" + std::string(dtype_name(t)) +
                              "); (view-as-real z), (real z) and (imag z) give real tensors of their parts");
}

TensorObj* tensor_arg_any(Interp& in, const char* fn, Value* args, int i) {
  if (!is_tensor(args[i])) in.type_error(fn, i + 1, "a tensor", args[i]);
  return as_tensor(args[i]);
}

TensorObj* tensor_arg(Interp& in, const char* fn, Value* args, int i) {
  TensorObj* t = tensor_arg_any(in, fn, args, i);
  if (t->complex) refuse_complex(in, fn, value_dtype(t));
  return t;
}

const NodeRef& arg_tensor(Interp& in, const char* fn, Value* args, int i) { return tensor_arg(in, fn, args, i)->node; }

std::shared_ptr<Buffer> rng_key(std::int64_t seed, std::uint64_t draw) {
  auto key = std::make_shared<Buffer>(DType::U32, 3);
  auto* w = reinterpret_cast<std::uint32_t*>(key->bytes().data());
  const auto s = static_cast<std::uint64_t>(seed);  // two's complement: mod 2^64
  w[0] = static_cast<std::uint32_t>(s);
  w[1] = static_cast<std::uint32_t>(draw);
  w[2] = static_cast<std::uint32_t>(s >> 32);
  return key;
}

std::shared_ptr<Buffer> next_rng_key(TensorRuntime& rt) {
  std::shared_ptr<Buffer> key = rng_key(rt.rng_seed, rt.rng_draws);
  if (rt.tracer) rt.tracer->on_rng_key(key, rt.rng_draws);
  ++rt.rng_draws;
  return key;
}

const Buffer& read_back(Interp& in, TensorObj* t) {
  ++t->rt->host_reads;
  return realize(in, t);
}

namespace {

// Makes t hold buf, the value of its node computed with `extra`.
void adopt(Interp& in, TensorObj* t, const std::shared_ptr<Buffer>& buf, const Bindings& extra) {
  const Node* n = t->node.get();
  // A node's realized value is cached on it, except one computed with variable values given
  // here: another realize of the node may give others.
  if (extra.empty()) n->set_cached(buf);
  Bindings used;
  std::vector<std::string> vars;
  for (const auto& d : n->shape) d.collect_vars(vars);
  if (!vars.empty()) {
    // Keep the values of the shape's variables with the buffer.
    std::vector<const Node*> stack{n};
    while (!stack.empty() && used.size() < vars.size()) {
      const Node* m = stack.back();
      stack.pop_back();
      for (const auto& [k, v] : m->bindings) used.emplace(k, v);
      for (const auto& s : m->src) stack.push_back(s.get());
    }
    for (const auto& [k, v] : extra) used.emplace(k, v);
    std::erase_if(used, [&](const auto& kv) { return std::find(vars.begin(), vars.end(), kv.first) == vars.end(); });
  }
  Graph& g = t->rt->graph;
  NodeRef data = g.make_buffer(buf, n->shape, std::move(used));
  if (n->grad) {
    // Gradients still flow through the value to the graph that computed it.
    data = g.with_grad(data, true);
    data->origin = t->node;
  }
  // An assign's result is the buffer it wrote into, already held (and counted) by the tensor
  // it was made for: counted again, a loop of row writes into a 16 MB KV cache collected the
  // heap at every write (0.43 ms a write; 1-2 us now).
  const bool in_place = n->op == tensor::Op::Assign;
  t->node = std::move(data);
  if (in_place) return;
  t->rt->realized_bytes += buf->size_bytes();
  in.heap.account_external(buf->size_bytes());
}

// A private copy of a value cached on a lazy node. Two tensors that are equal computations
// share one node (hash-consing), but each realized tensor owns its data: an assign into one
// (a parameter, an optimizer's moment, batch-norm's running statistics) must not write into
// the other.
std::shared_ptr<Buffer> own_copy(const std::shared_ptr<Buffer>& cached) {
  auto copy = std::make_shared<Buffer>(cached->dtype, cached->count());
  std::memcpy(copy->data(), cached->data(), cached->size_bytes());
  return copy;
}

}  // namespace

std::string span_text(Interp& in, const Span& s) {
  SourceLocation loc = in.sources.location(s);
  if (!loc.valid()) return "an unknown place";
  std::string text = loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
  return in.sources.is_library(s.file) ? "the library, " + text : text;
}

// Readers of the buffers ROOTS write are retired or moved onto snapshots before the write
// (Graph::prepare_writes), so a lazy value keeps meaning what it meant when it was built.
static void prepare_writes(Interp& in, Graph& g, const std::vector<const Node*>& roots) {
  bool any = false;
  for (const Node* n : roots) any = any || n->has_assign;
  auto where = [&](const Span& s) { return span_text(in, s); };
  // Without an assign, only the check for overwritten values is needed: skip the walk
  // unless some node was ever overwritten.
  if (any || g.overwritten_count > 0) g.prepare_writes(roots, where, [&] { in.collect(); });
}

const Buffer& realize(Interp& in, TensorObj* t, const Bindings& extra) {
  const Node* n = t->node.get();
  if (n->op == Op::Buffer) return *n->buffer;
  std::shared_ptr<Buffer> cached = extra.empty() ? n->cached() : nullptr;
  if (!cached) prepare_writes(in, t->rt->graph, {n});
  std::shared_ptr<Buffer> buf = cached ? own_copy(cached) : t->rt->realize(n, extra);
  adopt(in, t, buf, extra);
  return *buf;
}

void realize_all(Interp& in, const std::vector<TensorObj*>& ts) {
  std::vector<TensorObj*> todo;
  std::vector<const Node*> nodes;
  for (TensorObj* t : ts) {
    const Node* n = t->node.get();
    if (n->op == Op::Buffer) continue;
    if (auto c = n->cached()) {
      adopt(in, t, own_copy(c), {});
      continue;
    }
    todo.push_back(t);
    nodes.push_back(n);
  }
  if (todo.empty()) return;
  TensorRuntime& rt = *todo[0]->rt;
  prepare_writes(in, rt.graph, nodes);
  std::vector<std::shared_ptr<Buffer>> bufs;
  if (rt.realize_many) {
    bufs = rt.realize_many(nodes, {});
  } else {
    for (const Node* n : nodes) bufs.push_back(rt.realize(n, {}));
  }
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (todo[i]->node->op != Op::Buffer) adopt(in, todo[i], bufs[i], {});
  }
}

// --- dims, shapes, dtypes --------------------------------------------------------------------

Value dim_to_lisp(Interp& in, const Dim& d) {
  if (d.is_const()) return Value::integer(d.value());
  if (auto v = d.as_var()) return in.sym(*v);
  // A polynomial becomes the Lisp expression it prints as, e.g. (* 784 batch).
  std::string text = d.str();
  std::size_t pos = 0;
  std::function<Value()> parse = [&]() -> Value {
    while (text[pos] == ' ') ++pos;
    if (text[pos] == '(') {
      ++pos;
      eval::Interp::StackMark mark(in);
      Value* base = in.sp;
      std::size_t count = 0;
      while (pos < text.size() && text[pos] != ')') {
        in.push(parse());
        ++count;
        while (text[pos] == ' ') ++pos;
      }
      ++pos;
      return in.list_from(base, count);
    }
    std::size_t start = pos;
    while (pos < text.size() && text[pos] != ' ' && text[pos] != ')') ++pos;
    std::string atom = text.substr(start, pos - start);
    if (std::isdigit(static_cast<unsigned char>(atom[0])) || (atom[0] == '-' && atom.size() > 1)) {
      return Value::integer(std::stoll(atom));
    }
    return in.sym(atom);
  };
  return parse();
}

BoundDim* as_bound_dim(Value v) {
  return eval::is_kind(v, eval::ObjKind::Foreign) ? dynamic_cast<BoundDim*>(static_cast<eval::Foreign*>(v.o)) : nullptr;
}

Dim dim_from_lisp(Interp& in, const char* fn, Value v) {
  if (v.is_int()) return Dim(v.i);
  if (BoundDim* d = as_bound_dim(v)) return Dim::var(d->name);
  if (eval::is_symbol(v) && !v.is_nil()) {
    auto* s = eval::as_symbol(v);
    if (!s->is_keyword()) return Dim::var(s->name);
  }
  if (eval::is_cons(v) && eval::is_symbol(eval::car(v))) {
    const std::string& op = eval::as_symbol(eval::car(v))->name;
    std::vector<Dim> xs;
    for (Value r = eval::cdr(v); eval::is_cons(r); r = eval::cdr(r)) xs.push_back(dim_from_lisp(in, fn, eval::car(r)));
    if (!xs.empty() && (op == "+" || op == "*" || op == "-")) {
      Dim acc = xs[0];
      if (op == "-" && xs.size() == 1) return -acc;
      for (std::size_t i = 1; i < xs.size(); ++i) acc = op == "+" ? acc + xs[i] : op == "*" ? acc * xs[i] : acc - xs[i];
      return acc;
    }
  }
  in.error("type-error", std::string(fn) + ": a dimension must be an integer, a symbol, a (dim NAME VALUE) or (+|*|- dim...), got " +
                            in.repr(v));
}

Value shape_to_lisp(Interp& in, const Shape& s) {
  eval::Interp::StackMark mark(in);
  Value* base = in.sp;
  for (const auto& d : s) in.push(dim_to_lisp(in, d));
  return in.list_from(base, s.size());
}

Shape shape_from_lisp(Interp& in, const char* fn, Value v) {
  if (v.is_int()) return {Dim(v.i)};
  if (!eval::is_list(v)) in.error("type-error", std::string(fn) + ": a shape must be a list of dimensions, got " + in.repr(v));
  Shape s;
  for (Value r = v; eval::is_cons(r); r = eval::cdr(r)) {
    Dim d = dim_from_lisp(in, fn, eval::car(r));
    if (d.is_const() && d.value() < 0) {
      in.error("shape-error", std::string(fn) + ": negative dimension " + std::to_string(d.value()) + " in shape " + in.repr(v));
    }
    s.push_back(d);
  }
  return s;
}

DType dtype_from_lisp(Interp& in, const char* fn, Value v) {
  std::string name;
  if (eval::is_symbol(v) && !v.is_nil()) name = eval::as_symbol(v)->name;
  else if (eval::is_string(v)) name = eval::as_string(v)->text;
  if (auto t = dtype_from_name(name)) return *t;
  in.error("dtype-error", std::string(fn) + ": unknown dtype " + in.repr(v) +
                              " (expected one of f32 f64 f16 bf16 i8 i16 i32 i64 u8 u32 bool c64 c128 q8_0 q4_0)");
}

Value dtype_to_lisp(Interp& in, DType t) { return in.sym(dtype_name(t)); }

std::vector<std::int64_t> ints_from_lisp(Interp& in, const char* fn, Value v) {
  std::vector<std::int64_t> out;
  if (v.is_int()) return {v.i};
  if (!eval::is_list(v)) in.error("type-error", std::string(fn) + ": expected a list of integers, got " + in.repr(v));
  for (Value r = v; eval::is_cons(r); r = eval::cdr(r)) {
    if (!eval::car(r).is_int()) in.error("type-error", std::string(fn) + ": expected a list of integers, got " + in.repr(v));
    out.push_back(eval::car(r).i);
  }
  return out;
}

// --- printing --------------------------------------------------------------------------------

std::pair<const void*, std::size_t> TensorObj::held_memory() const {
  // The buffer of its node, or of the node a short chain of one-source nodes leads to (a
  // transposed or reshaped weight, a cast of one), which the graph keeps alive as well.
  const Node* n = node.get();
  for (int step = 0; n != nullptr && !n->buffer && n->src.size() == 1 && step < 8; ++step) n = n->src[0].get();
  if (n == nullptr || !n->buffer) return {nullptr, 0};
  return {n->buffer.get(), n->buffer->size_bytes()};
}

void TensorObj::print(std::string& out) const {
  std::string head = "#<tensor " + std::string(dtype_name(value_dtype(this))) + " " + shape_str(value_shape(this));
  try {
    const Buffer& b = read_back(*rt->interp, const_cast<TensorObj*>(this));
    const Node* r = node.get();
    auto shape = eval_shape(r->shape, r->bindings);
    if (complex) shape.pop_back();
    std::string body = format_buffer(b, shape, " ", complex);
    bool multiline = body.find('\n') != std::string::npos;
    out += head + (multiline ? "\n " : " ") + body + ">";
  } catch (const std::exception& e) {
    out += head + " unrealized: " + e.what() + ">";
  }
}

}  // namespace tl::tensor
