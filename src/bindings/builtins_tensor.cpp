// SPDX-License-Identifier: Apache-2.0
// Tensor builtins beyond the primitives: inspection, realization, conversion to and from
// Lisp data, symbolic shapes, broadcasting, and the hooks that let + - * / and the math
// functions accept tensors.
// (Over 800 lines: 49 builtins, each a few lines over the shared conversion helpers above
// register_tensor_builtins; a file per group would repeat those helpers' declarations.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "bindings/tensor_value.h"
#include "codegen/llvm_emit.h"
#include "eval/builtins.h"
#include "runtime/elements.h"
#include "support/fftw.h"
#include "support/host_memory.h"
#include "tensor/complex.h"
#include "tensor/quant.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

// Element k of buffer b; of a complex tensor's parts (complex), the pair (real . imaginary).
Value element_value(Interp& in, const Buffer& b, std::int64_t k, bool complex = false) {
  if (complex)
    return in.cons(Value::real(runtime::load_float(b, 2 * k)), Value::real(runtime::load_float(b, 2 * k + 1)));
  if (b.dtype == DType::Bool) return in.boolean(runtime::load_int(b, k) != 0);
  if (runtime::reads_float(b.dtype)) return Value::real(runtime::load_float(b, k));
  return Value::integer(runtime::load_int(b, k));
}

// Concrete shape of a realized tensor (a complex one's, not its parts').
std::vector<std::int64_t> concrete_shape(TensorObj* t) {
  auto s = eval_shape(t->node->shape, t->node->bindings);
  if (t->complex) s.pop_back();
  return s;
}

Value to_list(Interp& in, const Buffer& b, const std::vector<std::int64_t>& shape, std::size_t axis, std::int64_t& k,
              bool complex) {
  if (axis == shape.size()) return element_value(in, b, k++, complex);
  eval::Interp::StackMark mark(in);
  Value* base = in.sp;
  for (std::int64_t i = 0; i < shape[axis]; ++i) in.push(to_list(in, b, shape, axis + 1, k, complex));
  return in.list_from(base, static_cast<std::size_t>(shape[axis]));
}

// Nested lists (or vectors) to a flat element list and a shape.
struct Gathered {
  std::vector<Value> items;
  std::vector<std::int64_t> shape;
  bool any_float = false, all_bool = true, big_int = false, any_complex = false;
};

// A complex element written as the pair (real . imaginary) of two numbers.
bool is_complex_pair(Value v) { return eval::is_cons(v) && eval::car(v).is_number() && eval::cdr(v).is_number(); }

bool is_sequence(Value v) {
  return (eval::is_cons(v) && !is_complex_pair(v)) || eval::is_kind(v, eval::ObjKind::Vector);
}

std::vector<Value> sequence_items(Interp& in, Value v) {
  if (eval::is_kind(v, eval::ObjKind::Vector)) return eval::as_vector(v)->items;
  return eval::list_items(in, "tensor", v, 1);
}

void gather(Interp& in, Value v, std::size_t depth, Gathered& g) {
  if (is_sequence(v)) {
    std::vector<Value> items = sequence_items(in, v);
    auto n = static_cast<std::int64_t>(items.size());
    if (depth == g.shape.size()) {
      if (!g.items.empty()) in.error("shape-error", "tensor: ragged nested list: an element at depth " + std::to_string(depth) + " is a list of " + std::to_string(n) + " where a number was expected");
      g.shape.push_back(n);
    } else if (g.shape[depth] != n) {
      in.error("shape-error", "tensor: ragged nested list: a list at depth " + std::to_string(depth) + " has " + std::to_string(n) +
                                  " elements where " + std::to_string(g.shape[depth]) + " were expected");
    }
    for (Value x : items) gather(in, x, depth + 1, g);
    return;
  }
  if (depth != g.shape.size()) {
    in.error("shape-error", "tensor: ragged nested list: " + in.repr(v) + " at depth " + std::to_string(depth) +
                                " where a list of " + std::to_string(g.shape[depth]) + " was expected");
  }
  if (is_complex_pair(v)) {
    g.any_complex = true;
    g.all_bool = false;
    g.items.push_back(v);
    return;
  }
  if (v.is_float()) g.any_float = true;
  else if (v.is_int()) {
    if (v.i > INT32_MAX || v.i < INT32_MIN) g.big_int = true;
  } else if (!v.is_nil() && !v.same(in.t())) {
    in.error("type-error",
             "tensor: elements must be numbers, booleans (t, nil) or complex pairs (real . imaginary), got " +
                 in.repr(v));
  }
  if (v.is_int() || v.is_float()) g.all_bool = false;
  g.items.push_back(v);
}

// Element v for an integer tensor of dtype t. As in PyTorch, a float is truncated toward
// zero, and nan, inf or a value outside t's range is an error (issue 19: the conversion was
// undefined behaviour, and integers wrapped).
std::int64_t checked_int_element(Interp& in, Value v, DType t) {
  const std::string type(dtype_name(t));
  const std::string range =
      " (" + std::to_string(int_min(t)) + " to " + std::to_string(int_max(t)) + ")";
  const std::string value = "tensor: " + in.repr(v);
  if (v.is_float()) {
    if (!std::isfinite(v.f)) in.error("dtype-error", value + " cannot be converted to " + type);
    auto i = truncate_to_int(v.f, t);
    if (!i) in.error("dtype-error", value + " is out of range for " + type + range);
    return *i;
  }
  if (v.is_int() && !fits_int(v.i, t)) {
    in.error("dtype-error", value + " is out of range for " + type + range);
  }
  return v.is_int() ? v.i : (v.is_nil() ? 0 : 1);
}

Value tensor_from_data(Interp& in, Value data, Value dtype_arg) {
  Gathered g;
  if (!is_sequence(data) && !data.is_number() && !data.same(in.t()) && !data.is_nil() && !is_complex_pair(data)) {
    in.type_error("tensor", 1, "a number, a complex pair (real . imaginary) or a nested list of them", data);
  }
  if (data.is_nil()) {
    g.shape = {0};
  } else {
    gather(in, data, 0, g);
  }
  DType t;
  if (!dtype_arg.is_nil()) t = dtype_from_lisp(in, "tensor", dtype_arg);
  else if (g.any_complex) t = DType::C64;
  else if (g.any_float) t = kDefaultFloat;
  else if (!g.items.empty() && g.all_bool) t = DType::Bool;
  else if (g.big_int) t = DType::I64;
  else if (g.items.empty()) t = kDefaultFloat;
  else t = kDefaultInt;
  if (is_quantized(t)) {
    in.error("dtype-error", "tensor: " + std::string(dtype_name(t)) +
                                " blocks are made by quantize, e.g. (quantize (tensor DATA) '" +
                                std::string(dtype_name(t)) + ")");
  }
  if (g.any_complex && !is_complex(t)) {
    in.error("dtype-error", "tensor: a complex element (real . imaginary) needs a complex dtype (c64 or c128), not " +
                                std::string(dtype_name(t)));
  }
  if (is_complex(t)) {
    // The parts: (real, imaginary) per element; a number is real + 0i.
    auto buf = std::make_shared<Buffer>(complex_part(t), 2 * g.items.size());
    auto number = [](Value x) {
      return x.is_float() ? x.f : x.is_int() ? static_cast<double>(x.i) : (x.is_nil() ? 0 : 1);
    };
    for (std::size_t k = 0; k < g.items.size(); ++k) {
      Value v = g.items[k];
      const bool pair = is_complex_pair(v);
      runtime::store_float(*buf, static_cast<std::int64_t>(2 * k), number(pair ? eval::car(v) : v));
      runtime::store_float(*buf, static_cast<std::int64_t>(2 * k + 1), pair ? number(eval::cdr(v)) : 0.0);
    }
    in.heap.account_external(buf->size_bytes());
    Shape shape(g.shape.begin(), g.shape.end());
    return make_complex_tensor(in, graph_at_call(in).make_buffer(std::move(buf), complex_parts::parts_shape(shape)));
  }
  auto buf = std::make_shared<Buffer>(t, g.items.size());
  for (std::size_t k = 0; k < g.items.size(); ++k) {
    Value v = g.items[k];
    double f = v.is_float() ? v.f : v.is_int() ? static_cast<double>(v.i) : (v.is_nil() ? 0 : 1);
    std::int64_t i = v.is_int() ? v.i : (v.is_nil() ? 0 : 1);
    if (is_int(t)) i = checked_int_element(in, v, t);
    if (is_float(t)) runtime::store_float(*buf, static_cast<std::int64_t>(k), f);
    else if (t == DType::Bool) runtime::store_int(*buf, static_cast<std::int64_t>(k), f != 0);
    else runtime::store_int(*buf, static_cast<std::int64_t>(k), i);
  }
  in.heap.account_external(buf->size_bytes());
  Shape shape(g.shape.begin(), g.shape.end());
  return make_tensor(in, graph_at_call(in).make_buffer(std::move(buf), shape));
}

