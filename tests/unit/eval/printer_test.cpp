// SPDX-License-Identifier: Apache-2.0
// Unit tests for the printer: prin1 (readable) and princ representations of every value kind.
#include <catch2/catch.hpp>

#include <string>

#include "eval/interp.h"
#include "tensorlisp/tensorlisp.hpp"

namespace {

// The readable representation of the value of `source`.
std::string repr(tl::Interpreter& lisp, const std::string& source) {
  return lisp.eval(source).repr();
}

// The princ representation, as (format nil "~a" ...) shows it.
std::string princ(tl::Interpreter& lisp, const std::string& source) {
  return lisp.eval("(format nil \"~a\" " + source + ")").as_string();
}

}  // namespace

TEST_CASE("printer: integers", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "0") == "0");
  CHECK(repr(lisp, "42") == "42");
  CHECK(repr(lisp, "-17") == "-17");
  CHECK(repr(lisp, "most-positive-fixnum") == "9223372036854775807");
  CHECK(repr(lisp, "most-negative-fixnum") == "-9223372036854775808");
  CHECK(princ(lisp, "-5") == "-5");
}

TEST_CASE("printer: floats print shortest round-trip digits and always look like floats",
          "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "1.0") == "1.0");
  CHECK(repr(lisp, "0.1") == "0.1");
  CHECK(repr(lisp, "-1.5") == "-1.5");
  CHECK(repr(lisp, "100.0") == "100.0");
  CHECK(repr(lisp, "0.0") == "0.0");
  CHECK(repr(lisp, "-0.0") == "-0.0");
  CHECK(repr(lisp, "(+ 0.1 0.2)") == "0.30000000000000004");
  CHECK(repr(lisp, "(/ 1.0 3)") == "0.3333333333333333");
  CHECK(repr(lisp, "123456.789") == "123456.789");
  CHECK(repr(lisp, "1e100") == "1e+100");
  CHECK(repr(lisp, "1e21") == "1e+21");
  CHECK(repr(lisp, "1e-7") == "1e-07");
  CHECK(repr(lisp, "5e-324") == "5e-324");
  CHECK(repr(lisp, "(float 3)") == "3.0");
  CHECK(repr(lisp, "(sqrt 16)") == "4.0");
  CHECK(repr(lisp, "(exp 1000)") == "inf");
  CHECK(repr(lisp, "(- (exp 1000))") == "-inf");
  CHECK(repr(lisp, "(- (exp 1000) (exp 1000))") == "nan");
  // A printed float reads back as the same float.
  for (const char* src : {"0.1", "1e100", "1e-7", "(/ 2.0 3)", "123456789012.0", "-2.5e-10"}) {
    INFO(src);
    CHECK(lisp.eval(std::string("(= ") + src + " (read-from-string (prin1-to-string " + src +
                    ")))")
              .truthy());
  }
  // princ and prin1 agree on numbers.
  CHECK(princ(lisp, "1.0") == "1.0");
  CHECK(princ(lisp, "1e100") == "1e+100");
}

TEST_CASE("printer: strings readably and with princ", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "\"plain\"") == "\"plain\"");
  CHECK(repr(lisp, R"("a\"b")") == R"("a\"b")");
  CHECK(repr(lisp, R"("back\\slash")") == R"("back\\slash")");
  CHECK(repr(lisp, R"("l1\nl2\tt\rr")") == R"("l1\nl2\tt\rr")");
  CHECK(repr(lisp, "\"\"") == "\"\"");
  // princ shows the characters themselves.
  CHECK(princ(lisp, R"("a\"b")") == "a\"b");
  CHECK(princ(lisp, R"("l1\nl2")") == "l1\nl2");
  CHECK(princ(lisp, R"("back\\slash")") == "back\\slash");
  // prin1-to-string and ~s are the readable form; the readable form reads back equal.
  CHECK(lisp.eval(R"((prin1-to-string "q\"x"))").as_string() == R"("q\"x")");
  CHECK(lisp.eval(R"((format nil "~s" "q"))").as_string() == "\"q\"");
  CHECK(lisp.eval(R"((let ((s "a\"b\\c\nd")) (equal s (read-from-string (prin1-to-string s)))))")
            .truthy());
}

