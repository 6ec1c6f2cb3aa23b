// SPDX-License-Identifier: Apache-2.0
// The S-expression reader: lists, dotted pairs, vectors, strings, numbers, symbols,
// keywords, quote forms and comments, each cons recording the span of its element.
#include "reader/reader.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "eval/utf8.h"

namespace tl::reader {

using eval::Value;

namespace {

bool is_delimiter(char c) {
  return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '(' ||
         c == ')' || c == '"' || c == ';' || c == '\'' || c == '`' || c == ',';
}

bool looks_numeric(std::string_view tok) {
  size_t i = 0;
  if (i < tok.size() && (tok[i] == '+' || tok[i] == '-')) ++i;
  if (i < tok.size() && tok[i] == '.') ++i;
  return i < tok.size() && tok[i] >= '0' && tok[i] <= '9';
}

}  // namespace

bool parse_number(std::string_view tok, Value& out, bool& overflow) {
  overflow = false;
  if (!looks_numeric(tok)) return false;
  size_t i = 0;
  bool neg = false;
  if (tok[i] == '+' || tok[i] == '-') neg = tok[i++] == '-';
  size_t digits_start = i;
  while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') ++i;
  if (i == tok.size()) {
    // An integer: accumulate with overflow checks (the magnitude of INT64_MIN is allowed).
    unsigned long long mag = 0;
    for (size_t k = digits_start; k < i; ++k) {
      unsigned d = static_cast<unsigned>(tok[k] - '0');
      if (mag > (~0ull - d) / 10) {
        overflow = true;
        return true;
      }
      mag = mag * 10 + d;
    }
    unsigned long long limit = neg ? (1ull << 63) : (1ull << 63) - 1;
    if (mag > limit) {
      overflow = true;
      return true;
    }
    out = Value::integer(neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag));
    return true;
  }
  // A float: digits [. digits] [e [sign] digits], with at least one digit before or after '.'.
  // Common Lisp's other exponent markers (d, f, s, l: double, single, short, long) read as e:
  // every float here is a double.
  bool has_digits = i > digits_start;
  bool is_float = false;
  if (i < tok.size() && tok[i] == '.') {
    is_float = true;
    ++i;
    size_t frac = i;
    while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') ++i;
    has_digits = has_digits || i > frac;
  }
  if (!has_digits) return false;
  std::size_t marker = std::string_view::npos;
  if (i < tok.size() && std::strchr("eEdDfFsSlL", tok[i]) != nullptr) {
    is_float = true;
    marker = i;
    ++i;
    if (i < tok.size() && (tok[i] == '+' || tok[i] == '-')) ++i;
    size_t exp = i;
    while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') ++i;
    if (i == exp) return false;
  }
  if (i != tok.size() || !is_float) return false;
  std::string copy(tok);
  if (marker != std::string_view::npos) copy[marker] = 'e';
  errno = 0;
  double d = std::strtod(copy.c_str(), nullptr);
  out = Value::real(d);
  return true;
}

Reader::Reader(eval::Interp& interp, std::uint32_t file, std::string_view text)
    : interp_(interp), file_(file), text_(text), line_(interp.sources.first_line(file)) {}

Reader::Reader(eval::Interp& interp, std::uint32_t file, std::string_view text, std::uint32_t first_line)
    : interp_(interp), file_(file), text_(text), line_(first_line) {}

Span Reader::here(std::uint32_t len) const { return Span{file_, line_, col_, len}; }

void Reader::fail(Span span, std::string message) {
  tl::Error e(ErrorKind::User, "read", "read-error", std::move(message));
  e.set_location(interp_.sources.location(span), interp_.sources.line_text(span.file, span.line));
  throw e;
}

