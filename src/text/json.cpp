// SPDX-License-Identifier: Apache-2.0
// JSON in the language. Reading runs nlohmann::json's SAX parser (Debian's nlohmann-json3-dev)
// straight into Lisp values, with an explicit stack so no nesting depth can overflow the C
// stack; writing is a small printer that checks depth, cycles and UTF-8.
#include "text/json.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eval/builtins.h"
#include "text/bpe.h"

namespace tl::text {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

constexpr std::int64_t kDefaultMaxDepth = 1000;

// "line 3, column 7" for the byte at `offset` of `text` (both 1-based, columns in bytes, as
// nlohmann's own messages count them).
std::string line_column(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

// An input iterator over the text that records how far the parser has read, so errors the
// builder raises (depth, integer range) can name a line and column as the parser's do.
struct CountingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char* base = nullptr;
  std::size_t* consumed = nullptr;
  reference operator*() const { return *p; }
  CountingIterator& operator++() {
    ++p;
    *consumed = static_cast<std::size_t>(p - base);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p == o.p; }
  bool operator!=(const CountingIterator& o) const { return p != o.p; }
};

struct ReadOptions {
  bool objects_as_alists = false;
  bool arrays_as_lists = false;
  std::int64_t max_depth = kDefaultMaxDepth;
};

// Builds Lisp values from SAX events. The collector runs only at the evaluator's safe
// points, never inside a builtin, so values held in these C++ vectors stay alive.
class Builder : public nlohmann::json_sax<nlohmann::json> {
 public:
  Builder(Interp& in, const char* fn, const std::string& where, const std::string& text,
          const std::size_t& consumed, ReadOptions opts)
      : in_(in), fn_(fn), where_(where), text_(text), consumed_(consumed), opts_(opts) {}

  Value result() const { return result_; }

  bool null() override { return add(Value::object(in_.keyword("null"))); }
  bool boolean(bool val) override {
    return add(val ? in_.t() : Value::object(in_.keyword("false")));
  }
  bool number_integer(number_integer_t val) override { return add(Value::integer(val)); }
  bool number_unsigned(number_unsigned_t val) override {
    if (val > static_cast<std::uint64_t>(INT64_MAX)) too_large(std::to_string(val));
    return add(Value::integer(static_cast<std::int64_t>(val)));
  }
  bool number_float(number_float_t val, const string_t& s) override {
    // The lexer reads an integer too large for 64 bits as a float; say so instead.
    if (s.find_first_of(".eE") == std::string::npos) too_large(s);
    return add(Value::real(val));
  }
  bool string(string_t& val) override { return add(in_.make_string(std::move(val))); }
  bool binary(binary_t&) override { return false; }  // not produced by the text parser
  bool start_object(std::size_t) override { return open(true); }
  bool key(string_t& val) override {
    frames_.back().key = in_.make_string(std::move(val));
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." without the tag.
    std::string what = ex.what();
    auto close_bracket = what.find("] ");
    if (close_bracket != std::string::npos) what = what.substr(close_bracket + 2);
    // Other exceptions ("number overflow parsing '1e400'") carry no location: point at the token.
    if (what.rfind("parse error", 0) != 0) {
      std::size_t start = position >= last_token.size() ? position - last_token.size() : 0;
      what = "parse error at " + line_column(text_, start) + ": " + what;
    }
    in_.error("read-error", std::string(fn_) + ": " + where_ + what);
  }

 private:
  struct Frame {
    bool object;
    Value key;                 // the pending key of an object
    std::vector<Value> items;  // array items, or alternating keys and values
  };

  // An error at byte `offset`; by default the last byte the parser read.
  [[noreturn]] void fail(const std::string& message, std::size_t back = 1) {
    std::size_t offset = consumed_ >= back ? consumed_ - back : 0;
    in_.error("read-error", std::string(fn_) + ": " + where_ + "parse error at " +
                                line_column(text_, offset) + ": " + message);
  }
  // The parser has read the number and the character after it: point at the number's start.
  [[noreturn]] void too_large(const std::string& digits) {
    fail("the integer " + digits + " does not fit in 64 bits (write it as a float, " + digits +
             ".0)",
         digits.size() + 1);
  }

  bool open(bool object) {
    if (static_cast<std::int64_t>(frames_.size()) >= opts_.max_depth) {
      fail("nesting deeper than " + std::to_string(opts_.max_depth) + " (:max-depth)");
    }
    frames_.push_back(Frame{object, Value(), {}});
    return true;
  }

