// SPDX-License-Identifier: Apache-2.0
// Complex arithmetic over the graph's real nodes. A complex tensor of shape S is computed as
// its parts: a real node of shape S + (2) holding (real, imaginary) along the last axis, which
// is NumPy's complex64/complex128 storage (tensor_value.h keeps which Lisp values are complex).
// These build the real nodes of the complex operations the primitives need; everything else
// (exp, log, division, abs, FFTs) is written in Lisp over them.
#pragma once

#include "tensor/graph.h"

namespace tl::tensor::complex_parts {

// S + (2): the parts' shape of a complex shape S.
Shape parts_shape(const Shape& s);
// The complex value x + 0i of real node x (shape S), as parts.
NodeRef from_real(Graph& g, const NodeRef& x);
// Parts from the real and imaginary nodes re and im (one shape S, one float dtype).
NodeRef from_parts(Graph& g, const NodeRef& re, const NodeRef& im);
// Part k (0: real, 1: imaginary) of parts z, a real node of z's shape without its last axis.
NodeRef part(Graph& g, const NodeRef& z, int k);
// The product of complex a and b (parts of one shape and dtype).
NodeRef mul(Graph& g, const NodeRef& a, const NodeRef& b);
// Where complex a equals complex b: both parts equal (a bool node of the complex shape).
NodeRef equal(Graph& g, const NodeRef& a, const NodeRef& b);

}  // namespace tl::tensor::complex_parts