void Reader::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Reader::skip_space() {
  while (!at_end()) {
    char c = peek();
    if (c == ';') {
      while (!at_end() && peek() != '\n') advance();
    } else if (c == '#' && peek(1) == '|') {
      Span open = here(2);
      advance();
      advance();
      int depth = 1;
      while (depth > 0) {
        if (at_end()) throw Incomplete{open, "block comment starting here is never closed"};
        if (peek() == '|' && peek(1) == '#') {
          advance();
          advance();
          --depth;
        } else if (peek() == '#' && peek(1) == '|') {
          advance();
          advance();
          ++depth;
        } else {
          advance();
        }
      }
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      advance();
    } else {
      return;
    }
  }
}

ReadStatus Reader::next(Value& out, Span& span) {
  // Work on a copy of the position so a NeedsMore result leaves the reader where it was.
  std::size_t pos = pos_;
  std::uint32_t line = line_, col = col_;
  try {
    skip_space();
    if (at_end()) return ReadStatus::End;
    out = read_form(span);
    return ReadStatus::Form;
  } catch (const Incomplete& inc) {
    incomplete_ = inc;
    pos_ = pos;
    line_ = line;
    col_ = col;
    return ReadStatus::NeedsMore;
  }
}

Value Reader::read_form(Span& span) {
  if (interp_.stack_low()) fail(here(), "forms nested too deeply to read");
  poll();
  skip_space();
  if (at_end()) throw Incomplete{here(), "the input ends where a form should be"};
  span = here();
  std::size_t start = pos_;
  Value result;
  char c = peek();
  switch (c) {
    case '(':
      advance();
      try {
        result = read_list(span, ')');
      } catch (Incomplete& inc) {
        // An unclosed list inside an unclosed list: report the outermost one.
        if (inc.paren) inc.open = span;
        throw;
      }
      break;
    case ')':
      fail(span, "unbalanced parenthesis: unexpected ')'");
    case '\0':
      // peek() also returns '\0' past the end, but the input has not ended here. A NUL
      // delimits tokens, so reading it as an atom would make an empty token and no progress
      // (issue 19: a NUL inside a list read empty symbols until memory ran out).
      fail(span, "NUL character (byte 0) in the source text");
    case '"':
      advance();
      result = read_string(span);
      break;
    case '\'':
    case '`':
    case ',': {
      advance();
      eval::Symbol* head = interp_.S.quote;
      if (c == '`') head = interp_.S.quasiquote;
      if (c == ',') {
        head = interp_.S.unquote;
        if (peek() == '@') {
          advance();
          head = interp_.S.unquote_splicing;
        }
      }
      skip_space();
      if (at_end()) throw Incomplete{span, "nothing follows this quote at the end of the input"};
      Span inner_span;
      Value inner = read_form(inner_span);
      span.len = static_cast<std::uint32_t>(pos_ - start);
      return wrap(head, span, inner_span, inner);
    }
    case '#':
      result = read_dispatch(span);
      break;
    default:
      result = read_atom(span);
      break;
  }
  if (span.line == line_) span.len = static_cast<std::uint32_t>(pos_ - start);
  else span.len = 1;
  if (eval::is_cons(result)) interp_.heap.set_form_span(result.o, span);
  return result;
}

Value Reader::wrap(eval::Symbol* head, Span span, Span inner_span, Value inner) {
  Value tail = Value::object(interp_.heap.make_spanned_cons(inner, eval::nil()));
  interp_.heap.set_span(tail.o, inner_span);
  Value form = Value::object(interp_.heap.make_spanned_cons(Value::object(head), tail));
  interp_.heap.set_span(form.o, span);
  interp_.heap.set_form_span(form.o, span);
  return form;
}

