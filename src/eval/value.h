// SPDX-License-Identifier: Apache-2.0
// Lisp values: a 16-byte tagged word (nil, integer, float, character or heap object) and the heap object
// kinds. A tensor, or any other native object, is a Foreign object with its own trace/print.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/span.h"

namespace tl::eval {

class Interp;
struct Obj;

enum class Tag : std::uint8_t { Nil, Int, Float, Obj, Char };

struct Value {
  Tag tag = Tag::Nil;
  union {
    std::int64_t i;
    double f;
    Obj* o;
  };
  Value() : i(0) {}
  static Value integer(std::int64_t v) {
    Value r;
    r.tag = Tag::Int;
    r.i = v;
    return r;
  }
  static Value real(double v) {
    Value r;
    r.tag = Tag::Float;
    r.f = v;
    return r;
  }
  static Value character(std::uint32_t code) {  // a Unicode code point
    Value r;
    r.tag = Tag::Char;
    r.i = code;
    return r;
  }
  static Value object(Obj* obj) {
    Value r;
    r.tag = Tag::Obj;
    r.o = obj;
    return r;
  }
  bool is_nil() const { return tag == Tag::Nil; }
  bool is_int() const { return tag == Tag::Int; }
  bool is_float() const { return tag == Tag::Float; }
  bool is_number() const { return tag == Tag::Int || tag == Tag::Float; }
  bool is_obj() const { return tag == Tag::Obj; }
  bool is_char() const { return tag == Tag::Char; }
  bool truthy() const { return tag != Tag::Nil; }
  // Identity (eq): same tag and same bits.
  bool same(const Value& other) const { return tag == other.tag && i == other.i; }
};

inline Value nil() { return Value(); }

enum class ObjKind : std::uint8_t {
  Cons,
  Symbol,
  String,
  Vector,
  HashTable,
  Closure,
  Native,
  Macro,
  Env,
  Code,
  Condition,
  Foreign,
  Struct,
};

constexpr std::uint8_t kGcMark = 1;  // Obj::marked: reached by the collector's mark phase

// Every heap object starts with this header. `next` links all objects for the sweep.
struct Obj {
  ObjKind kind;
  // Bit 0 (kGcMark) is the collector's; the printer marks what it has seen with the others,
  // and a collection while printing (a tensor realized for its text) must leave them alone.
  std::uint8_t marked = 0;
  std::uint16_t flags = 0;  // per-kind bits, see kObjHasSpan
  std::uint32_t alloc_size = 0;
  Obj* next = nullptr;
};

constexpr std::uint16_t kObjHasSpan = 1;      // a cons from the reader: the span of its car
constexpr std::uint16_t kObjHasFormSpan = 2;  // the first cons of a list read from source
constexpr std::uint16_t kObjSpansInline = 4;  // a SpannedCons: its spans follow the cell

struct Cons : Obj {
  Value car, cdr;
};

// A cons the reader made (Heap::make_spanned_cons): a Cons in every way, with room for its
// spans after the cell, so a location costs no table entry.
struct SpannedCons : Cons {
  Span span;       // of the car
  Span form_span;  // of the whole list, when this is its first cell
};

enum SymbolFlags : std::uint8_t {
  kSymKeyword = 1,   // self-evaluating, constant
  kSymConstant = 2,  // nil, t, defconstant
  kSymSpecial = 4,   // defvar/defparameter: `let` binds it dynamically
};

struct Symbol : Obj {
  std::string name;
  Value value;          // the global binding (functions and variables share it: a Lisp-1)
  Value doc;            // the variable's docstring, or nil
  bool bound = false;
  std::uint8_t sym_flags = 0;
  bool interned = true;
  bool is_keyword() const { return sym_flags & kSymKeyword; }
};

struct String : Obj {
  std::string text;
};

struct Vector : Obj {
  std::vector<Value> items;
};

enum class HashTest : std::uint8_t { Eq, Eql, Equal };

struct HashTable : Obj {
  HashTest test = HashTest::Equal;
  // Insertion-ordered entries, plus an index from key hash to entry positions.
  std::vector<std::pair<Value, Value>> entries;
  std::vector<std::int32_t> buckets;  // -1 empty; else index into entries (open addressing)
  std::size_t live = 0;               // entries not removed
};

struct Node;
struct LambdaNode;
struct CodeUnit;

struct Env : Obj {
  Env* parent;
  std::uint32_t size;
  Value slots[1];  // really `size` slots; allocated with the object
};

struct Closure : Obj {
  const LambdaNode* lambda;
  Env* env;
  CodeUnit* code;  // owns `lambda`; traced so code lives while a closure does
  Value name;      // the symbol it was defined as (defun), or nil
};

// A builtin. `fn` receives arguments already evaluated and checked against min/max arity.
using NativeFn = Value (*)(Interp&, Value* args, std::uint32_t nargs);
using HostFn = std::function<Value(Interp&, Value* args, std::uint32_t nargs)>;

// Builtins the evaluator computes inline when their arguments allow (eval.cpp prim2): the
// arithmetic and comparisons of two numbers; Not, Car, Cdr, Cadr and Cddr of one value (a list
// for the last four); Eq of two; Aref of a vector and an index in range. Anything else (another
// type, an error) takes the builtin's own path.
enum class Prim : std::uint8_t { None, Add, Sub, Mul, Lt, Gt, Le, Ge, NumEq, Not, Car, Cdr, Cadr, Cddr, Eq, Aref };

struct Native : Obj {
  std::string name;
  Prim prim = Prim::None;
  // The builtin takes one argument, inlined as PRIM of it and 1: (1+ x) as (+ x 1), (1- x) as
  // (- x 1); Not ignores the 1.
  bool prim_unary = false;
  std::int32_t min_args = 0;
  std::int32_t max_args = -1;  // -1: any number
  NativeFn fn = nullptr;
  HostFn host_fn;              // used when fn is null
  const char* usage = "";
  const char* doc = "";
  const char* file = "";
  int line = 0;
};

struct Macro : Obj {
  Value fn;   // a closure or native taking the unevaluated forms
  Value name;
};

// Compiled code (a tree of Nodes) for one top-level form; freed when nothing refers to it.
struct CodeUnit : Obj {
  std::vector<Node*> nodes;        // every node of the unit, deleted with it
  std::vector<Value> constants;    // every Value a node refers to, traced
  Node* entry = nullptr;           // the root of the tree
  ~CodeUnit();
};

// An instance of a defstruct type. `type` is the type's descriptor, a vector
// #(NAME SLOT-NAMES PARENT-DESCRIPTOR-OR-NIL) that defstruct makes once per type.
struct Instance : Obj {
  Value type;
  std::vector<Value> slots;
};

// A condition object: what handler-case binds. Type is a symbol; `data` is user payload.
struct Condition : Obj {
  Value type;       // symbol
  Value message;    // string
  Value data;       // any value (make-condition :data)
  Value slots;      // plist of slot name and value (define-condition slots, format-control)
  std::shared_ptr<tl::Error> error;  // location and backtrace of where it was raised
};

// Native objects defined outside the evaluator (tensors, devices, ...).
struct Foreign : Obj {
  virtual ~Foreign() = default;
  virtual const char* type_name() const = 0;
  virtual void print(std::string& out) const = 0;
  // Reports every Value this object refers to.
  virtual void trace(const std::function<void(Value)>& visit) { (void)visit; }
  // A funcallable object (a model, say) returns the function a call of it runs; nil when it
  // cannot be called.
  virtual Value function() const { return Value(); }
  // Memory outside the heap that this object keeps alive (a realized tensor's buffer), as an
  // identity (objects that share it count it once) and a size; {nullptr, 0} when none. The
  // collector spaces collections by it (Heap::collect).
  virtual std::pair<const void*, std::size_t> held_memory() const { return {nullptr, 0}; }
};

inline bool is_kind(Value v, ObjKind k) { return v.tag == Tag::Obj && v.o->kind == k; }
inline bool is_cons(Value v) { return is_kind(v, ObjKind::Cons); }
inline bool is_symbol(Value v) { return is_kind(v, ObjKind::Symbol); }
inline bool is_string(Value v) { return is_kind(v, ObjKind::String); }
inline bool is_list(Value v) { return v.is_nil() || is_cons(v); }
inline Cons* as_cons(Value v) { return static_cast<Cons*>(v.o); }
inline Symbol* as_symbol(Value v) { return static_cast<Symbol*>(v.o); }
inline String* as_string(Value v) { return static_cast<String*>(v.o); }
inline Vector* as_vector(Value v) { return static_cast<Vector*>(v.o); }
inline HashTable* as_hash(Value v) { return static_cast<HashTable*>(v.o); }
inline Closure* as_closure(Value v) { return static_cast<Closure*>(v.o); }
inline Native* as_native(Value v) { return static_cast<Native*>(v.o); }
inline Macro* as_macro(Value v) { return static_cast<Macro*>(v.o); }
inline Condition* as_condition(Value v) { return static_cast<Condition*>(v.o); }
inline Value car(Value v) { return is_cons(v) ? as_cons(v)->car : nil(); }
inline Value cdr(Value v) { return is_cons(v) ? as_cons(v)->cdr : nil(); }
inline bool is_function(Value v) {
  return is_kind(v, ObjKind::Closure) || is_kind(v, ObjKind::Native) ||
         (is_kind(v, ObjKind::Foreign) && !static_cast<Foreign*>(v.o)->function().is_nil());
}

}  // namespace tl::eval
