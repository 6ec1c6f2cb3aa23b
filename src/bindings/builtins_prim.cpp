// SPDX-License-Identifier: Apache-2.0
// The primitive ops as Lisp functions, prim:NAME, one per line of ops.def (the elementwise
// ones made from it). They are strict: operands must already agree in shape and dtype
// (composites in stdlib/ broadcast and promote). Each records the calling form's span on the
// node it builds.
#include <string>

#include "bindings/tensor_value.h"
#include "eval/builtins.h"
#include "tensor/assign_view.h"

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

// The unary and binary ops share one native each, told apart by name.
template <Op kOp>
Value unary(Interp& in, Args a, N) {
  const std::string fn = std::string("prim:") + op_name(kOp);
  return make_tensor(in, graph_at_call(in).make_unary(kOp, arg_tensor(in, fn.c_str(), a, 0)));
}

template <Op kOp>
Value binary(Interp& in, Args a, N) {
  const std::string fn = std::string("prim:") + op_name(kOp);
  const NodeRef& x = arg_tensor(in, fn.c_str(), a, 0);
  const NodeRef& y = arg_tensor(in, fn.c_str(), a, 1);
  return make_tensor(in, graph_at_call(in).make_binary(kOp, x, y));
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
               if (a[0].is_int()) return make_tensor(in, g.make_const_int(a[0].i, t, shape));
               if (a[0].is_float()) return make_tensor(in, g.make_const_float(a[0].f, t, shape));
               if (a[0].is_nil() || a[0].same(in.t()))
                 return make_tensor(in, g.make_const_int(a[0].is_nil() ? 0 : 1, t, shape));
               in.type_error("prim:const", 1, "a number or boolean", a[0]);
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
               return make_tensor(in, graph_at_call(in).make_iota(shape, static_cast<int>(axis), t));
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
               const NodeRef& x = arg_tensor(in, "prim:cast", a, 0);
               return make_tensor(in, graph_at_call(in).make_cast(x, dtype_from_lisp(in, "prim:cast", a[1])));
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
               const NodeRef& x = arg_tensor(in, "prim:where", a, 1);
               const NodeRef& y = arg_tensor(in, "prim:where", a, 2);
               return make_tensor(in, graph_at_call(in).make_where(c, x, y));
             });
  TL_BUILTIN(in, "prim:reduce", 3, 3, "(prim:reduce KIND X AXES)",
             "Primitive reduce: :sum, :max or :prod of X over AXES, which keep size 1."
             "\n  (to-list (prim:reduce :sum (tensor '((1 2) (3 4))) '(1)))  ; => ((3) (7))"
             "\n  (to-list (prim:reduce :max (tensor '((1 2) (3 4))) '(0)))  ; => ((3 4))"
             "\n  (to-list (prim:reduce :prod (tensor '((1 2) (3 4))) '(0 1)))  ; => ((24))",
             [](Interp& in, Args a, N) -> Value {
               ReduceKind k = reduce_kind_from_lisp(in, a[0]);
               const NodeRef& x = arg_tensor(in, "prim:reduce", a, 1);
               return make_tensor(in, graph_at_call(in).make_reduce(k, x, ints_from_lisp(in, "prim:reduce", a[2])));
             });
  TL_BUILTIN(in, "prim:reshape", 2, 2, "(prim:reshape X SHAPE)",
             "Primitive reshape (a view): same elements, new shape."
             "\n  (to-list (prim:reshape (tensor '(1 2 3 4 5 6)) '(2 3)))  ; => ((1 2 3) (4 5 6))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:reshape", a, 0);
               return make_tensor(in, graph_at_call(in).make_reshape(x, shape_from_lisp(in, "prim:reshape", a[1])));
             });
  TL_BUILTIN(in, "prim:permute", 2, 2, "(prim:permute X ORDER)",
             "Primitive permute (a view): axis i is X's axis ORDER[i]."
             "\n  (to-list (prim:permute (tensor '((1 2 3) (4 5 6))) '(1 0)))  ; => ((1 4) (2 5) (3 6))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:permute", a, 0);
               return make_tensor(in, graph_at_call(in).make_permute(x, ints_from_lisp(in, "prim:permute", a[1])));
             });
  TL_BUILTIN(in, "prim:expand", 2, 2, "(prim:expand X SHAPE)",
             "Primitive expand (a view): size-1 axes repeat."
             "\n  (to-list (prim:expand (tensor '((1) (2))) '(2 3)))  ; => ((1 1 1) (2 2 2))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:expand", a, 0);
               return make_tensor(in, graph_at_call(in).make_expand(x, shape_from_lisp(in, "prim:expand", a[1])));
             });
  TL_BUILTIN(in, "prim:pad", 2, 2, "(prim:pad X PAIRS)",
             "Primitive pad (a view): (before after) zeros per axis."
             "\n  (to-list (prim:pad (tensor '(1 2)) '((1 2))))  ; => (0 1 2 0 0)"
             "\n  (to-list (prim:pad (tensor '((1 2))) '((1 0) (0 1))))  ; => ((0 0 0) (1 2 0))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:pad", a, 0);
               return make_tensor(in, graph_at_call(in).make_pad(x, ranges_from_lisp(in, "prim:pad", a[1])));
             });
  TL_BUILTIN(in, "prim:shrink", 2, 2, "(prim:shrink X RANGES)",
             "Primitive shrink (a view): [begin end) per axis."
             "\n  (to-list (prim:shrink (tensor '((1 2 3) (4 5 6))) '((0 2) (1 3))))  ; => ((2 3) (5 6))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:shrink", a, 0);
               return make_tensor(in, graph_at_call(in).make_shrink(x, ranges_from_lisp(in, "prim:shrink", a[1])));
             });
  TL_BUILTIN(in, "prim:flip", 2, 2, "(prim:flip X AXES)",
             "Primitive flip (a view): reverses the listed axes."
             "\n  (to-list (prim:flip (tensor '((1 2 3) (4 5 6))) '(1)))  ; => ((3 2 1) (6 5 4))"
             "\n  (to-list (prim:flip (tensor '((1 2 3) (4 5 6))) '(0 1)))  ; => ((6 5 4) (3 2 1))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:flip", a, 0);
               std::vector<std::int64_t> mask(x->shape.size(), 0);
               for (auto ax : ints_from_lisp(in, "prim:flip", a[1])) {
                 if (ax < 0) ax += static_cast<std::int64_t>(mask.size());
                 if (ax < 0 || ax >= static_cast<std::int64_t>(mask.size())) {
                   in.error("index-error", "prim:flip: axis out of range for shape " + shape_str(x->shape));
                 }
                 mask[ax] = 1;
               }
               return make_tensor(in, graph_at_call(in).make_flip(x, mask));
             });
  TL_BUILTIN(in, "prim:gather", 3, 3, "(prim:gather X INDEX AXIS)",
             "Primitive gather (an indexed load): element i is X's element at i with AXIS replaced by INDEX's "
             "element i. INDEX is an integer tensor of X's shape but along AXIS, and gives the result's shape; an "
             "index outside [0, size) reads 0."
             "\n  (to-list (prim:gather (tensor '((10 20 30) (40 50 60))) (tensor '((2 0) (1 5))) 1))"
             "  ; => ((30 10) (50 0))",
             [](Interp& in, Args a, N) -> Value {
               const NodeRef& x = arg_tensor(in, "prim:gather", a, 0);
               const NodeRef& index = arg_tensor(in, "prim:gather", a, 1);
               auto axis = eval::arg_int(in, "prim:gather", a, 2);
               if (axis < 0) axis += static_cast<std::int64_t>(x->shape.size());
               return make_tensor(in, graph_at_call(in).make_gather(x, index, axis));
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
               const NodeRef& x = arg_tensor(in, "prim:scatter-add", a, 0);
               const NodeRef& index = arg_tensor(in, "prim:scatter-add", a, 1);
               const NodeRef& values = arg_tensor(in, "prim:scatter-add", a, 2);
               auto axis = eval::arg_int(in, "prim:scatter-add", a, 3);
               if (axis < 0) axis += static_cast<std::int64_t>(x->shape.size());
               return make_tensor(in, graph_at_call(in).make_scatter_add(x, index, values, axis));
             });
  TL_BUILTIN(in, "prim:copy", 1, 1, "(prim:copy X)",
             "Primitive copy: a contiguous copy of X."
             "\n  (to-list (prim:copy (prim:permute (tensor '((1 2) (3 4))) '(1 0))))  ; => ((1 3) (2 4))"
             "\n  (view-string (prim:copy (prim:permute (tensor '((1 2) (3 4))) '(1 0))))"
             "  ; => \"view(2 2) strides (2 1) offset 0\"",
             [](Interp& in, Args a, N) -> Value {
               return make_tensor(in, graph_at_call(in).make_copy(arg_tensor(in, "prim:copy", a, 0)));
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
               if (!is_tensor(a[0])) in.type_error("prim:assign", 1, "a tensor", a[0]);
               if (is_view(as_tensor(a[0])->node.get())) {
                 const NodeRef& value = arg_tensor(in, "prim:assign", a, 1);
                 return make_tensor(in, assign_through_view(graph_at_call(in), as_tensor(a[0])->node, value));
               }
               realize(in, as_tensor(a[0]));
               const NodeRef& value = arg_tensor(in, "prim:assign", a, 1);
               return make_tensor(in, graph_at_call(in).make_assign(as_tensor(a[0])->node, value));
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
                 srcs.push_back(as_tensor(x)->node);
               }
               DType t = dtype_from_lisp(in, "prim:extern", a[2]);
               return make_tensor(in, graph_at_call(in).make_extern(name, std::move(srcs), t,
                                                                    shape_from_lisp(in, "prim:extern", a[3])));
             });
}

}  // namespace tl::tensor
