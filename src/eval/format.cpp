// SPDX-License-Identifier: Apache-2.0
// format's directive language, as Common Lisp defines it (CLHS 22.3): ~a ~s ~d ~b ~o ~x ~r
// ~f ~e ~g ~c ~p ~% ~& ~| ~t ~* ~? ~( ~) ~[ ~; ~] ~{ ~} ~^ and ~newline, with parameters
// (integers, 'c characters, v and #) and the : and @ modifiers.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "eval/builtins.h"

namespace tl::eval {

namespace {

// The arguments a directive takes from: the call's, or a list's elements inside ~{ or ~?.
struct ArgList {
  const Value* items;
  std::uint32_t n;
  std::uint32_t next = 0;
  std::uint32_t left() const { return n - next; }
};

struct Param {
  enum Kind { None, Number, Char, Next, Count } kind = None;
  std::int64_t number = 0;
  char ch = ' ';
};

struct Directive {
  std::vector<Param> params;
  bool colon = false;
  bool at = false;
  char op = 0;             // lower-cased directive character
  std::size_t start = 0;   // index of the ~
  std::size_t end = 0;     // index just after the directive character
};

enum class Outcome { Done, Up, UpAll };  // Up: ~^ ended this level; UpAll: ~:^ ended ~:{

class Formatter {
 public:
  Formatter(Interp& in, const std::string& control, bool at_line_start)
      : in_(in), control_(control), at_line_start_(at_line_start) {}

  std::string run(ArgList& args) {
    std::string out;
    process(0, control_.size(), args, out);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    in_.error("program-error", "format: " + what + " in \"" + control_ + "\"");
  }

  Directive parse(std::size_t i) {
    Directive d;
    d.start = i;
    ++i;  // the ~
    for (;;) {
      Param p;
      if (i < control_.size() && control_[i] == '\'') {
        if (i + 1 >= control_.size()) fail("a ' parameter without its character");
        p.kind = Param::Char;
        p.ch = control_[i + 1];
        i += 2;
      } else if (i < control_.size() && (control_[i] == 'v' || control_[i] == 'V')) {
        p.kind = Param::Next;
        ++i;
      } else if (i < control_.size() && control_[i] == '#') {
        p.kind = Param::Count;
        ++i;
      } else {
        bool neg = false;
        if (i < control_.size() && (control_[i] == '-' || control_[i] == '+')) {
          neg = control_[i] == '-';
          ++i;
        }
        std::size_t digits = i;
        std::int64_t value = 0;
        while (i < control_.size() && control_[i] >= '0' && control_[i] <= '9') {
          value = value * 10 + (control_[i] - '0');
          if (value > 1000000) fail("a parameter too large");
          ++i;
        }
        if (i > digits) {
          p.kind = Param::Number;
          p.number = neg ? -value : value;
        }
      }
      d.params.push_back(p);
      if (i < control_.size() && control_[i] == ',') {
        ++i;
        continue;
      }
      break;
    }
    while (i < control_.size() && (control_[i] == '@' || control_[i] == ':')) {
      if (control_[i] == '@') d.at = true;
      else d.colon = true;
      ++i;
    }
    if (i >= control_.size()) fail("the control string ends inside a directive");
    d.op = static_cast<char>(std::tolower(static_cast<unsigned char>(control_[i])));
    d.end = i + 1;
    return d;
  }

  // The directive that closes the one ending at FROM (~} ~] ~) ~>), skipping nested pairs;
  // SEPARATORS collects the ~; at this level.
  Directive find_close(std::size_t from, char close, std::vector<Directive>* separators) {
    int depth = 0;
    for (std::size_t i = from; i < control_.size(); ++i) {
      if (control_[i] != '~') continue;
      Directive d = parse(i);
      i = d.end - 1;
      if (d.op == '{' || d.op == '[' || d.op == '(' || d.op == '<') {
        ++depth;
      } else if (d.op == '}' || d.op == ']' || d.op == ')' || d.op == '>') {
        if (depth == 0) {
          if (d.op != close) fail(std::string("~") + d.op + " where ~" + close + " was expected");
          return d;
        }
        --depth;
      } else if (d.op == ';' && depth == 0 && separators != nullptr) {
        separators->push_back(d);
      }
    }
    fail(std::string("no closing ~") + close);
  }

