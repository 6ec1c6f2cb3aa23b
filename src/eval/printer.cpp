// SPDX-License-Identifier: Apache-2.0
// Printing values (prin1 readably, princ for people), type names, and the equality and hash
// functions behind eq/eql/equal and hash tables.
#include <charconv>
#include <cmath>
#include <cstring>

#include "eval/interp.h"

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

void print_value(const Interp& in, std::string& out, Value v, bool readably, int depth);

void print_list(const Interp& in, std::string& out, Value v, bool readably, int depth) {
  Value head = car(v);
  if (is_symbol(head) && is_cons(cdr(v)) && cdr(cdr(v)).is_nil()) {
    const char* prefix = nullptr;
    if (as_symbol(head) == in.S.quote) prefix = "'";
    else if (as_symbol(head) == in.S.quasiquote) prefix = "`";
    else if (as_symbol(head) == in.S.unquote) prefix = ",";
    else if (as_symbol(head) == in.S.unquote_splicing) prefix = ",@";
    else if (as_symbol(head) == in.S.function) prefix = "#'";
    if (prefix != nullptr) {
      out += prefix;
      print_value(in, out, car(cdr(v)), readably, depth + 1);
      return;
    }
  }
  out += '(';
  bool first = true;
  Value slow = v;
  std::size_t count = 0;
  for (; is_cons(v); v = cdr(v)) {
    if (!first) out += ' ';
    first = false;
    print_value(in, out, car(v), readably, depth + 1);
    if ((++count & 1) == 0) {
      slow = cdr(slow);
      if (slow.same(cdr(v))) {  // the list is circular: stop after one trip around
        out += " ...)";
        return;
      }
    }
  }
  if (!v.is_nil()) {
    out += " . ";
    print_value(in, out, v, readably, depth + 1);
  }
  out += ')';
}

void print_value(const Interp& in, std::string& out, Value v, bool readably, int depth) {
  if (depth > kMaxPrintDepth) {
    out += "...";
    return;
  }
  switch (v.tag) {
    case Tag::Nil: out += "nil"; return;
    case Tag::Int: out += std::to_string(v.i); return;
    case Tag::Float: print_float(out, v.f); return;
    case Tag::Obj: break;
  }
  switch (v.o->kind) {
    case ObjKind::Cons: print_list(in, out, v, readably, depth); return;
    case ObjKind::Symbol: {
      Symbol* s = as_symbol(v);
      if (s->is_keyword()) out += ':';
      out += s->name;
      return;
    }
    case ObjKind::String: print_string(out, as_string(v)->text, readably); return;
    case ObjKind::Vector: {
      out += "#(";
      bool first = true;
      for (const Value& item : as_vector(v)->items) {
        if (!first) out += ' ';
        first = false;
        print_value(in, out, item, readably, depth + 1);
      }
      out += ')';
      return;
    }
    case ObjKind::HashTable: {
      HashTable* h = as_hash(v);
      const char* test = h->test == HashTest::Eq ? "eq" : h->test == HashTest::Eql ? "eql" : "equal";
      out += "#<hash-table :test " + std::string(test) + " :count " + std::to_string(h->live) + ">";
      return;
    }
    case ObjKind::Closure: {
      Closure* c = as_closure(v);
      out += "#<function ";
      out += is_symbol(c->name) ? as_symbol(c->name)->name : std::string("lambda");
      out += '>';
      return;
    }
    case ObjKind::Native: out += "#<builtin " + as_native(v)->name + ">"; return;
    case ObjKind::Macro: {
      Macro* m = as_macro(v);
      out += "#<macro ";
      out += is_symbol(m->name) ? as_symbol(m->name)->name : std::string("anonymous");
      out += '>';
      return;
    }
    case ObjKind::Env: out += "#<environment>"; return;
    case ObjKind::Code: out += "#<code>"; return;
    case ObjKind::Condition: {
      Condition* c = as_condition(v);
      out += "#<condition ";
      print_value(in, out, c->type, false, depth + 1);
      out += ": ";
      print_value(in, out, c->message, false, depth + 1);
      out += '>';
      return;
    }
    case ObjKind::Foreign: static_cast<Foreign*>(v.o)->print(out); return;
  }
}

}  // namespace

void Interp::print_to(std::string& out, Value v, bool readably) const {
  print_value(*this, out, v, readably, 0);
}

std::string Interp::repr(Value v, bool readably) const {
  std::string out;
  print_to(out, v, readably);
  return out;
}

std::string Interp::type_name(Value v) const {
  switch (v.tag) {
    case Tag::Nil: return "null";
    case Tag::Int: return "integer";
    case Tag::Float: return "float";
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
  }
  return "unknown";
}

bool eql(Value a, Value b) { return a.same(b); }

bool equal(Value a, Value b) {
  // Iterative, with an explicit stack of pairs still to compare, so deep structures cannot
  // exhaust the C stack.
  std::vector<std::pair<Value, Value>> todo;
  for (;;) {
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
