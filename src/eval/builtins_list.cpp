// SPDX-License-Identifier: Apache-2.0
// List and vector builtins: construction, access, destructive splicing (nconc, nreverse, rplaca),
// higher-order functions and sorting.
#include <algorithm>
#include <cmath>

#include "eval/builtins.h"
#include "eval/utf8.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

Value nth_cdr(Interp& in, const char* fn, Value list, std::int64_t n, int arg) {
  if (n < 0) in.error("index-error", std::string(fn) + ": index must be non-negative, got " + std::to_string(n));
  ListWalk walk(in, fn, arg, list);
  for (; n > 0 && !walk.done(); --n) walk.next();
  return walk.cell();
}


// Builds lists in order while keeping the head rooted on the value stack.
class ListBuilder {
 public:
  explicit ListBuilder(Interp& in) : in_(in), slot_(in.sp) { in.push(nil()); }
  void add(Value v) {
    if ((++count_ & 0xffff) == 0) in_.check_interrupt(0x10000);  // long results take a while
    Cons* cell = in_.heap.make_cons(v, nil());
    if (tail_ == nullptr) {
      *slot_ = Value::object(cell);
    } else {
      tail_->cdr = Value::object(cell);
    }
    tail_ = cell;
  }
  void set_tail(Value v) {
    if (tail_ == nullptr) *slot_ = v;
    else tail_->cdr = v;
  }
  Value result() const { return *slot_; }

 private:
  Interp& in_;
  Value* slot_;
  Cons* tail_ = nullptr;
  std::size_t count_ = 0;
};

// The sequence-as-vector view used by the sequence functions (lists, vectors, strings).
Value sequence_elt(Interp& in, const char* fn, Value seq, std::int64_t i) {
  if (is_kind(seq, ObjKind::Vector)) {
    auto& items = as_vector(seq)->items;
    if (i < 0 || static_cast<std::size_t>(i) >= items.size()) {
      in.error("index-error", std::string(fn) + ": index " + std::to_string(i) + " out of range for a vector of length " + std::to_string(items.size()));
    }
    return items[static_cast<std::size_t>(i)];
  }
  if (is_string(seq)) {  // the character at character index i
    auto& s = as_string(seq)->text;
    std::size_t pos = i < 0 ? std::string::npos : utf8_offset(s, static_cast<std::size_t>(i));
    if (pos == std::string::npos || pos >= s.size()) {
      in.error("index-error", std::string(fn) + ": index " + std::to_string(i) + " out of range for a string of length " + std::to_string(utf8_length(s)));
    }
    return Value::character(next_utf8(s, pos));
  }
  if (is_list(seq)) {
    Value cell = nth_cdr(in, fn, seq, i, 1);
    if (!is_cons(cell)) in.error("index-error", std::string(fn) + ": index " + std::to_string(i) + " out of range for a list of length " + std::to_string(proper_length(in, fn, seq, 1)));
    return car(cell);
  }
  in.type_error(fn, 1, "a sequence", seq);
}

Value key_of(Interp& in, Value key, Value v) {
  if (key.is_nil()) return v;
  return in.call(key, {v});
}

// nconc and nreverse relink cells (issue 25: nconc used to copy).
Value nconc(Interp& in, Args a, N n) {
  Value head = nil();
  Cons* last = nullptr;
  for (N i = 0; i < n; ++i) {
    Value v = a[i];
    if (v.is_nil()) continue;
    if (last != nullptr) last->cdr = v;
    if (i + 1 == n) break;  // the last argument may be any object
    if (!is_cons(v)) in.type_error("nconc", static_cast<int>(i + 1), "a list", v);
    if (head.is_nil()) head = v;
    ListWalk walk(in, "nconc", static_cast<int>(i + 1), v);
    Value cell = v;
    for (; !walk.done(); walk.next()) cell = walk.cell();
    last = as_cons(cell);
  }
  if (head.is_nil()) return n == 0 ? nil() : a[n - 1];
  return head;
}

Value nreverse(Interp& in, Args a) {
  if (is_string(a[0])) {
    std::string& s = as_string(a[0])->text;
    std::reverse(s.begin(), s.end());
    return a[0];
  }
  if (is_kind(a[0], ObjKind::Vector)) {
    auto& items = as_vector(a[0])->items;
    std::reverse(items.begin(), items.end());
    return a[0];
  }
  arg_list(in, "nreverse", a, 0);
  proper_length(in, "nreverse", a[0], 1);  // never relink a circular or dotted list
  Value reversed = nil();
  for (Value v = a[0]; is_cons(v);) {
    Value next = cdr(v);
    as_cons(v)->cdr = reversed;
    reversed = v;
    v = next;
  }
  return reversed;
}