  Value take(ArgList& args, char op) {
    if (args.next >= args.n) fail(std::string("not enough arguments for directive ~") + op);
    return args.items[args.next++];
  }

  // Replaces the v and # parameters of D by what they stand for, before the directive takes
  // its own arguments: v takes the next argument (nil: the default), # counts those left.
  void resolve(Directive& d, ArgList& args) {
    for (Param& p : d.params) {
      if (p.kind == Param::Count) {
        p = Param{Param::Number, args.left()};
      } else if (p.kind == Param::Next) {
        Value v = take(args, d.op);
        if (v.is_nil()) p = Param{};
        else if (v.is_int()) p = Param{Param::Number, v.i};
        else if (is_string(v) && as_string(v)->text.size() == 1) p = Param{Param::Char, 0, as_string(v)->text[0]};
        else fail("a v parameter that is neither an integer nor a character (" + in_.repr(v) + ")");
      }
    }
  }

  // Parameter K of D: an integer, or FALLBACK when not given.
  std::int64_t number(const Directive& d, std::size_t k, std::int64_t fallback, ArgList&) {
    if (k >= d.params.size()) return fallback;
    const Param& p = d.params[k];
    if (p.kind == Param::Number) return p.number;
    if (p.kind == Param::Char) fail(std::string("a character parameter where ~") + d.op + " wants an integer");
    return fallback;
  }
  char character(const Directive& d, std::size_t k, char fallback, ArgList&) {
    if (k >= d.params.size()) return fallback;
    const Param& p = d.params[k];
    if (p.kind == Param::Char) return p.ch;
    if (p.kind == Param::Number) fail(std::string("an integer parameter where ~") + d.op + " wants a character");
    return fallback;
  }

  // ~mincol,colinc,minpad,padcharA: pads on the right (on the left with @).
  std::string pad_column(std::string s, const Directive& d, ArgList& args) {
    std::int64_t mincol = number(d, 0, 0, args);
    std::int64_t colinc = std::max<std::int64_t>(1, number(d, 1, 1, args));
    std::int64_t minpad = number(d, 2, 0, args);
    char padchar = character(d, 3, ' ', args);
    auto len = static_cast<std::int64_t>(s.size());
    std::int64_t fill = minpad;
    while (len + fill < mincol) fill += colinc;
    std::string padding(static_cast<std::size_t>(fill), padchar);
    return d.at ? padding + s : s + padding;
  }

  // ~mincol,padchar,commachar,comma-intervalD (and B, O, X, radix R).
  std::string integer(Value v, int base, const Directive& d, ArgList& args, std::size_t first) {
    std::int64_t mincol = number(d, first, 0, args);
    char padchar = character(d, first + 1, ' ', args);
    char commachar = character(d, first + 2, ',', args);
    std::int64_t interval = std::max<std::int64_t>(1, number(d, first + 3, 3, args));
    if (!v.is_int()) {  // as ~a, right-aligned in the field
      std::string s = in_.repr(v, false);
      auto len = static_cast<std::int64_t>(s.size());
      return len < mincol ? std::string(static_cast<std::size_t>(mincol - len), padchar) + s : s;
    }
    std::uint64_t mag = v.i < 0 ? 0 - static_cast<std::uint64_t>(v.i) : static_cast<std::uint64_t>(v.i);
    std::string digits;
    do {
      digits += "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[mag % static_cast<std::uint64_t>(base)];
      mag /= static_cast<std::uint64_t>(base);
    } while (mag > 0);
    std::string s;
    for (std::size_t k = 0; k < digits.size(); ++k) {
      if (d.colon && k > 0 && static_cast<std::int64_t>(k) % interval == 0) s += commachar;
      s += digits[k];
    }
    if (v.i < 0) s += '-';
    else if (d.at) s += '+';
    std::reverse(s.begin(), s.end());
    auto len = static_cast<std::int64_t>(s.size());
    if (len < mincol) s.insert(0, static_cast<std::size_t>(mincol - len), padchar);
    return s;
  }

