// SPDX-License-Identifier: Apache-2.0
// Printing values (prin1 readably, princ for people), type names, and the equality and hash
// functions behind eq/eql/equal and hash tables.
#include <charconv>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "eval/builtins.h"
#include "eval/interp.h"
#include "eval/utf8.h"

namespace tl::eval {

namespace {

constexpr int kMaxPrintDepth = 2000;

}  // namespace

void print_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  // "1e+20" is fine to read back, but make sure there is a digit before 'e' with a dot.
  out += s;
}

void print_string(std::string& out, const std::string& s, bool readably) {
  if (!readably) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  out += '"';
}

namespace {

// Prints one value. Structure that refers back to itself is printed with labels, as Common
// Lisp does: #1=(a . #1#). With *print-circle* every object reached twice gets a label; without
// it only the objects a cycle returns to do, so no structure prints forever (issue 19). Ctrl-C
// is polled every few thousand objects, since even a finite DAG can print exponentially long.
class Printer {
 public:
  Printer(Interp& in, std::string& out, bool readably)
      : in_(in),
        out_(out),
        readably_(readably),
        length_(limit(in.S.print_length->value)),
        level_(limit(in.S.print_level->value)) {}
  ~Printer() {
    for (Obj* o : visited_) o->marked &= kGcMark;
  }
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;

  void print(Value v) {
    if (is_cons(v) || is_kind(v, ObjKind::Vector)) find_labels(v, in_.print_circle());
    value(v, 0);
  }

 private:
  // Marks on the `marked` byte of each object reached, cleared again by the destructor. The
  // collector uses only bit 0 (kGcMark): printing a lazy tensor realizes it, which may collect.
  static constexpr std::uint8_t kSeen = 2;
  static constexpr std::uint8_t kOnPath = 4;  // an ancestor of the object being visited

  static bool is_container(Value v) { return is_cons(v) || is_kind(v, ObjKind::Vector); }

  // Whether the Lisp function HOOK (when defined) printed V: it returns V's text, or nil for
  // the printer's own form (print-object for class instances, a structure's :print-object).
  bool printed_by(const char* hook, Value v) {
    Symbol* fn = in_.intern(hook);
    if (!fn->bound) return false;
    Value args[2] = {v, in_.boolean(readably_)};
    Value text = in_.apply(fn->value, args, 2);
    if (!is_string(text)) return false;
    out_ += as_string(text)->text;
    return true;
  }

  // *print-length* and *print-level*: a non-negative integer, or -1 for none (nil).
  static std::int64_t limit(Value v) { return v.is_int() && v.i >= 0 ? v.i : -1; }
  // Whether a list or vector at DEPTH is past *print-level* (printed as #).
  bool too_deep(int depth) {
    if (level_ < 0 || depth < level_) return false;
    out_ += '#';
    return true;
  }

  // Walks the structure depth-first (without recursion: lists can be long) and records which
  // objects need a label: those reached again while still on the path from the root (cycles),
  // and with `shared`, those reached again at all.
  void find_labels(Value root, bool shared) {
    struct Step {
      Obj* obj;
      std::size_t next_child;
    };
    std::vector<Step> path;
    auto enter = [&](Value v) {
      if (!is_container(v)) return;
      Obj* o = v.o;
      if (o->marked & kSeen) {
        if (shared || (o->marked & kOnPath)) labels_.emplace(o, 0);
        return;
      }
      o->marked = static_cast<std::uint8_t>(o->marked | kSeen | kOnPath);
      visited_.push_back(o);
      path.push_back(Step{o, 0});
    };
    enter(root);
    while (!path.empty()) {
      poll();
      Step& top = path.back();
      Obj* o = top.obj;
      Value child;
      bool has_child = false;
      if (o->kind == ObjKind::Cons) {
        if (top.next_child < 2) {
          child = top.next_child == 0 ? static_cast<Cons*>(o)->car : static_cast<Cons*>(o)->cdr;
          has_child = true;
        }
      } else {
        auto& items = static_cast<Vector*>(o)->items;
        if (top.next_child < items.size()) {
          child = items[top.next_child];
          has_child = true;
        }
      }
      if (!has_child) {
        o->marked = static_cast<std::uint8_t>((o->marked & kGcMark) | kSeen);
        path.pop_back();
        continue;
      }
      ++top.next_child;
      enter(child);  // may grow `path`, so `top` is not used after this
    }
  }

