// SPDX-License-Identifier: Apache-2.0
// Structure instances for defstruct (lisp/35-defstruct.lisp) and CLOS (lisp/39-clos.lisp):
// construction, checked slot access, type tests that follow :include, and copying.
#include "eval/builtins.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

// A type descriptor: #(NAME SLOT-NAMES PARENT) for defstruct, #(NAME SLOT-NAMES nil CLASS) for
// instances of a CLOS class (lisp/39-clos.lisp), whose printing the class decides.
bool is_descriptor(Value v) {
  if (!is_kind(v, ObjKind::Vector)) return false;
  const auto& items = as_vector(v)->items;
  return (items.size() == 3 || items.size() == 4) && is_symbol(items[0]);
}

Value arg_descriptor(Interp& in, const char* fn, Args a, int i) {
  if (!is_descriptor(a[i])) in.type_error(fn, i + 1, "a structure type descriptor", a[i]);
  return a[i];
}

// Whether V is an instance of the type DESCRIPTOR or of a type that includes it.
bool is_instance_of(Value v, Value descriptor) {
  if (!is_kind(v, ObjKind::Struct)) return false;
  for (Value type = static_cast<Instance*>(v.o)->type; !type.is_nil(); type = as_vector(type)->items[2]) {
    if (type.same(descriptor)) return true;
  }
  return false;
}

// The instance A[0] of DESCRIPTOR A[1], for the accessor named A[3]; a type error otherwise.
Instance* checked_instance(Interp& in, Args a, Value accessor) {
  Value descriptor = a[1];
  if (!is_instance_of(a[0], descriptor)) {
    std::string fn = is_symbol(accessor) ? as_symbol(accessor)->name : "%struct-ref";
    in.type_error(fn, 1, "a " + as_symbol(as_vector(descriptor)->items[0])->name, a[0]);
  }
  return static_cast<Instance*>(a[0].o);
}

std::size_t slot_index(Interp& in, Instance* instance, Value index) {
  if (!index.is_int() || index.i < 0 || static_cast<std::size_t>(index.i) >= instance->slots.size()) {
    in.error("index-error", "%struct-ref: no slot " + in.repr(index) + " in " + in.repr(Value::object(instance)));
  }
  return static_cast<std::size_t>(index.i);
}

Value make_instance(Interp& in, Value descriptor, const Value* slots, std::size_t n) {
  in.heap.account_payload(n * sizeof(Value));
  auto* instance = in.heap.make<Instance>(ObjKind::Struct);
  instance->type = descriptor;
  instance->slots.assign(slots, slots + n);
  return Value::object(instance);
}

}  // namespace

void register_struct_builtins(Interp& in) {
  TL_BUILTIN(in, "%make-struct", 1, -1, "(%make-struct DESCRIPTOR SLOT-VALUE...)",
             "A new instance of the structure type DESCRIPTOR with the given slot values, in order.",
             [](Interp& in, Args a, N n) -> Value {
               Value descriptor = arg_descriptor(in, "%make-struct", a, 0);
               std::size_t expected = proper_length(in, "%make-struct", as_vector(descriptor)->items[1], 1);
               if (n - 1 != expected) {
                 in.error("program-error", "%make-struct: " + std::to_string(n - 1) + " slot values for " +
                                               std::to_string(expected) + " slots");
               }
               return make_instance(in, descriptor, a + 1, n - 1);
             });
  TL_BUILTIN(in, "%struct-ref", 4, 4, "(%struct-ref INSTANCE DESCRIPTOR INDEX ACCESSOR)",
             "Slot INDEX of INSTANCE, which must be of type DESCRIPTOR (errors name ACCESSOR).",
             [](Interp& in, Args a, N) -> Value {
               Instance* instance = checked_instance(in, a, a[3]);
               return instance->slots[slot_index(in, instance, a[2])];
             });
  TL_BUILTIN(in, "%struct-set", 5, 5, "(%struct-set INSTANCE DESCRIPTOR INDEX VALUE ACCESSOR)",
             "Stores VALUE in slot INDEX of INSTANCE, which must be of type DESCRIPTOR; returns VALUE.",
             [](Interp& in, Args a, N) -> Value {
               Instance* instance = checked_instance(in, a, a[4]);
               instance->slots[slot_index(in, instance, a[2])] = a[3];
               return a[3];
             });
  TL_BUILTIN(in, "%struct-typep", 2, 2, "(%struct-typep X DESCRIPTOR)",
             "True when X is an instance of the structure type DESCRIPTOR or of one that includes it.",
             [](Interp& in, Args a, N) { return in.boolean(is_instance_of(a[0], arg_descriptor(in, "%struct-typep", a, 1))); });
  TL_BUILTIN(in, "%struct-slots", 1, 1, "(%struct-slots INSTANCE)", "The list of INSTANCE's slot values.",
             [](Interp& in, Args a, N) -> Value {
               if (!is_kind(a[0], ObjKind::Struct)) in.type_error("%struct-slots", 1, "a structure", a[0]);
               auto& slots = static_cast<Instance*>(a[0].o)->slots;
               return in.list_from(slots.data(), slots.size());
             });
  TL_BUILTIN(in, "%struct-descriptor", 1, 1, "(%struct-descriptor X)", "The type descriptor of the structure X, or nil.",
             [](Interp&, Args a, N) -> Value {
               return is_kind(a[0], ObjKind::Struct) ? static_cast<Instance*>(a[0].o)->type : nil();
             });
  TL_BUILTIN(in, "copy-structure", 1, 1, "(copy-structure STRUCTURE)",
             "A new instance of STRUCTURE's type with the same slot values (a shallow copy).\n"
             "  (progn (defstruct doc-ex-point x y)\n"
             "    (let* ((p (make-doc-ex-point :x 1 :y 2)) (q (copy-structure p)))\n"
             "      (setf (doc-ex-point-x q) 10)\n"
             "      (list (doc-ex-point-x p) (doc-ex-point-x q))))  ; => (1 10)",
             [](Interp& in, Args a, N) -> Value {
               if (!is_kind(a[0], ObjKind::Struct)) in.type_error("copy-structure", 1, "a structure", a[0]);
               auto* instance = static_cast<Instance*>(a[0].o);
               std::vector<Value> slots = instance->slots;  // reachable through a[0] meanwhile
               return make_instance(in, instance->type, slots.data(), slots.size());
             });
}

}  // namespace tl::eval
