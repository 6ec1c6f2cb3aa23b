// SPDX-License-Identifier: Apache-2.0
// Unit tests for the S-expression reader: atoms, lists, quote forms, comments, errors, spans.
#include "reader/reader.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../sanitizer.h"
#include "eval/interp.h"
#include "tensorlisp/tensorlisp.hpp"

namespace {

using tl::Span;
using tl::eval::Interp;
using tl::eval::Value;
using tl::reader::ReadStatus;
using tl::reader::Reader;

// Reads every form of a text. The reader never collects garbage, so the forms stay valid as
// long as nothing is evaluated. `text` is kept alive here because the Reader holds a view.
struct Read {
  explicit Read(Interp& in, std::string source, const char* name = "test.lisp")
      : interp(in), text(std::move(source)) {
    file = in.sources.add(name, text);
  }
  // Reads until End (or NeedsMore, which is recorded in `status`).
  std::vector<Value> all() {
    Reader r(interp, file, text);
    std::vector<Value> out;
    for (;;) {
      Value v;
      Span s;
      status = r.next(v, s);
      if (status != ReadStatus::Form) break;
      out.push_back(v);
      spans.push_back(s);
    }
    return out;
  }
  std::vector<std::string> reprs() {
    std::vector<std::string> out;
    for (Value v : all()) out.push_back(interp.repr(v));
    return out;
  }
  std::string one() {
    auto forms = reprs();
    REQUIRE(forms.size() == 1);
    return forms[0];
  }
  Interp& interp;
  std::string text;
  std::uint32_t file = 0;
  ReadStatus status = ReadStatus::End;
  std::vector<Span> spans;
};

// Reads `text` expecting a read error; returns it for inspection.
tl::Error read_error(Interp& in, const std::string& text) {
  Read r(in, text);
  try {
    r.all();
  } catch (const tl::Error& e) {
    return e;
  }
  FAIL("no read error for: " << text);
  throw std::logic_error("unreachable");
}

std::string read1(Interp& in, const std::string& text) { return Read(in, text).one(); }

// AddressSanitizer makes C stack frames larger, so the reader's nesting limit comes sooner.
constexpr std::size_t kNesting = tl::test::kAddressSanitizer ? 1000 : 5000;

}  // namespace

TEST_CASE("reader: integers including the 64-bit limits", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "0 42 -17 +5 007 9223372036854775807 -9223372036854775808");
  auto forms = r.all();
  REQUIRE(forms.size() == 7);
  for (Value v : forms) REQUIRE(v.is_int());
  CHECK(forms[0].i == 0);
  CHECK(forms[1].i == 42);
  CHECK(forms[2].i == -17);
  CHECK(forms[3].i == 5);
  CHECK(forms[4].i == 7);
  CHECK(forms[5].i == INT64_MAX);
  CHECK(forms[6].i == INT64_MIN);
}

TEST_CASE("reader: integer overflow is a read-error", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  for (const char* text : {"9223372036854775808", "-9223372036854775809",
                           "123456789012345678901234567890"}) {
    INFO(text);
    tl::Error e = read_error(in, text);
    CHECK(e.type() == "read-error");
    CHECK(e.phase() == "read");
    CHECK(e.kind() == tl::ErrorKind::User);
    CHECK_THAT(e.message(), Catch::Contains("does not fit in 64 bits"));
    CHECK_THAT(e.message(), Catch::Contains(text));
    CHECK(e.location().line == 1);
    CHECK(e.location().column == 1);
    CHECK(e.location().length == static_cast<int>(std::string(text).size()));
  }
  // The overflow is also reported in the middle of a list, at the token.
  tl::Error e = read_error(in, "(list 1\n   99999999999999999999)");
  CHECK(e.location().line == 2);
  CHECK(e.location().column == 4);
  CHECK(e.location().file == "test.lisp");
}