  static std::string cardinal(std::uint64_t n) {
    static const char* ones[] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                 "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                 "seventeen", "eighteen", "nineteen"};
    static const char* tens[] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
    static const char* groups[] = {"", " thousand", " million", " billion", " trillion", " quadrillion", " quintillion"};
    if (n < 20) return ones[n];
    auto below_thousand = [&](std::uint64_t k) {
      std::string s;
      if (k >= 100) {
        s = std::string(ones[k / 100]) + " hundred";
        k %= 100;
        if (k > 0) s += " ";
      }
      if (k >= 20) {
        s += tens[k / 10];
        if (k % 10 > 0) s += std::string("-") + ones[k % 10];
      } else if (k > 0) {
        s += ones[k];
      }
      return s;
    };
    std::vector<std::string> parts;
    for (int g = 0; n > 0; ++g, n /= 1000) {
      if (n % 1000 != 0) parts.push_back(below_thousand(n % 1000) + groups[g]);
    }
    std::string s;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (!s.empty()) s += " ";
      s += *it;
    }
    return s;
  }

  static std::string ordinal(std::uint64_t n) {
    std::string s = cardinal(n);
    static const std::pair<const char*, const char*> irregular[] = {
        {"one", "first"}, {"two", "second"}, {"three", "third"}, {"five", "fifth"},
        {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}};
    for (auto [word, ord] : irregular) {
      std::size_t len = std::string(word).size();
      if (s.size() >= len && s.compare(s.size() - len, len, word) == 0 &&
          (s.size() == len || s[s.size() - len - 1] == ' ' || s[s.size() - len - 1] == '-')) {
        return s.substr(0, s.size() - len) + ord;
      }
    }
    if (s.back() == 'y') return s.substr(0, s.size() - 1) + "ieth";
    return s + "th";
  }

  std::string roman(std::int64_t n, bool old_style) {
    if (n <= 0 || n >= 4000) fail("~@r needs an integer from 1 to 3999, got " + std::to_string(n));
    static const std::pair<int, const char*> modern[] = {{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"},
                                                         {100, "C"},  {90, "XC"},  {50, "L"},  {40, "XL"},
                                                         {10, "X"},   {9, "IX"},   {5, "V"},   {4, "IV"}, {1, "I"}};
    static const std::pair<int, const char*> old[] = {{1000, "M"}, {500, "D"}, {100, "C"}, {50, "L"},
                                                      {10, "X"},   {5, "V"},   {1, "I"}};
    std::string s;
    if (old_style) {
      for (auto [value, text] : old) {
        for (; n >= value; n -= value) s += text;
      }
    } else {
      for (auto [value, text] : modern) {
        for (; n >= value; n -= value) s += text;
      }
    }
    return s;
  }

  std::string radix(const Directive& d, ArgList& args) {
    bool has_radix = !d.params.empty() && d.params[0].kind != Param::None;
    if (has_radix) {
      std::int64_t base = number(d, 0, 10, args);
      if (base < 2 || base > 36) fail("~r radix must be from 2 to 36, got " + std::to_string(base));
      return integer(take(args, 'r'), static_cast<int>(base), d, args, 1);
    }
    Value v = take(args, 'r');
    if (!v.is_int()) fail("~r needs an integer, got " + in_.repr(v));
    if (d.at) return roman(v.i, d.colon);
    std::uint64_t mag = v.i < 0 ? 0 - static_cast<std::uint64_t>(v.i) : static_cast<std::uint64_t>(v.i);
    std::string words = d.colon ? ordinal(mag) : cardinal(mag);
    return v.i < 0 ? "negative " + words : words;
  }

  std::string floating(const Directive& d, ArgList& args) {
    Value v = take(args, d.op);
    std::int64_t width = number(d, 0, 0, args);
    bool has_prec = d.params.size() > 1 && d.params[1].kind != Param::None;
    std::int64_t prec = number(d, 1, -1, args);
    if (!v.is_number()) {
      std::string s = in_.repr(v, false);
      auto len = static_cast<std::int64_t>(s.size());
      return len < width ? std::string(static_cast<std::size_t>(width - len), ' ') + s : s;
    }
    double x = v.is_int() ? static_cast<double>(v.i) : v.f;
    std::string s;
    if (d.op == 'f' && !has_prec) {
      // Fixed-point with as many digits as the value needs to read back exactly.
      if (!std::isfinite(x)) {
        s = in_.repr(Value::real(x));
      } else {
        char digits[400];
        auto res = std::to_chars(digits, digits + sizeof digits, x, std::chars_format::fixed);
        s.assign(digits, res.ptr);
        if (s.find('.') == std::string::npos) s += ".0";
      }
      if (d.at && x >= 0) s.insert(s.begin(), '+');
    } else {
      std::string fmt = "%";
      if (d.at) fmt += "+";
      if (prec >= 0) {
        fmt += '.';
        fmt += std::to_string(std::min<std::int64_t>(prec, 100));
      }
      fmt += d.op;
      int needed = std::snprintf(nullptr, 0, fmt.c_str(), x);
      s.assign(static_cast<std::size_t>(needed > 0 ? needed : 0), '\0');
      std::snprintf(s.data(), s.size() + 1, fmt.c_str(), x);
      // Common Lisp writes the exponent without leading zeros: 1.2e+4, not 1.2e+04.
      std::size_t e = s.find_first_of("eE");
      if (e != std::string::npos && e + 2 < s.size() && (s[e + 1] == '+' || s[e + 1] == '-')) {
        std::size_t digits = e + 2;
        while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
      }
    }
    auto len = static_cast<std::int64_t>(s.size());
    if (len < width) s.insert(0, static_cast<std::size_t>(width - len), ' ');
    return s;
  }

  static std::string convert_case(std::string s, const Directive& d) {
    auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    auto upper = [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); };
    auto is_alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    if (d.colon && d.at) {
      for (char& c : s) c = upper(c);
    } else if (d.colon) {  // capitalize every word
      bool word_start = true;
      for (char& c : s) {
        c = word_start ? upper(c) : lower(c);
        word_start = !is_alnum(c);
      }
    } else if (d.at) {  // capitalize the first word, lower-case the rest
      bool seen = false;
      for (char& c : s) {
        if (!seen && is_alnum(c)) {
          c = upper(c);
          seen = true;
        } else {
          c = lower(c);
        }
      }
    } else {
      for (char& c : s) c = lower(c);
    }
    return s;
  }

