// SPDX-License-Identifier: Apache-2.0
// The public C++ embedding API of TensorLisp.
//
//   #include <tensorlisp/tensorlisp.hpp>
//
//   tl::Interpreter lisp;
//   lisp.eval("(defun square (x) (* x x))");
//   tl::Value r = lisp.call("square", {tl::Value(7)});      // r.as_int() == 49
//   lisp.define("host-add", [](tl::Interpreter&, std::span<const tl::Value> args) {
//     return tl::Value(args[0].as_double() + args[1].as_double());
//   });
//   try { lisp.eval("(car 5)"); } catch (const tl::Error& e) { std::cerr << e.what(); }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensorlisp/error.hpp"

namespace tl {

namespace detail {
struct RootCell;
}
namespace eval {
class Interp;
}

class Interpreter;

// Where TensorLisp's messages go (debug output from TENSORLISP_DEBUG or jit-debug, warnings):
// the library never prints, it hands each whole message (ending in a newline) to this sink.
// One for the process; an empty function (the default) writes to standard error. Returns the
// sink it replaces.
using LogSink = std::function<void(std::string_view)>;
LogSink set_log_sink(LogSink sink);

// A Lisp value held by the host. It keeps the object alive (a GC root) for as long as the
// handle exists. Values made without an interpreter (from C++ numbers and strings) become Lisp
// objects when passed into one. A handle outliving its interpreter reads as nil.
class Value {
 public:
  Value();                       // nil
  Value(std::int64_t i);         // integer
  Value(int i);                  // integer
  Value(double d);               // float
  Value(bool b);                 // t or nil
  Value(std::string s);          // string
  Value(const char* s);          // string
  static Value list(std::vector<Value> items);   // a proper list
  static Value symbol(std::string name);         // a symbol, interned when it enters an interpreter
  static Value keyword(std::string name);        // :name

  bool is_nil() const;
  bool is_int() const;
  bool is_float() const;
  bool is_number() const;
  bool is_string() const;
  bool is_symbol() const;
  bool is_list() const;          // nil or a cons
  bool is_function() const;
  bool truthy() const { return !is_nil(); }

  // Conversions; each throws tl::Error (type-error) when the value has another type.
  std::int64_t as_int() const;
  double as_double() const;      // integers convert
  std::string as_string() const; // strings and symbols (symbol name)
  std::vector<Value> as_list() const;

  // The printed representation, as `prin1` would print it.
  std::string repr() const;
  // The type name as `type-of` gives it ("integer", "cons", ...).
  std::string type_name() const;

  ~Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;

 private:
  friend class Interpreter;
  friend class Tensor;
  friend class eval::Interp;
  struct Detached;                        // a host-made value not yet in an interpreter
  std::shared_ptr<detail::RootCell> cell_;
  std::shared_ptr<Detached> detached_;
};

// A function callable from Lisp: receives its interpreter and arguments, returns a value, and
// may throw tl::Error (or any std::exception, reported as an error naming the function).
using NativeFunction = std::function<Value(Interpreter&, std::span<const Value>)>;

// Where program output (print, format t, ...) goes. The default writes to stdout.
using OutputSink = std::function<void(std::string_view)>;

// One TensorLisp interpreter: its own heap, globals, modules and settings. Several may live in
// one process; none shares state with another. Not thread-safe: use one from one thread at a
// time.
class Interpreter {
 public:
  struct Options {
    bool load_prelude = true;              // load lisp/*.lisp (defun, cond, loop, ...)
    std::vector<std::string> search_path;  // extra directories for `require`, searched first
    std::vector<std::string> argv;         // the value of *argv*
  };
  Interpreter();
  explicit Interpreter(Options options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Reads and evaluates every form in `source`, returning the last value. `file_name` and
  // `first_line` (the number of the source's first line) are used in error locations.
  // Throws tl::Error.
  Value eval(std::string_view source, std::string_view file_name = "<eval>", int first_line = 1);
  // As eval, calling `each` with the value of every form in turn, as it is computed (a REPL
  // prints them all). An error stops at its form; the values before it were handed over.
  Value eval_each(std::string_view source, std::string_view file_name, int first_line,
                  const std::function<void(const Value&)>& each);
  // Loads a file (like Lisp `load`), returning the last value. Throws tl::Error.
  Value load(const std::string& path);
  // Calls the global function `name` with `args`. Throws tl::Error.
  Value call(std::string_view name, std::vector<Value> args = {});
  // Calls a function value. Throws tl::Error.
  Value apply(const Value& function, std::vector<Value> args);
  // The global value of `name`; throws tl::Error (unbound-variable) if it has none.
  Value global(std::string_view name);
  // Sets the global value of `name`.
  void set_global(std::string_view name, const Value& value);
  // Defines a global function `name` implemented in C++. `usage` and `doc` appear in
  // (describe 'name). Arity is checked by the function itself.
  void define(std::string_view name, NativeFunction fn, std::string_view doc = "");
  // Makes a value from host data inside this interpreter (e.g. to compare with `eq`).
  Value intern(const Value& v);

  // Redirects program output. Errors are never printed by the library; they are thrown.
  void set_output(OutputSink sink);
  // Asks a running evaluation to stop with an `interrupt` error at its next safe point. Safe
  // to call from a signal handler or another thread.
  void interrupt();
  // The version string, e.g. "0.1.0".
  static const char* version();

  // Incremental reading for REPLs: returns Complete when `text` holds at least one whole
  // form, NeedsMore when a form is open at the end, or throws tl::Error (read) on bad input.
  enum class ReadStatus { Complete, NeedsMore };
  // `first_line` numbers the text's lines as in eval.
  ReadStatus check_complete(std::string_view text, int first_line = 1);

  eval::Interp& internal() { return *impl_; }

 private:
  std::unique_ptr<eval::Interp> impl_;
  friend class Value;
};

}  // namespace tl

#include "tensorlisp/tensor.hpp"  // tl::Tensor