TEST_CASE("reader: floats in all their spellings", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "1.5 1e-3 .5 -2. -.25 +.5 1.5e3 2E2 0.0 -0.0 1e+100");
  auto forms = r.all();
  REQUIRE(forms.size() == 11);
  for (Value v : forms) REQUIRE(v.is_float());
  CHECK(forms[0].f == 1.5);
  CHECK(forms[1].f == 0.001);
  CHECK(forms[2].f == 0.5);
  CHECK(forms[3].f == -2.0);
  CHECK(forms[4].f == -0.25);
  CHECK(forms[5].f == 0.5);
  CHECK(forms[6].f == 1500.0);
  CHECK(forms[7].f == 200.0);
  CHECK(forms[8].f == 0.0);
  CHECK(forms[9].f == 0.0);
  CHECK(std::signbit(forms[9].f));
  CHECK(forms[10].f == 1e100);
}

TEST_CASE("reader: parse_number on its own", "[reader]") {
  Value v;
  bool overflow = true;
  REQUIRE(tl::reader::parse_number("12", v, overflow));
  CHECK(!overflow);
  CHECK(v.is_int());
  CHECK(v.i == 12);
  REQUIRE(tl::reader::parse_number("-2.", v, overflow));
  CHECK(v.is_float());
  CHECK(v.f == -2.0);
  REQUIRE(tl::reader::parse_number("1e-3", v, overflow));
  CHECK(v.f == 0.001);
  REQUIRE(tl::reader::parse_number(".5", v, overflow));
  CHECK(v.f == 0.5);
  REQUIRE(tl::reader::parse_number("18446744073709551616", v, overflow));
  CHECK(overflow);
  CHECK_FALSE(tl::reader::parse_number("abc", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("12abc", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("1e", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("1.2.3", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("+", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("-", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("1+", v, overflow));
  CHECK_FALSE(tl::reader::parse_number("", v, overflow));
}

TEST_CASE("reader: bad number syntax is a read-error", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  for (const char* text : {"12abc", "1.2.3", "1e", "1e+", "-1.5e+2x", "3..4"}) {
    INFO(text);
    tl::Error e = read_error(in, text);
    CHECK(e.type() == "read-error");
    CHECK(e.message() == std::string("bad number syntax '") + text + "'");
    CHECK(e.location().column == 1);
  }
  tl::Error e = read_error(in, "(+ 1 2x)");
  CHECK(e.location().line == 1);
  CHECK(e.location().column == 6);
  CHECK(e.location().length == 2);
}

TEST_CASE("reader: 1+ and 1- are symbols, as are + - and ...", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "1+ 1- + - ... .e5 a1");
  auto forms = r.all();
  REQUIRE(forms.size() == 7);
  std::vector<std::string> names = {"1+", "1-", "+", "-", "...", ".e5", "a1"};
  for (std::size_t i = 0; i < forms.size(); ++i) {
    REQUIRE(tl::eval::is_symbol(forms[i]));
    CHECK(tl::eval::as_symbol(forms[i])->name == names[i]);
  }
  // Interned: the same name reads as the same symbol, and is the one builtins are bound to.
  CHECK(forms[0].o == in.intern("1+"));
  CHECK(lisp.eval("(1+ 41)").as_int() == 42);
  CHECK(lisp.eval("(1- 43)").as_int() == 42);
}

TEST_CASE("reader: strings and their escapes", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, R"("plain" "a\"b" "back\\slash" "n\nt\tr\r" "\x41\x4a!" "" "multi
line" "cont\
inued")");
  auto forms = r.all();
  REQUIRE(forms.size() == 8);
  std::vector<std::string> want = {"plain",   "a\"b", "back\\slash",    "n\nt\tr\r",
                                   "AJ!",     "",     "multi\nline", "continued"};
  for (std::size_t i = 0; i < forms.size(); ++i) {
    INFO(i);
    REQUIRE(tl::eval::is_string(forms[i]));
    CHECK(tl::eval::as_string(forms[i])->text == want[i]);
  }
  // NUL and escape characters.
  Value s = Read(in, R"("a\0b\e")").all().at(0);
  CHECK(tl::eval::as_string(s)->text == std::string("a\0b\x1b", 4));
  // Strings are not interned: two equal literals are distinct objects.
  auto two = Read(in, R"("x" "x")").all();
  CHECK(two[0].o != two[1].o);
}

TEST_CASE("reader: bad string escapes are errors at the escape", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  tl::Error e = read_error(in, R"(  "ab\qc")");
  CHECK(e.type() == "read-error");
  CHECK(e.message() == "unknown escape '\\q' in string");
  CHECK(e.location().line == 1);
  CHECK(e.location().column == 6);
  CHECK(e.location().length == 2);
  tl::Error x = read_error(in, R"("\xZZ")");
  CHECK_THAT(x.message(), Catch::Contains("expected hex digits"));
}

TEST_CASE("reader: symbols are case-sensitive and interned", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  auto forms = Read(in, "foo Foo FOO foo my-var *special* a.b").all();
  REQUIRE(forms.size() == 7);
  for (Value v : forms) REQUIRE(tl::eval::is_symbol(v));
  CHECK(forms[0].o != forms[1].o);
  CHECK(forms[1].o != forms[2].o);
  CHECK(forms[0].o == forms[3].o);
  CHECK(tl::eval::as_symbol(forms[2])->name == "FOO");
  CHECK(tl::eval::as_symbol(forms[5])->name == "*special*");
  CHECK(tl::eval::as_symbol(forms[6])->name == "a.b");
  CHECK(lisp.eval("(eq 'foo 'FOO)").is_nil());
  CHECK(lisp.eval("(eq 'foo 'foo)").truthy());
}

TEST_CASE("reader: nil reads as the empty list; NIL is another symbol", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  auto forms = Read(in, "nil () ( ) NIL").all();
  REQUIRE(forms.size() == 4);
  CHECK(forms[0].is_nil());
  CHECK(forms[1].is_nil());
  CHECK(forms[2].is_nil());
  REQUIRE(tl::eval::is_symbol(forms[3]));
  CHECK(tl::eval::as_symbol(forms[3])->name == "NIL");
}

TEST_CASE("reader: keywords", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  auto forms = Read(in, ":test :Test :test").all();
  REQUIRE(forms.size() == 3);
  REQUIRE(tl::eval::is_symbol(forms[0]));
  tl::eval::Symbol* kw = tl::eval::as_symbol(forms[0]);
  CHECK(kw->is_keyword());
  CHECK(kw->name == "test");
  CHECK(forms[0].o == forms[2].o);
  CHECK(forms[0].o != forms[1].o);
  CHECK(kw == in.keyword("test"));
  CHECK(kw != in.intern("test"));  // a keyword is not the plain symbol of the same name
  CHECK(in.repr(forms[0]) == ":test");
  tl::Error e = read_error(in, "(a : b)");
  CHECK(e.message() == "a keyword needs a name after ':'");
  CHECK(e.location().column == 4);
}

TEST_CASE("reader: quote, quasiquote, unquote, splice and function shorthands", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "'x `(a ,b ,@c) #'car '(1 . 2) ''y ' spaced");
  auto forms = r.all();
  REQUIRE(forms.size() == 6);
  // The printer shows the shorthand again, so check the structure explicitly too.
  Value q = forms[0];
  REQUIRE(tl::eval::is_cons(q));
  CHECK(tl::eval::car(q).o == in.S.quote);
  CHECK(tl::eval::as_symbol(tl::eval::car(tl::eval::cdr(q)))->name == "x");
  CHECK(tl::eval::cdr(tl::eval::cdr(q)).is_nil());

  Value qq = forms[1];
  CHECK(tl::eval::car(qq).o == in.S.quasiquote);
  Value body = tl::eval::car(tl::eval::cdr(qq));  // (a (unquote b) (unquote-splicing c))
  Value second = tl::eval::car(tl::eval::cdr(body));
  Value third = tl::eval::car(tl::eval::cdr(tl::eval::cdr(body)));
  CHECK(tl::eval::car(second).o == in.S.unquote);
  CHECK(tl::eval::car(third).o == in.S.unquote_splicing);

  CHECK(tl::eval::car(forms[2]).o == in.S.function);
  CHECK(in.repr(forms[2]) == "#'car");
  CHECK(in.repr(forms[3]) == "'(1 . 2)");
  CHECK(in.repr(forms[4]) == "''y");
  CHECK(in.repr(forms[5]) == "'spaced");
  CHECK(in.repr(forms[1]) == "`(a ,b ,@c)");
  // The long forms print the same way.
  CHECK(read1(in, "(quote x)") == "'x");
  CHECK(read1(in, "(function f)") == "#'f");
  CHECK(read1(in, "(quote x y)") == "(quote x y)");
}

TEST_CASE("reader: line comments and nested block comments", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  CHECK(Read(in, "; only a comment").reprs().empty());
  CHECK(Read(in, "#| only |#").reprs().empty());
  CHECK(Read(in, "(a ; comment ) here\n b)").one() == "(a b)");
  CHECK(Read(in, "(1 #| x #| nested |# still comment |# 2)").one() == "(1 2)");
  CHECK(Read(in, "#|a|#sym#|b|#").one() == "sym");
  auto forms = Read(in, "1 ;; one\n#| two\n lines |# 2 ; end").reprs();
  CHECK(forms == std::vector<std::string>{"1", "2"});
}

TEST_CASE("reader: vectors", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Value v = Read(in, "#(1 2 3)").all().at(0);
  REQUIRE(tl::eval::is_kind(v, tl::eval::ObjKind::Vector));
  auto& items = tl::eval::as_vector(v)->items;
  REQUIRE(items.size() == 3);
  CHECK(items[0].i == 1);
  CHECK(items[2].i == 3);
  CHECK(read1(in, "#()") == "#()");
  CHECK(read1(in, "#(a \"s\" (1 2) #(3))") == "#(a \"s\" (1 2) #(3))");
  // Vectors are self-evaluating.
  CHECK(lisp.eval("#(1 (+ 1 1))").repr() == "#(1 (+ 1 1))");
  CHECK(lisp.eval("(length #(1 2 3))").as_int() == 3);
}

TEST_CASE("reader: dotted pairs and dotted lists", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Value p = Read(in, "(a . b)").all().at(0);
  REQUIRE(tl::eval::is_cons(p));
  CHECK(tl::eval::as_symbol(tl::eval::car(p))->name == "a");
  CHECK(tl::eval::as_symbol(tl::eval::cdr(p))->name == "b");
  CHECK(read1(in, "(1 2 . 3)") == "(1 2 . 3)");
  CHECK(read1(in, "(1 . (2 3))") == "(1 2 3)");
  CHECK(read1(in, "(1 . nil)") == "(1)");
  CHECK(read1(in, "(1 .5)") == "(1 0.5)");  // .5 is a number, not a dot
  CHECK(read1(in, "(a .b)") == "(a .b)");   // .b is a symbol

  tl::Error e1 = read_error(in, "( . b)");
  CHECK(e1.message() == "dotted pair with nothing before the '.'");
  CHECK(e1.location().column == 3);
  tl::Error e2 = read_error(in, "(a . )");
  CHECK(e2.message() == "dotted pair with nothing after the '.'");
  tl::Error e3 = read_error(in, "(a . b c)");
  CHECK(e3.message() == "more than one form after '.' in a dotted list");
  CHECK(e3.location().column == 8);
  tl::Error e4 = read_error(in, " . ");
  CHECK(e4.message() == "unexpected '.' outside a list");
  CHECK(e4.location().column == 2);
}

TEST_CASE("reader: unbalanced close paren is an error at its line and column", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  tl::Error e = read_error(in, ")");
  CHECK(e.type() == "read-error");
  CHECK(e.phase() == "read");
  CHECK(e.message() == "unbalanced parenthesis: unexpected ')'");
  CHECK(e.location().line == 1);
  CHECK(e.location().column == 1);

  tl::Error e2 = read_error(in, "(+ 1 2)\n(foo\n  bar))");
  CHECK(e2.location().file == "test.lisp");
  CHECK(e2.location().line == 3);
  CHECK(e2.location().column == 7);
  CHECK(e2.source_line() == "  bar))");
  // what() is the full report with the location first.
  CHECK_THAT(std::string(e2.what()), Catch::StartsWith("test.lisp:3:7: read error:"));

  // Through the public API, the same error surfaces from eval.
  try {
    lisp.eval("(list 1 2))", "api.lisp");
    FAIL("no error");
  } catch (const tl::Error& err) {
    CHECK(err.type() == "read-error");
    CHECK(err.location().file == "api.lisp");
    CHECK(err.location().column == 11);
  }
}

TEST_CASE("reader: other malformed syntax", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  tl::Error e1 = read_error(in, "#\\Bogus");
  CHECK_THAT(e1.message(), Catch::Contains("unknown character name"));
  tl::Error e2 = read_error(in, "(a #z)");
  CHECK(e2.message() == "unknown reader syntax '#z'");
  CHECK(e2.location().column == 4);
  CHECK(e2.location().length == 2);
}

TEST_CASE("reader: NeedsMore for unfinished input, and the reader can continue", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  for (const char* text : {"(a b", "(a (b c)", "\"open string", "#| open comment", "'", "`(a ,",
                           "#(1 2", "(a . ", "#", "\"ends in escape\\"}) {
    INFO(text);
    Read r(in, text);
    auto forms = r.all();
    CHECK(forms.empty());
    CHECK(r.status == ReadStatus::NeedsMore);
  }
  // Complete forms before the open one are returned first; the reader's offset stays after the
  // last complete form, and asking again gives NeedsMore again (the position is restored).
  std::string text = "(one) 2 (three";
  std::uint32_t file = in.sources.add("t", text);
  Reader r(in, file, text);
  Value v;
  Span s;
  REQUIRE(r.next(v, s) == ReadStatus::Form);
  CHECK(in.repr(v) == "(one)");
  REQUIRE(r.next(v, s) == ReadStatus::Form);
  CHECK(v.i == 2);
  std::size_t after_two = r.offset();
  CHECK(after_two == 7);
  CHECK(r.next(v, s) == ReadStatus::NeedsMore);
  CHECK(r.offset() == after_two);
  CHECK(r.next(v, s) == ReadStatus::NeedsMore);
  // With the rest of the input the unfinished form reads completely.
  std::string more = text + " 3)\n4";
  std::uint32_t file2 = in.sources.add("t2", more);
  Reader r2(in, file2, more);
  std::vector<std::string> got;
  while (r2.next(v, s) == ReadStatus::Form) got.push_back(in.repr(v));
  CHECK(got == std::vector<std::string>{"(one)", "2", "(three 3)", "4"});
  CHECK(r2.next(v, s) == ReadStatus::End);
}

TEST_CASE("reader: End for empty and whitespace-only input", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  for (const char* text : {"", "   ", "\n\t\r\n", "; c", "#||#"}) {
    Read r(in, text);
    CHECK(r.all().empty());
    CHECK(r.status == ReadStatus::End);
  }
}

TEST_CASE("reader: spans of forms and of list elements", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "(foo 12\n  (bar \"s\"))\n  sym");
  auto forms = r.all();
  REQUIRE(forms.size() == 2);
  // The span reported by next(): start of the form. A multi-line form has length 1.
  CHECK(r.spans[0].line == 1);
  CHECK(r.spans[0].col == 1);
  CHECK(r.spans[0].file == r.file);
  CHECK(r.spans[1].line == 3);
  CHECK(r.spans[1].col == 3);
  CHECK(r.spans[1].len == 3);

  Value outer = forms[0];
  Span form = in.heap.form_span_of(outer);
  REQUIRE(form.valid());
  CHECK(form.line == 1);
  CHECK(form.col == 1);
  // Each cons records the span of its car.
  Span foo = in.heap.span_of(outer);
  CHECK(foo.line == 1);
  CHECK(foo.col == 2);
  CHECK(foo.len == 3);
  Value cell2 = tl::eval::cdr(outer);
  Span twelve = in.heap.span_of(cell2);
  CHECK(twelve.line == 1);
  CHECK(twelve.col == 6);
  CHECK(twelve.len == 2);
  Value cell3 = tl::eval::cdr(cell2);
  Span inner_elem = in.heap.span_of(cell3);
  CHECK(inner_elem.line == 2);
  CHECK(inner_elem.col == 3);
  CHECK(inner_elem.len == 9);
  Value inner = tl::eval::car(cell3);
  Span inner_form = in.heap.form_span_of(inner);
  CHECK(inner_form.line == 2);
  CHECK(inner_form.col == 3);
  CHECK(inner_form.len == 9);
  Span str = in.heap.span_of(tl::eval::cdr(inner));
  CHECK(str.line == 2);
  CHECK(str.col == 8);
  CHECK(str.len == 3);
  // Atoms have no spans of their own; conses made at run time have none.
  CHECK_FALSE(in.heap.span_of(Value::integer(12)).valid());
  CHECK_FALSE(in.heap.form_span_of(forms[1]).valid());
  Value fresh = in.cons(Value::integer(1), tl::eval::nil());
  CHECK_FALSE(in.heap.span_of(fresh).valid());
  CHECK_FALSE(in.heap.form_span_of(fresh).valid());
  // The reader's conses keep their spans in the cell; any other cons given one keeps it in
  // the heap's table, until it is collected.
  CHECK(outer.o->alloc_size > sizeof(tl::eval::Cons));
  CHECK(fresh.o->alloc_size == sizeof(tl::eval::Cons));
  in.heap.set_span(fresh.o, Span{r.file, 7, 8, 9});
  in.heap.set_form_span(fresh.o, Span{r.file, 10, 11, 12});
  CHECK(in.heap.span_of(fresh).line == 7);
  CHECK(in.heap.span_of(fresh).len == 9);
  CHECK(in.heap.form_span_of(fresh).col == 11);
  in.heap.set_span(outer.o, Span{r.file, 5, 6, 1});
  CHECK(in.heap.span_of(outer).line == 5);
  CHECK(in.heap.form_span_of(outer).line == 1);  // the other span stays
  lisp.eval("(gc)");                             // `fresh` is garbage now, its table entries with it
  Value again = in.cons(Value::integer(2), tl::eval::nil());
  CHECK_FALSE(in.heap.span_of(again).valid());
}

TEST_CASE("reader: a text may start at a line other than 1", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  std::string text = "a\n  (b\n c)";
  std::uint32_t file = in.sources.add("later", text, 40);
  Reader r(in, file, text);
  Value v;
  Span s;
  REQUIRE(r.next(v, s) == ReadStatus::Form);
  CHECK(s.line == 40);
  CHECK(s.col == 1);
  REQUIRE(r.next(v, s) == ReadStatus::Form);
  CHECK(s.line == 41);
  CHECK(s.col == 3);
  Span c = in.heap.span_of(tl::eval::cdr(v));
  CHECK(c.line == 42);
  CHECK(c.col == 2);
  CHECK(in.sources.line_text(file, 41) == "  (b");
  CHECK(in.sources.location(c).line == 42);
  // The explicit first_line constructor overrides the source map's.
  Reader r2(in, file, text, 7);
  REQUIRE(r2.next(v, s) == ReadStatus::Form);
  CHECK(s.line == 7);
  std::string bad = "\n  )";
  std::uint32_t bad_file = in.sources.add("bad", bad, 100);
  Reader r3(in, bad_file, bad);
  try {
    r3.next(v, s);
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.location().line == 101);
    CHECK(e.location().column == 3);
    CHECK(e.source_line() == "  )");
  }
}

TEST_CASE("reader: spans of quote shorthands", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  Read r(in, "  'abc");
  Value q = r.all().at(0);
  Span form = in.heap.form_span_of(q);
  CHECK(form.line == 1);
  CHECK(form.col == 3);
  CHECK(form.len == 4);
  Span inner = in.heap.span_of(tl::eval::cdr(q));
  CHECK(inner.col == 4);
  CHECK(inner.len == 3);
}

TEST_CASE("reader: read-from-string uses the same reader", "[reader]") {
  tl::Interpreter lisp;
  CHECK(lisp.eval("(read-from-string \"(1 2 . 3)\")").repr() == "(1 2 . 3)");
  CHECK(lisp.eval("(read-from-string \"  foo bar\")").repr() == "foo");
  CHECK(lisp.eval("(read-from-string \"#(1 :k)\")").repr() == "#(1 :k)");
  CHECK(lisp.eval("(eq (read-from-string \"abc\") 'abc)").truthy());
  try {
    lisp.eval("(read-from-string \"(1 2\")");
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.type() == "read-error");
    CHECK_THAT(e.message(), Catch::Contains("incomplete form"));
  }
  try {
    lisp.eval("(read-from-string \"\")");
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.type() == "read-error");
    CHECK_THAT(e.message(), Catch::Contains("no form"));
  }
  CHECK(lisp.eval("(handler-case (read-from-string \"12abc\") (read-error () :bad))").repr() ==
        ":bad");
}

