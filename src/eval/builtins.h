// SPDX-License-Identifier: Apache-2.0
// Argument checking helpers shared by the builtins_*.cpp files.
#pragma once

#include "eval/interp.h"

namespace tl::eval {

inline std::int64_t arg_int(Interp& in, const char* fn, Value* args, int i) {
  if (!args[i].is_int()) in.type_error(fn, i + 1, "an integer", args[i]);
  return args[i].i;
}

// A size or count: a type error for a negative one (issue 19: (make-list -1) returned nil).
inline std::int64_t arg_size(Interp& in, const char* fn, Value* args, int i) {
  if (!args[i].is_int() || args[i].i < 0) in.type_error(fn, i + 1, "a non-negative integer", args[i]);
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

// A function, or a symbol naming a global function (as funcall takes it: (mapcar 'car l)); the
// argument slot is replaced by the function itself.
inline Value arg_function(Interp& in, const char* fn, Value* args, int i) {
  if (is_function(args[i])) return args[i];
  if (is_symbol(args[i]) && !args[i].is_nil() && as_symbol(args[i])->bound && is_function(as_symbol(args[i])->value)) {
    return args[i] = as_symbol(args[i])->value;
  }
  in.type_error(fn, i + 1, "a function", args[i]);
}

inline HashTable* arg_hash(Interp& in, const char* fn, Value* args, int i) {
  if (!is_kind(args[i], ObjKind::HashTable)) in.type_error(fn, i + 1, "a hash table", args[i]);
  return as_hash(args[i]);
}

// Walks the cells of a list that is argument `arg` of builtin `fn`. No walk can spin: every
// few thousand cells it polls for Ctrl-C, and a circular list is a type error (Brent's cycle
// detection: each cell is compared with one saved at every power-of-two step, so a cycle is
// found within two trips around it at the cost of one comparison per cell). Issue 19.
class ListWalk {
 public:
  ListWalk(Interp& in, const char* fn, int arg, Value list)
      : in_(in), fn_(fn), arg_(arg), list_(list), cell_(list), saved_(list) {}
  bool done() const { return !is_cons(cell_); }
  Value cell() const { return cell_; }
  Value item() const { return car(cell_); }
  std::size_t index() const { return count_; }
  void next() {
    cell_ = cdr(cell_);
    ++count_;
    if (cell_.same(saved_) && is_cons(cell_)) in_.circular_list_error(fn_, arg_, list_);
    if (++steps_ == limit_) {
      saved_ = cell_;
      limit_ *= 2;
      steps_ = 0;
    }
    if ((count_ & kPollMask) == 0) in_.check_interrupt(kPollMask + 1);
  }
  // Once done(): a type error when the list ended in an atom other than nil.
  void require_proper() const {
    if (!cell_.is_nil()) in_.type_error(fn_, arg_, "a proper list", list_);
  }

 private:
  static constexpr std::size_t kPollMask = 0xfff;
  Interp& in_;
  const char* fn_;
  int arg_;
  Value list_;
  Value cell_;
  Value saved_;
  std::size_t count_ = 0;
  std::size_t steps_ = 0;
  std::size_t limit_ = 2;
};

// Length of a proper list; a type error naming fn and the argument for a dotted or circular
// list.
inline std::size_t proper_length(Interp& in, const char* fn, Value list, int arg) {
  ListWalk walk(in, fn, arg, list);
  while (!walk.done()) walk.next();
  walk.require_proper();
  return walk.index();
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

// Marks the builtins NAMES as primitives the evaluator computes inline (eval.cpp prim2);
// UNARY ones take one argument, inlined as the primitive of it and 1.
void mark_primitives(Interp& in, std::initializer_list<std::pair<const char*, Prim>> names, bool unary = false);

// `equal` that polls for Ctrl-C (and counts steps) while it compares large structures.
bool equal(Value a, Value b, Interp* poll);

// Hash table operations (builtins_hash.cpp).
Value* hash_find(HashTable* h, Value key);
void hash_put(HashTable* h, Value key, Value value);
bool hash_remove(HashTable* h, Value key);

// The condition system (conditions.cpp). The error that raises condition COND, located at
// the current call.
tl::Error condition_error(Interp& in, Value cond);
void register_condition_builtins(Interp& in);

// format directives (format.cpp): formats args[0..n) by the control string.
// `at_line_start`: whether the destination is at the start of a line (for ~&).
std::string format_string(Interp& in, const std::string& control, Value* args, std::uint32_t n,
                          bool at_line_start = true);

}  // namespace tl::eval