// A vector's aref and %aset are here; arrays of several dimensions are Lisp structures
// (lisp/36-arrays.lisp), whose function HOOK takes the same arguments. Before that file is
// loaded, and for anything that is not an array, a type error naming FN.
Value array_hook(Interp& in, const char* hook, const char* fn, Value* a, std::uint32_t n) {
  Symbol* s = in.intern(hook);
  if (!s->bound) in.type_error(fn, 1, "a vector", a[0]);
  return in.apply(s->value, a, n);
}

}  // namespace

bool is_circular(Value list) {
  Value saved = list;
  std::size_t steps = 0;
  std::size_t limit = 2;
  for (Value v = list; is_cons(v);) {
    v = cdr(v);
    if (v.same(saved) && is_cons(v)) return true;
    if (++steps == limit) {
      saved = v;
      limit *= 2;
      steps = 0;
    }
  }
  return false;
}

void register_list_builtins(Interp& in) {
  TL_BUILTIN(in, "cons", 2, 2, "(cons A B)",
             "A new pair whose car is A and cdr is B."
             "\n  (cons 1 '(2 3))  ; => (1 2 3)"
             "\n  (cons 'a 'b)  ; => (a . b)",
             [](Interp& in, Args a, N) { return in.cons(a[0], a[1]); });
  TL_BUILTIN(in, "car", 1, 1, "(car LIST)",
             "First element of LIST; nil for nil."
             "\n  (car '(1 2 3))  ; => 1"
             "\n  (car nil)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0])) in.type_error("car", 1, "a list", a[0]);
               return car(a[0]);
             });
  TL_BUILTIN(in, "cdr", 1, 1, "(cdr LIST)",
             "LIST without its first element; nil for nil."
             "\n  (cdr '(1 2 3))  ; => (2 3)"
             "\n  (cdr nil)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0])) in.type_error("cdr", 1, "a list", a[0]);
               return cdr(a[0]);
             });
  TL_BUILTIN(in, "cadr", 1, 1, "(cadr LIST)",
             "Second element of LIST."
             "\n  (cadr '(1 2 3))  ; => 2",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0]) || !is_list(cdr(a[0]))) in.type_error("cadr", 1, "a list", a[0]);
               return car(cdr(a[0]));
             });
  TL_BUILTIN(in, "cddr", 1, 1, "(cddr LIST)",
             "LIST without its first two elements."
             "\n  (cddr '(1 2 3))  ; => (3)",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0]) || !is_list(cdr(a[0]))) in.type_error("cddr", 1, "a list", a[0]);
               return cdr(cdr(a[0]));
             });
  TL_BUILTIN(in, "caar", 1, 1, "(caar LIST)",
             "car of the car of LIST."
             "\n  (caar '((1 2) 3))  ; => 1",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0]) || !is_list(car(a[0]))) in.type_error("caar", 1, "a list of lists", a[0]);
               return car(car(a[0]));
             });
  TL_BUILTIN(in, "cdar", 1, 1, "(cdar LIST)",
             "cdr of the car of LIST."
             "\n  (cdar '((1 2) 3))  ; => (2)",
             [](Interp& in, Args a, N) -> Value {
               if (!is_list(a[0]) || !is_list(car(a[0]))) in.type_error("cdar", 1, "a list of lists", a[0]);
               return cdr(car(a[0]));
             });
  TL_BUILTIN(in, "list", 0, -1, "(list ITEM...)",
             "A new list of the arguments."
             "\n  (list 1 \"two\" 'three)  ; => (1 \"two\" three)"
             "\n  (list)  ; => nil",
             [](Interp& in, Args a, N n) { return in.list_from(a, n); });
  in.qq_list = in.intern("list")->value;
  TL_BUILTIN(in, "list*", 1, -1, "(list* ITEM... TAIL)",
             "A list of the items ending in TAIL."
             "\n  (list* 1 2 '(3 4))  ; => (1 2 3 4)"
             "\n  (list* 1 2)  ; => (1 . 2)",
             [](Interp& in, Args a, N n) { return in.list_from(a, n - 1, a[n - 1]); });
  in.qq_cons = in.intern("cons")->value;
  TL_BUILTIN(in, "append", 0, -1, "(append LIST...)",
             "A new list of the elements of the lists; the last is shared."
             "\n  (append '(1 2) '(3) '(4 5))  ; => (1 2 3 4 5)"
             "\n  (append '(1) 2)  ; => (1 . 2)",
             [](Interp& in, Args a, N n) -> Value {
               if (n == 0) return nil();
               ListBuilder out(in);
               for (N i = 0; i + 1 < n; ++i) {
                 ListWalk walk(in, "append", static_cast<int>(i + 1), a[i]);
                 for (; !walk.done(); walk.next()) out.add(walk.item());
                 walk.require_proper();
               }
               out.set_tail(a[n - 1]);
               return out.result();
             });
  in.qq_append = in.intern("append")->value;
  TL_BUILTIN(in, "vector", 0, -1, "(vector ITEM...)",
             "A new vector of the arguments."
             "\n  (vector 1 2 3)  ; => #(1 2 3)",
             [](Interp& in, Args a, N n) { return in.make_vector(std::vector<Value>(a, a + n)); });
  in.qq_vector = TL_BUILTIN(in, "%list-to-vector", 1, 1, "(%list-to-vector LIST)", "A new vector of the elements of LIST.",
                            [](Interp& in, Args a, N) {
                              return in.make_vector(list_items(in, "%list-to-vector", a[0], 1));
                            });
  in.permanent.insert(in.permanent.end(), {in.qq_list, in.qq_cons, in.qq_append, in.qq_vector});
  TL_BUILTIN(in, "length", 1, 1, "(length SEQUENCE)",
             "Number of elements of a list, vector, string or hash table."
             "\n  (length '(a b c))  ; => 3"
             "\n  (length \"hello\")  ; => 5"
             "\n  (length #())  ; => 0",
             [](Interp& in, Args a, N) -> Value {
               Value v = a[0];
               if (is_list(v)) return Value::integer(static_cast<std::int64_t>(proper_length(in, "length", v, 1)));
               if (is_string(v)) return Value::integer(static_cast<std::int64_t>(utf8_length(as_string(v)->text)));
               if (is_kind(v, ObjKind::Vector))
                 return Value::integer(static_cast<std::int64_t>(as_vector(v)->items.size()));
               if (is_kind(v, ObjKind::HashTable)) return Value::integer(static_cast<std::int64_t>(as_hash(v)->live));
               in.type_error("length", 1, "a sequence", v);
             });
  TL_BUILTIN(in, "reverse", 1, 1, "(reverse SEQUENCE)",
             "A new list, vector or string with the elements in reverse order."
             "\n  (reverse '(1 2 3))  ; => (3 2 1)"
             "\n  (reverse \"abc\")  ; => \"cba\"",
             [](Interp& in, Args a, N) -> Value {
               if (is_string(a[0])) {  // reversed character by character
                 const std::string& text = as_string(a[0])->text;
                 std::string s;
                 s.reserve(text.size());
                 for (std::size_t end = text.size(); end > 0;) {
                   std::size_t start = end - 1;
                   while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80 && end - start < 4)
                     --start;
                   std::size_t pos = start;
                   next_utf8(text, pos);
                   if (pos != end) start = end - 1;  // not one well-formed character: a single byte
                   s.append(text, start, end - start);
                   end = start;
                 }
                 return in.make_string(std::move(s));
               }
               if (is_kind(a[0], ObjKind::Vector)) {
                 auto items = as_vector(a[0])->items;
                 std::reverse(items.begin(), items.end());
                 return in.make_vector(std::move(items));
               }
               arg_list(in, "reverse", a, 0);
               Interp::StackMark mark(in);
               in.push(nil());
               ListWalk walk(in, "reverse", 1, a[0]);
               for (; !walk.done(); walk.next()) in.sp[-1] = in.cons(walk.item(), in.sp[-1]);
               walk.require_proper();
               return in.sp[-1];
             });
  TL_BUILTIN(in, "nth", 2, 2, "(nth N LIST)",
             "Element N (from 0) of LIST, or nil past the end."
             "\n  (nth 1 '(a b c))  ; => b"
             "\n  (nth 5 '(a b c))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t k = arg_int(in, "nth", a, 0);
               arg_list(in, "nth", a, 1);
               return car(nth_cdr(in, "nth", a[1], k, 2));
             });
  TL_BUILTIN(in, "nthcdr", 2, 2, "(nthcdr N LIST)",
             "LIST without its first N elements."
             "\n  (nthcdr 2 '(a b c d))  ; => (c d)",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t k = arg_int(in, "nthcdr", a, 0);
               arg_list(in, "nthcdr", a, 1);
               return nth_cdr(in, "nthcdr", a[1], k, 2);
             });
  TL_BUILTIN(in, "elt", 2, 2, "(elt SEQUENCE INDEX)",
             "Element INDEX of a list, vector or string; an error when out of range."
             "\n  (elt '(a b c) 2)  ; => c"
             "\n  (elt \"abc\" 0)  ; => #\\a",
             [](Interp& in, Args a, N) { return sequence_elt(in, "elt", a[0], arg_int(in, "elt", a, 1)); });
  TL_BUILTIN(in, "aref", 1, -1, "(aref ARRAY INDEX...)",
             "The element of ARRAY at the INDEXes, one per dimension: of a vector (the character of a string) at "
             "INDEX, of an array of several dimensions (make-array) at its subscripts."
             "\n  (aref #(10 20 30) 1)  ; => 20"
             "\n  (let ((v (vector 1 2 3))) (setf (aref v 0) 9) v)  ; => #(9 2 3)"
             "\n  (aref (make-array '(2 3) :initial-contents '((1 2 3) (4 5 6))) 1 2)  ; => 6",
             [](Interp& in, Args a, N n) -> Value {
               if (n == 2 && (is_kind(a[0], ObjKind::Vector) || is_string(a[0]))) {
                 return sequence_elt(in, "aref", a[0], arg_int(in, "aref", a, 1));
               }
               return array_hook(in, "%array-ref", "aref", a, n);
             });
  // The evaluator reads a vector's element inline (eval.cpp prim2); car, cdr, cadr and cddr
  // of a list too, as one-argument primitives.
  mark_primitives(in, {{"aref", Prim::Aref}, {"elt", Prim::Aref}});
  mark_primitives(in, {{"car", Prim::Car}, {"cdr", Prim::Cdr}, {"cadr", Prim::Cadr}, {"cddr", Prim::Cddr}}, true);
  TL_BUILTIN(in, "%aset", 2, -1, "(%aset ARRAY INDEX... VALUE)",
             "Stores VALUE at the INDEXes of ARRAY; what (setf (aref a i ...) x) expands to.",
             [](Interp& in, Args a, N n) -> Value {
               if (n != 3 || !(is_kind(a[0], ObjKind::Vector) || is_string(a[0]))) {
                 return array_hook(in, "%array-set", "setf aref", a, n);
               }
               if (is_string(a[0])) {  // (setf (char s i) c): the character's bytes replace the old ones
                 if (!a[2].is_char()) in.type_error("setf aref", 3, "a character", a[2]);
                 std::string& text = as_string(a[0])->text;
                 std::int64_t i = arg_int(in, "setf aref", a, 1);
                 std::size_t pos = i < 0 ? std::string::npos : utf8_offset(text, static_cast<std::size_t>(i));
                 if (pos == std::string::npos || pos >= text.size()) {
                   in.error("index-error", "setf aref: index " + std::to_string(i) + " out of range for a string of length " + std::to_string(utf8_length(text)));
                 }
                 std::size_t end = pos;
                 next_utf8(text, end);
                 std::string encoded;
                 append_utf8(encoded, static_cast<std::uint32_t>(a[2].i));
                 text.replace(pos, end - pos, encoded);
                 return a[2];
               }
               if (!is_kind(a[0], ObjKind::Vector)) in.type_error("setf aref", 1, "a vector", a[0]);
               std::int64_t i = arg_int(in, "setf aref", a, 1);
               auto& items = as_vector(a[0])->items;
               if (i < 0 || static_cast<std::size_t>(i) >= items.size()) {
                 in.error("index-error", "setf aref: index " + std::to_string(i) + " out of range for a vector of length " + std::to_string(items.size()));
               }
               items[static_cast<std::size_t>(i)] = a[2];
               return a[2];
             });
  TL_BUILTIN(in, "%setcar", 2, 2, "(%setcar CONS VALUE)", "Replaces the car of CONS; returns VALUE.",
             [](Interp& in, Args a, N) -> Value {
               if (!is_cons(a[0])) in.type_error("setf car", 1, "a cons", a[0]);
               as_cons(a[0])->car = a[1];
               return a[1];
             });
  TL_BUILTIN(in, "%setcdr", 2, 2, "(%setcdr CONS VALUE)", "Replaces the cdr of CONS; returns VALUE.",
             [](Interp& in, Args a, N) -> Value {
               if (!is_cons(a[0])) in.type_error("setf cdr", 1, "a cons", a[0]);
               as_cons(a[0])->cdr = a[1];
               return a[1];
             });
  TL_BUILTIN(in, "nconc", 0, -1, "(nconc LIST...)",
             "The lists joined by changing the last cdr of each to the next: destructive, nothing "
             "is copied."
             "\n  (let ((a (list 1 2)) (b (list 3))) (nconc a b) a)  ; => (1 2 3)",
             [](Interp& in, Args a, N n) { return nconc(in, a, n); });
  TL_BUILTIN(in, "nreverse", 1, 1, "(nreverse SEQUENCE)",
             "SEQUENCE reversed in place (a list's cells are relinked): use the result, not SEQUENCE."
             "\n  (nreverse (list 1 2 3))  ; => (3 2 1)",
             [](Interp& in, Args a, N) { return nreverse(in, a); });
  TL_BUILTIN(in, "rplaca", 2, 2, "(rplaca CONS VALUE)",
             "Replaces the car of CONS by VALUE; returns CONS."
             "\n  (let ((c (list 1 2))) (rplaca c 'x) c)  ; => (x 2)",
             [](Interp& in, Args a, N) -> Value {
               if (!is_cons(a[0])) in.type_error("rplaca", 1, "a cons", a[0]);
               as_cons(a[0])->car = a[1];
               return a[0];
             });
  TL_BUILTIN(in, "rplacd", 2, 2, "(rplacd CONS VALUE)",
             "Replaces the cdr of CONS by VALUE; returns CONS."
             "\n  (let ((c (list 1 2))) (rplacd c '(3 4)) c)  ; => (1 3 4)",
             [](Interp& in, Args a, N) -> Value {
               if (!is_cons(a[0])) in.type_error("rplacd", 1, "a cons", a[0]);
               as_cons(a[0])->cdr = a[1];
               return a[0];
             });
  TL_BUILTIN(in, "make-vector", 1, 2, "(make-vector SIZE [INITIAL])",
             "A vector of SIZE elements, each INITIAL (default nil)."
             "\n  (make-vector 3 0)  ; => #(0 0 0)"
             "\n  (make-vector 2)  ; => #(nil nil)",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t size = arg_size(in, "make-vector", a, 0);
               in.check_allocation("make-vector", static_cast<std::uint64_t>(size), sizeof(Value));
               return in.make_vector(std::vector<Value>(static_cast<std::size_t>(size), n == 2 ? a[1] : nil()));
             });
  TL_BUILTIN(in, "make-list", 1, 3, "(make-list SIZE [INITIAL] | SIZE :initial-element INITIAL)",
             "A list of SIZE elements, each INITIAL (default nil)."
             "\n  (make-list 2 'x)  ; => (x x)"
             "\n  (make-list 3 :initial-element 0)  ; => (0 0 0)",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t size = arg_size(in, "make-list", a, 0);
               Value init = n >= 2 ? a[1] : nil();
               if (n == 3) {
                 if (!is_symbol(a[1]) || !as_symbol(a[1])->is_keyword() || as_symbol(a[1])->name != "initial-element") {
                   in.error("program-error", "make-list: unknown keyword argument " + in.repr(a[1]) +
                                                 "; expected :initial-element");
                 }
                 init = a[2];
               }
               in.check_allocation("make-list", static_cast<std::uint64_t>(size), sizeof(Cons));
               Interp::StackMark mark(in);
               in.push(nil());
               for (std::int64_t i = 0; i < size; ++i) {
                 if ((i & 0xffff) == 0xffff) in.check_interrupt(0x10000);
                 in.sp[-1] = in.cons(init, in.sp[-1]);
               }
               return in.sp[-1];
             });
  TL_BUILTIN(in, "vector-push", 2, 2, "(vector-push VALUE VECTOR)",
             "Appends VALUE to VECTOR (which grows); returns its index."
             "\n  (let ((v (vector))) (vector-push 'a v) (vector-push 'b v))  ; => 1",
             [](Interp& in, Args a, N) -> Value {
               if (!is_kind(a[1], ObjKind::Vector)) in.type_error("vector-push", 2, "a vector", a[1]);
               auto& items = as_vector(a[1])->items;
               items.push_back(a[0]);
               return Value::integer(static_cast<std::int64_t>(items.size() - 1));
             });
  TL_BUILTIN(in, "vector-pop", 1, 1, "(vector-pop VECTOR)",
             "Removes and returns the last element of VECTOR."
             "\n  (let ((v (vector 1 2 3))) (list (vector-pop v) v))  ; => (3 #(1 2))",
             [](Interp& in, Args a, N) -> Value {
               if (!is_kind(a[0], ObjKind::Vector)) in.type_error("vector-pop", 1, "a vector", a[0]);
               auto& items = as_vector(a[0])->items;
               if (items.empty()) in.error("index-error", "vector-pop: the vector is empty");
               Value v = items.back();
               items.pop_back();
               return v;
             });
  TL_BUILTIN(in, "coerce", 2, 2, "(coerce SEQUENCE TYPE)",
             "SEQUENCE converted to TYPE: 'list, 'vector or 'string."
             "\n  (coerce \"abc\" 'list)  ; => (#\\a #\\b #\\c)"
             "\n  (coerce '(1 2) 'vector)  ; => #(1 2)"
             "\n  (coerce '(#\\h #\\i) 'string)  ; => \"hi\"",
             [](Interp& in, Args a, N) -> Value {
               Symbol* type = arg_symbol(in, "coerce", a, 1);
               std::vector<Value> items;
               if (is_kind(a[0], ObjKind::Vector)) items = as_vector(a[0])->items;
               else if (is_list(a[0])) items = list_items(in, "coerce", a[0], 1);
               else if (is_string(a[0])) {
                 const std::string& text = as_string(a[0])->text;
                 for (std::size_t pos = 0; pos < text.size();) items.push_back(Value::character(next_utf8(text, pos)));
               } else {
                 in.type_error("coerce", 1, "a sequence", a[0]);
               }
               if (type->name == "list") return in.list_from(items.data(), items.size());
               if (type->name == "vector") return in.make_vector(std::move(items));
               if (type->name == "string") {
                 std::string s;
                 for (Value v : items) {
                   if (v.is_char()) append_utf8(s, static_cast<std::uint32_t>(v.i));
                   else if (is_string(v)) s += as_string(v)->text;  // one-character strings, as before characters
                   else in.type_error("coerce", 1, "a sequence of characters", a[0]);
                 }
                 return in.make_string(std::move(s));
               }
               in.error("type-error", "coerce: unknown type " + type->name + "; expected list, vector or string");
             });
  TL_BUILTIN(in, "last", 1, 2, "(last LIST [N])",
             "The last cons of LIST (or the last N conses)."
             "\n  (last '(1 2 3))  ; => (3)"
             "\n  (last '(1 2 3) 2)  ; => (2 3)",
             [](Interp& in, Args a, N n) -> Value {
               arg_list(in, "last", a, 0);
               std::int64_t k = n == 2 ? arg_int(in, "last", a, 1) : 1;
               std::size_t len = proper_length(in, "last", a[0], 1);
               if (k < 0) in.error("type-error", "last: count must be non-negative");
               std::size_t skip = static_cast<std::size_t>(k) >= len ? 0 : len - static_cast<std::size_t>(k);
               return nth_cdr(in, "last", a[0], static_cast<std::int64_t>(skip), 1);
             });
  TL_BUILTIN(in, "butlast", 1, 2, "(butlast LIST [N])",
             "A new list of all but the last element (or last N)."
             "\n  (butlast '(1 2 3))  ; => (1 2)"
             "\n  (butlast '(1 2 3) 2)  ; => (1)",
             [](Interp& in, Args a, N n) -> Value {
               arg_list(in, "butlast", a, 0);
               std::int64_t k = n == 2 ? arg_int(in, "butlast", a, 1) : 1;
               std::size_t len = proper_length(in, "butlast", a[0], 1);
               if (k < 0) in.error("type-error", "butlast: count must be non-negative");
               if (static_cast<std::size_t>(k) >= len) return nil();
               ListBuilder out(in);
               Value v = a[0];
               for (std::size_t i = 0; i < len - static_cast<std::size_t>(k); ++i, v = cdr(v)) out.add(car(v));
               return out.result();
             });
  TL_BUILTIN(in, "copy-list", 1, 1, "(copy-list LIST)",
             "A fresh copy of the list structure of LIST."
             "\n  (copy-list '(1 2 3))  ; => (1 2 3)"
             "\n  (let ((a (list 1 2))) (eq a (copy-list a)))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               arg_list(in, "copy-list", a, 0);
               ListBuilder out(in);
               ListWalk walk(in, "copy-list", 1, a[0]);
               for (; !walk.done(); walk.next()) out.add(walk.item());
               out.set_tail(walk.cell());
               return out.result();
             });
  TL_BUILTIN(in, "mapcar", 2, -1, "(mapcar FUNCTION LIST...)",
             "A list of FUNCTION applied to successive elements of the lists, stopping at the shortest."
             "\n  (mapcar #'1+ '(1 2 3))  ; => (2 3 4)"
             "\n  (mapcar #'+ '(1 2 3) '(10 20))  ; => (11 22)",
             [](Interp& in, Args a, N n) -> Value {
               arg_function(in, "mapcar", a, 0);
               for (N i = 1; i < n; ++i) arg_list(in, "mapcar", a, static_cast<int>(i));
               // mapcar stops at the shortest list, so circular lists are fine beside a proper one.
               bool all_circular = true;
               for (N i = 1; i < n && all_circular; ++i) all_circular = is_circular(a[i]);
               if (all_circular) in.circular_list_error("mapcar", 2, a[1]);
               Interp::StackMark mark(in);
               ListBuilder out(in);
               Value* cursors = in.sp;
               for (N i = 1; i < n; ++i) in.push(a[i]);
               Value* call_args = in.sp;
               for (N i = 1; i < n; ++i) in.push(nil());
               for (std::size_t count = 1;; ++count) {
                 if ((count & 0xfff) == 0) in.check_interrupt(0x1000);
                 for (N i = 0; i + 1 < n; ++i) {
                   if (!is_cons(cursors[i])) return out.result();
                   call_args[i] = car(cursors[i]);
                   cursors[i] = cdr(cursors[i]);
                 }
                 out.add(in.apply(a[0], call_args, n - 1));
               }
             });
  TL_BUILTIN(in, "mapc", 2, 2, "(mapc FUNCTION LIST)",
             "Calls FUNCTION on each element of LIST for effect; returns LIST."
             "\n  (let ((sum 0)) (mapc (lambda (x) (incf sum x)) '(1 2 3)) sum)  ; => 6",
             [](Interp& in, Args a, N) -> Value {
               arg_function(in, "mapc", a, 0);
               arg_list(in, "mapc", a, 1);
               Interp::StackMark mark(in);
               in.push(nil());
               for (ListWalk walk(in, "mapc", 2, a[1]); !walk.done(); walk.next()) {
                 in.sp[-1] = walk.item();
                 in.apply(a[0], in.sp - 1, 1);
               }
               return a[1];
             });
  TL_BUILTIN(in, "reduce", 2, -1, "(reduce FUNCTION LIST &key :initial-value :from-end)",
             "Combines the elements of LIST with FUNCTION from the left: (f (f a b) c)..."
             "\n  (reduce #'+ '(1 2 3 4))  ; => 10"
             "\n  (reduce #'list '(1 2 3))  ; => ((1 2) 3)"
             "\n  (reduce #'list '(1 2 3) :from-end t)  ; => (1 (2 3))"
             "\n  (reduce #'+ nil :initial-value 0)  ; => 0",
             [](Interp& in, Args a, N n) -> Value {
               arg_function(in, "reduce", a, 0);
               Value seq = a[1];
               if (is_kind(seq, ObjKind::Vector)) {
                 auto& items = as_vector(seq)->items;
                 seq = in.list_from(items.data(), items.size());
               }
               if (!is_list(seq)) in.type_error("reduce", 2, "a list or vector", a[1]);
               bool has_init = false;
               Value init = keyword_arg(a, 2, n, "initial-value", &has_init);
               bool from_end = keyword_arg(a, 2, n, "from-end").truthy();
               Interp::StackMark mark(in);
               in.push(seq);
               std::vector<Value> items = list_items(in, "reduce", seq, 2);
               if (from_end) std::reverse(items.begin(), items.end());
               if (items.empty()) return has_init ? init : in.apply(a[0], nullptr, 0);
               Value* acc = in.sp;
               in.push(has_init ? init : items[0]);
               in.push(nil());
               for (std::size_t i = has_init ? 0 : 1; i < items.size(); ++i) {
                 if (from_end) {
                   acc[1] = acc[0];
                   acc[0] = items[i];
                 } else {
                   acc[1] = items[i];
                 }
                 acc[0] = in.apply(a[0], acc, 2);
               }
               return acc[0];
             });
  TL_BUILTIN(in, "sort", 2, 4, "(sort SEQUENCE PREDICATE &key :key)",
             "A new list or vector of the elements ordered by PREDICATE (stable merge sort)."
             "\n  (sort '(3 1 2) #'<)  ; => (1 2 3)"
             "\n  (sort '(\"bb\" \"a\" \"ccc\") #'> :key #'length)  ; => (\"ccc\" \"bb\" \"a\")"
             "\n  (sort (vector 3 1 2) #'<)  ; => #(1 2 3)",
             [](Interp& in, Args a, N n) -> Value {
               arg_function(in, "sort", a, 1);
               if (n == 3 ||
                   (n == 4 && !(is_symbol(a[2]) && as_symbol(a[2])->is_keyword() && as_symbol(a[2])->name == "key"))) {
                 in.error("program-error",
                          "sort: after the predicate only :key FUNCTION may come, got " + in.repr(a[2]));
               }
               Value key = keyword_arg(a, 2, n, "key");
               bool is_vec = is_kind(a[0], ObjKind::Vector);
               if (!is_vec && !is_list(a[0])) in.type_error("sort", 1, "a list or vector", a[0]);
               // The elements stay reachable through the original sequence while we sort.
               std::vector<Value> items = is_vec ? as_vector(a[0])->items : list_items(in, "sort", a[0], 1);
               Interp::StackMark mark(in);
               Value* keys = nullptr;
               if (!key.is_nil()) {
                 keys = in.sp;
                 for (Value v : items) in.push(v);
                 for (std::size_t i = 0; i < items.size(); ++i) keys[i] = key_of(in, key, items[i]);
               }
               std::vector<std::size_t> order(items.size());
               for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
               in.push(nil());
               in.push(nil());
               Value* pair = in.sp - 2;
               Value pred = a[1];
               const Value* sort_keys = keys ? keys : items.data();
               // Sorting numbers by the builtin < or > compares them directly.
               Prim prim = is_kind(pred, ObjKind::Native) ? as_native(pred)->prim : Prim::None;
               bool all_numbers = prim == Prim::Lt || prim == Prim::Gt;
               for (std::size_t i = 0; all_numbers && i < items.size(); ++i) {
                 all_numbers = sort_keys[i].is_number() && !(sort_keys[i].is_float() && std::isnan(sort_keys[i].f));
               }
               if (all_numbers) {
                 auto less = [](Value x, Value y) {
                   if (x.is_int() && y.is_int()) return x.i < y.i;
                   double dx = x.is_int() ? static_cast<double>(x.i) : x.f;
                   double dy = y.is_int() ? static_cast<double>(y.i) : y.f;
                   return dx < dy;
                 };
                 std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
                   return prim == Prim::Lt ? less(sort_keys[x], sort_keys[y]) : less(sort_keys[y], sort_keys[x]);
                 });
               } else {
                 std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
                   pair[0] = sort_keys[x];
                   pair[1] = sort_keys[y];
                   return in.apply(pred, pair, 2).truthy();
                 });
               }
               std::vector<Value> sorted;
               sorted.reserve(items.size());
               for (std::size_t i : order) sorted.push_back(items[i]);
               if (is_vec) return in.make_vector(std::move(sorted));
               return in.list_from(sorted.data(), sorted.size());
             });
  TL_BUILTIN(in, "subseq", 2, 3, "(subseq SEQUENCE START [END])",
             "A new list, vector or string of the elements from START below END."
             "\n  (subseq '(a b c d) 1 3)  ; => (b c)"
             "\n  (subseq \"hello\" 1)  ; => \"ello\""
             "\n  (subseq #(1 2 3) 0 1)  ; => #(1)",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t start = arg_int(in, "subseq", a, 1);
               std::int64_t len;
               if (is_string(a[0])) len = static_cast<std::int64_t>(utf8_length(as_string(a[0])->text));
               else if (is_kind(a[0], ObjKind::Vector)) len = static_cast<std::int64_t>(as_vector(a[0])->items.size());
               else if (is_list(a[0])) len = static_cast<std::int64_t>(proper_length(in, "subseq", a[0], 1));
               else in.type_error("subseq", 1, "a sequence", a[0]);
               std::int64_t end = n == 3 && !a[2].is_nil() ? arg_int(in, "subseq", a, 2) : len;
               if (start < 0 || end > len || start > end) {
                 in.error("index-error", "subseq: bounds [" + std::to_string(start) + ", " + std::to_string(end) +
                                             ") are out of range for a sequence of length " + std::to_string(len));
               }
               auto s = static_cast<std::size_t>(start), e = static_cast<std::size_t>(end);
               if (is_string(a[0])) {  // character indexes
                 const std::string& text = as_string(a[0])->text;
                 std::size_t from = utf8_offset(text, s);
                 std::size_t to = utf8_offset(text, e);
                 return in.make_string(text.substr(from, to - from));
               }
               if (is_kind(a[0], ObjKind::Vector)) {
                 auto& items = as_vector(a[0])->items;
                 return in.make_vector(std::vector<Value>(items.begin() + start, items.begin() + end));
               }
               ListBuilder out(in);
               Value v = nth_cdr(in, "subseq", a[0], start, 1);
               for (std::size_t i = s; i < e; ++i, v = cdr(v)) out.add(car(v));
               return out.result();
             });
  TL_BUILTIN(in, "range", 1, 3, "(range [START] END [STEP])",
             "The list of integers from START (default 0) below END by STEP."
             "\n  (range 5)  ; => (0 1 2 3 4)"
             "\n  (range 2 10 3)  ; => (2 5 8)"
             "\n  (range 3 0 -1)  ; => (3 2 1)",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t start = 0, end, step = 1;
               if (n == 1) {
                 end = arg_int(in, "range", a, 0);
               } else {
                 start = arg_int(in, "range", a, 0);
                 end = arg_int(in, "range", a, 1);
                 if (n == 3) step = arg_int(in, "range", a, 2);
               }
               if (step == 0) in.error("type-error", "range: step must not be zero");
               double count = std::ceil((static_cast<double>(end) - static_cast<double>(start)) / static_cast<double>(step));
               if (count > 0) in.check_allocation("range", static_cast<std::uint64_t>(count), sizeof(Cons));
               ListBuilder out(in);
               for (std::int64_t i = start; step > 0 ? i < end : i > end; i += step) out.add(Value::integer(i));
               return out.result();
             });
}

}  // namespace tl::eval