TEST_CASE("printer: symbols, keywords and nil", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "'foo") == "foo");
  CHECK(repr(lisp, "'FooBar") == "FooBar");
  CHECK(repr(lisp, "'*special*") == "*special*");
  CHECK(repr(lisp, ":key") == ":key");
  CHECK(repr(lisp, "(make-keyword \"made\")") == ":made");
  CHECK(repr(lisp, "nil") == "nil");
  CHECK(repr(lisp, "'()") == "nil");
  CHECK(repr(lisp, "t") == "t");
  CHECK(princ(lisp, "'foo") == "foo");
  CHECK(princ(lisp, ":key") == ":key");
  CHECK(princ(lisp, "nil") == "nil");
  // An uninterned symbol prints with #: under prin1, as in Common Lisp; princ shows the name.
  CHECK(repr(lisp, "(gensym \"tmp\")").rfind("#:tmp", 0) == 0);
  CHECK(princ(lisp, "(gensym \"tmp\")").rfind("tmp", 0) == 0);
  CHECK(repr(lisp, "(make-symbol \"x\")") == "#:x");
  CHECK(repr(lisp, "'#:y") == "#:y");
  CHECK(repr(lisp, "(eq '#:z '#:z)") == "nil");
}

TEST_CASE("printer: lists, nesting and dotted pairs", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "'(1 2 3)") == "(1 2 3)");
  CHECK(repr(lisp, "(list 1 \"s\" :k 'sym 2.5)") == "(1 \"s\" :k sym 2.5)");
  CHECK(repr(lisp, "'((1 2) (3 (4)) ())") == "((1 2) (3 (4)) nil)");
  CHECK(repr(lisp, "(cons 1 2)") == "(1 . 2)");
  CHECK(repr(lisp, "(cons 1 (cons 2 3))") == "(1 2 . 3)");
  CHECK(repr(lisp, "(cons 1 (cons 2 nil))") == "(1 2)");
  CHECK(repr(lisp, "(cons nil nil)") == "(nil)");
  CHECK(repr(lisp, "(cons (cons 1 2) (cons 3 4))") == "((1 . 2) 3 . 4)");
  CHECK(princ(lisp, "(list \"a\" (list \"b\"))") == "(a (b))");
  // Shared structure prints as often as it is reached.
  CHECK(repr(lisp, "(let ((x (list 1))) (list x x))") == "((1) (1))");
  // A long list prints in full (no recursion on the cdr).
  std::string long_list = repr(lisp, "(range 20000)");
  CHECK(long_list.size() == 108891);
  CHECK(long_list.substr(0, 8) == "(0 1 2 3");
  CHECK(long_list.substr(long_list.size() - 7) == " 19999)");
}

TEST_CASE("printer: quote-family shorthand", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "''x") == "'x");
  CHECK(repr(lisp, "'(quote (1 2))") == "'(1 2)");
  CHECK(repr(lisp, "'#'car") == "#'car");
  CHECK(repr(lisp, "'`(a ,b ,@c)") == "`(a ,b ,@c)");
  CHECK(repr(lisp, "(list 'quote 'x)") == "'x");
  // Only a two-element list with a quote head is abbreviated.
  CHECK(repr(lisp, "(list 'quote 'x 'y)") == "(quote x y)");
  CHECK(repr(lisp, "(list 'quote)") == "(quote)");
  CHECK(repr(lisp, "(cons 'quote 'x)") == "(quote . x)");
  CHECK(repr(lisp, "'(a 'b)") == "(a 'b)");
}

TEST_CASE("printer: vectors", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "(vector)") == "#()");
  CHECK(repr(lisp, "(vector 1 \"s\" 'x)") == "#(1 \"s\" x)");
  CHECK(repr(lisp, "(vector (vector 1) (list 2))") == "#(#(1) (2))");
  CHECK(repr(lisp, "(make-vector 3 0)") == "#(0 0 0)");
  CHECK(princ(lisp, "(vector \"s\")") == "#(s)");
}