// NumPy broadcasting of shapes, right-aligned; symbolic dims must be equal or 1.
Shape broadcast_shapes(Interp& in, const char* fn, const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, Dim(1));
  for (const auto& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      Dim& o = out[rank - s.size() + i];
      const Dim& d = s[i];
      if (d == Dim(1) || d == o) continue;
      if (o == Dim(1)) {
        o = d;
        continue;
      }
      std::string all;
      for (const auto& x : shapes) all += (all.empty() ? "" : " and ") + shape_str(x);
      in.error("shape-error", std::string(fn) + ": shapes " + all + " do not broadcast (axis " +
                                  std::to_string(static_cast<int>(i) - static_cast<int>(s.size())) + ": " + o.str() +
                                  " vs " + d.str() + ")");
    }
  }
  return out;
}

NodeRef broadcast_node(Graph& g, const NodeRef& x, const Shape& shape) {
  if (x->shape == shape) return x;
  Shape padded(shape.size() - x->shape.size(), Dim(1));
  padded.insert(padded.end(), x->shape.begin(), x->shape.end());
  return g.make_expand(g.make_reshape(x, padded), shape);
}

NodeRef scalar_node(Graph& g, Value v, DType t, const Shape& shape) {
  if (v.is_float()) return g.make_const_float(v.f, t, shape);
  if (v.is_int()) return g.make_const_int(v.i, t, shape);
  return g.make_const_int(v.is_nil() ? 0 : 1, t, shape);
}

// Converts numbers and tensors to tensors of one dtype and one broadcast shape.
// `dtype` forces the result type (else it is promoted); fn names the caller in errors.
DType result_dtype(Interp& in, const char* fn, const std::vector<Value>& args) {
  std::optional<DType> t;
  for (Value v : args) {
    if (is_tensor(v)) {
      DType vt = value_dtype(as_tensor(v));
      if (is_quantized(vt)) vt = DType::F32;  // read as f32 (Graph::dequantized)
      t = t ? promote(*t, vt) : vt;
    } else if (!v.is_number() && !v.same(in.t()) && !v.is_nil()) {
      in.error("type-error", std::string(fn) + ": expected a tensor or a number, got " + in.repr(v));
    }
  }
  for (Value v : args) {
    if (is_tensor(v)) continue;
    bool fl = v.is_float();
    if (!t) t = fl ? kDefaultFloat : v.is_int() ? kDefaultInt : DType::Bool;
    else t = promote_with_scalar(*t, fl);
  }
  return t.value_or(kDefaultFloat);
}

// The result is complex (parts nodes) when the dtype is.
std::vector<NodeRef> elementwise_args(Interp& in, const char* fn, const std::vector<Value>& args, std::optional<DType> dtype) {
  std::optional<DType> t = dtype ? *dtype : result_dtype(in, fn, args);
  std::vector<Shape> shapes;
  for (Value v : args) {
    if (is_tensor(v)) shapes.push_back(value_shape(as_tensor(v)));
  }
  Shape shape = broadcast_shapes(in, fn, shapes);
  Graph& g = graph_at_call(in);
  std::vector<NodeRef> out;
  if (is_complex(*t)) {
    const DType part = complex_part(*t);
    const Shape parts = complex_parts::parts_shape(shape);
    for (Value v : args) {
      if (!is_tensor(v)) {
        out.push_back(complex_parts::from_real(g, scalar_node(g, v, part, shape)));
      } else if (as_tensor(v)->complex) {
        out.push_back(broadcast_node(g, g.make_cast(as_tensor(v)->node, part), parts));
      } else {
        out.push_back(broadcast_node(g, complex_parts::from_real(g, g.make_cast(as_tensor(v)->node, part)), parts));
      }
    }
    return out;
  }
  for (Value v : args) {
    if (is_tensor(v) && as_tensor(v)->complex) {
      in.error("dtype-error", std::string(fn) + ": a " + std::string(dtype_name(value_dtype(as_tensor(v)))) +
                                  " tensor cannot be computed as " + std::string(dtype_name(*t)) +
                                  " (that would drop its imaginary part)");
    }
  }
  for (Value v : args) {
    if (is_tensor(v)) out.push_back(broadcast_node(g, g.make_cast(as_tensor(v)->node, *t), shape));
    else out.push_back(scalar_node(g, v, *t, shape));
  }
  return out;
}

Value list_of_tensors(Interp& in, const std::vector<NodeRef>& nodes, bool complex = false) {
  eval::Interp::StackMark mark(in);
  Value* base = in.sp;
  for (const auto& n : nodes) in.push(make_tensor_like(in, n, complex));
  return in.list_from(base, nodes.size());
}

Bindings bindings_from_lisp(Interp& in, const char* fn, Value alist) {
  Bindings b;
  for (Value r = alist; eval::is_cons(r); r = eval::cdr(r)) {
    Value pair = eval::car(r);
    if (!eval::is_cons(pair) || !eval::is_symbol(eval::car(pair)) || !eval::cdr(pair).is_int()) {
      in.error("type-error", std::string(fn) + ": :bind takes an alist ((name . integer) ...), got " + in.repr(alist));
    }
    b[eval::as_symbol(eval::car(pair))->name] = eval::cdr(pair).i;
  }
  return b;
}