  void poll() {
    if ((++count_ & 0xfff) == 0) in_.check_interrupt(0x1000);
  }

  // Prints "#n#" for a labelled object already printed, "#n=" before its first printing.
  // True when the object is done (a reference).
  bool label(Obj* o) {
    if (labels_.empty()) return false;
    auto it = labels_.find(o);
    if (it == labels_.end()) return false;
    if (it->second > 0) {
      out_ += '#' + std::to_string(it->second) + '#';
      return true;
    }
    it->second = ++next_label_;
    out_ += '#' + std::to_string(it->second) + '=';
    return false;
  }

  bool is_labelled(Value v) const { return !labels_.empty() && is_container(v) && labels_.count(v.o); }

  void list(Value v, int depth) {
    Value head = car(v);
    Value rest = cdr(v);
    if (is_symbol(head) && is_cons(rest) && cdr(rest).is_nil() && !is_labelled(rest)) {
      const char* prefix = nullptr;
      if (as_symbol(head) == in_.S.quote) prefix = "'";
      else if (as_symbol(head) == in_.S.quasiquote) prefix = "`";
      else if (as_symbol(head) == in_.S.unquote) prefix = ",";
      else if (as_symbol(head) == in_.S.unquote_splicing) prefix = ",@";
      else if (as_symbol(head) == in_.S.function) prefix = "#'";
      if (prefix != nullptr) {
        out_ += prefix;
        // (unquote @x) is ", @x": ",@x" would read back as unquote-splicing (found by fuzzing).
        Value inner = car(rest);
        if (prefix[0] == ',' && prefix[1] == '\0' && is_symbol(inner) && !as_symbol(inner)->is_keyword() &&
            as_symbol(inner)->name.starts_with('@')) {
          out_ += ' ';
        }
        value(inner, depth + 1);
        return;
      }
    }
    out_ += '(';
    if (length_ == 0) {
      out_ += "...)";
      return;
    }
    value(head, depth + 1);
    std::int64_t shown = 1;
    for (v = rest; is_cons(v); v = cdr(v)) {
      if (is_labelled(v)) break;  // the tail is shared: printed as . #n# or . #n=(...)
      poll();
      out_ += ' ';
      if (length_ >= 0 && shown >= length_) {
        out_ += "...)";
        return;
      }
      ++shown;
      value(car(v), depth + 1);
    }
    if (!v.is_nil()) {
      out_ += " . ";
      value(v, depth + 1);
    }
    out_ += ')';
  }