  bool close() {
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    Value v;
    if (frame.object) {
      if (opts_.objects_as_alists) {
        std::vector<Value> pairs;
        for (std::size_t i = 0; i < frame.items.size(); i += 2)
          pairs.push_back(in_.cons(frame.items[i], frame.items[i + 1]));
        v = in_.list_from(pairs.data(), pairs.size());
      } else {
        v = in_.make_hash(eval::HashTest::Equal);
        // Insertion-ordered, so the object's key order survives; a repeated key keeps its last
        // value.
        for (std::size_t i = 0; i < frame.items.size(); i += 2)
          eval::hash_put(eval::as_hash(v), frame.items[i], frame.items[i + 1]);
      }
    } else if (opts_.arrays_as_lists) {
      v = in_.list_from(frame.items.data(), frame.items.size());
    } else {
      v = in_.make_vector(std::move(frame.items));
    }
    return add(v);
  }

  bool add(Value v) {
    if ((++count_ & 0xffff) == 0) in_.check_interrupt(0x10000);
    if (frames_.empty()) {
      result_ = v;
      return true;
    }
    Frame& top = frames_.back();
    if (top.object) top.items.push_back(top.key);
    top.items.push_back(v);
    return true;
  }

  Interp& in_;
  const char* fn_;
  const std::string& where_;
  const std::string& text_;
  const std::size_t& consumed_;
  ReadOptions opts_;
  std::vector<Frame> frames_;
  Value result_;
  std::size_t count_ = 0;
};

Value read_json(Interp& in, const char* fn, const std::string& where, const std::string& text,
                ReadOptions opts) {
  std::size_t consumed = 0;
  Builder builder(in, fn, where, text, consumed, opts);
  CountingIterator first{text.data(), text.data(), &consumed};
  CountingIterator last{text.data() + text.size(), text.data(), &consumed};
  nlohmann::json::sax_parse(first, last, &builder);
  return builder.result();
}

ReadOptions read_options(Interp& in, const char* fn, Args a, N n, N from) {
  if ((n - from) % 2 != 0)
    in.error("program-error", std::string(fn) + ": keyword arguments come in pairs");
  for (N i = from; i < n; i += 2) {
    if (!eval::is_symbol(a[i]) || !eval::as_symbol(a[i])->is_keyword())
      in.type_error(fn, static_cast<int>(i + 1), "a keyword", a[i]);
    const std::string& name = eval::as_symbol(a[i])->name;
    if (name != "object-as" && name != "array-as" && name != "max-depth") {
      in.error("program-error", std::string(fn) + ": unknown keyword :" + name +
                                    " (expected :object-as, :array-as or :max-depth)");
    }
  }
  auto choice = [&](const char* key, const char* a_name, const char* b_name) {
    Value v = eval::keyword_arg(a, from, n, key);
    if (v.is_nil()) return false;
    std::string got = eval::is_symbol(v) ? eval::as_symbol(v)->name : "";
    if (got == b_name) return true;
    if (got == a_name) return false;
    in.error("type-error", std::string(fn) + ": :" + key + " must be :" + a_name +
                               " or :" + b_name + ", got " + in.repr(v));
  };
  ReadOptions opts;
  opts.objects_as_alists = choice("object-as", "hash-table", "alist");
  opts.arrays_as_lists = choice("array-as", "vector", "list");
  Value depth = eval::keyword_arg(a, from, n, "max-depth");
  if (!depth.is_nil()) {
    if (!depth.is_int() || depth.i < 1)
      in.error("type-error",
               std::string(fn) + ": :max-depth must be a positive integer, got " + in.repr(depth));
    opts.max_depth = depth.i;
  }
  return opts;
}

// --- writing ---------------------------------------------------------------------------

bool is_valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = valid_utf8_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

class Writer {
 public:
  Writer(Interp& in, const char* fn, bool pretty, std::int64_t max_depth)
      : in_(in), fn_(fn), pretty_(pretty), max_depth_(max_depth) {}

  void value(Value v, std::int64_t depth) {
    if (depth > max_depth_) {
      in_.error("error", std::string(fn_) + ": nesting deeper than " + std::to_string(max_depth_) +
                             " (a circular structure? :max-depth raises the limit)");
    }
    if ((++count_ & 0xffff) == 0) in_.check_interrupt(0x10000);
    switch (v.tag) {
      case eval::Tag::Nil:
        out_ += "[]";
        return;
      case eval::Tag::Int:
        out_ += std::to_string(v.i);
        return;
      case eval::Tag::Float:
        if (!std::isfinite(v.f)) unwritable(v, "JSON has no NaN or infinity");
        eval::print_float(out_, v.f);
        return;
      case eval::Tag::Char: {  // a character writes as a one-character string
        std::string text;
        eval::print_char(text, static_cast<std::uint32_t>(v.i), false);
        string(text);
        return;
      }
      case eval::Tag::Obj:
        break;
    }
    switch (v.o->kind) {
      case eval::ObjKind::String:
        string(eval::as_string(v)->text);
        return;
      case eval::ObjKind::Symbol:
        symbol(v);
        return;
      case eval::ObjKind::Vector: {
        const auto& items = eval::as_vector(v)->items;
        open('[', items.empty());
        for (std::size_t i = 0; i < items.size(); ++i) item(i, depth), value(items[i], depth + 1);
        close(']', items.empty(), depth);
        return;
      }
      case eval::ObjKind::HashTable: {
        auto* h = eval::as_hash(v);
        bool empty = h->live == 0;
        open('{', empty);
        std::size_t i = 0;
        for (const auto& [key, val] : h->entries) {
          if (key.tag == eval::Tag::Obj && key.o == nullptr) continue;  // a removed entry
          item(i++, depth);
          member(key, val, depth);
        }
        close('}', empty, depth);
        return;
      }
      case eval::ObjKind::Cons:
        list(v, depth);
        return;
      default:
        unwritable(
            v, "expected a hash table, alist, list, vector, string, number, t, :false or :null");
    }
  }

