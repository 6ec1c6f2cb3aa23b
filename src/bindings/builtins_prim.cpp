// SPDX-License-Identifier: Apache-2.0
// The primitive ops as Lisp functions, prim:NAME, one per line of ops.def (the elementwise
// ones made from it). They are strict: operands must already agree in shape and dtype
// (composites in stdlib/ broadcast and promote). Each records the calling form's span on the
// node it builds.
//
// Complex tensors: the views, add, neg, mul, cmpeq, where, reduce :sum, cast, const, iota,
// gather, scatter-add, copy and assign take them, building the real nodes of their parts
// (tensor/complex.h); the others refuse them (the composites compute exp, log, division ...
// of complex values from the parts).
#include <string>

#include "bindings/tensor_value.h"
#include "eval/builtins.h"
#include "tensor/assign_view.h"
#include "tensor/complex.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

ReduceKind reduce_kind_from_lisp(Interp& in, Value v) {
  std::string name = eval::is_symbol(v) ? eval::as_symbol(v)->name : "";
  if (name == "sum") return ReduceKind::Sum;
  if (name == "max") return ReduceKind::Max;
  if (name == "prod") return ReduceKind::Prod;
  in.error("type-error", "prim:reduce: kind must be :sum, :max or :prod, got " + in.repr(v));
}

std::vector<Range> ranges_from_lisp(Interp& in, const char* fn, Value v) {
  std::vector<Range> out;
  if (!eval::is_list(v)) in.error("type-error", std::string(fn) + ": expected a list of (begin end) pairs, got " + in.repr(v));
  for (Value r = v; eval::is_cons(r); r = eval::cdr(r)) {
    Value pair = eval::car(r);
    if (!eval::is_cons(pair) || !eval::is_cons(eval::cdr(pair))) {
      in.error("type-error", std::string(fn) + ": expected a list of (begin end) pairs, got " + in.repr(v));
    }
    out.emplace_back(dim_from_lisp(in, fn, eval::car(pair)), dim_from_lisp(in, fn, eval::car(eval::cdr(pair))));
  }
  return out;
}

namespace cx = complex_parts;

// The unary and binary ops share one native each, told apart by name.
template <Op kOp>
Value unary(Interp& in, Args a, N) {
  const std::string fn = std::string("prim:") + op_name(kOp);
  if (kOp == Op::Neg) {
    TensorObj* x = tensor_arg_any(in, fn.c_str(), a, 0);
    return make_tensor_like(in, graph_at_call(in).make_unary(kOp, x->node), x->complex);
  }
  return make_tensor(in, graph_at_call(in).make_unary(kOp, arg_tensor(in, fn.c_str(), a, 0)));
}

template <Op kOp>
Value binary(Interp& in, Args a, N) {
  const std::string fn = std::string("prim:") + op_name(kOp);
  TensorObj* x = tensor_arg_any(in, fn.c_str(), a, 0);
  TensorObj* y = tensor_arg_any(in, fn.c_str(), a, 1);
  Graph& g = graph_at_call(in);
  if (x->complex || y->complex) {
    if (kOp != Op::Add && kOp != Op::Mul && kOp != Op::Cmpeq) {
      refuse_complex(in, fn, value_dtype(x->complex ? x : y));
    }
    if (x->complex != y->complex) {
      in.error("dtype-error", fn + ": operands must agree in dtype, got " + std::string(dtype_name(value_dtype(x))) +
                                  " and " + std::string(dtype_name(value_dtype(y))) + " (add, mul ... convert them)");
    }
    if (x->node->shape != y->node->shape) {
      in.error("shape-error",
               fn + ": shapes " + shape_str(value_shape(x)) + " and " + shape_str(value_shape(y)) + " differ");
    }
    if (x->node->dtype != y->node->dtype) {
      in.error("dtype-error", fn + ": dtypes " + std::string(dtype_name(value_dtype(x))) + " and " +
                                  std::string(dtype_name(value_dtype(y))) + " differ");
    }
    if (kOp == Op::Add) return make_complex_tensor(in, g.make_binary(Op::Add, x->node, y->node));
    if (kOp == Op::Mul) return make_complex_tensor(in, cx::mul(g, x->node, y->node));
    return make_tensor(in, cx::equal(g, x->node, y->node));
  }
  return make_tensor(in, g.make_binary(kOp, x->node, y->node));
}