  std::vector<Value> list_arg(Value v, char op) {
    if (!is_list(v)) fail(std::string("~") + op + " needs a list, got " + in_.repr(v));
    return list_items(in_, "format", v, 2);
  }

  bool fresh_line(const std::string& out) const { return out.empty() ? at_line_start_ : out.back() == '\n'; }

  std::size_t column(const std::string& out) const {
    std::size_t nl = out.rfind('\n');
    return nl == std::string::npos ? out.size() : out.size() - nl - 1;
  }

  // ~{...~}: the body runs on each element (or sublist with :, or the remaining arguments
  // with @) until they run out, at most N times.
  Outcome iterate(const Directive& open, ArgList& args, std::string& out) {
    Directive close = find_close(open.end, '}', nullptr);
    std::int64_t max = number(open, 0, -1, args);
    std::size_t body_start = open.end, body_end = close.start;
    std::string nested_control;
    if (body_end == body_start) {  // ~{~}: the body is the next argument
      Value c = take(args, '{');
      if (!is_string(c)) fail("~{~} needs a control string argument, got " + in_.repr(c));
      nested_control = as_string(c)->text;
    }
    auto run_body = [&](ArgList& items) -> Outcome {
      if (!nested_control.empty()) {
        Formatter inner(in_, nested_control, fresh_line(out));
        std::string text;
        Outcome o = inner.process(0, nested_control.size(), items, text);
        out += text;
        return o;
      }
      return process(body_start, body_end, items, out);
    };
    std::vector<Value> items;
    ArgList own{nullptr, 0};
    ArgList* source = &args;
    if (!open.at) {
      items = list_arg(take(args, '{'), '{');
      own = ArgList{items.data(), static_cast<std::uint32_t>(items.size())};
      source = &own;
    }
    bool at_least_once = close.colon;
    for (std::int64_t count = 0; max < 0 || count < max; ++count) {
      if (source->left() == 0 && !(at_least_once && count == 0)) break;
      if (open.colon) {  // each argument is a list of arguments for one pass
        std::vector<Value> sub = list_arg(take(*source, '{'), '{');
        ArgList sub_args{sub.data(), static_cast<std::uint32_t>(sub.size())};
        Outcome o = run_body(sub_args);
        if (o == Outcome::UpAll) break;
      } else {
        Outcome o = run_body(*source);
        if (o != Outcome::Done) break;
      }
    }
    return Outcome::Done;
  }