  std::string take() { return std::move(out_); }

 private:
  [[noreturn]] void unwritable(Value v, const char* why) {
    in_.error("type-error", std::string(fn_) + ": cannot write " + in_.repr(v) + " (" +
                                in_.type_name(v) + ") as JSON: " + why);
  }

  void symbol(Value v) {
    eval::Symbol* s = eval::as_symbol(v);
    if (v.same(in_.t()))
      out_ += "true";
    else if (s->is_keyword() && s->name == "false")
      out_ += "false";
    else if (s->is_keyword() && s->name == "null")
      out_ += "null";
    else
      string(s->name);  // other symbols and keywords are strings of their names
  }

  void string(const std::string& s) {
    if (!is_valid_utf8(s)) {
      std::string shown;
      eval::print_string(shown, s.substr(0, 40), true);
      in_.error("type-error", std::string(fn_) + ": cannot write the string " + shown +
                                  (s.size() > 40 ? "..." : "") + " as JSON: it is not valid UTF-8");
    }
    out_ += '"';
    for (char c : s) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out_ += buf;
          } else {
            out_ += c;
          }
      }
    }
    out_ += '"';
  }

  // A list whose items are all conses with a string or symbol car is an alist: an object.
  void list(Value v, std::int64_t depth) {
    bool alist = true;
    eval::ListWalk walk(in_, fn_, 1, v);
    for (; !walk.done(); walk.next()) {
      Value item = walk.item();
      if (!eval::is_cons(item) ||
          !(eval::is_string(eval::car(item)) || eval::is_symbol(eval::car(item))))
        alist = false;
    }
    walk.require_proper();
    open(alist ? '{' : '[', false);
    std::size_t i = 0;
    for (Value cell = v; eval::is_cons(cell); cell = eval::cdr(cell)) {
      item(i++, depth);
      if (alist)
        member(eval::car(eval::car(cell)), eval::cdr(eval::car(cell)), depth);
      else
        value(eval::car(cell), depth + 1);
    }
    close(alist ? '}' : ']', false, depth);
  }

  void member(Value key, Value val, std::int64_t depth) {
    if (eval::is_string(key))
      string(eval::as_string(key)->text);
    else if (eval::is_symbol(key))
      string(eval::as_symbol(key)->name);
    else if (key.is_int())
      string(std::to_string(key.i));
    else
      unwritable(key, "an object key must be a string, symbol or integer");
    out_ += pretty_ ? ": " : ":";
    value(val, depth + 1);
  }

  void open(char c, bool) { out_ += c; }
  void item(std::size_t i, std::int64_t depth) {
    if (i > 0) out_ += ',';
    if (pretty_) newline(depth + 1);
  }
  void close(char c, bool empty, std::int64_t depth) {
    if (pretty_ && !empty) newline(depth);
    out_ += c;
  }
  void newline(std::int64_t depth) {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth) * 2, ' ');
  }

  Interp& in_;
  const char* fn_;
  bool pretty_;
  std::int64_t max_depth_;
  std::string out_;
  std::size_t count_ = 0;
};

std::string write_json(Interp& in, const char* fn, Value v, Args a, N n, N from) {
  if ((n - from) % 2 != 0)
    in.error("program-error", std::string(fn) + ": keyword arguments come in pairs");
  for (N i = from; i < n; i += 2) {
    const bool ok =
        eval::is_symbol(a[i]) && eval::as_symbol(a[i])->is_keyword() &&
        (eval::as_symbol(a[i])->name == "pretty" || eval::as_symbol(a[i])->name == "max-depth");
    if (!ok)
      in.error("program-error", std::string(fn) + ": unknown keyword " + in.repr(a[i]) +
                                    " (expected :pretty or :max-depth)");
  }
  Value depth = eval::keyword_arg(a, from, n, "max-depth");
  if (!depth.is_nil() && (!depth.is_int() || depth.i < 1)) {
    in.error("type-error",
             std::string(fn) + ": :max-depth must be a positive integer, got " + in.repr(depth));
  }
  Writer w(in, fn, eval::keyword_arg(a, from, n, "pretty").truthy(),
           depth.is_nil() ? kDefaultMaxDepth : depth.i);
  w.value(v, 0);
  std::string out = w.take();
  if (eval::keyword_arg(a, from, n, "pretty").truthy()) out += '\n';
  return out;
}

}  // namespace