// Makes `name` (a numeric builtin) hand tensor arguments to the Lisp function `handler`.
// Makes builtin `name` call the Lisp function `handler` when an argument is a tensor, and
// adds "On tensors: <note>" to its documentation (at the end of the prose, before any examples).
void dispatch_tensors(Interp& in, const char* name, const char* handler, const char* note) {
  auto* nat = eval::as_native(in.intern(name)->value);
  // The docs outlive every interpreter: built once per process, shared by all.
  static std::mutex docs_mutex;
  static std::map<std::string, std::string> docs;
  {
    std::lock_guard<std::mutex> lock(docs_mutex);
    auto [it, fresh] = docs.try_emplace(name);
    if (fresh) {
      // The note ends the prose, before the examples (lines "  (form)  ; => value"), whose
      // expected values must stay at the ends of their lines.
      const std::string doc = nat->doc;
      const std::size_t examples = std::min(doc.find("\n  ("), doc.size());
      it->second = doc.substr(0, examples) + " On tensors: " + note + doc.substr(examples);
    }
    nat->doc = it->second.c_str();
  }
  eval::NativeFn number_fn = nat->fn;
  eval::Symbol* h = in.intern(handler);
  const std::int32_t max_args = nat->max_args;
  nat->fn = nullptr;
  nat->max_args = -1;  // a tensor may take more arguments (aref with one index per axis)
  nat->host_fn = [number_fn, h, max_args, nat](Interp& in, Value* a, std::uint32_t n) -> Value {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (eval::is_kind(a[i], eval::ObjKind::Foreign)) {
        if (!h->bound) in.error("undefined-function", "no tensor method " + h->name);
        return in.apply(h->value, a, n);
      }
    }
    if (max_args >= 0 && n > static_cast<std::uint32_t>(max_args)) {
      in.error("arity-error", nat->name + ": expected at most " + std::to_string(max_args) +
                                  (max_args == 1 ? " argument, got " : " arguments, got ") + std::to_string(n));
    }
    return number_fn(in, a, n);
  };
}

}  // namespace

