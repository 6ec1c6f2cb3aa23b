// SPDX-License-Identifier: Apache-2.0
// String builtins and `format`.
#include <unicode/uchar.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "eval/builtins.h"
#include "eval/streams.h"
#include "eval/utf8.h"
#include "reader/reader.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

std::string princ_string(Interp& in, Value v) { return in.repr(v, false); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// string-trim and friends. The bag comes first, as in Common Lisp; with one argument the bag is
// whitespace (the older form, kept: it cannot be mistaken for the new one).
Value trim(Interp& in, const char* fn, Value* a, std::uint32_t n, bool left, bool right) {
  std::vector<std::uint32_t> bag;  // code points
  if (n == 2) {
    Value b = a[0];
    if (is_string(b)) {
      const std::string& text = as_string(b)->text;
      for (std::size_t pos = 0; pos < text.size();) bag.push_back(next_utf8(text, pos));
    } else if (is_list(b) || is_kind(b, ObjKind::Vector)) {
      std::vector<Value> items = is_list(b) ? list_items(in, fn, b, 1) : as_vector(b)->items;
      for (Value c : items) {
        if (c.is_char()) {
          bag.push_back(static_cast<std::uint32_t>(c.i));
        } else if (is_string(c) && utf8_length(as_string(c)->text) == 1) {
          std::size_t pos = 0;
          bag.push_back(next_utf8(as_string(c)->text, pos));
        } else {
          in.type_error(fn, 1, "a bag of characters", b);
        }
      }
    } else {
      in.type_error(fn, 1, "a string or a sequence of characters", b);
    }
  }
  const std::string& s = arg_string(in, fn, a, n - 1)->text;
  auto in_bag = [&](std::uint32_t c) {
    if (n == 2) return std::find(bag.begin(), bag.end(), c) != bag.end();
    return c < 0x80 && is_space(static_cast<char>(c));
  };
  // By characters, not bytes: a bag of "é" must not cut an "è" in half.
  std::vector<std::size_t> starts;  // each character's first byte, then the end
  for (std::size_t pos = 0; pos < s.size();) {
    starts.push_back(pos);
    next_utf8(s, pos);
  }
  starts.push_back(s.size());
  auto char_at = [&](std::size_t i) {
    std::size_t pos = starts[i];
    return next_utf8(s, pos);
  };
  std::size_t b = 0, e = starts.size() - 1;
  while (left && b < e && in_bag(char_at(b))) ++b;
  while (right && e > b && in_bag(char_at(e - 1))) --e;
  return in.make_string(s.substr(starts[b], starts[e] - starts[b]));
}

// STRING (a string or a symbol's name) with each character's case mapped, by Unicode's simple
// (one character to one) case mapping.
std::string map_case(Interp& in, const char* fn, Value v, bool upper) {
  if (!is_string(v) && !is_symbol(v)) in.type_error(fn, 1, "a string", v);
  const std::string& text = is_symbol(v) ? as_symbol(v)->name : as_string(v)->text;
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t start = pos;
    auto c = static_cast<UChar32>(next_utf8(text, pos));
    if (c >= 0x80 && pos == start + 1) {  // a byte that is not UTF-8 stays as it is
      out += text[start];
      continue;
    }
    append_utf8(out, static_cast<std::uint32_t>(upper ? u_toupper(c) : u_tolower(c)));
  }
  return out;
}

enum class Order { Equal, NotEqual, Less, Greater, LessEqual, GreaterEqual };