  void value(Value v, int depth) {
    if (depth > kMaxPrintDepth) {
      out_ += "...";
      return;
    }
    switch (v.tag) {
      case Tag::Nil: out_ += "nil"; return;
      case Tag::Int: out_ += std::to_string(v.i); return;
      case Tag::Float: print_float(out_, v.f); return;
      case Tag::Char: print_char(out_, static_cast<std::uint32_t>(v.i), readably_); return;
      case Tag::Obj: break;
    }
    poll();
    switch (v.o->kind) {
      case ObjKind::Cons:
        if (!too_deep(depth) && !label(v.o)) list(v, depth);
        return;
      case ObjKind::Symbol: {
        Symbol* s = as_symbol(v);
        if (s->is_keyword()) out_ += ':';
        if (!s->interned && readably_) out_ += "#:";  // a gensym: prin1 says it is no interned symbol
        out_ += s->name;
        return;
      }
      case ObjKind::String: print_string(out_, as_string(v)->text, readably_); return;
      case ObjKind::Vector: {
        if (too_deep(depth) || label(v.o)) return;
        out_ += "#(";
        std::int64_t shown = 0;
        for (const Value& item : as_vector(v)->items) {
          if (shown > 0) out_ += ' ';
          if (length_ >= 0 && shown >= length_) {
            out_ += "...";
            break;
          }
          ++shown;
          value(item, depth + 1);
        }
        out_ += ')';
        return;
      }
      case ObjKind::Struct: {
        auto* instance = static_cast<Instance*>(v.o);
        auto& type = as_vector(instance->type)->items;
        if (type.size() == 4) {
          // An instance of a CLOS class: print-object says how (lisp/39-clos.lisp).
          if (printed_by("%print-instance", v)) return;
          out_ += "#<";
          value(type[0], depth + 1);
          out_ += '>';
          return;
        }
        // A structure type defined with a :print-object or :print-function prints through it
        // (lisp/35-defstruct.lisp); the others as #S(NAME :SLOT VALUE ...), as Common Lisp's.
        if (printed_by("%print-structure", v)) return;
        out_ += "#S(";
        value(type[0], depth + 1);
        Value names = type[1];
        for (const Value& slot : instance->slots) {
          out_ += " :";
          out_ += as_symbol(car(names))->name;
          names = cdr(names);
          out_ += ' ';
          value(slot, depth + 1);
        }
        out_ += ')';
        return;
      }
      case ObjKind::HashTable: {
        HashTable* h = as_hash(v);
        const char* test = h->test == HashTest::Eq ? "eq" : h->test == HashTest::Eql ? "eql" : "equal";
        out_ += "#<hash-table :test " + std::string(test) + " :count " + std::to_string(h->live) + ">";
        return;
      }
      case ObjKind::Closure: {
        Closure* c = as_closure(v);
        out_ += "#<function ";
        out_ += is_symbol(c->name) ? as_symbol(c->name)->name : std::string("lambda");
        out_ += '>';
        return;
      }
      case ObjKind::Native: out_ += "#<builtin " + as_native(v)->name + ">"; return;
      case ObjKind::Macro: {
        Macro* m = as_macro(v);
        out_ += "#<macro ";
        out_ += is_symbol(m->name) ? as_symbol(m->name)->name : std::string("anonymous");
        out_ += '>';
        return;
      }
      case ObjKind::Env: out_ += "#<environment>"; return;
      case ObjKind::Code: out_ += "#<code>"; return;
      case ObjKind::Condition: {
        Condition* c = as_condition(v);
        // princ (~a) shows a condition's report, as in Common Lisp.
        if (!readably_) {
          out_ += in_.repr(c->message, false);
          return;
        }
        out_ += "#<condition ";
        std::string type_text = in_.repr(c->type, false);
        out_ += type_text;
        out_ += ": ";
        out_ += in_.repr(c->message, false);
        out_ += '>';
        return;
      }
      case ObjKind::Foreign: static_cast<Foreign*>(v.o)->print(out_); return;
    }
  }

  Interp& in_;
  std::string& out_;
  bool readably_;
  std::vector<Obj*> visited_;                  // objects whose marks find_labels set
  std::unordered_map<Obj*, int> labels_;       // 0 until printed, then the label's number
  int next_label_ = 0;
  std::size_t count_ = 0;
  std::int64_t length_, level_;  // *print-length* and *print-level*, -1 for none
};

}  // namespace

bool Interp::print_circle() const { return S.print_circle->value.truthy(); }

void Interp::print_to(std::string& out, Value v, bool readably) {
  Printer(*this, out, readably).print(v);
}

std::string Interp::repr(Value v, bool readably) {
  std::string out;
  print_to(out, v, readably);
  return out;
}