  // ~[...~;...~]: chooses one clause.
  Outcome choose(const Directive& open, ArgList& args, std::string& out) {
    std::vector<Directive> separators;
    Directive close = find_close(open.end, ']', &separators);
    std::vector<std::pair<std::size_t, std::size_t>> clauses;
    std::size_t start = open.end;
    bool last_is_default = false;
    for (const Directive& s : separators) {
      clauses.emplace_back(start, s.start);
      start = s.end;
      last_is_default = s.colon;
    }
    clauses.emplace_back(start, close.start);
    std::size_t chosen = clauses.size();
    if (open.at) {  // ~@[...~]: when the argument is true, it stays for the clause
      if (args.next >= args.n) fail("not enough arguments for directive ~@[");
      if (args.items[args.next].truthy()) chosen = 0;
      else ++args.next;
    } else if (open.colon) {  // ~:[false~;true~]
      if (clauses.size() != 2) fail("~:[ needs exactly two clauses");
      chosen = take(args, '[').truthy() ? 1 : 0;
    } else {
      std::int64_t index;
      if (!open.params.empty() && open.params[0].kind != Param::None) {
        index = number(open, 0, 0, args);
      } else {
        Value v = take(args, '[');
        if (!v.is_int()) fail("~[ needs an integer argument, got " + in_.repr(v));
        index = v.i;
      }
      if (index >= 0 && static_cast<std::size_t>(index) < clauses.size() &&
          !(last_is_default && static_cast<std::size_t>(index) == clauses.size() - 1)) {
        chosen = static_cast<std::size_t>(index);
      } else if (last_is_default) {
        chosen = clauses.size() - 1;
      }
    }
    Outcome o = Outcome::Done;
    if (chosen < clauses.size()) o = process(clauses[chosen].first, clauses[chosen].second, args, out);
    return o;
  }

