// SPDX-License-Identifier: Apache-2.0
// Models (defmodel): funcallable objects holding named fields (parameters, sub-models,
// settings) and a forward function, with a training flag. The Lisp side is stdlib/nn.lisp.
#include "bindings/tensor_value.h"
#include "eval/builtins.h"

namespace tl::tensor {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

struct ModelObj : eval::Foreign {
  std::string name;
  Value fields;   // alist (symbol . value), in definition order
  Value forward;  // the function a call runs
  bool training = true;
  const char* type_name() const override { return "model"; }
  void print(std::string& out) const override { out += "#<model " + name + ">"; }
  void trace(const std::function<void(Value)>& visit) override {
    visit(fields);
    visit(forward);
  }
  Value function() const override { return forward; }
};

ModelObj* as_model(Value v) {
  if (!eval::is_kind(v, eval::ObjKind::Foreign)) return nullptr;
  return dynamic_cast<ModelObj*>(static_cast<eval::Foreign*>(v.o));
}

ModelObj* model_arg(Interp& in, const char* fn, Args a, int i) {
  ModelObj* m = as_model(a[i]);
  if (!m) in.type_error(fn, i + 1, "a model", a[i]);
  return m;
}

}  // namespace

void register_model_builtins(Interp& in) {
  TL_BUILTIN(in, "%make-model", 3, 3, "(%make-model NAME FIELDS FORWARD)",
             "A model named NAME with the alist FIELDS, called as FORWARD. Use defmodel.",
             [](Interp& in, Args a, N) -> Value {
               eval::arg_function(in, "defmodel", a, 2);
               auto* m = in.heap.make<ModelObj>(eval::ObjKind::Foreign);
               m->name = eval::is_symbol(a[0]) ? eval::as_symbol(a[0])->name : in.repr(a[0]);
               m->fields = a[1];
               m->forward = a[2];
               return Value::object(m);
             });
  TL_BUILTIN(in, "model-p", 1, 1, "(model-p X)",
             "True when X is a model (made by a defmodel constructor)."
             "\n  (model-p (nn:linear 2 3))  ; => t"
             "\n  (model-p (tensor '(1.0)))  ; => nil",
             [](Interp& in, Args a, N) -> Value { return in.boolean(as_model(a[0]) != nullptr); });
  TL_BUILTIN(in, "model-name", 1, 1, "(model-name MODEL)",
             "The name of MODEL's defmodel, a symbol."
             "\n  (model-name (nn:linear 2 3))  ; => nn:linear",
             [](Interp& in, Args a, N) -> Value { return in.sym(model_arg(in, "model-name", a, 0)->name); });
  TL_BUILTIN(in, "model-fields", 1, 1, "(model-fields MODEL)",
             "MODEL's fields as an alist (name . value): parameters, sub-models and settings."
             "\n  (mapcar #'car (model-fields (nn:linear 2 3)))  ; => (bound weight bias)"
             "\n  (shape (cdr (assoc 'weight (model-fields (nn:linear 2 3)))))  ; => (2 3)",
             [](Interp& in, Args a, N) -> Value { return model_arg(in, "model-fields", a, 0)->fields; });
  TL_BUILTIN(in, "training-p", 1, 1, "(training-p MODEL)",
             "True when MODEL is in training mode (the default)."
             "\n  (training-p (nn:linear 2 3))  ; => t"
             "\n  (training-p (eval! (nn:linear 2 3)))  ; => nil",
             [](Interp& in, Args a, N) -> Value { return in.boolean(model_arg(in, "training-p", a, 0)->training); });
  TL_BUILTIN(in, "%set-training", 2, 2, "(%set-training MODEL FLAG)", "Sets MODEL's own training flag. Use train! or eval!.",
             [](Interp& in, Args a, N) -> Value {
               model_arg(in, "%set-training", a, 0)->training = a[1].truthy();
               return a[0];
             });
  TL_BUILTIN(in, "%set-model-function", 2, 2, "(%set-model-function MODEL FORWARD)",
             "Makes a call of MODEL run FORWARD. Used by defmodel, whose forward refers to the model.",
             [](Interp& in, Args a, N) -> Value {
               eval::arg_function(in, "defmodel", a, 1);
               model_arg(in, "%set-model-function", a, 0)->forward = a[1];
               return a[0];
             });
}

}  // namespace tl::tensor