// string<, string-lessp and the rest: A and B are strings or symbols (their names). FOLD
// compares letters ignoring case. Equal answers t or nil; the others the mismatch index.
Value compare_strings(Interp& in, const char* fn, Value* args, bool fold, Order order) {
  auto text = [&](int i) -> const std::string& {
    if (is_symbol(args[i])) return as_symbol(args[i])->name;
    return arg_string(in, fn, args, i)->text;
  };
  const std::string& x = text(0);
  const std::string& y = text(1);
  // By characters (the mismatch index counts them), folding case by Unicode's simple mapping.
  auto norm = [fold](std::uint32_t c) {
    return fold ? static_cast<std::uint32_t>(u_tolower(static_cast<UChar32>(c))) : c;
  };
  std::size_t i = 0, px = 0, py = 0;
  int cmp = 0;  // the sign of x - y
  while (px < x.size() && py < y.size()) {
    const std::uint32_t cx = norm(next_utf8(x, px)), cy = norm(next_utf8(y, py));
    if (cx != cy) {
      cmp = cx < cy ? -1 : 1;
      break;
    }
    ++i;
  }
  if (cmp == 0 && px < x.size()) cmp = 1;
  else if (cmp == 0 && py < y.size()) cmp = -1;
  bool holds = false;
  switch (order) {
    case Order::Equal: return in.boolean(cmp == 0);
    case Order::NotEqual: holds = cmp != 0; break;
    case Order::Less: holds = cmp < 0; break;
    case Order::Greater: holds = cmp > 0; break;
    case Order::LessEqual: holds = cmp <= 0; break;
    case Order::GreaterEqual: holds = cmp >= 0; break;
  }
  return holds ? Value::integer(static_cast<std::int64_t>(i)) : nil();
}

}  // namespace