 public:
  // Formats control_[from, to) into OUT, taking arguments from ARGS.
  Outcome process(std::size_t from, std::size_t to, ArgList& args, std::string& out) {
    for (std::size_t i = from; i < to; ++i) {
      char c = control_[i];
      if (c != '~') {
        out += c;
        continue;
      }
      Directive d = parse(i);
      i = d.end - 1;
      resolve(d, args);
      switch (d.op) {
        case 'a': {
          Value v = take(args, 'a');
          out += pad_column(v.is_nil() && d.colon ? "()" : in_.repr(v, false), d, args);
          break;
        }
        case 's':
        case 'w': {
          Value v = take(args, d.op);
          out += pad_column(v.is_nil() && d.colon ? "()" : in_.repr(v), d, args);
          break;
        }
        case 'd': out += integer(take(args, 'd'), 10, d, args, 0); break;
        case 'b': out += integer(take(args, 'b'), 2, d, args, 0); break;
        case 'o': out += integer(take(args, 'o'), 8, d, args, 0); break;
        case 'x': out += integer(take(args, 'x'), 16, d, args, 0); break;
        case 'r': out += radix(d, args); break;
        case 'f':
        case 'e':
        case 'g': out += floating(d, args); break;
        case 'c': {  // ~c the character, ~:c its name when it has one, ~@c as #\\c
          Value v = take(args, 'c');
          if (!v.is_char()) fail("~c needs a character, got " + in_.repr(v));
          const char* name = char_name(static_cast<std::uint32_t>(v.i));
          if (d.colon && name != nullptr) out += name;
          else out += in_.repr(v, d.at);
          break;
        }
        case 'p': {
          if (d.colon) {
            if (args.next == 0) fail("~:p with no argument before it");
            --args.next;
          }
          bool one = eql(take(args, 'p'), Value::integer(1));
          out += d.at ? (one ? "y" : "ies") : (one ? "" : "s");
          break;
        }
        case '%':
        case '|': {
          std::int64_t count = number(d, 0, 1, args);
          out.append(static_cast<std::size_t>(std::max<std::int64_t>(0, count)), d.op == '%' ? '\n' : '\f');
          break;
        }
        case '&': {
          std::int64_t count = number(d, 0, 1, args);
          if (count > 0) {
            if (!fresh_line(out)) out += '\n';
            out.append(static_cast<std::size_t>(count - 1), '\n');
          }
          break;
        }
        case '~': out.append(static_cast<std::size_t>(std::max<std::int64_t>(1, number(d, 0, 1, args))), '~'); break;
        case 't': {
          std::int64_t colnum = number(d, 0, 1, args);
          std::int64_t colinc = number(d, 1, 1, args);
          auto col = static_cast<std::int64_t>(column(out));
          if (d.at) {
            out.append(static_cast<std::size_t>(std::max<std::int64_t>(0, colnum)), ' ');
          } else if (col < colnum) {
            out.append(static_cast<std::size_t>(colnum - col), ' ');
          } else if (colinc > 0) {
            out.append(static_cast<std::size_t>(colinc - (col - colnum) % colinc), ' ');
          }
          break;
        }
        case '*': {
          std::int64_t count = number(d, 0, d.at ? 0 : 1, args);
          std::int64_t target = d.at ? count : d.colon ? static_cast<std::int64_t>(args.next) - count
                                                      : static_cast<std::int64_t>(args.next) + count;
          if (target < 0 || target > static_cast<std::int64_t>(args.n)) fail("~* moved outside the arguments");
          args.next = static_cast<std::uint32_t>(target);
          break;
        }
        case '?': {
          Value sub = take(args, '?');
          if (!is_string(sub)) fail("~? needs a control string, got " + in_.repr(sub));
          std::string sub_control = as_string(sub)->text;
          Formatter inner(in_, sub_control, fresh_line(out));
          std::string text;
          if (d.at) {
            inner.process(0, sub_control.size(), args, text);
          } else {
            std::vector<Value> items = list_arg(take(args, '?'), '?');
            ArgList sub_args{items.data(), static_cast<std::uint32_t>(items.size())};
            inner.process(0, sub_control.size(), sub_args, text);
          }
          out += text;
          break;
        }
        case '(': {
          Directive close = find_close(d.end, ')', nullptr);
          std::string text;
          Outcome o = process(d.end, close.start, args, text);
          out += convert_case(text, d);
          i = close.end - 1;
          if (o != Outcome::Done) return o;
          break;
        }
        case '[': {
          Directive close = find_close(d.end, ']', nullptr);
          Outcome o = choose(d, args, out);
          i = close.end - 1;
          if (o != Outcome::Done) return o;
          break;
        }
        case '{': {
          Directive close = find_close(d.end, '}', nullptr);
          iterate(d, args, out);
          i = close.end - 1;
          break;
        }
        case '^': {
          bool stop;
          if (!d.params.empty() && d.params[0].kind != Param::None) {
            stop = number(d, 0, 0, args) == 0;
          } else {
            stop = args.left() == 0;
          }
          if (stop) return d.colon ? Outcome::UpAll : Outcome::Up;
          break;
        }
        case '\n':
          // ~newline skips the newline and the indentation after it; ~:newline keeps only
          // the indentation; ~@newline keeps only the newline.
          if (d.at) out += '\n';
          if (!d.colon) {
            while (i + 1 < to && (control_[i + 1] == ' ' || control_[i + 1] == '\t')) ++i;
          }
          break;
        case ';':
          fail("~; outside ~[ ~]");
        case ')':
        case ']':
        case '}':
          fail(std::string("~") + d.op + " without its opening directive");
        default:
          fail(std::string("unknown directive ~") + control_[d.end - 1]);
      }
    }
    return Outcome::Done;
  }

 private:
  Interp& in_;
  const std::string& control_;
  bool at_line_start_;
};

}  // namespace

std::string format_string(Interp& in, const std::string& control, Value* args, std::uint32_t n,
                          bool at_line_start) {
  Formatter formatter(in, control, at_line_start);
  ArgList list{args, n};
  return formatter.run(list);
}

}  // namespace tl::eval
