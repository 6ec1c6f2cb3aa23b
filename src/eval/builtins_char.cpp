// SPDX-License-Identifier: Apache-2.0
// Characters (Unicode code points): predicates, case, comparison, codes and names, and char
// access into strings by character index. Case and classes follow Unicode through ICU.
#include <unicode/uchar.h>

#include "eval/builtins.h"
#include "eval/utf8.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

std::uint32_t arg_char(Interp& in, const char* fn, Args a, int i) {
  if (!a[i].is_char()) in.type_error(fn, i + 1, "a character", a[i]);
  return static_cast<std::uint32_t>(a[i].i);
}

UChar32 fold(std::uint32_t c) { return u_tolower(u_toupper(static_cast<UChar32>(c))); }

enum class Cmp { Eq, Ne, Lt, Gt, Le, Ge };

// char= and the rest take one or more characters; char/= is true when all differ pairwise,
// the others when each adjacent pair is in order. IGNORE_CASE compares case-folded.
Value compare_chars(Interp& in, const char* fn, Args a, N n, Cmp cmp, bool ignore_case) {
  std::vector<std::int64_t> codes(n);
  for (N i = 0; i < n; ++i) {
    std::uint32_t c = arg_char(in, fn, a, static_cast<int>(i));
    codes[i] = ignore_case ? fold(c) : c;
  }
  if (cmp == Cmp::Ne) {
    for (N i = 0; i < n; ++i) {
      for (N j = i + 1; j < n; ++j) {
        if (codes[i] == codes[j]) return nil();
      }
    }
    return in.t();
  }
  for (N i = 0; i + 1 < n; ++i) {
    std::int64_t x = codes[i], y = codes[i + 1];
    bool ok = cmp == Cmp::Eq ? x == y : cmp == Cmp::Lt ? x < y : cmp == Cmp::Gt ? x > y : cmp == Cmp::Le ? x <= y : x >= y;
    if (!ok) return nil();
  }
  return in.t();
}

// The character at character index I of string A[0] (for char and schar).
Value string_char(Interp& in, const char* fn, Args a) {
  const std::string& text = arg_string(in, fn, a, 0)->text;
  std::int64_t i = arg_int(in, fn, a, 1);
  std::size_t pos = i < 0 ? std::string::npos : utf8_offset(text, static_cast<std::size_t>(i));
  if (pos == std::string::npos || pos >= text.size()) {
    in.error("index-error", std::string(fn) + ": index " + std::to_string(i) + " out of range for a string of length " +
                                std::to_string(utf8_length(text)));
  }
  return Value::character(next_utf8(text, pos));
}

template <UBool (*Test)(UChar32)>
Value char_class(Interp& in, const char* fn, Args a) {
  return in.boolean(Test(static_cast<UChar32>(arg_char(in, fn, a, 0))) != 0);
}

}  // namespace