Value Reader::read_list(Span open, char close) {
  // Build the list in order; the head cell is rooted on the value stack while we read.
  eval::Interp::StackMark mark(interp_);
  interp_.push(eval::nil());
  Value* head = interp_.sp - 1;
  eval::Cons* last = nullptr;
  const char* unclosed = "unbalanced parenthesis: '(' opened here is never closed";
  for (;;) {
    skip_space();
    if (at_end()) throw Incomplete{open, unclosed, true};
    char c = peek();
    if (c == close) {
      advance();
      return *head;
    }
    if (c == ')' || c == ']') fail(here(), std::string("unbalanced parenthesis: unexpected '") + c + "'");
    if (c == '.' && is_delimiter(peek(1))) {
      Span dot = here();
      if (last == nullptr) fail(dot, "dotted pair with nothing before the '.'");
      advance();
      Span tail_span;
      skip_space();
      if (!at_end() && peek() == close) fail(dot, "dotted pair with nothing after the '.'");
      last->cdr = read_form(tail_span);
      skip_space();
      if (at_end()) throw Incomplete{open, unclosed, true};
      if (peek() != close) fail(here(), "more than one form after '.' in a dotted list");
      advance();
      return *head;
    }
    Span elem_span;
    Value elem = read_form(elem_span);
    eval::Cons* cell = interp_.heap.make_spanned_cons(elem, eval::nil());
    interp_.heap.set_span(cell, elem_span);
    if (last == nullptr) {
      *head = Value::object(cell);
    } else {
      last->cdr = Value::object(cell);
    }
    last = cell;
  }
}

Value Reader::read_string(Span open) {
  std::string text;
  const char* unclosed = "string starting here is never closed";
  for (;;) {
    if (at_end()) throw Incomplete{open, unclosed};
    char c = peek();
    if (c == '"') {
      advance();
      return interp_.make_string(std::move(text));
    }
    if (c == '\\') {
      Span esc = here(2);
      advance();
      if (at_end()) throw Incomplete{open, unclosed};
      char e = peek();
      advance();
      switch (e) {
        case 'n': text += '\n'; break;
        case 't': text += '\t'; break;
        case 'r': text += '\r'; break;
        case '0': text += '\0'; break;
        case 'e': text += '\x1b'; break;
        case '\\': text += '\\'; break;
        case '"': text += '"'; break;
        case '\n': break;  // line continuation
        case 'x': {
          std::string hex;
          while (!at_end() && std::isxdigit(static_cast<unsigned char>(peek())) && hex.size() < 2) {
            hex += peek();
            advance();
          }
          if (hex.empty()) fail(esc, "bad escape '\\x' in string: expected hex digits");
          text += static_cast<char>(std::strtol(hex.c_str(), nullptr, 16));
          break;
        }
        default: fail(esc, std::string("unknown escape '\\") + e + "' in string");
      }
      continue;
    }
    text += c;
    advance();
    poll();
  }
}