void register_string_builtins(Interp& in) {
  TL_BUILTIN(in, "format", 1, -1, "(format DESTINATION CONTROL ARG...)",
             "Formats ARGs by CONTROL, as Common Lisp does. DESTINATION nil returns a string; t prints it; a "
             "string output stream collects it. "
             "Directives: ~a (princ), ~s (prin1), ~d ~b ~o ~x (~:d commas, ~@d sign, ~5,'0d pads), ~r "
             "(~16r radix, ~r words, ~:r ordinal, ~@r roman), ~f ~e ~g (~,2f), ~c, ~p (plural), ~% ~& ~| ~t ~~, "
             "~* (skip), ~? (indirect), ~(...~) (case), ~[...~;...~] and ~:[false~;true~], ~{...~} (iterate), "
             "~^ (stop when no arguments are left). A width pads: ~10a pads right, ~10@a pads left."
             "\n  (format nil \"~a + ~a = ~d\" 1 2 3)  ; => \"1 + 2 = 3\""
             "\n  (format nil \"~,2f|~5,'0d|~:d\" 3.14159 42 1234567)  ; => \"3.14|00042|1,234,567\""
             "\n  (format nil \"~{~a~^, ~}\" '(1 2 3))  ; => \"1, 2, 3\""
             "\n  (format nil \"~d item~:p, ~:[no~;yes~]\" 3 t)  ; => \"3 items, yes\"",
             [](Interp& in, Args a, N n) -> Value {
               Value dest = a[0];
               std::uint32_t first = 1;
               if (is_string(dest)) {  // (format "control" args...) is allowed: returns the string
                 return in.make_string(format_string(in, as_string(dest)->text, a + 1, n - 1));
               }
               if (n < 2) in.error("arity-error", "format: expected a destination and a control string");
               const StreamArg to(in, "format", a, n, 0, false);  // t, nil or a string output stream
               String* control = arg_string(in, "format", a, 1);
               std::string text = format_string(in, control->text, a + first + 1, n - first - 1,
                                                dest.is_nil() ? true : in.at_line_start);
               if (dest.is_nil()) return in.make_string(std::move(text));
               in.write(text);
               return nil();
             });
  TL_BUILTIN(in, "concat", 0, -1, "(concat ITEM...)",
             "The strings joined; other values are converted as princ shows them."
             "\n  (concat \"x=\" 1 \", \" 'y)  ; => \"x=1, y\"",
             [](Interp& in, Args a, N n) -> Value {
               std::string out;
               for (N i = 0; i < n; ++i) {
                 if (is_string(a[i])) out += as_string(a[i])->text;
                 else out += princ_string(in, a[i]);
               }
               return in.make_string(std::move(out));
             });
  TL_BUILTIN(in, "make-string", 1, 3, "(make-string SIZE [INITIAL] | SIZE :initial-element INITIAL)",
             "A string of SIZE characters, each INITIAL (a character or a one-character string; default #\\Space)."
             "\n  (make-string 3 #\\x)  ; => \"xxx\""
             "\n  (make-string 2)  ; => \"  \"",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t size = arg_size(in, "make-string", a, 0);
               int init_arg = n == 3 ? 2 : 1;
               if (n == 3 && (!is_symbol(a[1]) || as_symbol(a[1])->name != "initial-element")) {
                 in.error("program-error", "make-string: unknown keyword argument " + in.repr(a[1]) +
                                               "; expected :initial-element");
               }
               std::string fill = " ";
               if (n >= 2 && a[init_arg].is_char()) {
                 fill.clear();
                 append_utf8(fill, static_cast<std::uint32_t>(a[init_arg].i));
               } else if (n >= 2) {
                 String* s = arg_string(in, "make-string", a, init_arg);
                 if (utf8_length(s->text) != 1) {
                   in.type_error("make-string", init_arg + 1, "a character", a[init_arg]);
                 }
                 fill = s->text;
               }
               in.check_allocation("make-string", static_cast<std::uint64_t>(size), fill.size());
               std::string text;
               text.reserve(static_cast<std::size_t>(size) * fill.size());
               for (std::int64_t i = 0; i < size; ++i) text += fill;
               return in.make_string(std::move(text));
             });
  TL_BUILTIN(in, "string", 1, 1, "(string X)",
             "X as a string, as princ would show it."
             "\n  (string 42)  ; => \"42\""
             "\n  (string #\\a)  ; => \"a\""
             "\n  (string 'foo)  ; => \"foo\"",
             [](Interp& in, Args a, N) -> Value {
               if (is_string(a[0])) return a[0];
               return in.make_string(princ_string(in, a[0]));
             });
  TL_BUILTIN(in, "prin1-to-string", 1, 1, "(prin1-to-string X)",
             "X printed readably, as a string."
             "\n  (prin1-to-string \"hi\")  ; => \"\\\"hi\\\"\""
             "\n  (prin1-to-string '(1 #\\a))  ; => \"(1 #\\\\a)\"",
             [](Interp& in, Args a, N) { return in.make_string(in.repr(a[0])); });
  TL_BUILTIN(in, "string-split", 1, 2, "(string-split STRING [SEPARATOR])",
             "A list of the parts of STRING between SEPARATORs; without SEPARATOR, splits at runs of whitespace."
             "\n  (string-split \"a,b,,c\" \",\")  ; => (\"a\" \"b\" \"\" \"c\")"
             "\n  (string-split \"  one two  \")  ; => (\"one\" \"two\")",
             [](Interp& in, Args a, N n) -> Value {
               const std::string& s = arg_string(in, "string-split", a, 0)->text;
               std::vector<std::string> parts;
               if (n == 1 || a[1].is_nil()) {
                 std::size_t i = 0;
                 while (i < s.size()) {
                   while (i < s.size() && is_space(s[i])) ++i;
                   std::size_t start = i;
                   while (i < s.size() && !is_space(s[i])) ++i;
                   if (i > start) parts.push_back(s.substr(start, i - start));
                 }
               } else {
                 const std::string& sep = arg_string(in, "string-split", a, 1)->text;
                 if (sep.empty()) in.error("type-error", "string-split: the separator must not be empty");
                 std::size_t start = 0;
                 for (;;) {
                   std::size_t pos = s.find(sep, start);
                   if (pos == std::string::npos) {
                     parts.push_back(s.substr(start));
                     break;
                   }
                   parts.push_back(s.substr(start, pos - start));
                   start = pos + sep.size();
                 }
               }
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (auto& p : parts) in.push(in.make_string(std::move(p)));
               return in.list_from(base, parts.size());
             });
  TL_BUILTIN(in, "string-join", 1, 2, "(string-join LIST [SEPARATOR])",
             "The strings of LIST joined with SEPARATOR (default \"\")."
             "\n  (string-join '(\"a\" \"b\" \"c\") \", \")  ; => \"a, b, c\""
             "\n  (string-join '(1 2 3))  ; => \"123\"",
             [](Interp& in, Args a, N n) -> Value {
               arg_list(in, "string-join", a, 0);
               std::string sep = n == 2 ? arg_string(in, "string-join", a, 1)->text : "";
               std::string out;
               bool first = true;
               for (ListWalk walk(in, "string-join", 1, a[0]); !walk.done(); walk.next()) {
                 if (!first) out += sep;
                 first = false;
                 Value item = walk.item();
                 out += is_string(item) ? as_string(item)->text : princ_string(in, item);
               }
               return in.make_string(std::move(out));
             });
  TL_BUILTIN(in, "parse-number", 1, 1, "(parse-number STRING)",
             "The number STRING spells (\"42\", \"-1.5e3\"); an error if it is not one."
             "\n  (parse-number \"42\")  ; => 42"
             "\n  (parse-number \" -1.5e3 \")  ; => -1500.0",
             [](Interp& in, Args a, N) -> Value {
               std::string s = arg_string(in, "parse-number", a, 0)->text;
               std::size_t b = 0, e = s.size();
               while (b < e && is_space(s[b])) ++b;
               while (e > b && is_space(s[e - 1])) --e;
               Value out;
               bool overflow = false;
               if (!reader::parse_number(std::string_view(s).substr(b, e - b), out, overflow)) {
                 in.error("type-error", "parse-number: \"" + s + "\" is not a number");
               }
               if (overflow) in.error("integer-overflow", "parse-number: \"" + s + "\" does not fit in 64 bits");
               return out;
             });
  TL_BUILTIN(in, "number-to-string", 1, 1, "(number-to-string NUMBER)",
             "NUMBER printed as a string."
             "\n  (number-to-string 1.5)  ; => \"1.5\"",
             [](Interp& in, Args a, N) -> Value {
               if (!a[0].is_number()) in.type_error("number-to-string", 1, "a number", a[0]);
               return in.make_string(in.repr(a[0]));
             });
  TL_BUILTIN(in, "string-upcase", 1, 1, "(string-upcase STRING)",
             "STRING (or a symbol's name) in upper case (Unicode simple case mapping)."
             "\n  (string-upcase \"hello, world\")  ; => \"HELLO, WORLD\"",
             [](Interp& in, Args a, N) { return in.make_string(map_case(in, "string-upcase", a[0], true)); });
  TL_BUILTIN(in, "string-downcase", 1, 1, "(string-downcase STRING)",
             "STRING (or a symbol's name) in lower case (Unicode simple case mapping)."
             "\n  (string-downcase \"Hello World\")  ; => \"hello world\""
             "\n  (string-downcase 'abc)  ; => \"abc\"",
             [](Interp& in, Args a, N) { return in.make_string(map_case(in, "string-downcase", a[0], false)); });
  TL_BUILTIN(in, "string-trim", 1, 2, "(string-trim BAG STRING)",
             "STRING without leading and trailing characters in BAG (a string, or a list or vector of "
             "one-character strings), as in Common Lisp. (string-trim STRING) trims whitespace."
             "\n  (string-trim \"  hi  \")  ; => \"hi\""
             "\n  (string-trim \"*-\" \"*-hi-*\")  ; => \"hi\"",
             [](Interp& in, Args a, N n) { return trim(in, "string-trim", a, n, true, true); });
  TL_BUILTIN(in, "string-left-trim", 1, 2, "(string-left-trim BAG STRING)",
             "STRING without leading characters in BAG; (string-left-trim STRING) trims whitespace."
             "\n  (string-left-trim \"  hi  \")  ; => \"hi  \""
             "\n  (string-left-trim \"0\" \"007\")  ; => \"7\"",
             [](Interp& in, Args a, N n) { return trim(in, "string-left-trim", a, n, true, false); });
  TL_BUILTIN(in, "string-right-trim", 1, 2, "(string-right-trim BAG STRING)",
             "STRING without trailing characters in BAG; (string-right-trim STRING) trims whitespace."
             "\n  (string-right-trim \"  hi  \")  ; => \"  hi\""
             "\n  (string-right-trim \".\" \"end...\")  ; => \"end\"",
             [](Interp& in, Args a, N n) { return trim(in, "string-right-trim", a, n, false, true); });
  TL_BUILTIN(in, "string-contains", 2, 2, "(string-contains STRING PART)",
             "Index of the first PART in STRING, or nil."
             "\n  (string-contains \"hello\" \"ll\")  ; => 2"
             "\n  (string-contains \"hello\" \"z\")  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               const std::string& text = arg_string(in, "string-contains", a, 0)->text;
               auto pos = text.find(arg_string(in, "string-contains", a, 1)->text);
               if (pos == std::string::npos) return nil();
               // A character index, as every string index is.
               return Value::integer(static_cast<std::int64_t>(utf8_length(std::string_view(text).substr(0, pos))));
             });
  TL_BUILTIN(in, "string-prefix-p", 2, 2, "(string-prefix-p PREFIX STRING)",
             "True when STRING starts with PREFIX."
             "\n  (string-prefix-p \"ab\" \"abc\")  ; => t"
             "\n  (string-prefix-p \"b\" \"abc\")  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               const std::string& p = arg_string(in, "string-prefix-p", a, 0)->text;
               const std::string& s = arg_string(in, "string-prefix-p", a, 1)->text;
               return in.boolean(s.compare(0, p.size(), p) == 0);
             });
  TL_BUILTIN(in, "string-suffix-p", 2, 2, "(string-suffix-p SUFFIX STRING)",
             "True when STRING ends with SUFFIX."
             "\n  (string-suffix-p \".lisp\" \"foo.lisp\")  ; => t",
             [](Interp& in, Args a, N) -> Value {
               const std::string& p = arg_string(in, "string-suffix-p", a, 0)->text;
               const std::string& s = arg_string(in, "string-suffix-p", a, 1)->text;
               return in.boolean(s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0);
             });
  TL_BUILTIN(in, "string-replace", 3, 3, "(string-replace STRING OLD NEW)",
             "STRING with every OLD replaced by NEW."
             "\n  (string-replace \"a-b-c\" \"-\" \"+\")  ; => \"a+b+c\"",
             [](Interp& in, Args a, N) -> Value {
               std::string s = arg_string(in, "string-replace", a, 0)->text;
               const std::string& from = arg_string(in, "string-replace", a, 1)->text;
               const std::string& to = arg_string(in, "string-replace", a, 2)->text;
               if (from.empty()) in.error("type-error", "string-replace: the string to replace must not be empty");
               std::string out;
               std::size_t start = 0;
               for (;;) {
                 std::size_t pos = s.find(from, start);
                 if (pos == std::string::npos) break;
                 out.append(s, start, pos - start);
                 out += to;
                 start = pos + from.size();
               }
               out.append(s, start, std::string::npos);
               return in.make_string(std::move(out));
             });
  TL_BUILTIN(in, "string=", 2, 2, "(string= A B)",
             "True when strings (or symbol names) A and B are equal."
             "\n  (string= \"abc\" \"abc\")  ; => t"
             "\n  (string= \"abc\" 'abc)  ; => t"
             "\n  (string= \"abc\" \"ABC\")  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               auto text = [&](int i) -> std::string {
                 if (is_symbol(a[i])) return as_symbol(a[i])->name;
                 return arg_string(in, "string=", a, i)->text;
               };
               return in.boolean(text(0) == text(1));
             });
  // The ordering comparisons return the index where the strings first differ (CLHS string<),
  // or nil; the -lessp family ignores case, as string-equal does.
  TL_BUILTIN(in, "string<", 2, 2, "(string< A B)",
             "The index where A and B first differ when A sorts before B, else nil."
             "\n  (string< \"abc\" \"abd\")  ; => 2"
             "\n  (string< \"abc\" \"abc\")  ; => nil",
             [](Interp& in, Args a, N) { return compare_strings(in, "string<", a, false, Order::Less); });
  TL_BUILTIN(in, "string>", 2, 2, "(string> A B)",
             "The index where A and B first differ when A sorts after B, else nil."
             "\n  (string> \"b\" \"a\")  ; => 0",
             [](Interp& in, Args a, N) { return compare_strings(in, "string>", a, false, Order::Greater); });
  TL_BUILTIN(in, "string<=", 2, 2, "(string<= A B)",
             "The mismatch index when A sorts before B or equals it, else nil."
             "\n  (string<= \"abc\" \"abc\")  ; => 3",
             [](Interp& in, Args a, N) { return compare_strings(in, "string<=", a, false, Order::LessEqual); });
  TL_BUILTIN(in, "string>=", 2, 2, "(string>= A B)",
             "The mismatch index when A sorts after B or equals it, else nil."
             "\n  (string>= \"abc\" \"ab\")  ; => 2",
             [](Interp& in, Args a, N) { return compare_strings(in, "string>=", a, false, Order::GreaterEqual); });
  TL_BUILTIN(in, "string/=", 2, 2, "(string/= A B)",
             "The index where A and B first differ, or nil when they are equal."
             "\n  (string/= \"abc\" \"abd\")  ; => 2"
             "\n  (string/= \"abc\" \"abc\")  ; => nil",
             [](Interp& in, Args a, N) { return compare_strings(in, "string/=", a, false, Order::NotEqual); });
  TL_BUILTIN(in, "string-equal", 2, 2, "(string-equal A B)",
             "True when strings (or symbol names) A and B are equal ignoring case."
             "\n  (string-equal \"Hello\" \"hELLO\")  ; => t",
             [](Interp& in, Args a, N) { return compare_strings(in, "string-equal", a, true, Order::Equal); });
  TL_BUILTIN(in, "string-lessp", 2, 2, "(string-lessp A B)",
             "string< ignoring case."
             "\n  (string-lessp \"Apple\" \"banana\")  ; => 0",
             [](Interp& in, Args a, N) { return compare_strings(in, "string-lessp", a, true, Order::Less); });
  TL_BUILTIN(in, "string-greaterp", 2, 2, "(string-greaterp A B)",
             "string> ignoring case."
             "\n  (string-greaterp \"b\" \"A\")  ; => 0",
             [](Interp& in, Args a, N) { return compare_strings(in, "string-greaterp", a, true, Order::Greater); });
  TL_BUILTIN(in, "string-not-greaterp", 2, 2, "(string-not-greaterp A B)",
             "string<= ignoring case."
             "\n  (string-not-greaterp \"ABC\" \"abc\")  ; => 3",
             [](Interp& in, Args a, N) {
               return compare_strings(in, "string-not-greaterp", a, true, Order::LessEqual);
             });
  TL_BUILTIN(in, "string-not-lessp", 2, 2, "(string-not-lessp A B)",
             "string>= ignoring case."
             "\n  (string-not-lessp \"b\" \"A\")  ; => 0",
             [](Interp& in, Args a, N) {
               return compare_strings(in, "string-not-lessp", a, true, Order::GreaterEqual);
             });
  TL_BUILTIN(in, "string-not-equal", 2, 2, "(string-not-equal A B)",
             "string/= ignoring case."
             "\n  (string-not-equal \"ABC\" \"abd\")  ; => 2",
             [](Interp& in, Args a, N) { return compare_strings(in, "string-not-equal", a, true, Order::NotEqual); });
  TL_BUILTIN(in, "read-from-string", 1, 1, "(read-from-string STRING)",
             "The first form read from STRING; the second value is the index after it (and after one whitespace "
             "character that follows it)."
             "\n  (read-from-string \"(a b) c\")  ; => (a b)"
             "\n  (multiple-value-list (read-from-string \"42 rest\"))  ; => (42 3)",
             [](Interp& in, Args a, N) -> Value {
               const std::string& text = arg_string(in, "read-from-string", a, 0)->text;
               std::uint32_t file = in.sources.add("<string>", text);
               reader::Reader r(in, file, text);
               Value form;
               Span span;
               reader::ReadStatus st = r.next(form, span);
               if (st == reader::ReadStatus::End)
                 in.error("read-error", "read-from-string: no form in \"" + text + "\"");
               if (st == reader::ReadStatus::NeedsMore)
                 in.error("read-error", "read-from-string: incomplete form in \"" + text + "\"");
               std::size_t end = r.offset();
               // As in Common Lisp, one whitespace character after the form is read with it.
               if (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
               // The position counts characters, as every string index does.
               std::size_t position = utf8_length(std::string_view(text).substr(0, end));
               return in.two_values(form, Value::integer(static_cast<std::int64_t>(position)));
             });
}

}  // namespace tl::eval