void register_char_builtins(Interp& in) {
  TL_BUILTIN(in, "characterp", 1, 1, "(characterp X)",
             "True for characters such as #\\a."
             "\n  (characterp #\\a)  ; => t"
             "\n  (characterp \"a\")  ; => nil",
             [](Interp& in, Args a, N) { return in.boolean(a[0].is_char()); });
  TL_BUILTIN(in, "char-code", 1, 1, "(char-code CHARACTER)",
             "The Unicode code point of CHARACTER. (Given a string, the first byte of it, for byte strings.)"
             "\n  (char-code #\\A)  ; => 65"
             "\n  (char-code #\\Newline)  ; => 10",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_char()) return Value::integer(a[0].i);
               if (!is_string(a[0])) in.type_error("char-code", 1, "a character", a[0]);
               const std::string& s = as_string(a[0])->text;
               if (s.empty()) in.error("type-error", "char-code: the string is empty");
               return Value::integer(static_cast<unsigned char>(s[0]));
             });
  TL_BUILTIN(in, "code-char", 1, 1, "(code-char CODE)",
             "The character with Unicode code point CODE."
             "\n  (code-char 97)  ; => #\\a",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t c = arg_int(in, "code-char", a, 0);
               if (c < 0 || c > 0x10FFFF)
                 in.error("type-error",
                          "code-char: " + std::to_string(c) + " is not a Unicode code point (0 to #x10FFFF)");
               return Value::character(static_cast<std::uint32_t>(c));
             });
  TL_BUILTIN(in, "byte-string", 0, -1, "(byte-string BYTE...)",
             "A string of the raw bytes BYTE... (each 0-255), not UTF-8 encoded: for building binary data."
             "\n  (byte-string 104 105)  ; => \"hi\""
             "\n  (length (byte-string 0 255))  ; => 2",
             [](Interp& in, Args a, N n) -> Value {
               std::string s;
               for (N i = 0; i < n; ++i) {
                 std::int64_t b = arg_int(in, "byte-string", a, static_cast<int>(i));
                 if (b < 0 || b > 255) in.type_error("byte-string", static_cast<int>(i) + 1, "a byte (0-255)", a[i]);
                 s += static_cast<char>(b);
               }
               return in.make_string(std::move(s));
             });
  TL_BUILTIN(in, "char", 2, 2, "(char STRING INDEX)",
             "The character at INDEX (counting characters) of STRING."
             "\n  (char \"hello\" 1)  ; => #\\e",
             [](Interp& in, Args a, N) { return string_char(in, "char", a); });
  TL_BUILTIN(in, "schar", 2, 2, "(schar STRING INDEX)",
             "The character at INDEX of STRING (as char)."
             "\n  (schar \"hello\" 0)  ; => #\\h",
             [](Interp& in, Args a, N) { return string_char(in, "schar", a); });
  TL_BUILTIN(in, "char-upcase", 1, 1, "(char-upcase CHARACTER)",
             "CHARACTER in upper case."
             "\n  (char-upcase #\\a)  ; => #\\A"
             "\n  (char-upcase #\\1)  ; => #\\1",
             [](Interp& in, Args a, N) {
               return Value::character(
                   static_cast<std::uint32_t>(u_toupper(static_cast<UChar32>(arg_char(in, "char-upcase", a, 0)))));
             });
  TL_BUILTIN(in, "char-downcase", 1, 1, "(char-downcase CHARACTER)",
             "CHARACTER in lower case."
             "\n  (char-downcase #\\A)  ; => #\\a",
             [](Interp& in, Args a, N) {
               return Value::character(
                   static_cast<std::uint32_t>(u_tolower(static_cast<UChar32>(arg_char(in, "char-downcase", a, 0)))));
             });
  TL_BUILTIN(in, "alpha-char-p", 1, 1, "(alpha-char-p CHARACTER)",
             "True for letters."
             "\n  (alpha-char-p #\\a)  ; => t"
             "\n  (alpha-char-p #\\1)  ; => nil",
             [](Interp& in, Args a, N) { return char_class<u_isalpha>(in, "alpha-char-p", a); });
  TL_BUILTIN(in, "alphanumericp", 1, 1, "(alphanumericp CHARACTER)",
             "True for letters and digits."
             "\n  (alphanumericp #\\7)  ; => t"
             "\n  (alphanumericp #\\-)  ; => nil",
             [](Interp& in, Args a, N) { return char_class<u_isalnum>(in, "alphanumericp", a); });
  TL_BUILTIN(in, "upper-case-p", 1, 1, "(upper-case-p CHARACTER)",
             "True for upper-case letters."
             "\n  (upper-case-p #\\A)  ; => t"
             "\n  (upper-case-p #\\a)  ; => nil",
             [](Interp& in, Args a, N) { return char_class<u_isupper>(in, "upper-case-p", a); });
  TL_BUILTIN(in, "lower-case-p", 1, 1, "(lower-case-p CHARACTER)",
             "True for lower-case letters."
             "\n  (lower-case-p #\\a)  ; => t"
             "\n  (lower-case-p #\\A)  ; => nil",
             [](Interp& in, Args a, N) { return char_class<u_islower>(in, "lower-case-p", a); });
  TL_BUILTIN(in, "both-case-p", 1, 1, "(both-case-p CHARACTER)",
             "True for letters that have another case."
             "\n  (both-case-p #\\a)  ; => t"
             "\n  (both-case-p #\\5)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               auto c = static_cast<UChar32>(arg_char(in, "both-case-p", a, 0));
               return in.boolean(u_toupper(c) != c || u_tolower(c) != c);
             });
  TL_BUILTIN(in, "graphic-char-p", 1, 1, "(graphic-char-p CHARACTER)",
             "True for printing characters (space included)."
             "\n  (graphic-char-p #\\Space)  ; => t"
             "\n  (graphic-char-p #\\Newline)  ; => nil",
             [](Interp& in, Args a, N) { return char_class<u_isprint>(in, "graphic-char-p", a); });
  TL_BUILTIN(in, "digit-char-p", 1, 2, "(digit-char-p CHARACTER [RADIX])",
             "The weight of CHARACTER as a digit in RADIX (default 10), or nil."
             "\n  (digit-char-p #\\7)  ; => 7"
             "\n  (digit-char-p #\\f 16)  ; => 15"
             "\n  (digit-char-p #\\x)  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               std::uint32_t c = arg_char(in, "digit-char-p", a, 0);
               std::int64_t radix = n == 2 ? arg_int(in, "digit-char-p", a, 1) : 10;
               if (radix < 2 || radix > 36)
                 in.error("type-error", "digit-char-p: radix must be from 2 to 36, got " + std::to_string(radix));
               std::int64_t w = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
               return w < radix ? Value::integer(w) : nil();
             });
  TL_BUILTIN(in, "digit-char", 1, 2, "(digit-char WEIGHT [RADIX])",
             "The character of digit WEIGHT in RADIX (upper case), or nil."
             "\n  (digit-char 7)  ; => #\\7"
             "\n  (digit-char 11 16)  ; => #\\B"
             "\n  (digit-char 12)  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t w = arg_int(in, "digit-char", a, 0);
               std::int64_t radix = n == 2 ? arg_int(in, "digit-char", a, 1) : 10;
               if (radix < 2 || radix > 36)
                 in.error("type-error", "digit-char: radix must be from 2 to 36, got " + std::to_string(radix));
               if (w < 0 || w >= radix) return nil();
               return Value::character(static_cast<std::uint32_t>("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[w]));
             });
  TL_BUILTIN(in, "char-name", 1, 1, "(char-name CHARACTER)",
             "The name of CHARACTER (\"Space\", \"Newline\", ...), or nil."
             "\n  (char-name #\\Space)  ; => \"Space\""
             "\n  (char-name #\\a)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               const char* name = char_name(arg_char(in, "char-name", a, 0));
               return name ? in.make_string(name) : nil();
             });
  TL_BUILTIN(in, "name-char", 1, 1, "(name-char NAME)",
             "The character named NAME (any case), or nil."
             "\n  (name-char \"newline\")  ; => #\\Newline"
             "\n  (name-char 'space)  ; => #\\Space",
             [](Interp& in, Args a, N) -> Value {
               std::string name = is_symbol(a[0]) ? as_symbol(a[0])->name : arg_string(in, "name-char", a, 0)->text;
               std::int64_t code = name_char(name);
               return code >= 0 ? Value::character(static_cast<std::uint32_t>(code)) : nil();
             });
  TL_BUILTIN(in, "character", 1, 1, "(character X)",
             "X as a character: a character, or a string or symbol of one character."
             "\n  (character \"x\")  ; => #\\x"
             "\n  (character 'a)  ; => #\\a",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_char()) return a[0];
               std::string text = is_symbol(a[0]) ? as_symbol(a[0])->name : is_string(a[0]) ? as_string(a[0])->text : std::string();
               std::size_t pos = 0;
               if (!text.empty()) {
                 std::uint32_t c = next_utf8(text, pos);
                 if (pos == text.size()) return Value::character(c);
               }
               in.type_error("character", 1, "a character designator", a[0]);
             });