TEST_CASE("printer: hash tables, functions, macros and conditions", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "(make-hash-table)") == "#<hash-table :test equal :count 0>");
  CHECK(repr(lisp, "(let ((h (make-hash-table :test 'eq))) (setf (gethash 1 h) 2) h)") ==
        "#<hash-table :test eq :count 1>");
  CHECK(repr(lisp, "(make-hash-table :test #'eql)") == "#<hash-table :test eql :count 0>");
  CHECK(repr(lisp, "(lambda (x) x)") == "#<function lambda>");
  lisp.eval("(defun named-fn (x) x)");
  CHECK(repr(lisp, "#'named-fn") == "#<function named-fn>");
  CHECK(repr(lisp, "(labels ((helper () 1)) #'helper)") == "#<function helper>");
  CHECK(repr(lisp, "#'car") == "#<builtin car>");
  CHECK(repr(lisp, "(symbol-value 'when)") == "#<macro when>");
  CHECK(repr(lisp, "(make-condition 'type-error :message \"m\")") ==
        "#<condition type-error: m>");
  CHECK(repr(lisp, "(handler-case (/ 1 0) (error (e) e))") ==
        "#<condition division-by-zero: /: division by zero (1 / 0)>");
  CHECK(repr(lisp, "(handler-case (error \"x ~s\" \"q\") (error (e) e))") ==
        "#<condition simple-error: x \"q\">");
  CHECK(princ(lisp, "(make-condition 'simple-error :message \"hi\")") == "hi");
}

TEST_CASE("printer: print, prin1, princ and terpri write to the output sink", "[printer]") {
  tl::Interpreter lisp;
  std::string out;
  lisp.set_output([&](std::string_view s) { out += s; });
  CHECK(lisp.eval("(print \"a\\\"b\")").as_string() == "a\"b");
  CHECK(out == "\"a\\\"b\"\n");
  out.clear();
  lisp.eval("(prin1 \"s\") (princ \"s\") (terpri) (princ 1.0) (prin1 '(1 \"x\"))");
  CHECK(out == "\"s\"s\n1.0(1 \"x\")");
}

TEST_CASE("printer: type names", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp,
             "(mapcar #'type-of (list 1 1.0 \"s\" 's :k nil '(1) (vector) (make-hash-table) "
             "#'car (lambda ()) (make-condition 'error)))") ==
        "(integer float string symbol keyword null cons vector hash-table function function "
        "error)");  // a condition's type, as in Common Lisp (issue 25)
  CHECK(lisp.eval("3").type_name() == "integer");
  CHECK(lisp.eval("'(1)").type_name() == "cons");
  CHECK(lisp.eval("nil").type_name() == "null");
}

// Issue 19 (found by fuzz_reader): (unquote @c) printed as ",@c", which reads back as
// unquote-splicing; it prints as ", @c".
TEST_CASE("printer: unquote of a symbol starting with @ reads back the same", "[printer]") {
  tl::Interpreter lisp;
  CHECK(repr(lisp, "(read-from-string \"`(a , @c)\")") == "`(a , @c)");
  CHECK(repr(lisp, "(read-from-string \"`(a ,@c)\")") == "`(a ,@c)");
  CHECK(lisp.eval("(equal (read-from-string (prin1-to-string '(unquote @c))) '(unquote @c))").truthy());
}

TEST_CASE("printer: string output streams take what is printed to them", "[printer]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar s (make-string-output-stream))");
  CHECK(repr(lisp, "s") == "#<string-output-stream>");
  // Printing to the stream leaves the standard output alone, and restores it after an error.
  CHECK(lisp.eval("(with-output-to-string (o) (princ 1 s) (princ 2) (format s \"~a\" 3) (terpri s))").as_string() ==
        "2");
  CHECK(lisp.eval("(handler-case (format s \"~a ~a\" 4) (error () :failed))").repr() == ":failed");
  CHECK(lisp.eval("(with-output-to-string (o) (princ 5))").as_string() == "5");
  CHECK(lisp.eval("(get-output-stream-string s)").as_string() == "13\n");
  CHECK(lisp.eval("(get-output-stream-string s)").as_string().empty());
  // ~& knows the stream's own line: a fresh stream starts at one.
  CHECK(lisp.eval("(progn (with-output-to-string (o) (princ \"x\") (format s \"~&y\")) (get-output-stream-string s))")
            .as_string() == "y");
  // Anything else as a stream is a type error naming the function and the argument.
  for (const char* form : {"(princ 1 3)", "(terpri \"x\")", "(format 2 \"x\")", "(get-output-stream-string t)"}) {
    INFO(form);
    CHECK(lisp.eval("(handler-case " + std::string(form) + " (type-error (e) (condition-message e)))")
              .as_string()
              .find("argument") != std::string::npos);
  }
  // The stream survives collections while it is referred to.
  lisp.eval("(princ \"kept\" s)");
  lisp.eval("(gc)");
  CHECK(lisp.eval("(get-output-stream-string s)").as_string() == "kept");
}