TEST_CASE("reader: an unclosed form reported by eval names where it opened", "[reader]") {
  tl::Interpreter lisp;
  try {
    lisp.eval("(list 1)\n  (list 2", "open.lisp");
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.type() == "read-error");
    CHECK(e.phase() == "read");
    CHECK_THAT(e.message(), Catch::Contains("never closed"));
    CHECK(e.location().file == "open.lisp");
    CHECK(e.location().line == 2);
    CHECK(e.location().column == 3);
  }
  try {
    lisp.eval("  \"abc");
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.message() == "string starting here is never closed");
    CHECK(e.location().column == 3);
  }
  try {
    lisp.eval("#| abc");
    FAIL("no error");
  } catch (const tl::Error& e) {
    CHECK(e.message() == "block comment starting here is never closed");
  }
}

TEST_CASE("reader: absurdly deep nesting is a read-error, not a crash", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  std::string deep = std::string(1000000, '(') + std::string(1000000, ')');
  tl::Error e = read_error(in, deep);
  CHECK(e.type() == "read-error");
  CHECK(e.message() == "forms nested too deeply to read");
  CHECK(e.location().line == 1);
  // Moderate nesting reads fine.
  std::string ok = std::string(kNesting, '(') + std::string(kNesting, ')');
  Read r(in, ok);
  auto forms = r.all();
  REQUIRE(forms.size() == 1);
  std::size_t depth = 0;
  for (Value v = forms[0]; tl::eval::is_cons(v); v = tl::eval::car(v)) ++depth;
  CHECK(depth == kNesting - 1);  // the innermost () is nil
}