#define TL_CHAR_COMPARE(NAME, CMP, FOLD, DOC)                                                  \
  TL_BUILTIN(in, NAME, 1, -1, "(" NAME " CHARACTER...)", DOC,                                  \
             [](Interp& in, Args a, N n) { return compare_chars(in, NAME, a, n, CMP, FOLD); })
  TL_CHAR_COMPARE("char=", Cmp::Eq, false,
                  "True when all the characters are the same."
                  "\n  (char= #\\a #\\a #\\a)  ; => t"
                  "\n  (char= #\\a #\\A)  ; => nil");
  TL_CHAR_COMPARE("char/=", Cmp::Ne, false,
                  "True when no two of the characters are the same."
                  "\n  (char/= #\\a #\\b #\\c)  ; => t"
                  "\n  (char/= #\\a #\\b #\\a)  ; => nil");
  TL_CHAR_COMPARE("char<", Cmp::Lt, false,
                  "True when the character codes increase."
                  "\n  (char< #\\a #\\b #\\c)  ; => t"
                  "\n  (char< #\\a #\\a)  ; => nil");
  TL_CHAR_COMPARE("char>", Cmp::Gt, false,
                  "True when the character codes decrease."
                  "\n  (char> #\\c #\\b #\\a)  ; => t");
  TL_CHAR_COMPARE("char<=", Cmp::Le, false,
                  "True when the character codes never decrease."
                  "\n  (char<= #\\a #\\a #\\b)  ; => t");
  TL_CHAR_COMPARE("char>=", Cmp::Ge, false,
                  "True when the character codes never increase."
                  "\n  (char>= #\\b #\\b #\\a)  ; => t");
  TL_CHAR_COMPARE("char-equal", Cmp::Eq, true,
                  "char= ignoring case."
                  "\n  (char-equal #\\a #\\A)  ; => t");
  TL_CHAR_COMPARE("char-not-equal", Cmp::Ne, true,
                  "char/= ignoring case."
                  "\n  (char-not-equal #\\a #\\B)  ; => t"
                  "\n  (char-not-equal #\\a #\\A)  ; => nil");
  TL_CHAR_COMPARE("char-lessp", Cmp::Lt, true,
                  "char< ignoring case."
                  "\n  (char-lessp #\\a #\\B)  ; => t");
  TL_CHAR_COMPARE("char-greaterp", Cmp::Gt, true,
                  "char> ignoring case."
                  "\n  (char-greaterp #\\C #\\b)  ; => t");
  TL_CHAR_COMPARE("char-not-greaterp", Cmp::Le, true,
                  "char<= ignoring case."
                  "\n  (char-not-greaterp #\\a #\\A #\\b)  ; => t");
  TL_CHAR_COMPARE("char-not-lessp", Cmp::Ge, true,
                  "char>= ignoring case."
                  "\n  (char-not-lessp #\\B #\\b #\\a)  ; => t");
#undef TL_CHAR_COMPARE
}

}  // namespace tl::eval
