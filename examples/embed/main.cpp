// SPDX-License-Identifier: Apache-2.0
// Embedding TensorLisp in a C++ program: evaluate code, call Lisp from C++, call C++ from
// Lisp, pass tensors both ways, and catch errors.
#include <iostream>
#include <vector>

#include <tensorlisp/tensorlisp.hpp>

int main() {
  tl::Interpreter lisp;

  // A C++ function callable from Lisp.
  lisp.define("host-scale", [](tl::Interpreter&, std::span<const tl::Value> args) {
    if (args.size() != 2) throw std::invalid_argument("expected 2 arguments");
    return tl::Value(args[0].as_double() * args[1].as_double());
  }, "(host-scale X FACTOR) multiplies in C++.");

  lisp.eval(R"(
    (defun square (x) "X times X." (* x x))
    (defun scaled-squares (xs factor)
      (mapcar (lambda (x) (host-scale (square x) factor)) xs))
  )", "embed.lisp");

  tl::Value r = lisp.call("square", {tl::Value(12)});
  std::cout << "(square 12) = " << r.as_int() << "\n";

  tl::Value xs = tl::Value::list({1, 2, 3});
  tl::Value scaled = lisp.call("scaled-squares", {xs, tl::Value(0.5)});
  std::cout << "(scaled-squares '(1 2 3) 0.5) = " << scaled.repr() << "\n";

  // Tensors: host arrays in, results out. A Lisp function over tensors is called like any other.
  lisp.eval("(defun layer (x w) (relu (matmul x w)))", "embed.lisp");
  tl::Tensor x(lisp, std::vector<float>{1, -2, 3, 4}, {2, 2});
  tl::Tensor w(lisp, std::vector<float>{1, 1, 0, -1}, {2, 2});
  tl::Tensor y(lisp.call("layer", {x, w}));
  std::cout << "(layer x w) has shape " << y.shape_string() << ":";
  for (float v : y.to_vector<float>()) std::cout << " " << v;
  std::cout << "\n";

  try {
    lisp.eval("(square \"seven\")", "embed.lisp");
  } catch (const tl::Error& e) {
    std::cout << "caught " << e.type() << " at line " << e.location().line << ": " << e.message() << "\n";
  }
  return 0;
}