Value Reader::read_dispatch(Span start) {
  char c = peek(1);
  if (c == '(') {
    advance();
    advance();
    eval::Interp::StackMark mark(interp_);
    interp_.push(read_list(start, ')'));
    std::vector<Value> items;
    for (Value v = interp_.sp[-1]; eval::is_cons(v); v = eval::cdr(v)) items.push_back(eval::car(v));
    return interp_.make_vector(std::move(items));
  }
  if (c == '\'') {
    advance();
    advance();
    skip_space();
    if (at_end()) throw Incomplete{start, "nothing follows this #' at the end of the input"};
    Span inner_span;
    Value inner = read_form(inner_span);
    return wrap(interp_.S.function, start, inner_span, inner);
  }
  if (c == '\\') {
    // #\a, #\Space, #\Newline, #\U+00E9: one character (a UTF-8 code point) or a name.
    advance();
    advance();
    if (at_end()) throw Incomplete{start, "'#\\' at the end of the input"};
    std::size_t begin = pos_;
    std::uint32_t code = eval::next_utf8(text_, pos_);
    pos_ = begin;
    std::size_t first_end = begin;
    eval::next_utf8(text_, first_end);
    while (pos_ < first_end) advance();
    while (!at_end() && !is_delimiter(peek())) advance();
    std::string_view token = text_.substr(begin, pos_ - begin);
    if (pos_ == first_end) return Value::character(code);
    Span span{start.file, start.line, start.col, static_cast<std::uint32_t>(token.size() + 2)};
    std::int64_t named = eval::name_char(token);
    if (named >= 0) return Value::character(static_cast<std::uint32_t>(named));
    if (token.size() > 2 && (token[0] == 'U' || token[0] == 'u') && token[1] == '+') {
      std::uint32_t hex = 0;
      auto res = std::from_chars(token.data() + 2, token.data() + token.size(), hex, 16);
      if (res.ec == std::errc() && res.ptr == token.data() + token.size() && hex <= 0x10FFFF) {
        return Value::character(hex);
      }
    }
    fail(span, "unknown character name '#\\" + std::string(token) + "'");
  }
  if (c == ':') {
    // #:name, an uninterned symbol (as gensyms print): a new one each time it is read.
    advance();
    advance();
    const std::size_t begin = pos_;
    while (!at_end() && !is_delimiter(peek())) advance();
    std::string_view name = text_.substr(begin, pos_ - begin);
    if (name.empty()) {
      fail(Span{start.file, start.line, start.col, 2}, "'#:' must be followed by a symbol's name");
    }
    return Value::object(interp_.make_uninterned(name));
  }
  if (int radix = c == 'x' || c == 'X' ? 16 : c == 'b' || c == 'B' ? 2 : c == 'o' || c == 'O' ? 8 : 0) {
    // #xFF, #b-101, #o17: an integer in base 16, 2 or 8, as Common Lisp reads them.
    advance();
    advance();
    const std::size_t begin = pos_;
    while (!at_end() && !is_delimiter(peek())) advance();
    std::string_view digits = text_.substr(begin, pos_ - begin);
    const std::string written(digits);  // for messages, sign included
    Span span{start.file, start.line, start.col, static_cast<std::uint32_t>(digits.size() + 2)};
    const bool negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    std::uint64_t magnitude = 0;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, radix);
    if (digits.empty() || res.ptr != digits.data() + digits.size() ||
        (res.ec != std::errc() && res.ec != std::errc::result_out_of_range)) {
      fail(span, "'#" + std::string(1, c) + "' needs base-" + std::to_string(radix) + " digits, got '" + written + "'");
    }
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    if (res.ec == std::errc::result_out_of_range || magnitude > limit) {
      fail(span, "integer #" + std::string(1, c) + written + " does not fit in 64 bits");
    }
    return Value::integer(negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude));
  }
  if (pos_ + 1 >= text_.size()) throw Incomplete{start, "'#' at the end of the input"};
  if (c == '\0') {
    fail(Span{start.file, start.line, start.col + 1, 1}, "NUL character (byte 0) in the source text");
  }
  fail(Span{start.file, start.line, start.col, 2}, std::string("unknown reader syntax '#") + c + "'");
}

Value Reader::read_atom(Span start) {
  std::size_t begin = pos_;
  while (!at_end() && !is_delimiter(peek())) {
    if (peek() == '#' && peek(1) == '|') break;
    advance();
  }
  std::string_view tok = text_.substr(begin, pos_ - begin);
  Span span = start;
  span.len = static_cast<std::uint32_t>(tok.size());
  if (tok == ".") fail(span, "unexpected '.' outside a list");
  Value number;
  bool overflow = false;
  if (parse_number(tok, number, overflow)) {
    if (overflow) {
      fail(span, "integer " + std::string(tok) + " does not fit in 64 bits");
    }
    return number;
  }
  // 1+ and 1- are the classic increment functions; anything else that starts like a number
  // but is not one is a typo worth reporting.
  if (looks_numeric(tok) && tok != "1+" && tok != "1-") {
    fail(span, "bad number syntax '" + std::string(tok) + "'");
  }
  if (tok[0] == ':') {
    if (tok.size() == 1) fail(span, "a keyword needs a name after ':'");
    return Value::object(interp_.keyword(tok.substr(1)));
  }
  if (tok == "nil") return eval::nil();
  return Value::object(interp_.intern(tok));
}

}  // namespace tl::reader