void register_tensor_builtins(Interp& in) {
  TL_BUILTIN(in, "tensorp", 1, 1, "(tensorp X)",
             "True when X is a tensor."
             "\n  (tensorp (tensor '(1 2 3)))  ; => t"
             "\n  (tensorp '(1 2 3))  ; => nil",
             [](Interp& in, Args a, N) -> Value { return in.boolean(is_tensor(a[0])); });
  TL_BUILTIN(in, "shape", 1, 1, "(shape X)",
             "The shape of tensor X: a list of dimensions (integers or symbols)."
             "\n  (shape (zeros '(2 3)))  ; => (2 3)"
             "\n  (shape (tensor 5))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return shape_to_lisp(in, value_shape(tensor_arg_any(in, "shape", a, 0)));
             });
  TL_BUILTIN(in, "dtype", 1, 1, "(dtype X)",
             "The element type of tensor X, a symbol such as f32."
             "\n  (dtype (tensor '(1.5 2.5)))  ; => f32"
             "\n  (dtype (tensor '(1 2)))  ; => i32",
             [](Interp& in, Args a, N) -> Value {
               return dtype_to_lisp(in, value_dtype(tensor_arg_any(in, "dtype", a, 0)));
             });
  TL_BUILTIN(in, "ndim", 1, 1, "(ndim X)",
             "The number of axes of tensor X."
             "\n  (ndim (zeros '(2 3 4)))  ; => 3",
             [](Interp& in, Args a, N) -> Value {
               return Value::integer(static_cast<std::int64_t>(value_shape(tensor_arg_any(in, "ndim", a, 0)).size()));
             });
  TL_BUILTIN(in, "numel", 1, 1, "(numel X)",
             "The number of elements of tensor X (an expression when symbolic)."
             "\n  (numel (zeros '(2 3 4)))  ; => 24"
             "\n  (numel (symbolic-shape (ones '(4 2)) '(n 2)))  ; => (* 2 n)",
             [](Interp& in, Args a, N) -> Value {
               return dim_to_lisp(in, shape_numel(value_shape(tensor_arg_any(in, "numel", a, 0))));
             });
  TL_BUILTIN(in, "%guard", 3, 3, "(%guard FLAG TYPE MESSAGE)",
             "Computes the one-element bool tensor FLAG and returns whether it is true. Inside a jit trace the "
             "check is recorded: each replay computes FLAG again and signals TYPE (a symbol) with MESSAGE when "
             "it is false. For argument checks that must hold on every call of a captured function.",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "%guard", a, 0);
               if (t->node->dtype != DType::Bool || shape_numel(t->node->shape) != Dim(1)) {
                 in.type_error("%guard", 1, "a one-element bool tensor", a[0]);
               }
               const Buffer& b = realize(in, t);
               const bool ok = static_cast<const unsigned char*>(b.data())[0] != 0;
               TensorRuntime& rt = runtime(in);
               if (rt.tracer) {
                 std::string type = eval::is_symbol(a[1]) ? eval::as_symbol(a[1])->name : "error";
                 rt.tracer->on_guard(t->node->buffer, type, arg_string(in, "%guard", a, 2)->text);
               }
               return in.boolean(ok);
             });
  TL_BUILTIN(in, "realize", 1, 3, "(realize X &key bind)",
             "Computes tensor X now (it is otherwise computed when first read) and returns it. :bind gives "
             "values to symbolic dimensions, e.g. (realize x :bind '((batch . 32)))."
             "\n  (realizedp (realize (+ (tensor '(1 2)) 1)))  ; => t"
             "\n  (to-list (realize (+ (ones '(n 2)) 1) :bind '((n . 3))))  ; => ((2.0 2.0) (2.0 2.0) (2.0 2.0))",
             [](Interp& in, Args a, N n) -> Value {
               TensorObj* t = tensor_arg_any(in, "realize", a, 0);
               Bindings b = bindings_from_lisp(in, "realize", eval::keyword_arg(a, 1, n, "bind"));
               realize(in, t, b);
               return a[0];
             });
  TL_BUILTIN(in, "manual-seed", 1, 1, "(manual-seed N)",
             "Seeds the tensor random number generator with integer N: the same seed gives the same "
             "sequence of random tensors."
             "\n  (let ((a (progn (manual-seed 42) (to-list (rand '(3))))))"
             "\n    (manual-seed 42)"
             "\n    (equal a (to-list (rand '(3)))))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               TensorRuntime& rt = runtime(in);
               rt.rng_seed = eval::arg_int(in, "manual-seed", a, 0);
               rt.rng_draws = 0;
               return a[0];
             });
  TL_BUILTIN(in, "%rng-next-key", 0, 0, "(%rng-next-key)",
             "The key of the next random draw: a u32 tensor (seed-low draw seed-high); advances the "
             "generator. Random functions use it through random-bits.",
             [](Interp& in, Args, N) -> Value {
               return make_tensor(in, graph_at_call(in).make_buffer(next_rng_key(runtime(in)), Shape{3}));
             });
  TL_BUILTIN(
      in, "%threefry2x32", 4, 4, "(%threefry2x32 K0 K1 X0 X1)",
      "The graph of threefry2x32 on u32 tensors of one shape: key words K0 K1, counters X0 X1; a list of "
      "two u32 tensors. Built here, not by 300 calls of prim: functions: a draw of randn built its graph in "
      "0.45 ms.",
      [](Interp& in, Args a, N) -> Value {
        NodeRef w[4];
        for (int i = 0; i < 4; ++i) {
          w[i] = arg_tensor(in, "%threefry2x32", a, i);
          if (w[i]->dtype != DType::U32 || w[i]->shape != w[0]->shape) {
            in.type_error("%threefry2x32", i + 1, "a u32 tensor of the first one's shape", a[i]);
          }
        }
        Graph& g = graph_at_call(in);
        const Shape shape = w[0]->shape;
        auto word = [&](std::uint32_t v) { return g.make_const_int(v, DType::U32, shape); };
        auto add = [&](const NodeRef& x, const NodeRef& y) { return g.make_binary(Op::Add, x, y); };
        auto rotl = [&](const NodeRef& x, int r) {  // as %rotl32: x * 2^r or x / 2^(32 - r)
          return g.make_binary(Op::Or, g.make_binary(Op::Mul, x, word(std::uint32_t{1} << r)),
                               g.make_binary(Op::Idiv, x, word(std::uint32_t{1} << (32 - r))));
        };
        // The same nodes, in the same order, as stdlib/tensor/70-random.lisp's definition.
        const NodeRef ks[3] = {w[0], w[1], g.make_binary(Op::Xor, g.make_binary(Op::Xor, w[0], w[1]), word(466688986))};
        constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
        NodeRef x0 = add(w[2], ks[0]), x1 = add(w[3], ks[1]);
        for (int i = 0; i < 20; ++i) {
          x0 = add(x0, x1);
          x1 = g.make_binary(Op::Xor, rotl(x1, kRot[i % 8]), x0);
          if (i % 4 == 3) {
            const int r = (i + 1) / 4;
            x0 = add(x0, ks[r % 3]);
            x1 = add(x1, add(ks[(r + 1) % 3], word(static_cast<std::uint32_t>(r))));
          }
        }
        return in.list({make_tensor(in, x0), make_tensor(in, x1)});
      });
  TL_BUILTIN(in, "realize-all", 1, 1, "(realize-all TENSORS)",
             "Computes every tensor of the list TENSORS now, in one schedule, so work they share runs "
             "once (e.g. the gradients of a model's parameters); returns the list."
             "\n  (mapcar #'to-list (realize-all (list (+ (tensor '(1 2)) 1) (* (tensor '(1 2)) 10))))"
             "  ; => ((2 3) (10 20))",
             [](Interp& in, Args a, N) -> Value {
               std::vector<TensorObj*> ts;
               for (Value r = a[0]; eval::is_cons(r); r = eval::cdr(r)) {
                 Value x = eval::car(r);
                 if (!is_tensor(x)) in.type_error("realize-all", 1, "a list of tensors", a[0]);
                 ts.push_back(as_tensor(x));
               }
               if (!a[0].is_nil() && !eval::is_cons(a[0])) in.type_error("realize-all", 1, "a list of tensors", a[0]);
               realize_all(in, ts);
               return a[0];
             });
  TL_BUILTIN(in, "realizedp", 1, 1, "(realizedp X)",
             "True when tensor X holds computed data (not a pending graph)."
             "\n  (realizedp (tensor '(1 2)))  ; => t"
             "\n  (realizedp (+ (tensor '(1 2)) 1))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(tensor_arg_any(in, "realizedp", a, 0)->node->op == Op::Buffer);
             });
  TL_BUILTIN(in, "to-list", 1, 1, "(to-list X)",
             "The elements of tensor X as nested lists (a number for a 0-d tensor; a complex element "
             "is the pair (real . imaginary))."
             "\n  (to-list (tensor '((1 2) (3 4))))  ; => ((1 2) (3 4))"
             "\n  (to-list (tensor 7))  ; => 7"
             "\n  (to-list (tensor '((1 . 2) 3) :dtype 'c64))  ; => ((1.0 . 2.0) (3.0 . 0.0))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg_any(in, "to-list", a, 0);
               const Buffer& b = read_back(in, t);
               std::int64_t k = 0;
               return to_list(in, b, concrete_shape(t), 0, k, t->complex);
             });
  TL_BUILTIN(in, "item", 1, 1, "(item X)",
             "The single element of tensor X as a number (of a complex tensor, the pair (real . imaginary))."
             "\n  (item (sum (tensor '(1 2 3))))  ; => 6"
             "\n  (item (tensor '((2.5))))  ; => 2.5",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg_any(in, "item", a, 0);
               const Buffer& b = read_back(in, t);
               const std::size_t count = b.count() / (t->complex ? 2 : 1);
               if (count != 1) {
                 in.error("shape-error", "item: tensor of shape " + shape_str(value_shape(t)) + " has " +
                                             std::to_string(count) + " elements, not 1");
               }
               return element_value(in, b, 0, t->complex);
             });
  TL_BUILTIN(in, "%tensor-aref", 1, -1, "(%tensor-aref X INDEX...)", "One element of tensor X (used by aref).",
             [](Interp& in, Args a, N n) -> Value {
               TensorObj* t = tensor_arg_any(in, "aref", a, 0);
               const Buffer& b = read_back(in, t);
               auto shape = concrete_shape(t);
               if (n - 1 != shape.size()) {
                 in.error("index-error", "aref: tensor of shape " + shape_str(value_shape(t)) + " needs " +
                                             std::to_string(shape.size()) + " indices, got " + std::to_string(n - 1));
               }
               std::int64_t k = 0;
               for (std::size_t i = 0; i < shape.size(); ++i) {
                 std::int64_t ix = eval::arg_int(in, "aref", a, static_cast<int>(i + 1));
                 if (ix < 0) ix += shape[i];
                 if (ix < 0 || ix >= shape[i]) {
                   in.error("index-error", "aref: index " + in.repr(a[i + 1]) + " out of range for axis " + std::to_string(i) +
                                               " of size " + std::to_string(shape[i]));
                 }
                 k = k * shape[i] + ix;
               }
               return element_value(in, b, k, t->complex);
             });
  TL_BUILTIN(in, "take-rows", 2, 2, "(take-rows X INDICES)",
             "The rows of X (along its first axis) at INDICES, a list of integers or an integer tensor, "
             "copied into a new tensor: how a batch is drawn from a dataset."
             "\n  (to-list (funcall *take-rows-copy* (tensor '((1 2) (3 4) (5 6))) '(2 0)))  ; => ((5 6) (1 2))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "take-rows", a, 0);
               const Buffer& b = realize(in, t);
               auto shape = concrete_shape(t);
               if (shape.empty()) in.error("shape-error", "take-rows: X must have at least one axis, got a 0-d tensor");
               std::vector<std::int64_t> idx;
               if (is_tensor(a[1])) {
                 TensorObj* it = as_tensor(a[1]);
                 if (is_float(it->node->dtype) || it->node->dtype == DType::Bool) {
                   in.error("dtype-error", "take-rows: INDICES must be integers, got " + std::string(dtype_name(it->node->dtype)));
                 }
                 const Buffer& ib = read_back(in, it);
                 for (std::size_t i = 0; i < ib.count(); ++i)
                   idx.push_back(runtime::load_int(ib, static_cast<std::int64_t>(i)));
               } else {
                 for (Value r = a[1]; eval::is_cons(r); r = eval::cdr(r)) {
                   if (!eval::car(r).is_int())
                     in.type_error("take-rows", 2, "a list of integers or an integer tensor", a[1]);
                   idx.push_back(eval::car(r).i);
                 }
                 if (!eval::is_list(a[1]))
                   in.type_error("take-rows", 2, "a list of integers or an integer tensor", a[1]);
               }
               std::size_t row_elems = 1;  // a quantized tensor's rows are whole blocks
               for (std::size_t i = 1; i < shape.size(); ++i) row_elems *= static_cast<std::size_t>(shape[i]);
               if (is_quantized(b.dtype) && row_elems % dtype_block(b.dtype) != 0) {
                 in.error("shape-error", "take-rows: the rows of a " + std::string(dtype_name(b.dtype)) +
                                             " tensor of shape " + shape_str(t->node->shape) +
                                             " are not whole blocks of 32; dequantize it first");
               }
               const std::size_t row = storage_bytes(b.dtype, row_elems);
               auto out = std::make_shared<Buffer>(b.dtype, idx.size() * row_elems);
               for (std::size_t i = 0; i < idx.size(); ++i) {
                 std::int64_t r = idx[i] < 0 ? idx[i] + shape[0] : idx[i];
                 if (r < 0 || r >= shape[0]) {
                   in.error("index-error", "take-rows: index " + std::to_string(idx[i]) + " out of range for " +
                                               std::to_string(shape[0]) + " rows");
                 }
                 if (row)
                   std::memcpy(static_cast<std::uint8_t*>(out->data()) + i * row,
                               static_cast<const std::uint8_t*>(b.data()) + static_cast<std::size_t>(r) * row, row);
               }
               Shape s{Dim(static_cast<std::int64_t>(idx.size()))};
               for (std::size_t i = 1; i < shape.size(); ++i) s.push_back(Dim(shape[i]));
               in.heap.account_external(out->size_bytes());
               return make_tensor(in, graph_at_call(in).make_buffer(std::move(out), s));
             });
  TL_BUILTIN(in, "%readable", 1, 1, "(%readable X)",
             "X, or when X is a quantized tensor X cast to f32 (a lazy cast, computed where it is "
             "read): what a composite's required arguments are bound to.",
             [](Interp& in, Args a, N) -> Value {
               if (!is_tensor(a[0]) || !is_quantized(as_tensor(a[0])->node->dtype)) return a[0];
               return make_tensor(in, graph_at_call(in).make_cast(as_tensor(a[0])->node, DType::F32));
             });
  TL_BUILTIN(in, "%quantize", 2, 2, "(%quantize X FORMAT)",
             "X, an f32 tensor whose last axis is a multiple of 32, quantized into the block format "
             "FORMAT (q8_0 or q4_0) on the host; quantize is the Lisp entry.",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "quantize", a, 0);
               const DType q = dtype_from_lisp(in, "quantize", a[1]);
               if (!is_quantized(q)) {
                 in.error("dtype-error", "quantize: FORMAT must be q8_0 or q4_0, got " + std::string(dtype_name(q)));
               }
               if (t->node->dtype != DType::F32) {
                 in.error("dtype-error",
                          "quantize: X must be f32 here, got " + std::string(dtype_name(t->node->dtype)));
               }
               auto shape = concrete_shape(t);
               if (shape.empty() || shape.back() % 32 != 0) {
                 in.error("shape-error", "quantize: " + std::string(dtype_name(q)) +
                                             " packs blocks of 32 along the last axis, "
                                             "which must be a multiple of 32; X has shape " +
                                             shape_str(t->node->shape));
               }
               const Buffer& b = realize(in, t);
               auto out = std::make_shared<Buffer>(q, b.count());
               const std::int64_t bad = quantize_blocks(q, static_cast<const float*>(b.data()), b.count(),
                                                        static_cast<std::uint8_t*>(out->data()));
               if (bad >= 0) {
                 in.error("value-error",
                          "quantize: X has the value " + std::to_string(runtime::load_float(b, bad)) +
                              " at flat index " + std::to_string(bad) + ", which " + std::string(dtype_name(q)) +
                              " cannot hold (its values must be finite, their block's f16 scale at most 65504)");
               }
               in.heap.account_external(out->size_bytes());
               return make_tensor(in, graph_at_call(in).make_buffer(std::move(out), t->node->shape));
             });
  TL_BUILTIN(in, "%tensor-from-list", 2, 2, "(%tensor-from-list DATA DTYPE)",
             "A tensor of the numbers in nested list DATA; DTYPE nil infers f32, i32 (i64 when "
             "needed) or bool. Into an integer DTYPE, floats are truncated toward zero; nan, inf "
             "and numbers outside the dtype's range are a dtype-error, as in PyTorch.",
             [](Interp& in, Args a, N) -> Value { return tensor_from_data(in, a[0], a[1]); });
  TL_BUILTIN(in, "symbolic-shape", 2, 2, "(symbolic-shape X SHAPE)",
             "X with the symbols in SHAPE naming its dimensions, e.g. (symbolic-shape x '(batch 784)). "
             "Graphs built from it carry BATCH symbolically; its value comes from X's data."
             "\n  (shape (symbolic-shape (zeros '(32 784)) '(batch 784)))  ; => (batch 784)"
             "\n  (let ((x (symbolic-shape (ones '(4 2)) '(n 2))))"
             "\n    (list (shape (sum x :axis 1)) (to-list (sum x :axis 1))))  ; => ((n) (2.0 2.0 2.0 2.0))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* t = tensor_arg(in, "symbolic-shape", a, 0);
               realize(in, t);
               Shape want = shape_from_lisp(in, "symbolic-shape", a[1]);
               auto have = concrete_shape(t);
               if (want.size() != have.size()) {
                 in.error("shape-error", "symbolic-shape: " + shape_str(want) + " has " + std::to_string(want.size()) +
                                             " axes but the tensor is " + shape_str(t->node->shape));
               }
               Bindings b;
               for (std::size_t i = 0; i < want.size(); ++i) {
                 if (auto c = want[i].as_const()) {
                   if (*c != have[i])
                     in.error("shape-error", "symbolic-shape: axis " + std::to_string(i) + " has size " +
                                                 std::to_string(have[i]) + ", not " + std::to_string(*c));
                 } else if (auto v = want[i].as_var()) {
                   auto [it, ok] = b.emplace(*v, have[i]);
                   if (!ok && it->second != have[i]) {
                     in.error("shape-error", "symbolic-shape: " + *v + " would be both " + std::to_string(it->second) + " and " +
                                                 std::to_string(have[i]));
                   }
                 } else {
                   in.error("shape-error", "symbolic-shape: each dimension must be an integer or a symbol, got " + want[i].str());
                 }
               }
               return make_tensor(in, graph_at_call(in).make_buffer(t->node->buffer, want, std::move(b)));
             });
  TL_BUILTIN(in, "broadcast-shapes", 0, -1, "(broadcast-shapes SHAPE...)",
             "The shape that SHAPEs broadcast to under NumPy rules (right-aligned; 1 stretches)."
             "\n  (broadcast-shapes '(3 1) '(4))  ; => (3 4)"
             "\n  (broadcast-shapes '(2 1 5) '(3 1) '(5))  ; => (2 3 5)",
             [](Interp& in, Args a, N n) -> Value {
               std::vector<Shape> shapes;
               for (N i = 0; i < n; ++i) shapes.push_back(shape_from_lisp(in, "broadcast-shapes", a[i]));
               return shape_to_lisp(in, broadcast_shapes(in, "broadcast-shapes", shapes));
             });
  TL_BUILTIN(in, "broadcast-to", 2, 2, "(broadcast-to X SHAPE)",
             "X (a tensor or number) broadcast to SHAPE: a view, no copy."
             "\n  (to-list (broadcast-to (tensor '(1 2 3)) '(2 3)))  ; => ((1 2 3) (1 2 3))"
             "\n  (to-list (broadcast-to 0.5 '(2)))  ; => (0.5 0.5)",
             [](Interp& in, Args a, N) -> Value {
               Shape shape = shape_from_lisp(in, "broadcast-to", a[1]);
               if (!is_tensor(a[0])) {
                 auto args = elementwise_args(in, "broadcast-to", {a[0]}, std::nullopt);
                 return make_tensor(in, graph_at_call(in).make_expand(graph_at_call(in).make_reshape(args[0], Shape(shape.size(), Dim(1))), shape));
               }
               const TensorObj* x = as_tensor(a[0]);
               Shape target = broadcast_shapes(in, "broadcast-to", {value_shape(x), shape});
               if (target != shape) {
                 in.error("shape-error",
                          "broadcast-to: cannot broadcast " + shape_str(value_shape(x)) + " to " + shape_str(shape));
               }
               if (x->complex) {
                 return make_complex_tensor(in, broadcast_node(graph_at_call(in), x->node,
                                                               complex_parts::parts_shape(shape)));
               }
               return make_tensor(in, broadcast_node(graph_at_call(in), x->node, shape));
             });
  TL_BUILTIN(in, "%elementwise-args", 2, 3, "(%elementwise-args FN ARGS [DTYPE])",
             "ARGS (tensors and numbers) as tensors of one promoted dtype (or DTYPE) and one broadcast shape.",
             [](Interp& in, Args a, N n) -> Value {
               std::string fn = eval::is_symbol(a[0]) ? eval::as_symbol(a[0])->name : in.repr(a[0]);
               std::vector<Value> args = eval::list_items(in, "%elementwise-args", a[1], 2);
               std::optional<DType> t;
               if (n == 3 && !a[2].is_nil()) t = dtype_from_lisp(in, fn.c_str(), a[2]);
               else t = result_dtype(in, fn.c_str(), args);
               return list_of_tensors(in, elementwise_args(in, fn.c_str(), args, t), is_complex(*t));
             });
  TL_BUILTIN(in, "result-dtype", 1, -1, "(result-dtype X...)",
             "The dtype that tensors and numbers X combine to under the promotion rules."
             "\n  (result-dtype (tensor '(1 2)) 0.5)  ; => f32"
             "\n  (result-dtype (tensor '(1 2) :dtype 'i8) 3)  ; => i8",
             [](Interp& in, Args a, N n) -> Value {
               return dtype_to_lisp(in, result_dtype(in, "result-dtype", std::vector<Value>(a, a + n)));
             });
  TL_BUILTIN(in, "promote-types", 2, 2, "(promote-types A B)",
             "The dtype two tensors of dtypes A and B combine to."
             "\n  (promote-types 'i32 'f16)  ; => f16"
             "\n  (promote-types 'u8 'i8)  ; => i16",
             [](Interp& in, Args a, N) -> Value {
               return dtype_to_lisp(in, promote(dtype_from_lisp(in, "promote-types", a[0]), dtype_from_lisp(in, "promote-types", a[1])));
             });
  TL_BUILTIN(in, "dtypep", 1, 1, "(dtypep X)",
             "True when X names a dtype."
             "\n  (dtypep 'bf16)  ; => t"
             "\n  (dtypep 'banana)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(eval::is_symbol(a[0]) && !a[0].is_nil() && dtype_from_name(eval::as_symbol(a[0])->name).has_value());
             });
  TL_BUILTIN(in, "dtype-float-p", 1, 1, "(dtype-float-p DTYPE)",
             "True for f16, bf16, f32 and f64."
             "\n  (dtype-float-p 'bf16)  ; => t"
             "\n  (dtype-float-p 'i64)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(is_float(dtype_from_lisp(in, "dtype-float-p", a[0])));
             });
  TL_BUILTIN(in, "dtype-quantized-p", 1, 1, "(dtype-quantized-p DTYPE)",
             "True for the quantized block formats q8_0 and q4_0 (see quantize)."
             "\n  (dtype-quantized-p 'q4_0)  ; => t"
             "\n  (dtype-quantized-p 'f32)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(is_quantized(dtype_from_lisp(in, "dtype-quantized-p", a[0])));
             });
  TL_BUILTIN(in, "dtype-complex-p", 1, 1, "(dtype-complex-p DTYPE)",
             "True for the complex dtypes c64 (f32 parts) and c128 (f64 parts)."
             "\n  (dtype-complex-p 'c64)  ; => t"
             "\n  (dtype-complex-p 'f64)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(is_complex(dtype_from_lisp(in, "dtype-complex-p", a[0])));
             });
  TL_BUILTIN(in, "%fftw-available-p", 0, 0, "(%fftw-available-p)",
             "True when FFTW (libfftw3f and libfftw3) could be loaded: the Fourier transforms then run as its "
             "external kernels on the host devices.",
             [](Interp& in, Args, N) -> Value { return in.boolean(tl::fftw::available().empty()); });
  TL_BUILTIN(in, "%cpu-int8-dot-p", 0, 0, "(%cpu-int8-dot-p)",
             "True when the CPU the JIT compiles for (this one, or TENSORLISP_CPU) has integer dot products of "
             "bytes (AVX-512 VNNI or AVX-VNNI, or AVX2's vpmaddubsw): the quantized-dot rules then quantize a matmul's "
             "activation.",
             [](Interp& in, Args, N) -> Value {
               const char* cpu = std::getenv("TENSORLISP_CPU");
               try {
                 return in.boolean(tl::codegen::cpu_has_int8_dot(cpu == nullptr ? "" : cpu));
               } catch (const std::exception&) {
                 return in.boolean(false);  // an unknown CPU: the JIT reports it where it is used
               }
             });
  TL_BUILTIN(in, "view-as-real", 1, 1, "(view-as-real Z)",
             "The parts of complex tensor Z as a real tensor (f32 for c64, f64 for c128) with one more axis, of "
             "size 2: (real imaginary). A view: no copy, and gradients flow through it."
             "\n  (to-list (view-as-real (tensor '((1 . 2) (3 . -4)))))  ; => ((1.0 2.0) (3.0 -4.0))"
             "\n  (shape (view-as-real (zeros '(4 5) :dtype 'c128)))  ; => (4 5 2)",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* z = tensor_arg_any(in, "view-as-real", a, 0);
               if (!z->complex) {
                 in.error("dtype-error", "view-as-real: Z must be complex (c64 or c128), got " +
                                             std::string(dtype_name(value_dtype(z))));
               }
               return make_tensor(in, z->node);
             });
  TL_BUILTIN(in, "view-as-complex", 1, 1, "(view-as-complex X)",
             "Real tensor X (f32 or f64) whose last axis has size 2 read as a complex tensor (c64 or c128) of "
             "the other axes: element i is X[i, 0] + X[i, 1] j. A view: no copy."
             "\n  (to-list (view-as-complex (tensor '((1.0 2.0) (3.0 -4.0)))))  ; => ((1.0 . 2.0) (3.0 . -4.0))"
             "\n  (dtype (view-as-complex (zeros '(3 2) :dtype 'f64)))  ; => c128",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg(in, "view-as-complex", a, 0);
               const DType t = x->node->dtype;
               if (t != DType::F32 && t != DType::F64) {
                 in.error("dtype-error", "view-as-complex: X must be f32 or f64, got " + std::string(dtype_name(t)));
               }
               if (x->node->shape.empty() || x->node->shape.back() != Dim(2)) {
                 in.error("shape-error",
                          "view-as-complex: the last axis of X must have size 2 (real, imaginary); X has shape " +
                              shape_str(x->node->shape));
               }
               return make_complex_tensor(in, graph_at_call(in).dequantized(x->node));
             });
  TL_BUILTIN(in, "dtype-size", 1, 1, "(dtype-size DTYPE)",
             "Bytes per element of DTYPE (of a quantized format, per block of 32 elements)."
             "\n  (dtype-size 'f16)  ; => 2"
             "\n  (dtype-size 'bool)  ; => 1",
             [](Interp& in, Args a, N) -> Value {
               return Value::integer(static_cast<std::int64_t>(dtype_size(dtype_from_lisp(in, "dtype-size", a[0]))));
             });
  TL_BUILTIN(in, "dim*", 0, -1, "(dim* D...)",
             "Product of dimensions (integers or symbolic)."
             "\n  (dim* 2 3 4)  ; => 24"
             "\n  (dim* 'batch 784)  ; => (* 784 batch)",
             [](Interp& in, Args a, N n) -> Value {
               Dim acc(1);
               for (N i = 0; i < n; ++i) acc = acc * dim_from_lisp(in, "dim*", a[i]);
               return dim_to_lisp(in, acc);
             });
  TL_BUILTIN(in, "dim", 2, 2, "(dim NAME VALUE)",
             "A symbolic dimension NAME with the value VALUE: used as a dimension (in a slice, index-put!, dim+) it "
             "is the variable NAME, and (with-dims (D) ...) binds NAME to VALUE for the tensors built inside. As an "
             "argument of a jit function it is keyed by name only, so one trace serves every value."
             "\n  (dim-value (dim 'batch 32))  ; => 32"
             "\n  (let ((d (dim 'n 3))) (with-dims (d) (shape (zeros (list d 2)))))  ; => (n 2)",
             [](Interp& in, Args a, N) -> Value {
               if (!eval::is_symbol(a[0]) || a[0].is_nil() || eval::as_symbol(a[0])->is_keyword()) {
                 in.type_error("dim", 1, "a symbol naming the dimension", a[0]);
               }
               std::int64_t v = eval::arg_int(in, "dim", a, 1);
               if (v < 0)
                 in.error("index-error", "dim: the value of " + eval::as_symbol(a[0])->name +
                                             " must not be negative, got " + std::to_string(v));
               auto* d = in.heap.make<BoundDim>(eval::ObjKind::Foreign);
               d->name = eval::as_symbol(a[0])->name;
               d->value = v;
               return Value::object(d);
             });
  TL_BUILTIN(in, "dim-value", 1, 1, "(dim-value D)",
             "The value of D, a (dim NAME VALUE); an integer is its own value."
             "\n  (dim-value (dim 'batch 32))  ; => 32"
             "\n  (dim-value 5)  ; => 5",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_int()) return a[0];
               if (BoundDim* d = as_bound_dim(a[0])) {
                 d->value_read = true;
                 return Value::integer(d->value);
               }
               in.type_error("dim-value", 1, "a (dim NAME VALUE) or an integer", a[0]);
             });
  TL_BUILTIN(in, "%dim-binding", 1, 1, "(%dim-binding D)", "(NAME . VALUE) of D, a (dim NAME VALUE), for with-dims.",
             [](Interp& in, Args a, N) -> Value {
               BoundDim* d = as_bound_dim(a[0]);
               if (!d) in.type_error("with-dims", 1, "a (dim NAME VALUE)", a[0]);
               return in.cons(in.sym(d->name), Value::integer(d->value));
             });
  TL_BUILTIN(in, "dim-name", 1, 1, "(dim-name D)",
             "The symbol naming D, a (dim NAME VALUE)."
             "\n  (dim-name (dim 'batch 32))  ; => batch",
             [](Interp& in, Args a, N) -> Value {
               if (BoundDim* d = as_bound_dim(a[0])) return in.sym(d->name);
               in.type_error("dim-name", 1, "a (dim NAME VALUE)", a[0]);
             });
  TL_BUILTIN(in, "dim-p", 1, 1, "(dim-p X)",
             "True when X is a (dim NAME VALUE)."
             "\n  (dim-p (dim 'batch 32))  ; => t"
             "\n  (dim-p 'batch)  ; => nil",
             [](Interp& in, Args a, N) -> Value { return in.boolean(as_bound_dim(a[0]) != nullptr); });
  TL_BUILTIN(in, "%set-scoped-dims", 1, 1, "(%set-scoped-dims ALIST)",
             "Sets the values of symbolic dimensions (NAME . VALUE) for the tensors built from now on; returns the "
             "previous alist. Use with-dims.",
             [](Interp& in, Args a, N) -> Value {
               Graph& g = runtime(in).graph;
               Bindings b = bindings_from_lisp(in, "with-dims", a[0]);
               eval::Interp::StackMark mark(in);
               Value* base = in.sp;
               for (const auto& [k, v] : g.scoped_bindings) in.push(in.cons(in.sym(k), Value::integer(v)));
               Value old = in.list_from(base, g.scoped_bindings.size());
               g.scoped_bindings = std::move(b);
               return old;
             });
  TL_BUILTIN(in, "dim+", 0, -1, "(dim+ D...)",
             "Sum of dimensions (integers or symbolic)."
             "\n  (dim+ 2 3)  ; => 5"
             "\n  (dim+ 'n 1)  ; => (+ 1 n)",
             [](Interp& in, Args a, N n) -> Value {
               Dim acc(0);
               for (N i = 0; i < n; ++i) acc = acc + dim_from_lisp(in, "dim+", a[i]);
               return dim_to_lisp(in, acc);
             });
  TL_BUILTIN(in, "dim-", 2, 2, "(dim- A B)",
             "Difference of dimensions (integers or symbolic)."
             "\n  (dim- 10 4)  ; => 6"
             "\n  (dim- 'n 1)  ; => (+ -1 n)",
             [](Interp& in, Args a, N) -> Value {
               return dim_to_lisp(in, dim_from_lisp(in, "dim-", a[0]) - dim_from_lisp(in, "dim-", a[1]));
             });
  TL_BUILTIN(in, "dim/", 2, 2, "(dim/ A B)",
             "A divided by B, which must divide it exactly; nil otherwise."
             "\n  (dim/ 12 4)  ; => 3"
             "\n  (dim/ 12 5)  ; => nil"
             "\n  (dim/ (dim* 'n 4) 4)  ; => n",
             [](Interp& in, Args a, N) -> Value {
               auto q = dim_from_lisp(in, "dim/", a[0]).divide_exact(dim_from_lisp(in, "dim/", a[1]));
               return q ? dim_to_lisp(in, *q) : eval::nil();
             });
  TL_BUILTIN(in, "dim=", 2, 2, "(dim= A B)",
             "True when dimensions A and B are the same expression."
             "\n  (dim= (dim+ 'n 'n) (dim* 2 'n))  ; => t"
             "\n  (dim= 'n 'm)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(dim_from_lisp(in, "dim=", a[0]) == dim_from_lisp(in, "dim=", a[1]));
             });
  TL_BUILTIN(in, "graph-string", 1, 2, "(graph-string X [DEPTH])",
             "The primitive graph of tensor X as text."
             "\n  (graph-string (prim:add (prim:iota '(3) 0 'i32) (prim:const 1 'i32 '(3))))"
             "  ; => \"(add (iota (0) i32 (3)) (const 1 i32 (3)))\""
             "\n  (graph-string (prim:neg (prim:neg (prim:iota '(3) 0 'i32))) 1)  ; => \"(neg (neg ...))\"",
             [](Interp& in, Args a, N n) -> Value {
               int depth = n == 2 ? static_cast<int>(eval::arg_int(in, "graph-string", a, 1)) : 12;
               return in.make_string(node_str(tensor_arg(in, "graph-string", a, 0)->node.get(), depth));
             });
  TL_BUILTIN(in, "same-node-p", 2, 2, "(same-node-p A B)",
             "True when tensors A and B are the same graph node (hash-consing)."
             "\n  (let ((x (tensor '(1.0 2.0)))) (same-node-p (prim:neg x) (prim:neg x)))  ; => t"
             "\n  (same-node-p (tensor '(1 2)) (tensor '(1 2)))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(tensor_arg(in, "same-node-p", a, 0)->node == tensor_arg(in, "same-node-p", a, 1)->node);
             });
  TL_BUILTIN(in, "view-string", 1, 1, "(view-string X)",
             "How tensor X indexes its data: its composed view stack."
             "\n  (view-string (transpose (zeros '(2 3))))  ; => \"view(3 2) strides (1 3) offset 0\""
             "\n  (view-string (slice (zeros '(4 4)) '(1 3)))  ; => \"view(2 4) strides (4 1) offset 4\"",
             [](Interp& in, Args a, N) -> Value {
               const Node* base = nullptr;
               ViewStack vs = view_of(tensor_arg(in, "view-string", a, 0)->node.get(), &base);
               return in.make_string(vs.str());
             });
  TL_BUILTIN(in, "tensor-stats", 0, 0, "(tensor-stats)",
             "A plist: :live-nodes (graph nodes alive), :realized-bytes (realized so far), :device, and "
             "the process's tensor memory: :bytes-in-use, :peak-bytes (since reset-peak-memory) and "
             ":pooled-bytes (freed, kept for reuse)."
             "\n  (integerp (getf (tensor-stats) :bytes-in-use))  ; => t",
             [](Interp& in, Args, N) -> Value {
               TensorRuntime& rt = runtime(in);
               host_memory::PoolStats m = host_memory::stats();
               auto num = [](std::size_t v) { return Value::integer(static_cast<std::int64_t>(v)); };
               return in.list({Value::object(in.keyword("live-nodes")), num(rt.graph.live_nodes()),
                                Value::object(in.keyword("realized-bytes")), num(rt.realized_bytes),
                                Value::object(in.keyword("device")), in.make_string(rt.device),
                                Value::object(in.keyword("bytes-in-use")), num(m.in_use_bytes),
                                Value::object(in.keyword("peak-bytes")), num(m.peak_bytes),
                                Value::object(in.keyword("pooled-bytes")), num(m.cached_bytes)});
             });
  TL_BUILTIN(in, "reset-peak-memory", 0, 0, "(reset-peak-memory)",
             "Starts measuring :peak-bytes of (tensor-stats) again from the memory in use now."
             "\n  (progn (reset-peak-memory) (= (getf (tensor-stats) :peak-bytes) (getf (tensor-stats) "
             ":bytes-in-use)))"
             "  ; => t",
             [](Interp&, Args, N) -> Value {
               host_memory::reset_peak();
               return eval::nil();
             });

  // +inf+ and +nan+ are constants; inf and nan are plain globals (free to rebind).
  for (auto [name, v] : {std::pair{"+inf+", INFINITY}, std::pair{"+nan+", NAN}}) {
    in.set_global(in.intern(name), Value::real(v));
    in.intern(name)->sym_flags |= eval::kSymConstant;
  }
  in.set_global(in.intern("inf"), Value::real(INFINITY));
  in.set_global(in.intern("nan"), Value::real(NAN));

  // Numeric builtins hand tensors to the stdlib's methods; their docs say what that does.
  static const char* const kDispatch[][3] = {
      {"+", "%tensor+", "elementwise, with NumPy broadcasting between tensors and numbers."},
      {"-", "%tensor-", "elementwise, with NumPy broadcasting between tensors and numbers. (- X) negates."},
      {"*", "%tensor*", "elementwise, with NumPy broadcasting between tensors and numbers."},
      {"/", "%tensor/", "elementwise, with NumPy broadcasting between tensors and numbers. Integer tensors divide as floats (true division)."},
      {"<", "%tensor<", "elementwise, giving a bool tensor."},
      {">", "%tensor>", "elementwise, giving a bool tensor."},
      {"<=", "%tensor<=", "elementwise, giving a bool tensor."},
      {">=", "%tensor>=", "elementwise, giving a bool tensor."},
      {"=", "%tensor=", "elementwise, giving a bool tensor (use tensor-equal for one answer)."},
      {"/=", "%tensor/=", "elementwise, giving a bool tensor."},
      {"1+", "%tensor-1+", "elementwise."},
      {"1-", "%tensor-1-", "elementwise."},
      {"mod", "%tensor-mod", "elementwise; the result has the sign of the divisor."},
      {"rem", "%tensor-rem", "elementwise; the result has the sign of the dividend."},
      {"floor", "%tensor-floor", "elementwise, keeping the dtype; with DIVISOR, floor division."},
      {"ceiling", "%tensor-ceiling", "elementwise, keeping the dtype."},
      {"round", "%tensor-round", "elementwise, halves to even, keeping the dtype."},
      {"truncate", "%tensor-truncate", "elementwise, keeping the dtype."},
      {"abs", "%tensor-abs", "elementwise."},
      {"min", "%tensor-min", "(min X &key axis keepdim) reduces over AXIS (all axes by default); with several arguments, elementwise minimum."},
      {"max", "%tensor-max", "(max X &key axis keepdim) reduces over AXIS (all axes by default); with several arguments, elementwise maximum."},
      {"expt", "%tensor-expt", "elementwise (see pow)."},
      {"sqrt", "%tensor-sqrt", "elementwise; NaN for negative elements."},
      {"exp", "%tensor-exp", "elementwise."},
      {"log", "%tensor-log", "elementwise; -inf at 0, NaN below 0."},
      {"sin", "%tensor-sin", "elementwise."},
      {"cos", "%tensor-cos", "elementwise."},
      {"tan", "%tensor-tan", "elementwise."},
      {"asin", "%tensor-asin", "elementwise."},
      {"acos", "%tensor-acos", "elementwise."},
      {"atan", "%tensor-atan", "elementwise; (atan Y X) is atan2."},
      {"sinh", "%tensor-sinh", "elementwise."},
      {"cosh", "%tensor-cosh", "elementwise."},
      {"tanh", "%tensor-tanh", "elementwise."},
      {"float", "%tensor-float", "casts to f32."},
      {"aref", "%tensor-aref", "(aref X I J ...) the element at one index per axis, a number."},
  };
  for (const auto& [name, handler, note] : kDispatch) dispatch_tensors(in, name, handler, note);
}

}  // namespace tl::tensor
