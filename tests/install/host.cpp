// SPDX-License-Identifier: Apache-2.0
// A minimal host program built against the installed library.
#include <iostream>

#include <tensorlisp/tensorlisp.hpp>

int main() {
  tl::Interpreter lisp;
  tl::Value v = lisp.eval("(loop for i from 1 to 10 sum i)");
  std::cout << "installed tensorlisp says " << v.as_int() << "\n";
  return v.as_int() == 55 ? 0 : 1;
}
