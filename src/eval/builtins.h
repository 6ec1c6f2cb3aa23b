// SPDX-License-Identifier: Apache-2.0
// Argument checking helpers shared by the builtins_*.cpp files.
#pragma once

#include "eval/interp.h"

namespace tl::eval {

inline std::int64_t arg_int(Interp& in, const char* fn, Value* args, int i) {
  if (!args[i].is_int()) in.type_error(fn, i + 1, "an integer", args[i]);
  return args[i].i;
}

inline double arg_number(Interp& in, const char* fn, Value* args, int i) {
  if (args[i].is_int()) return static_cast<double>(args[i].i);
  if (!args[i].is_float()) in.type_error(fn, i + 1, "a number", args[i]);
  return args[i].f;
}

inline String* arg_string(Interp& in, const char* fn, Value* args, int i) {
  if (!is_string(args[i])) in.type_error(fn, i + 1, "a string", args[i]);
  return as_string(args[i]);
}

inline Symbol* arg_symbol(Interp& in, const char* fn, Value* args, int i) {
  if (!is_symbol(args[i])) in.type_error(fn, i + 1, "a symbol", args[i]);
  return as_symbol(args[i]);
}

inline Value arg_list(Interp& in, const char* fn, Value* args, int i) {
  if (!is_list(args[i])) in.type_error(fn, i + 1, "a list", args[i]);
  return args[i];
}

inline Value arg_function(Interp& in, const char* fn, Value* args, int i) {
  if (!is_function(args[i])) in.type_error(fn, i + 1, "a function", args[i]);
  return args[i];
}

inline HashTable* arg_hash(Interp& in, const char* fn, Value* args, int i) {
  if (!is_kind(args[i], ObjKind::HashTable)) in.type_error(fn, i + 1, "a hash table", args[i]);
  return as_hash(args[i]);
}

// Length of a proper list; a type error naming fn and the argument for a dotted or circular
// list (found by advancing a second cursor at half speed).
inline std::size_t proper_length(Interp& in, const char* fn, Value list, int arg) {
  std::size_t n = 0;
  Value v = list;
  Value slow = list;
  for (; is_cons(v); v = cdr(v)) {
    ++n;
    if ((n & 1) == 0) {
      slow = cdr(slow);
      if (slow.same(cdr(v))) in.type_error(fn, arg, "a proper list, not a circular one", list);
    }
  }
  if (!v.is_nil()) in.type_error(fn, arg, "a proper list", list);
  return n;
}

// Collects list items into a C++ vector (items stay reachable through the list).
inline std::vector<Value> list_items(Interp& in, const char* fn, Value list, int arg) {
  std::vector<Value> out;
  out.reserve(proper_length(in, fn, list, arg));
  for (Value v = list; is_cons(v); v = cdr(v)) out.push_back(car(v));
  return out;
}

// Finds the value after keyword `name` in args[from..n), or nil.
inline Value keyword_arg(Value* args, std::uint32_t from, std::uint32_t n, const char* name, bool* found = nullptr) {
  for (std::uint32_t i = from; i + 1 < n; i += 2) {
    if (is_symbol(args[i]) && as_symbol(args[i])->is_keyword() && as_symbol(args[i])->name == name) {
      if (found != nullptr) *found = true;
      return args[i + 1];
    }
  }
  if (found != nullptr) *found = false;
  return nil();
}

// Hash table operations (builtins_hash.cpp).
Value* hash_find(HashTable* h, Value key);
void hash_put(HashTable* h, Value key, Value value);
bool hash_remove(HashTable* h, Value key);

// format directives (builtins_string.cpp): formats args[0..n) by the control string.
// `at_line_start`: whether the destination is at the start of a line (for ~&).
std::string format_string(Interp& in, const std::string& control, Value* args, std::uint32_t n,
                          bool at_line_start = true);

}  // namespace tl::eval