void register_json_builtins(Interp& in) {
  TL_BUILTIN(in, "json-read", 1, -1,
             "(json-read STRING &key (object-as :hash-table) (array-as :vector) (max-depth 1000))",
             "The value of the JSON text STRING. Objects become equal hash tables with string keys, in\n"
             "the text's key order (:object-as :alist gives lists of (KEY . VALUE)); arrays become\n"
             "vectors (:array-as :list gives lists); true, false and null become t, :false and :null;\n"
             "integers stay integers (one outside 64 bits is an error), other numbers are floats;\n"
             "\\u escapes (surrogate pairs too) become UTF-8. Malformed text is a read-error naming\n"
             "the line and column; nesting deeper than :max-depth is one too."
             "\n  (gethash \"b\" (json-read \"{\\\"a\\\": 1, \\\"b\\\": [true, null]}\"))  ; => #(t :null)"
             "\n  (json-read \"{\\\"a\\\": [1, 2.5]}\" :object-as :alist :array-as :list)  ; => ((\"a\" 1 2.5))",
             [](Interp& in, Args a, N n) -> Value {
               const std::string& text = eval::arg_string(in, "json-read", a, 0)->text;
               return read_json(in, "json-read", "", text, read_options(in, "json-read", a, n, 1));
             });
  TL_BUILTIN(in, "json-read-file", 1, -1, "(json-read-file PATH &key object-as array-as max-depth)",
             "The value of the JSON file PATH, read as json-read reads a string; errors name the file."
             "\n  (progn (write-file \"/tmp/tl-doc-json-read-file.json\" \"[1, \\\"two\\\"]\")"
             "\n         (json-read-file \"/tmp/tl-doc-json-read-file.json\"))  ; => #(1 \"two\")",
             [](Interp& in, Args a, N n) -> Value {
               const std::string& path = eval::arg_string(in, "json-read-file", a, 0)->text;
               ReadOptions opts = read_options(in, "json-read-file", a, n, 1);
               std::ifstream f(path, std::ios::binary);
               if (!f) in.error("file-error", "json-read-file: cannot open \"" + path + "\"");
               std::stringstream ss;
               ss << f.rdbuf();
               return read_json(in, "json-read-file", path + ": ", ss.str(), opts);
             });
  TL_BUILTIN(in, "json-write", 1, -1, "(json-write VALUE &key pretty (max-depth 1000))",
             "VALUE as JSON text: hash tables and alists (lists of conses whose cars are strings or\n"
             "symbols) become objects, vectors and other lists arrays (nil is []), t, :false and :null\n"
             "become true, false and null, other symbols strings of their names. Floats print so they\n"
             "read back as floats (1.0); NaN, infinities and strings that are not UTF-8 are errors.\n"
             ":pretty t indents by two spaces and ends with a newline."
             "\n  (json-write '((\"n\" . 1) (\"xs\" . #(1 2.0)) (\"ok\" . t)))  ; =>"
             " \"{\\\"n\\\":1,\\\"xs\\\":[1,2.0],\\\"ok\\\":true}\""
             "\n  (json-write '(1 :null :false))  ; => \"[1,null,false]\"",
             [](Interp& in, Args a, N n) -> Value {
               return in.make_string(write_json(in, "json-write", a[0], a, n, 1));
             });
  TL_BUILTIN(in, "json-write-file", 2, -1, "(json-write-file VALUE PATH &key pretty max-depth)",
             "Writes VALUE as JSON (as json-write) to the file PATH, replacing it; returns VALUE."
             "\n  (progn (json-write-file '((\"a\" . 1)) \"/tmp/tl-doc-json-write-file.json\")"
             "\n         (read-file \"/tmp/tl-doc-json-write-file.json\"))  ; => \"{\\\"a\\\":1}\"",
             [](Interp& in, Args a, N n) -> Value {
               const std::string& path = eval::arg_string(in, "json-write-file", a, 1)->text;
               std::string text = write_json(in, "json-write-file", a[0], a, n, 2);
               std::ofstream f(path, std::ios::binary);
               if (!f)
                 in.error("file-error",
                          "json-write-file: cannot open \"" + path + "\" for writing");
               f << text;
               if (!f) in.error("file-error", "json-write-file: cannot write \"" + path + "\"");
               return a[0];
             });
}

}  // namespace tl::text