// Issue 19: a NUL byte inside a list made the reader loop, reading empty symbols, until it ran
// out of memory. It is a read error at the NUL, wherever it appears outside strings.
TEST_CASE("reader: a NUL byte is a read error at its position", "[reader]") {
  tl::Interpreter lisp;
  Interp& in = lisp.internal();
  struct Case {
    std::string text;
    int line, column;
  };
  const std::vector<Case> cases = {
      {std::string("(1 \0 2)", 7), 1, 4},
      {std::string("(a\0b)", 5), 1, 3},
      {std::string("\0", 1), 1, 1},
      {std::string("(list\n  '\0)", 11), 2, 4},
      {std::string("#\0", 2), 1, 2},
  };
  for (const Case& c : cases) {
    INFO(c.text.size());
    tl::Error e = read_error(in, c.text);
    CHECK(e.type() == "read-error");
    CHECK(e.message() == "NUL character (byte 0) in the source text");
    CHECK(e.location().line == c.line);
    CHECK(e.location().column == c.column);
    CHECK(e.location().length == 1);
  }
  // Inside a string a NUL is an ordinary character.
  Read r(in, std::string("\"a\0b\"", 5));
  auto forms = r.all();
  REQUIRE(forms.size() == 1);
  CHECK(tl::eval::as_string(forms[0])->text == std::string("a\0b", 3));
}
