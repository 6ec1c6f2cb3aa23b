// SPDX-License-Identifier: Apache-2.0
// Unit tests for the embedding API: tl::Interpreter, tl::Value conversions, native functions.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tensorlisp/tensorlisp.hpp"

namespace {

// A temporary directory removed at the end of the test.
struct TempDir {
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("tl-unit-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::filesystem::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path path;
  static inline int counter = 0;
};

// Runs `fn`, which must throw a tl::Error, and returns it.
template <class F>
tl::Error error_of(F&& fn) {
  try {
    fn();
  } catch (const tl::Error& e) {
    return e;
  }
  FAIL("expected a tl::Error");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("api: eval returns the value of the last form", "[api]") {
  tl::Interpreter lisp;
  CHECK(lisp.eval("(+ 1 2)").as_int() == 3);
  CHECK(lisp.eval("1 2 (* 3 4)").as_int() == 12);
  CHECK(lisp.eval("").is_nil());
  CHECK(lisp.eval("   ; only a comment\n").is_nil());
  // State persists between calls.
  lisp.eval("(defun square (x) (* x x))");
  lisp.eval("(defvar *counter* 0)");
  lisp.eval("(setq *counter* (+ *counter* 1))");
  CHECK(lisp.eval("(list (square 7) *counter*)").repr() == "(49 1)");
}

TEST_CASE("api: eval reports errors with the given file name, line and column", "[api]") {
  tl::Interpreter lisp;
  tl::Error e = error_of([&] { lisp.eval("(list 1)\n\n  (car 5)", "script.lisp"); });
  CHECK(e.kind() == tl::ErrorKind::User);
  CHECK(e.phase() == "eval");
  CHECK(e.type() == "type-error");
  CHECK(e.message() == "car: argument 1 must be a list, got 5 (integer)");
  CHECK(e.location().file == "script.lisp");
  CHECK(e.location().line == 3);
  CHECK(e.location().column == 3);
  CHECK(e.location().length == 7);
  CHECK(e.source_line() == "  (car 5)");
  std::string what = e.what();
  CHECK_THAT(what, Catch::StartsWith("script.lisp:3:3: eval error: car: argument 1 must be a "
                                     "list, got 5 (integer)"));
  CHECK_THAT(what, Catch::Contains("  (car 5)"));
  CHECK_THAT(what, Catch::Contains("^^^^^^^"));
  // The default file name.
  tl::Error d = error_of([&] { lisp.eval("(car 5)"); });
  CHECK(d.location().file == "<eval>");
}

TEST_CASE("api: eval numbers lines from first_line", "[api]") {
  tl::Interpreter lisp;
  tl::Error e = error_of([&] { lisp.eval("(list 1)\n  (car 5)", "<repl>", 10); });
  CHECK(e.location().file == "<repl>");
  CHECK(e.location().line == 11);
  CHECK(e.location().column == 3);
  CHECK(e.source_line() == "  (car 5)");
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("<repl>:11:3: eval error:"));
  // Functions defined there report their definition lines the same way.
  lisp.eval("\n(defun later-line (x)\n  (car x))", "<repl>", 20);
  tl::Error inner = error_of([&] { lisp.eval("(later-line 1)"); });
  CHECK(inner.location().line == 22);
  CHECK(inner.source_line() == "  (car x))");
  // Read errors too.
  tl::Error read = error_of([&] { lisp.eval("\n\n)", "<repl>", 5); });
  CHECK(read.type() == "read-error");
  CHECK(read.location().line == 7);
  tl::Error check = error_of([&] { lisp.check_complete("\n)", 30); });
  CHECK(check.location().line == 31);
}

TEST_CASE("api: errors carry a backtrace of user functions", "[api]") {
  tl::Interpreter lisp;
  lisp.eval("(defun inner (x) (car x))\n"
            "(defun middle (x) (list (inner x)))\n"
            "(defun outer (x) (list (middle x)))",
            "bt.lisp");
  tl::Error e = error_of([&] { lisp.eval("(outer 5)", "call.lisp"); });
  CHECK(e.location().file == "bt.lisp");
  CHECK(e.location().line == 1);
  CHECK(e.location().column == 18);
  const auto& bt = e.backtrace();
  REQUIRE(bt.size() == 3);
  CHECK(bt[0] == "in inner called at bt.lisp:2:25");
  CHECK(bt[1] == "in middle called at bt.lisp:3:24");
  CHECK(bt[2] == "in outer called at call.lisp:1:1");
  CHECK_THAT(std::string(e.what()), Catch::Contains("in middle called at bt.lisp:3:24"));
}

TEST_CASE("api: load evaluates a file and locates errors in it", "[api]") {
  TempDir dir;
  tl::Interpreter lisp;
  std::string ok = dir.write("ok.lisp",
                             "; a library\n"
                             "(defun from-file (x) (* x 3))\n"
                             "(defvar *loaded* :yes)\n"
                             "(from-file 5)\n");
  CHECK(lisp.load(ok).as_int() == 15);
  CHECK(lisp.eval("(list *loaded* (from-file 2))").repr() == "(:yes 6)");
  // Lisp's own load gives the same.
  CHECK(lisp.eval("(load \"" + ok + "\")").as_int() == 15);

  std::string bad = dir.write("bad.lisp", "(defun fine () 1)\n\n  (car 7)\n");
  tl::Error e = error_of([&] { lisp.load(bad); });
  CHECK(e.type() == "type-error");
  CHECK(e.location().file == bad);
  CHECK(e.location().line == 3);
  CHECK(e.location().column == 3);
  CHECK(lisp.eval("(fine)").as_int() == 1);  // forms before the error took effect

  tl::Error missing = error_of([&] { lisp.load((dir.path / "missing.lisp").string()); });
  CHECK(missing.type() == "file-error");
  CHECK_THAT(missing.message(), Catch::Contains("missing.lisp"));
  CHECK(lisp.eval("(handler-case (load \"/nonexistent/x.lisp\") (file-error () :caught))").repr() ==
        ":caught");
}

TEST_CASE("api: call and apply", "[api]") {
  tl::Interpreter lisp;
  lisp.eval("(defun add3 (a b &optional (c 100)) (+ a b c))");
  CHECK(lisp.call("add3", {1, 2}).as_int() == 103);
  CHECK(lisp.call("add3", {1, 2, 3}).as_int() == 6);
  CHECK(lisp.call("list").is_nil());
  CHECK(lisp.call("+", {1, 2.5}).as_double() == 3.5);
  CHECK(lisp.call("string-upcase", {"abc"}).as_string() == "ABC");

  tl::Value fn = lisp.eval("(lambda (a b) (- a b))");
  CHECK(fn.is_function());
  CHECK(lisp.apply(fn, {10, 3}).as_int() == 7);
  CHECK(lisp.apply(lisp.eval("#'*"), {6, 7}).as_int() == 42);
  tl::Value closure = lisp.eval("(let ((total 0)) (lambda (x) (setq total (+ total x))))");
  lisp.apply(closure, {5});
  CHECK(lisp.apply(closure, {6}).as_int() == 11);

  tl::Error undefined = error_of([&] { lisp.call("no-such-function"); });
  CHECK(undefined.type() == "undefined-function");
  CHECK_THAT(undefined.message(), Catch::Contains("no-such-function"));
  tl::Error arity = error_of([&] { lisp.call("add3", {1}); });
  CHECK(arity.type() == "arity-error");
  CHECK(arity.message() == "add3: expected 2 to 3 arguments, got 1");
  tl::Error arity2 = error_of([&] { lisp.apply(fn, {1}); });
  CHECK(arity2.type() == "arity-error");
  tl::Error not_fn = error_of([&] { lisp.apply(tl::Value(5), {}); });
  CHECK(not_fn.type() == "type-error");
  CHECK_THAT(not_fn.message(), Catch::Contains("not a function"));
  lisp.set_global("*not-a-function*", 5);
  CHECK(error_of([&] { lisp.call("*not-a-function*"); }).type() == "type-error");
  tl::Error inside = error_of([&] { lisp.call("car", {5}); });
  CHECK(inside.type() == "type-error");
  CHECK(inside.message() == "car: argument 1 must be a list, got 5 (integer)");
  // The interpreter is still fine afterwards.
  CHECK(lisp.call("add3", {1, 1, 1}).as_int() == 3);
}

TEST_CASE("api: global and set_global", "[api]") {
  tl::Interpreter lisp;
  lisp.set_global("*config*", tl::Value::list({tl::Value::keyword("lr"), 0.5}));
  CHECK(lisp.global("*config*").repr() == "(:lr 0.5)");
  CHECK(lisp.eval("(getf *config* :lr)").as_double() == 0.5);
  lisp.eval("(defvar *from-lisp* \"hello\")");
  CHECK(lisp.global("*from-lisp*").as_string() == "hello");
  lisp.set_global("*from-lisp*", 42);
  CHECK(lisp.eval("*from-lisp*").as_int() == 42);
  CHECK(lisp.global("car").is_function());

  tl::Error unbound = error_of([&] { lisp.global("*nope*"); });
  CHECK(unbound.type() == "unbound-variable");
  CHECK_THAT(unbound.message(), Catch::Contains("*nope*"));
  tl::Error constant = error_of([&] { lisp.set_global("t", 1); });
  CHECK(constant.type() == "program-error");
  lisp.eval("(defconstant +limit+ 10)");
  CHECK(error_of([&] { lisp.set_global("+limit+", 11); }).type() == "program-error");
  CHECK(lisp.global("+limit+").as_int() == 10);
}

TEST_CASE("api: define makes a C++ function callable from Lisp", "[api]") {
  tl::Interpreter lisp;
  lisp.define(
      "host-add",
      [](tl::Interpreter&, std::span<const tl::Value> args) {
        return tl::Value(args[0].as_double() + args[1].as_double());
      },
      "Adds two numbers in C++.");
  int calls = 0;
  lisp.define("host-count", [&calls](tl::Interpreter&, std::span<const tl::Value> args) {
    ++calls;
    return tl::Value(static_cast<int>(args.size()));
  });
  CHECK(lisp.eval("(host-add 1 2.5)").as_double() == 3.5);
  CHECK(lisp.eval("(host-count)").as_int() == 0);
  CHECK(lisp.eval("(host-count 1 2 3)").as_int() == 3);
  CHECK(lisp.eval("(mapcar #'host-count '(1 2))").repr() == "(1 1)");
  CHECK(lisp.eval("(apply #'host-count 1 '(2 3 4))").as_int() == 4);
  CHECK(calls == 5);
  CHECK(lisp.eval("(functionp #'host-add)").truthy());
  CHECK(lisp.eval("#'host-add").repr() == "#<builtin host-add>");
  CHECK(lisp.eval("(documentation 'host-add)").as_string() == "Adds two numbers in C++.");
  CHECK_THAT(lisp.eval("(describe-string 'host-add)").as_string(),
             Catch::Contains("Adds two numbers in C++."));
  // define refuses constants, as set_global and defun do (regression, issue #2).
  auto nothing = [](tl::Interpreter&, std::span<const tl::Value>) { return tl::Value(); };
  CHECK(error_of([&] { lisp.define("pi", nothing); }).type() == "program-error");
  CHECK(error_of([&] { lisp.define("t", nothing); }).type() == "program-error");
  CHECK(lisp.eval("pi").as_double() > 3.14);
  // Redefining replaces it.
  lisp.define("host-count", [](tl::Interpreter&, std::span<const tl::Value>) {
    return tl::Value("replaced");
  });
  CHECK(lisp.eval("(host-count 1)").as_string() == "replaced");
}

TEST_CASE("api: native functions receive and return every kind of value", "[api]") {
  tl::Interpreter lisp;
  std::vector<std::string> seen;
  lisp.define("inspect", [&seen](tl::Interpreter&, std::span<const tl::Value> args) {
    for (const tl::Value& a : args) seen.push_back(a.type_name() + ":" + a.repr());
    return tl::Value();
  });
  lisp.eval("(inspect 1 2.5 \"s\" 'sym :kw nil t '(1 2) #(1))");
  CHECK(seen == std::vector<std::string>{"integer:1", "float:2.5", "string:\"s\"", "symbol:sym",
                                         "keyword::kw", "null:nil", "symbol:t", "cons:(1 2)",
                                         "vector:#(1)"});
  lisp.define("make-things", [](tl::Interpreter&, std::span<const tl::Value>) {
    return tl::Value::list({tl::Value(1), tl::Value(2.5), tl::Value("s"), tl::Value::symbol("sym"),
                            tl::Value::keyword("kw"), tl::Value(true), tl::Value(false),
                            tl::Value::list({tl::Value(std::int64_t{1} << 40)}), tl::Value()});
  });
  CHECK(lisp.eval("(make-things)").repr() == "(1 2.5 \"s\" sym :kw t nil (1099511627776) nil)");
  CHECK(lisp.eval("(mapcar #'type-of (make-things))").repr() ==
        "(integer float string symbol keyword symbol null cons null)");
  CHECK(lisp.eval("(eq (nth 3 (make-things)) 'sym)").truthy());
  CHECK(lisp.eval("(eq (nth 4 (make-things)) :kw)").truthy());
  // A native may call back into the interpreter.
  lisp.define("twice", [](tl::Interpreter& l, std::span<const tl::Value> args) {
    tl::Value once = l.apply(args[0], {args[1]});
    return l.apply(args[0], {once});
  });
  CHECK(lisp.eval("(twice (lambda (x) (* x 3)) 2)").as_int() == 18);
}

TEST_CASE("api: a native that throws std::runtime_error becomes a Lisp error", "[api]") {
  tl::Interpreter lisp;
  lisp.define("host-fail", [](tl::Interpreter&, std::span<const tl::Value>) -> tl::Value {
    throw std::runtime_error("disk on fire");
  });
  tl::Error e = error_of([&] { lisp.eval("(list 1\n  (host-fail))", "n.lisp"); });
  CHECK(e.type() == "error");
  CHECK(e.message() == "host-fail: disk on fire");
  CHECK(e.location().file == "n.lisp");
  CHECK(e.location().line == 2);
  CHECK(e.location().column == 3);
  CHECK(lisp.eval("(handler-case (host-fail)"
                  "  (error (c) (list (condition-type c) (condition-message c))))")
            .repr() == "(error \"host-fail: disk on fire\")");
  // unwind-protect cleanups run when a native throws.
  CHECK(lisp.eval("(let ((cleaned nil))"
                  "  (handler-case (unwind-protect (host-fail) (setq cleaned t)) (error () nil))"
                  "  cleaned)")
            .truthy());
}

TEST_CASE("api: a native that throws tl::Error can be caught by type in Lisp", "[api]") {
  tl::Interpreter lisp;
  lisp.define("host-check", [](tl::Interpreter&, std::span<const tl::Value> args) -> tl::Value {
    if (args.size() != 1 || !args[0].is_int()) {
      throw tl::Error(tl::ErrorKind::User, "eval", "type-error", "host-check: want an integer");
    }
    return tl::Value(args[0].as_int() * 2);
  });
  CHECK(lisp.eval("(host-check 21)").as_int() == 42);
  CHECK(lisp.eval("(handler-case (host-check \"x\")"
                  "  (type-error (c) (list (condition-type c) (condition-message c))))")
            .repr() == "(type-error \"host-check: want an integer\")");
  // A parent type catches it too; an unrelated type does not.
  CHECK(lisp.eval("(handler-case (host-check \"x\") (error () :parent))").repr() == ":parent");
  tl::Error e = error_of([&] {
    lisp.eval("(handler-case (host-check \"x\") (division-by-zero () :wrong))");
  });
  CHECK(e.type() == "type-error");
  CHECK(e.message() == "host-check: want an integer");
  CHECK(e.location().line == 1);
  CHECK(e.location().column == 15);
  // A Lisp error raised inside a nested eval travels through the native.
  lisp.define("host-eval", [](tl::Interpreter& l, std::span<const tl::Value> args) {
    return l.eval(args[0].as_string());
  });
  CHECK(lisp.eval("(handler-case (host-eval \"(/ 1 0)\") (division-by-zero () :dz))").repr() ==
        ":dz");
  CHECK(lisp.eval("(host-eval \"(+ 40 2)\")").as_int() == 42);
}

TEST_CASE("api: Value conversions from C++", "[api]") {
  tl::Interpreter lisp;
  CHECK(tl::Value().is_nil());
  CHECK(tl::Value().is_list());
  CHECK(tl::Value(7).is_int());
  CHECK(tl::Value(7).as_int() == 7);
  CHECK(tl::Value(std::int64_t{INT64_MIN}).as_int() == INT64_MIN);
  CHECK(tl::Value(7).as_double() == 7.0);
  CHECK(tl::Value(2.5).is_float());
  CHECK(tl::Value(2.5).is_number());
  CHECK(tl::Value(2.5).as_double() == 2.5);
  CHECK(tl::Value(true).truthy());
  CHECK(tl::Value(false).is_nil());
  CHECK(tl::Value("str").is_string());
  CHECK(tl::Value(std::string("str")).as_string() == "str");
  CHECK(tl::Value::symbol("sym").is_symbol());
  CHECK(tl::Value::symbol("sym").as_string() == "sym");
  CHECK(tl::Value::symbol("nil").is_nil());
  CHECK(tl::Value::keyword("kw").is_symbol());
  CHECK(tl::Value::keyword("kw").repr() == ":kw");
  CHECK(tl::Value::list({}).is_nil());
  CHECK(tl::Value::list({1, 2}).is_list());
  CHECK(tl::Value::list({1, 2}).as_list().size() == 2);
  CHECK(tl::Value(1).repr() == "1");
  CHECK(tl::Value("s").repr() == "\"s\"");
  CHECK(tl::Value::list({1, "x", tl::Value::symbol("y")}).repr() == "(1 \"x\" y)");
  CHECK(tl::Value(2.5).repr() == "2.5");
  // Host-made values print as Lisp prints them (regression, issue #2)...
  CHECK(tl::Value(1.0).repr() == "1.0");
  CHECK(tl::Value(0.1).repr() == "0.1");
  CHECK(tl::Value("a\"b").repr() == "\"a\\\"b\"");
  // ...and the same once inside an interpreter:
  CHECK(lisp.intern(tl::Value(1.0)).repr() == "1.0");
  CHECK(lisp.intern(tl::Value(0.1)).repr() == "0.1");
  CHECK(lisp.intern(tl::Value("a\"b")).repr() == "\"a\\\"b\"");
  CHECK(tl::Value(7).type_name() == "integer");
  CHECK(tl::Value(7.5).type_name() == "float");
  CHECK(tl::Value("s").type_name() == "string");
  CHECK(tl::Value::keyword("k").type_name() == "keyword");
  CHECK(tl::Value().type_name() == "null");
  // Host values enter the interpreter as the matching Lisp objects.
  CHECK(lisp.call("type-of", {7}).repr() == "integer");
  CHECK(lisp.call("type-of", {7.0}).repr() == "float");
  CHECK(lisp.call("type-of", {"s"}).repr() == "string");
  CHECK(lisp.call("type-of", {tl::Value::symbol("s")}).repr() == "symbol");
  CHECK(lisp.call("type-of", {tl::Value::keyword("s")}).repr() == "keyword");
  CHECK(lisp.call("type-of", {tl::Value::list({1})}).repr() == "cons");
  CHECK(lisp.call("eq", {tl::Value::keyword("k"), lisp.eval(":k")}).truthy());
  CHECK(lisp.call("eq", {tl::Value::symbol("abc"), lisp.eval("'abc")}).truthy());
  CHECK(lisp.call("eq", {true, lisp.eval("t")}).truthy());
  CHECK(lisp.intern(tl::Value::keyword("k")).repr() == ":k");
  tl::Value nested = tl::Value::list({1, tl::Value::list({"a"})});
  CHECK(lisp.call("equal", {nested, lisp.eval("'(1 (\"a\"))")}).truthy());
}

TEST_CASE("api: Value conversions from Lisp", "[api]") {
  tl::Interpreter lisp;
  tl::Value i = lisp.eval("42");
  CHECK(i.is_int());
  CHECK(i.is_number());
  CHECK(i.as_int() == 42);
  CHECK(i.as_double() == 42.0);
  CHECK_FALSE(i.is_float());
  tl::Value f = lisp.eval("2.5");
  CHECK(f.is_float());
  CHECK(f.as_double() == 2.5);
  tl::Value s = lisp.eval("\"text\"");
  CHECK(s.is_string());
  CHECK(s.as_string() == "text");
  tl::Value sym = lisp.eval("'my-sym");
  CHECK(sym.is_symbol());
  CHECK(sym.as_string() == "my-sym");
  tl::Value kw = lisp.eval(":opt");
  CHECK(kw.is_symbol());
  CHECK(kw.as_string() == "opt");
  CHECK(kw.type_name() == "keyword");
  CHECK(lisp.eval("t").truthy());
  CHECK(lisp.eval("nil").is_nil());
  CHECK(lisp.eval("0").truthy());
  tl::Value l = lisp.eval("(list 1 2.5 \"s\" 'sym :kw (list 3))");
  CHECK(l.is_list());
  std::vector<tl::Value> items = l.as_list();
  REQUIRE(items.size() == 6);
  CHECK(items[0].as_int() == 1);
  CHECK(items[1].as_double() == 2.5);
  CHECK(items[2].as_string() == "s");
  CHECK(items[3].as_string() == "sym");
  CHECK(items[4].repr() == ":kw");
  CHECK(items[5].as_list().at(0).as_int() == 3);
  CHECK(lisp.eval("nil").as_list().empty());
  CHECK(lisp.eval("#'car").is_function());
  CHECK(lisp.eval("(lambda ())").is_function());
  CHECK_FALSE(lisp.eval("'car").is_function());
  CHECK(lisp.eval("(vector 1)").type_name() == "vector");
}

TEST_CASE("api: conversions of the wrong type throw type-error", "[api]") {
  tl::Interpreter lisp;
  tl::Error e = error_of([&] { lisp.eval("\"str\"").as_int(); });
  CHECK(e.type() == "type-error");
  CHECK(e.message() == "expected an integer, got \"str\"");
  CHECK(error_of([&] { lisp.eval("2.5").as_int(); }).type() == "type-error");
  CHECK(error_of([&] { lisp.eval("\"x\"").as_double(); }).type() == "type-error");
  CHECK(error_of([&] { lisp.eval("5").as_string(); }).type() == "type-error");
  CHECK(error_of([&] { lisp.eval("5").as_list(); }).type() == "type-error");
  // A dotted list is not a list of values (regression, issue #2).
  CHECK(error_of([&] { lisp.eval("(cons 1 2)").as_list(); }).type() == "type-error");
  CHECK(error_of([&] { tl::Value("x").as_int(); }).type() == "type-error");
  CHECK(error_of([&] { tl::Value(1).as_string(); }).type() == "type-error");
  CHECK(error_of([&] { tl::Value().as_int(); }).type() == "type-error");
}

TEST_CASE("api: set_output captures program output", "[api]") {
  tl::Interpreter lisp;
  std::string out;
  lisp.set_output([&](std::string_view s) { out += s; });
  lisp.eval("(print \"hi\") (princ \"x\") (format t \"~a-~d~%\" 'sym 42) (prin1 'a) (terpri)");
  CHECK(out == "\"hi\"\nxsym-42\na\n");
  out.clear();
  CHECK(lisp.eval("(format nil \"~a\" 1)").as_string() == "1");
  CHECK(out.empty());  // format nil returns a string and prints nothing
  lisp.eval("(describe 'car)");
  CHECK_THAT(out, Catch::StartsWith("car is a builtin function."));
  // An empty sink discards output (regression, issue #2: it used to throw
  // std::bad_function_call out of eval).
  lisp.set_output(nullptr);
  CHECK(lisp.eval("(print 1)").as_int() == 1);
  // A new sink replaces the old one.
  std::string other;
  out.clear();
  lisp.set_output([&](std::string_view s) { other += s; });
  lisp.eval("(dotimes (i 3) (princ i))");
  CHECK(other == "012");
  CHECK(out.empty());
  // Output made by Lisp code that a native function calls back into goes there too.
  lisp.define("call-it", [](tl::Interpreter& l, std::span<const tl::Value> args) {
    return l.apply(args[0], {});
  });
  lisp.eval("(call-it (lambda () (princ \"inside\")))");
  CHECK(other == "012inside");
}

// Interrupts `lisp` from another thread after a short delay; join the returned thread.
static std::thread interrupt_soon(tl::Interpreter& lisp) {
  return std::thread([&lisp] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lisp.interrupt();
  });
}

TEST_CASE("api: interrupt stops a running evaluation", "[api]") {
  tl::Interpreter lisp;
  std::thread stopper = interrupt_soon(lisp);
  auto start = std::chrono::steady_clock::now();
  tl::Error e = error_of([&] { lisp.eval("(loop)"); });
  stopper.join();
  CHECK(e.type() == "interrupt");
  CHECK_THAT(e.message(), Catch::StartsWith("interrupted"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // The interpreter is usable afterwards and the request is consumed.
  CHECK(lisp.eval("(let ((n 0)) (dotimes (i 1000) (setq n (+ n i))) n)").as_int() == 499500);
  // A tail-recursive infinite loop is interrupted too.
  lisp.eval("(defun spin (n) (spin (+ n 1)))");
  stopper = interrupt_soon(lisp);
  CHECK(error_of([&] { lisp.eval("(spin 0)"); }).type() == "interrupt");
  stopper.join();
  // handler-case does not catch an interrupt as an error...
  stopper = interrupt_soon(lisp);
  CHECK(error_of([&] { lisp.eval("(handler-case (loop) (error () :caught))"); }).type() ==
        "interrupt");
  stopper.join();
  // ...but unwind-protect cleanups still run.
  lisp.eval("(defvar *cleaned* nil)");
  stopper = interrupt_soon(lisp);
  CHECK(error_of([&] { lisp.eval("(unwind-protect (loop) (setq *cleaned* t))"); }).type() ==
        "interrupt");
  stopper.join();
  CHECK(lisp.eval("*cleaned*").truthy());
  CHECK(lisp.eval("(+ 1 2)").as_int() == 3);
  // An interrupt asked for while nothing runs is stale: the next evaluation is not stopped by
  // it (regression: it used to stop a later macro expansion).
  lisp.interrupt();
  CHECK(lisp.eval("(dotimes (i 3) i)").is_nil());
  CHECK(lisp.eval("(let ((n 0)) (dotimes (i 10) (incf n)) n)").as_int() == 10);
}

// Issue 19: Ctrl-C was ignored while a builtin written in C++ walked a long (or circular) list
// or printed one; each such loop now polls the interrupt flag every few thousand steps.
TEST_CASE("api: interrupt reaches loops inside builtins and the printer", "[api]") {
  tl::Interpreter lisp;
  lisp.define("request-interrupt", [](tl::Interpreter& l, std::span<const tl::Value>) {
    l.interrupt();
    return tl::Value();
  });
  lisp.eval("(defparameter *big* (make-list 100000 1))");
  lisp.eval("(defparameter *big2* (make-list 100000 1))");
  for (const char* form : {"(length *big*)", "(member 2 *big*)", "(assoc 2 *big*)",
                           "(position 2 *big*)", "(reverse *big*)", "(append *big* nil)",
                           "(mapcar #'1+ *big*)", "(prin1-to-string *big*)",
                           "(format nil \"~a\" *big*)", "(equal *big* *big2*)"}) {
    INFO(form);
    // No Lisp function runs between the request and the builtin, so only the builtin's own
    // loop can notice it.
    tl::Error e = error_of([&] { lisp.eval(std::string("(progn (request-interrupt) ") + form + ")"); });
    CHECK(e.type() == "interrupt");
  }
  CHECK(lisp.eval("(length *big*)").as_int() == 100000);
}

TEST_CASE("api: check_complete for REPL input", "[api]") {
  tl::Interpreter lisp;
  using RS = tl::Interpreter::ReadStatus;
  CHECK(lisp.check_complete("(+ 1 2)") == RS::Complete);
  CHECK(lisp.check_complete("42") == RS::Complete);
  CHECK(lisp.check_complete("(a) (b)") == RS::Complete);
  CHECK(lisp.check_complete("") == RS::Complete);
  CHECK(lisp.check_complete("; just a comment") == RS::Complete);
  CHECK(lisp.check_complete("(+ 1") == RS::NeedsMore);
  CHECK(lisp.check_complete("(defun f (x)\n  (let ((y x))") == RS::NeedsMore);
  CHECK(lisp.check_complete("\"open string") == RS::NeedsMore);
  CHECK(lisp.check_complete("#| open comment") == RS::NeedsMore);
  CHECK(lisp.check_complete("(a) (b") == RS::NeedsMore);
  CHECK(lisp.check_complete("'") == RS::NeedsMore);
  tl::Error e = error_of([&] { lisp.check_complete("(a))"); });
  CHECK(e.phase() == "read");
  CHECK(e.type() == "read-error");
  CHECK(error_of([&] { lisp.check_complete("12abc"); }).type() == "read-error");
  // check_complete evaluates nothing.
  lisp.check_complete("(defun should-not-exist () 1)");
  CHECK(lisp.eval("(fboundp 'should-not-exist)").is_nil());
}

TEST_CASE("api: version", "[api]") {
  std::string v = tl::Interpreter::version();
  // MAJOR.MINOR.PATCH, all decimal.
  int parts = 0;
  bool digits_ok = true;
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = v.find('.', start);
    std::string part = v.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    digits_ok = digits_ok && !part.empty() &&
                part.find_first_not_of("0123456789") == std::string::npos;
    ++parts;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  CHECK(parts == 3);
  CHECK(digits_ok);
  CHECK(std::string(tl::Interpreter::version()) == v);  // stable
}

TEST_CASE("api: options: no prelude, argv and the module search path", "[api]") {
  TempDir dir;
  dir.write("unit-test-mod.lisp",
            "(defun mod-fn () :from-module)\n(defvar *mod-loads* 0)\n"
            "(setq *mod-loads* (+ *mod-loads* 1))\n");
  tl::Interpreter::Options options;
  options.argv = {"first", "second arg"};
  options.search_path = {dir.path.string()};
  tl::Interpreter lisp(options);
  CHECK(lisp.eval("*argv*").repr() == "(\"first\" \"second arg\")");
  CHECK(lisp.eval("(require 'unit-test-mod)").truthy());
  CHECK(lisp.eval("(mod-fn)").repr() == ":from-module");
  CHECK(lisp.eval("(require 'unit-test-mod)").is_nil());  // loaded once
  CHECK(lisp.eval("*mod-loads*").as_int() == 1);
  tl::Error missing = error_of([&] { lisp.eval("(require 'no-such-module-anywhere)"); });
  CHECK(missing.type() == "file-error");

  tl::Interpreter::Options bare_options;
  bare_options.load_prelude = false;
  tl::Interpreter bare(bare_options);
  CHECK(bare.eval("(car '(1 2))").as_int() == 1);
  CHECK(bare.eval("*argv*").is_nil());
  tl::Error no_defun = error_of([&] { bare.eval("(defun f () 1)"); });
  CHECK(no_defun.type() == "undefined-function");
  CHECK(no_defun.message() == "undefined function defun");
}

TEST_CASE("api: intern makes host values comparable with eq", "[api]") {
  tl::Interpreter lisp;
  tl::Value k = lisp.intern(tl::Value::keyword("key"));
  CHECK(lisp.call("eq", {k, lisp.eval(":key")}).truthy());
  tl::Value s = lisp.intern("text");
  CHECK(s.is_string());
  CHECK(lisp.call("eq", {s, s}).truthy());
  CHECK(lisp.call("eq", {s, lisp.intern("text")}).is_nil());  // strings are fresh objects
  tl::Value l = lisp.intern(tl::Value::list({1, 2}));
  lisp.set_global("*l*", l);
  CHECK(lisp.eval("(eq *l* *l*)").truthy());
  CHECK(lisp.call("eq", {l, lisp.global("*l*")}).truthy());
}

TEST_CASE("api: the exit builtin surfaces as an error of type exit", "[api]") {
  tl::Interpreter lisp;
  tl::Error e = error_of([&] { lisp.eval("(exit 3)"); });
  CHECK(e.type() == "exit");
  CHECK(e.message() == "3");
  CHECK(lisp.eval("(+ 1 1)").as_int() == 2);
}

TEST_CASE("api: the library's messages go to the host's log sink", "[api]") {
  std::string captured;
  tl::LogSink old = tl::set_log_sink([&](std::string_view s) { captured += s; });
  {
    tl::Interpreter lisp;
    lisp.eval("(jit-debug 1)");
    lisp.eval("(realize (add (tensor '(1 2 3)) 1))");
    lisp.eval("(jit-debug 0)");
  }
  tl::set_log_sink(std::move(old));
  CHECK(captured.find("tensorlisp: plan: 1 kernels, 1 buffers") != std::string::npos);
  CHECK(captured.find("kernels ran in") != std::string::npos);
  CHECK(captured.back() == '\n');
}

TEST_CASE("api: the GPU toolchain's settings come from the environment", "[api]") {
  // The runtime reads no environment variable: the API layer reads TENSORLISP_LD_LLD (and
  // CUDA_HOME, CUDA_PATH, PATH) when it makes a JIT device, and hands them down. Seen here
  // through a fake ld.lld that every kernel cross-compiled for AMDGPU is linked with.
  TempDir dir;
  const std::string ld = dir.write("fake-ld", "#!/bin/sh\necho fake ld.lld ran >&2\nexit 1\n");
  std::filesystem::permissions(ld, std::filesystem::perms::owner_all);
  const std::string cross = (dir.path / "cross").string();
  const std::vector<std::pair<const char*, std::string>> vars = {{"TENSORLISP_LD_LLD", ld},
                                                                 {"TENSORLISP_CROSS_TARGETS", "amdgcn:gfx90a"},
                                                                 {"TENSORLISP_CROSS_DIR", cross},
                                                                 {"TENSORLISP_CACHE", "0"},
                                                                 {"TENSORLISP_DEVICE", "cpu"}};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved;
  for (const auto& [name, value] : vars) {
    const char* old = std::getenv(name);
    saved.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name, value.c_str(), 1);
  }
  {
    tl::Interpreter lisp;
    lisp.eval("(realize (add (tensor '(1.5 2.5 3.5)) 1.25))");
  }
  for (const auto& [name, old] : saved) {
    if (old) ::setenv(name, old->c_str(), 1);
    else ::unsetenv(name);
  }
  std::string errors;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path / "cross" / "amdgcn")) {
    std::ifstream in(entry.path());
    errors += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  CHECK(errors.find("ld.lld failed to link the code object: fake ld.lld ran") != std::string::npos);
}