std::string Interp::type_name(Value v) const {
  switch (v.tag) {
    case Tag::Nil: return "null";
    case Tag::Int: return "integer";
    case Tag::Float: return "float";
    case Tag::Char: return "character";
    case Tag::Obj: break;
  }
  switch (v.o->kind) {
    case ObjKind::Cons: return "cons";
    case ObjKind::Symbol: return as_symbol(v)->is_keyword() ? "keyword" : "symbol";
    case ObjKind::String: return "string";
    case ObjKind::Vector: return "vector";
    case ObjKind::HashTable: return "hash-table";
    case ObjKind::Closure: return "function";
    case ObjKind::Native: return "function";
    case ObjKind::Macro: return "macro";
    case ObjKind::Env: return "environment";
    case ObjKind::Code: return "code";
    case ObjKind::Condition: return "condition";
    case ObjKind::Foreign: return static_cast<Foreign*>(v.o)->type_name();
    case ObjKind::Struct: {
      Value type = static_cast<Instance*>(v.o)->type;
      return as_symbol(as_vector(type)->items[0])->name;
    }
  }
  return "unknown";
}

namespace {
struct CharName {
  std::uint32_t code;
  const char* name;
};
constexpr CharName kCharNames[] = {{0, "Nul"}, {7, "Bell"}, {8, "Backspace"}, {9, "Tab"}, {10, "Newline"},
                                   {12, "Page"}, {13, "Return"}, {27, "Escape"}, {32, "Space"}, {127, "Rubout"}};
}  // namespace

const char* char_name(std::uint32_t code) {
  for (const CharName& c : kCharNames) {
    if (c.code == code) return c.name;
  }
  return nullptr;
}

std::int64_t name_char(std::string_view name) {
  auto same = [&](std::string_view other) {
    if (other.size() != name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(name[i])) != std::tolower(static_cast<unsigned char>(other[i]))) return false;
    }
    return true;
  };
  for (const CharName& c : kCharNames) {
    if (same(c.name)) return c.code;
  }
  if (same("Linefeed")) return 10;
  if (same("Null")) return 0;
  if (same("Del") || same("Delete")) return 127;
  return -1;
}

void print_char(std::string& out, std::uint32_t code, bool readably) {
  if (!readably) {
    append_utf8(out, code);
    return;
  }
  out += "#\\";
  if (const char* name = char_name(code)) {
    out += name;
  } else if (code < 32 || (code >= 0x80 && code < 0xA0)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", code);
    out += hex;
  } else {
    append_utf8(out, code);
  }
}

bool eql(Value a, Value b) { return a.same(b); }

namespace {

// Compares a and b like `equal`, carrying on from the pairs in `todo`, for structures that may
// be circular. Objects compared are merged into classes (union-find) on the assumption that they
// are equal; a pair already in one class is not compared again. Every comparison merges two
// classes or stops, so the walk ends on any structure, cyclic or not, and a difference is
// still found wherever it lies (the assumption is only ever used for pairs being compared).
bool equal_graph(std::vector<std::pair<Value, Value>>& todo, Interp* poll) {
  std::unordered_map<Obj*, Obj*> parent;
  auto find = [&](Obj* o) {
    for (;;) {
      auto it = parent.find(o);
      if (it == parent.end() || it->second == o) return o;
      auto up = parent.find(it->second);
      if (up != parent.end()) it->second = up->second;  // path halving
      o = it->second;
    }
  };
  for (std::size_t steps = 1; !todo.empty(); ++steps) {
    if (poll != nullptr && (steps & 0xfff) == 0) poll->check_interrupt(0x1000);
    auto [a, b] = todo.back();
    todo.pop_back();
    if (a.same(b)) continue;
    if (a.tag != Tag::Obj || b.tag != Tag::Obj || a.o->kind != b.o->kind) return false;
    switch (a.o->kind) {
      case ObjKind::String:
        if (as_string(a)->text != as_string(b)->text) return false;
        continue;
      case ObjKind::Vector:
      case ObjKind::Cons: break;
      default: return false;
    }
    Obj* ra = find(a.o);
    Obj* rb = find(b.o);
    if (ra == rb) continue;
    parent[ra] = rb;
    parent.emplace(rb, rb);
    if (a.o->kind == ObjKind::Cons) {
      todo.emplace_back(cdr(a), cdr(b));
      todo.emplace_back(car(a), car(b));
    } else {
      auto& x = as_vector(a)->items;
      auto& y = as_vector(b)->items;
      if (x.size() != y.size()) return false;
      for (std::size_t i = x.size(); i-- > 0;) todo.emplace_back(x[i], y[i]);
    }
  }
  return true;
}

}  // namespace