// The index of a gather from (or scatter into) complex X along AXIS, for X's parts: each
// index reads both parts of its element.
NodeRef parts_index(Interp& in, const char* fn, Graph& g, const NodeRef& index, const TensorObj* x, std::int64_t axis) {
  const auto rank = static_cast<std::int64_t>(value_shape(x).size());
  if (axis < 0 || axis >= rank) {
    in.error("index-error", std::string(fn) + ": axis " + std::to_string(axis) + " out of range for shape " +
                                shape_str(value_shape(x)));
  }
  Shape unit = index->shape;
  unit.push_back(Dim(1));
  return g.make_expand(g.make_reshape(index, unit), complex_parts::parts_shape(index->shape));
}

}  // namespace

void register_prim_builtins(Interp& in) {
  TL_BUILTIN(in, "prim:const", 3, 3, "(prim:const VALUE DTYPE SHAPE)",
             "Primitive const: a tensor of SHAPE whose every element is VALUE converted to DTYPE."
             "\n  (to-list (prim:const 1.5 'f32 '(2 2)))  ; => ((1.5 1.5) (1.5 1.5))"
             "\n  (to-list (prim:const 300 'u8 '(2)))  ; => (44 44)",
             [](Interp& in, Args a, N) -> Value {
               DType t = dtype_from_lisp(in, "prim:const", a[1]);
               Shape shape = shape_from_lisp(in, "prim:const", a[2]);
               Graph& g = graph_at_call(in);
               const bool complex = is_complex(t);
               if (complex) t = complex_part(t);  // VALUE + 0i
               NodeRef c;
               if (a[0].is_int()) c = g.make_const_int(a[0].i, t, shape);
               else if (a[0].is_float()) c = g.make_const_float(a[0].f, t, shape);
               else if (a[0].is_nil() || a[0].same(in.t())) c = g.make_const_int(a[0].is_nil() ? 0 : 1, t, shape);
               else in.type_error("prim:const", 1, "a number or boolean", a[0]);
               return complex ? make_complex_tensor(in, cx::from_real(g, c)) : make_tensor(in, c);
             });
  TL_BUILTIN(in, "prim:iota", 3, 3, "(prim:iota SHAPE AXIS DTYPE)",
             "Primitive iota: a tensor of SHAPE whose elements are their index along AXIS."
             "\n  (to-list (prim:iota '(2 3) 1 'i32))  ; => ((0 1 2) (0 1 2))"
             "\n  (to-list (prim:iota '(2 3) 0 'f32))  ; => ((0.0 0.0 0.0) (1.0 1.0 1.0))",
             [](Interp& in, Args a, N) -> Value {
               Shape shape = shape_from_lisp(in, "prim:iota", a[0]);
               auto axis = eval::arg_int(in, "prim:iota", a, 1);
               if (axis < 0) axis += static_cast<std::int64_t>(shape.size());
               DType t = dtype_from_lisp(in, "prim:iota", a[2]);
               Graph& g = graph_at_call(in);
               if (is_complex(t)) {
                 return make_complex_tensor(in, cx::from_real(g, g.make_iota(shape, static_cast<int>(axis),
                                                                             complex_part(t))));
               }
               return make_tensor(in, g.make_iota(shape, static_cast<int>(axis), t));
             });
  // The unary and binary ops of ops.def that take only tensors (all but cast and bitcast),
  // documented by their ops.def entry (its semantics and examples).
#define TL_PRIM_Source(e, name, doc)
#define TL_PRIM_Unary(e, name, doc)                                                                    \
  if (Op::e != Op::Cast && Op::e != Op::Bitcast) {                                                     \
    TL_BUILTIN(in, "prim:" name, 1, 1, "(prim:" name " X)", "Primitive " name ": " doc, unary<Op::e>); \
  }
#define TL_PRIM_Binary(e, name, doc) \
  TL_BUILTIN(in, "prim:" name, 2, 2, "(prim:" name " A B)", "Primitive " name ": " doc, binary<Op::e>);
#define TL_PRIM_Ternary(e, name, doc)
#define OP(e, name, arity, group, work, dtypes, doc) TL_IF_ELEMENTWISE_##group(TL_PRIM_##group(e, name, doc))
#include "tensor/ops.def"
#undef OP
#undef TL_PRIM_Source
#undef TL_PRIM_Unary
#undef TL_PRIM_Binary
#undef TL_PRIM_Ternary
  TL_BUILTIN(in, "prim:cast", 2, 2, "(prim:cast X DTYPE)",
             "Primitive cast: X's values converted to DTYPE."
             "\n  (to-list (prim:cast (tensor '(1.7 -1.7 300.0)) 'i32))  ; => (1 -1 300)"
             "\n  (to-list (prim:cast (tensor '(300 -1)) 'u8))  ; => (44 255)"
             "\n  (to-list (prim:cast (tensor '(0 2)) 'bool))  ; => (nil t)",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:cast", a, 0);
               const DType t = dtype_from_lisp(in, "prim:cast", a[1]);
               Graph& g = graph_at_call(in);
               if (x->complex && !is_complex(t)) {
                 in.error("dtype-error", "prim:cast: casting " + std::string(dtype_name(value_dtype(x))) + " to " +
                                             std::string(dtype_name(t)) +
                                             " would drop the imaginary part; take (real z), (imag z) or (abs z)");
               }
               if (x->complex) return make_complex_tensor(in, g.make_cast(x->node, complex_part(t)));
               if (is_complex(t))
                 return make_complex_tensor(in, cx::from_real(g, g.make_cast(x->node, complex_part(t))));
               return make_tensor(in, g.make_cast(x->node, t));
             });
  TL_BUILTIN(in, "prim:bitcast", 2, 2, "(prim:bitcast X DTYPE)",
             "Primitive bitcast: X's bits read as DTYPE (same size)."
             "\n  (to-list (prim:bitcast (tensor '(1.0 -2.0)) 'i32))  ; => (1065353216 -1073741824)"
             "\n  (to-list (prim:bitcast (tensor '(-1)) 'u32))  ; => (4294967295)",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:bitcast", a, 0);
               return make_tensor(in, graph_at_call(in).make_cast(x, dtype_from_lisp(in, "prim:bitcast", a[1]), true));
             });
  TL_BUILTIN(in, "prim:where", 3, 3, "(prim:where COND A B)",
             "Primitive where: A where COND (bool) is true, else B."
             "\n  (to-list (prim:where (tensor '(t nil t)) (tensor '(1 2 3)) (tensor '(10 20 30))))  ; => (1 20 3)",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& c = arg_tensor(in, "prim:where", a, 0);
               TensorObj* x = tensor_arg_any(in, "prim:where", a, 1);
               TensorObj* y = tensor_arg_any(in, "prim:where", a, 2);
               Graph& g = graph_at_call(in);
               if (x->complex != y->complex) {
                 in.error("dtype-error", "prim:where: A and B must agree in dtype, got " +
                                             std::string(dtype_name(value_dtype(x))) + " and " +
                                             std::string(dtype_name(value_dtype(y))));
               }
               if (!x->complex) return make_tensor(in, g.make_where(c, x->node, y->node));
               // The condition, one per complex element, chooses both parts.
               Shape unit = c->shape;
               unit.push_back(Dim(1));
               NodeRef both = g.make_expand(g.make_reshape(c, unit), cx::parts_shape(c->shape));
               return make_complex_tensor(in, g.make_where(both, x->node, y->node));
             });
  TL_BUILTIN(in, "prim:reduce", 3, 3, "(prim:reduce KIND X AXES)",
             "Primitive reduce: :sum, :max or :prod of X over AXES, which keep size 1."
             "\n  (to-list (prim:reduce :sum (tensor '((1 2) (3 4))) '(1)))  ; => ((3) (7))"
             "\n  (to-list (prim:reduce :max (tensor '((1 2) (3 4))) '(0)))  ; => ((3 4))"
             "\n  (to-list (prim:reduce :prod (tensor '((1 2) (3 4))) '(0 1)))  ; => ((24))",
             [](Interp& in, Args a, N) -> Value {
               ReduceKind k = reduce_kind_from_lisp(in, a[0]);
               TensorObj* x = tensor_arg_any(in, "prim:reduce", a, 1);
               auto axes = ints_from_lisp(in, "prim:reduce", a[2]);
               if (x->complex) {
                 if (k != ReduceKind::Sum) {
                   refuse_complex(in, k == ReduceKind::Max ? "prim:reduce :max" : "prim:reduce :prod", value_dtype(x));
                 }
                 const auto rank = static_cast<std::int64_t>(x->node->shape.size()) - 1;
                 for (auto& ax : axes) {
                   if (ax < 0) ax += rank;
                   if (ax < 0 || ax >= rank) {
                     in.error("index-error", "prim:reduce: axis " + std::to_string(ax) + " out of range for shape " +
                                                 shape_str(value_shape(x)));
                   }
                 }
               }
               return make_tensor_like(in, graph_at_call(in).make_reduce(k, x->node, axes), x->complex);
             });
  TL_BUILTIN(in, "prim:reshape", 2, 2, "(prim:reshape X SHAPE)",
             "Primitive reshape (a view): same elements, new shape."
             "\n  (to-list (prim:reshape (tensor '(1 2 3 4 5 6)) '(2 3)))  ; => ((1 2 3) (4 5 6))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:reshape", a, 0);
               Shape s = shape_from_lisp(in, "prim:reshape", a[1]);
               if (x->complex) s = cx::parts_shape(s);
               return make_tensor_like(in, graph_at_call(in).make_reshape(x->node, s), x->complex);
             });
  TL_BUILTIN(in, "prim:permute", 2, 2, "(prim:permute X ORDER)",
             "Primitive permute (a view): axis i is X's axis ORDER[i]."
             "\n  (to-list (prim:permute (tensor '((1 2 3) (4 5 6))) '(1 0)))  ; => ((1 4) (2 5) (3 6))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:permute", a, 0);
               auto order = ints_from_lisp(in, "prim:permute", a[1]);
               if (x->complex) {
                 const auto rank = static_cast<std::int64_t>(x->node->shape.size()) - 1;
                 for (auto ax : order) {
                   if (ax < 0 || ax >= rank) {
                     in.error("index-error", "prim:permute: order " + in.repr(a[1]) +
                                                 " is not a permutation of the axes of " + shape_str(value_shape(x)));
                   }
                 }
                 order.push_back(rank);
               }
               return make_tensor_like(in, graph_at_call(in).make_permute(x->node, order), x->complex);
             });
  TL_BUILTIN(in, "prim:expand", 2, 2, "(prim:expand X SHAPE)",
             "Primitive expand (a view): size-1 axes repeat."
             "\n  (to-list (prim:expand (tensor '((1) (2))) '(2 3)))  ; => ((1 1 1) (2 2 2))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:expand", a, 0);
               Shape s = shape_from_lisp(in, "prim:expand", a[1]);
               if (x->complex) s = cx::parts_shape(s);
               return make_tensor_like(in, graph_at_call(in).make_expand(x->node, s), x->complex);
             });
  TL_BUILTIN(in, "prim:pad", 2, 2, "(prim:pad X PAIRS)",
             "Primitive pad (a view): (before after) zeros per axis."
             "\n  (to-list (prim:pad (tensor '(1 2)) '((1 2))))  ; => (0 1 2 0 0)"
             "\n  (to-list (prim:pad (tensor '((1 2))) '((1 0) (0 1))))  ; => ((0 0 0) (1 2 0))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:pad", a, 0);
               auto pads = ranges_from_lisp(in, "prim:pad", a[1]);
               if (x->complex) pads.emplace_back(Dim(0), Dim(0));
               return make_tensor_like(in, graph_at_call(in).make_pad(x->node, pads), x->complex);
             });
  TL_BUILTIN(in, "prim:shrink", 2, 2, "(prim:shrink X RANGES)",
             "Primitive shrink (a view): [begin end) per axis."
             "\n  (to-list (prim:shrink (tensor '((1 2 3) (4 5 6))) '((0 2) (1 3))))  ; => ((2 3) (5 6))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:shrink", a, 0);
               auto ranges = ranges_from_lisp(in, "prim:shrink", a[1]);
               if (x->complex) ranges.emplace_back(Dim(0), Dim(2));  // both parts
               return make_tensor_like(in, graph_at_call(in).make_shrink(x->node, ranges), x->complex);
             });
  TL_BUILTIN(in, "prim:flip", 2, 2, "(prim:flip X AXES)",
             "Primitive flip (a view): reverses the listed axes."
             "\n  (to-list (prim:flip (tensor '((1 2 3) (4 5 6))) '(1)))  ; => ((3 2 1) (6 5 4))"
             "\n  (to-list (prim:flip (tensor '((1 2 3) (4 5 6))) '(0 1)))  ; => ((6 5 4) (3 2 1))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:flip", a, 0);
               const Shape shape = value_shape(x);
               std::vector<std::int64_t> mask(shape.size(), 0);
               for (auto ax : ints_from_lisp(in, "prim:flip", a[1])) {
                 if (ax < 0) ax += static_cast<std::int64_t>(mask.size());
                 if (ax < 0 || ax >= static_cast<std::int64_t>(mask.size())) {
                   in.error("index-error", "prim:flip: axis out of range for shape " + shape_str(shape));
                 }
                 mask[ax] = 1;
               }
               if (x->complex) mask.push_back(0);
               return make_tensor_like(in, graph_at_call(in).make_flip(x->node, mask), x->complex);
             });
  TL_BUILTIN(in, "prim:gather", 3, 3, "(prim:gather X INDEX AXIS)",
             "Primitive gather (an indexed load): element i is X's element at i with AXIS replaced by INDEX's "
             "element i. INDEX is an integer tensor of X's shape but along AXIS, and gives the result's shape; an "
             "index outside [0, size) reads 0."
             "\n  (to-list (prim:gather (tensor '((10 20 30) (40 50 60))) (tensor '((2 0) (1 5))) 1))"
             "  ; => ((30 10) (50 0))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:gather", a, 0);
               NodeRef index = arg_tensor(in, "prim:gather", a, 1);
               auto axis = eval::arg_int(in, "prim:gather", a, 2);
               if (axis < 0) axis += static_cast<std::int64_t>(value_shape(x).size());
               Graph& g = graph_at_call(in);
               if (x->complex) index = parts_index(in, "prim:gather", g, index, x, axis);
               return make_tensor_like(in, g.make_gather(x->node, index, axis), x->complex);
             });
  TL_BUILTIN(in, "prim:scatter-add", 4, 4, "(prim:scatter-add X INDEX VALUES AXIS)",
             "Primitive scatter-add: X with VALUES' elements added where INDEX points along AXIS (element i of "
             "VALUES goes to X's element at i with AXIS replaced by INDEX's element i). INDEX and VALUES have one "
             "shape, X's but along AXIS; an index outside [0, size) adds nothing."
             "\n  (to-list (prim:scatter-add (tensor '(0 0 0 0)) (tensor '(1 3 1)) (tensor '(5 6 7)) 0))"
             "  ; => (0 12 0 6)"
             "\n  (to-list (prim:scatter-add (tensor '((0 0 0) (0 0 0))) (tensor '((2 2) (0 9)))"
             "\n                             (tensor '((1 2) (3 4))) 1))  ; => ((0 0 3) (3 0 0))",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:scatter-add", a, 0);
               NodeRef index = arg_tensor(in, "prim:scatter-add", a, 1);
               TensorObj* values = tensor_arg_any(in, "prim:scatter-add", a, 2);
               auto axis = eval::arg_int(in, "prim:scatter-add", a, 3);
               if (axis < 0) axis += static_cast<std::int64_t>(value_shape(x).size());
               if (x->complex != values->complex) {
                 in.error("dtype-error", "prim:scatter-add: X and VALUES must agree in dtype, got " +
                                             std::string(dtype_name(value_dtype(x))) + " and " +
                                             std::string(dtype_name(value_dtype(values))));
               }
               Graph& g = graph_at_call(in);
               if (x->complex) index = parts_index(in, "prim:scatter-add", g, index, x, axis);
               return make_tensor_like(in, g.make_scatter_add(x->node, index, values->node, axis), x->complex);
             });
  TL_BUILTIN(in, "prim:copy", 1, 1, "(prim:copy X)",
             "Primitive copy: a contiguous copy of X."
             "\n  (to-list (prim:copy (prim:permute (tensor '((1 2) (3 4))) '(1 0))))  ; => ((1 3) (2 4))"
             "\n  (view-string (prim:copy (prim:permute (tensor '((1 2) (3 4))) '(1 0))))"
             "  ; => \"view(2 2) strides (2 1) offset 0\"",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* x = tensor_arg_any(in, "prim:copy", a, 0);
               return make_tensor_like(in, graph_at_call(in).make_copy(x->node), x->complex);
             });
  TL_BUILTIN(in, "prim:assign", 2, 2, "(prim:assign TARGET VALUE)",
             "Primitive assign: writes VALUE into TARGET's buffer when realized (TARGET is realized first). "
             "A TARGET that is a view (slice, shrink, permute, reshape, flip, a strided slice) of a realized "
             "tensor is written through to that tensor; the result is then the assign of the whole tensor."
             "\n  (let ((x (tensor '(1 2 3)))) (realize (prim:assign x (tensor '(7 8 9)))) (to-list x))  ; => (7 8 9)"
             "\n  (let ((x (tensor '(1 2 3 4))))"
             "\n    (realize (prim:assign (prim:shrink x '((1 3))) (tensor '(0 0))))"
             "\n    (to-list x))  ; => (1 0 0 4)",
             [](Interp& in, Args a, N) -> Value {
               TensorObj* target = tensor_arg_any(in, "prim:assign", a, 0);
               TensorObj* value = tensor_arg_any(in, "prim:assign", a, 1);
               if (target->complex != value->complex) {
                 in.error("dtype-error", "prim:assign: a " + std::string(dtype_name(value_dtype(value))) +
                                             " value cannot be written into a " +
                                             std::string(dtype_name(value_dtype(target))) + " tensor");
               }
               if (is_view(target->node.get())) {
                 return make_tensor_like(in, assign_through_view(graph_at_call(in), target->node, value->node),
                                         target->complex);
               }
               realize(in, target);
               return make_tensor_like(in, graph_at_call(in).make_assign(target->node, value->node), target->complex);
             });
  TL_BUILTIN(in, "prim:extern", 4, 4, "(prim:extern NAME SOURCES DTYPE SHAPE)",
             "Primitive extern: a call of the external kernel NAME on SOURCES giving DTYPE and SHAPE."
             "\n  (let ((y (prim:extern \"sgemm\" (list (tensor '(((1.0) (2.0)))) (tensor '(((3.0) (4.0))))) 'f32 '(1 "
             "1 1))))"
             "\n    (list (node-op y) (node-arg y 0) (shape y)))  ; => (extern \"sgemm\" (1 1 1))",
             [](Interp& in, Args a, N) -> Value {
               std::string name = eval::arg_string(in, "prim:extern", a, 0)->text;
               std::vector<NodeRef> srcs;
               for (Value r = a[1]; eval::is_cons(r); r = eval::cdr(r)) {
                 Value x = eval::car(r);
                 if (!is_tensor(x)) in.type_error("prim:extern", 2, "a list of tensors", a[1]);
                 if (as_tensor(x)->complex) refuse_complex(in, "prim:extern", value_dtype(as_tensor(x)));
                 srcs.push_back(as_tensor(x)->node);
               }
               DType t = dtype_from_lisp(in, "prim:extern", a[2]);
               if (is_complex(t)) refuse_complex(in, "prim:extern", t);
               return make_tensor(in, graph_at_call(in).make_extern(name, std::move(srcs), t,
                                                                    shape_from_lisp(in, "prim:extern", a[3])));
             });
}

}  // namespace tl::tensor
