// SPDX-License-Identifier: Apache-2.0
// Embedding TensorLisp in a C++ program: evaluate code, call Lisp from C++, call C++ from
// Lisp, and catch errors.
#include <iostream>

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

  try {
    lisp.eval("(square \"seven\")", "embed.lisp");
  } catch (const tl::Error& e) {
    std::cout << "caught " << e.type() << " at line " << e.location().line << ": " << e.message() << "\n";
  }
  return 0;
}
