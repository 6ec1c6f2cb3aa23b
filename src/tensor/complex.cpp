// SPDX-License-Identifier: Apache-2.0
// Complex arithmetic over real parts (see complex.h).
#include "tensor/complex.h"

namespace tl::tensor::complex_parts {

Shape parts_shape(const Shape& s) {
  Shape out = s;
  out.push_back(Dim(2));
  return out;
}

namespace {
// x (shape S) as S + (1).
NodeRef with_unit_axis(Graph& g, const NodeRef& x) {
  Shape s = x->shape;
  s.push_back(Dim(1));
  return g.make_reshape(x, s);
}

// Pads S + (1) to S + (2), x landing at index k of the new last axis.
NodeRef placed(Graph& g, const NodeRef& x, int k) {
  std::vector<Range> pads(x->shape.size(), Range(Dim(0), Dim(0)));
  pads.back() = Range(Dim(k), Dim(1 - k));
  return g.make_pad(x, pads);
}
}  // namespace

NodeRef from_real(Graph& g, const NodeRef& x) { return placed(g, with_unit_axis(g, x), 0); }

NodeRef from_parts(Graph& g, const NodeRef& re, const NodeRef& im) {
  return g.make_binary(Op::Add, placed(g, with_unit_axis(g, re), 0), placed(g, with_unit_axis(g, im), 1));
}

NodeRef part(Graph& g, const NodeRef& z, int k) {
  std::vector<Range> ranges;
  for (const Dim& d : z->shape) ranges.emplace_back(Dim(0), d);
  ranges.back() = Range(Dim(k), Dim(k + 1));
  Shape s = z->shape;
  s.pop_back();
  return g.make_reshape(g.make_shrink(z, ranges), s);
}

NodeRef mul(Graph& g, const NodeRef& a, const NodeRef& b) {
  // (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)
  const NodeRef ar = part(g, a, 0), ai = part(g, a, 1), br = part(g, b, 0), bi = part(g, b, 1);
  const NodeRef re =
      g.make_binary(Op::Add, g.make_binary(Op::Mul, ar, br), g.make_unary(Op::Neg, g.make_binary(Op::Mul, ai, bi)));
  const NodeRef im = g.make_binary(Op::Add, g.make_binary(Op::Mul, ar, bi), g.make_binary(Op::Mul, ai, br));
  return from_parts(g, re, im);
}

NodeRef equal(Graph& g, const NodeRef& a, const NodeRef& b) {
  return g.make_binary(Op::And, g.make_binary(Op::Cmpeq, part(g, a, 0), part(g, b, 0)),
                       g.make_binary(Op::Cmpeq, part(g, a, 1), part(g, b, 1)));
}

}  // namespace tl::tensor::complex_parts