bool equal(Value a, Value b) { return equal(a, b, nullptr); }

bool equal(Value a, Value b, Interp* poll) {
  // Iterative, with an explicit stack of pairs still to compare, so deep structures cannot
  // exhaust the C stack. After many steps the structures may be circular (issue 19: equal
  // on two circular lists never returned), and the rest of the walk remembers what it compared.
  constexpr std::size_t kPlainSteps = std::size_t{1} << 20;
  std::vector<std::pair<Value, Value>> todo;
  for (std::size_t steps = 1;; ++steps) {
    if (steps == kPlainSteps) {
      todo.emplace_back(a, b);
      return equal_graph(todo, poll);
    }
    if (poll != nullptr && (steps & 0xfff) == 0) poll->check_interrupt(0x1000);
    bool same = a.same(b);
    if (!same) {
      if (a.tag != Tag::Obj || b.tag != Tag::Obj || a.o->kind != b.o->kind) return false;
      switch (a.o->kind) {
        case ObjKind::String:
          if (as_string(a)->text != as_string(b)->text) return false;
          break;
        case ObjKind::Vector: {
          auto& x = as_vector(a)->items;
          auto& y = as_vector(b)->items;
          if (x.size() != y.size()) return false;
          for (std::size_t i = 0; i < x.size(); ++i) todo.emplace_back(x[i], y[i]);
          break;
        }
        case ObjKind::Cons:
          todo.emplace_back(cdr(a), cdr(b));
          todo.emplace_back(car(a), car(b));
          break;
        default: return false;
      }
    }
    if (todo.empty()) return true;
    a = todo.back().first;
    b = todo.back().second;
    todo.pop_back();
  }
}

namespace {
std::size_t hash_at_depth(Value v, HashTest test, int depth) {
  auto mix = [](std::size_t h, std::size_t x) { return (h ^ x) * 0x100000001b3ull; };
  if (test != HashTest::Equal || v.tag != Tag::Obj) {
    return mix(static_cast<std::size_t>(v.tag) * 0x9e3779b97f4a7c15ull, static_cast<std::size_t>(v.i));
  }
  if (depth > 4) return 0x51;  // deeper structure does not change the hash (equal decides)
  switch (v.o->kind) {
    case ObjKind::String: return std::hash<std::string>{}(as_string(v)->text);
    case ObjKind::Cons: {
      std::size_t h = 0xcbf29ce484222325ull;
      int n = 0;
      for (; is_cons(v) && n < 16; v = cdr(v), ++n) h = mix(h, hash_at_depth(car(v), test, depth + 1));
      return h;
    }
    case ObjKind::Vector: {
      std::size_t h = 0x84222325ull;
      int n = 0;
      for (const Value& item : as_vector(v)->items) {
        if (++n > 16) break;
        h = mix(h, hash_at_depth(item, test, depth + 1));
      }
      return h;
    }
    default: return mix(static_cast<std::size_t>(v.tag), static_cast<std::size_t>(v.i));
  }
}
}  // namespace

std::size_t hash_value(Value v, HashTest test) { return hash_at_depth(v, test, 0); }

}  // namespace tl::eval
