// SPDX-License-Identifier: Apache-2.0
// The condition system's core: offering a condition to the active handlers (handler-bind
// functions run where the condition is signaled, before anything unwinds; a handler-case
// takes it by unwinding), and the builtins lisp/36-conditions.lisp builds on.
#include "eval/builtins.h"
#include "support/log.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

// Errors no handler may take: bugs, the end of the program, the end of the step budget.
bool is_untakeable(const tl::Error& e) {
  return e.kind() == ErrorKind::Internal || e.type() == "exit" || e.type() == "step-limit";
}

Condition* arg_condition(Interp& in, const char* fn, Args a, int i) {
  if (!is_kind(a[i], ObjKind::Condition)) in.type_error(fn, i + 1, "a condition", a[i]);
  return as_condition(a[i]);
}

}  // namespace

std::int64_t Interp::run_handlers(Value cond, std::int32_t from) {
  StackMark mark(*this);
  push(cond);
  Value type = as_condition(cond)->type;
  for (std::int32_t i = from; i >= 0; i = handler_frames[static_cast<std::size_t>(i)].outer) {
    // A copy: the handlers below may push frames (the vector grows), never pop this one.
    HandlerFrame frame = handler_frames[static_cast<std::size_t>(i)];
    if (frame.id != 0) {  // a handler-case
      for (Value t = frame.handlers; is_cons(t); t = cdr(t)) {
        if (handler_matches(type, car(t))) return frame.id;
      }
      continue;
    }
    for (Value h = frame.handlers; is_cons(h); h = cdr(h)) {
      Value entry = car(h);  // (TYPE . FUNCTION)
      if (!is_cons(entry) || !handler_matches(type, car(entry))) continue;
      // The handler runs with only the frames outside its own active, so a condition it
      // signals goes outwards. Returning declines.
      struct RestoreTop {
        Interp& in;
        std::int32_t top;
        ~RestoreTop() { in.handler_top = top; }
      } restore{*this, handler_top};
      handler_top = frame.outer;
      StackMark call_mark(*this);
      push(cond);
      apply(cdr(entry), sp - 1, 1);
    }
  }
  return 0;
}

bool Interp::is_deferred_signal(const tl::Error& e) const {
  // Running a handler needs stack and heap: these are offered once the body has unwound.
  return e.type() == "stack-overflow" || e.type() == "storage-error";
}

void Interp::signal_error(tl::Error& e) {
  if (e.payload() && e.payload()->signaled) return;
  if (is_untakeable(e) || is_deferred_signal(e)) return;
  if (handler_top < 0) {
    // No handler is active: nothing to run, and no condition object to make for it.
    if (!e.payload()) e.set_payload(std::make_shared<tl::detail::Payload>());
    e.payload()->signaled = true;
    return;
  }
  Value cond = condition_of(e);
  tl::detail::Payload& payload = *e.payload();
  payload.signaled = true;
  payload.target = run_handlers(cond, handler_top);
}

void Interp::throw_signaled(tl::Error e) {
  signal_error(e);
  throw e;
}

tl::Error condition_error(Interp& in, Value cond) {
  Condition* c = as_condition(cond);
  std::string type = is_symbol(c->type) ? as_symbol(c->type)->name : "simple-error";
  std::string message = is_string(c->message) ? as_string(c->message)->text : in.repr(c->message, false);
  // Built-in types explain themselves through their messages; a user's type is named.
  if (is_symbol(c->type) && !in.builtin_conditions.count(as_symbol(c->type))) {
    message = type + ": " + message;
  }
  tl::Error e(ErrorKind::User, error_phase(type), type, message);
  auto payload = std::make_shared<tl::detail::Payload>();
  payload->condition = in.make_root(cond);
  e.set_payload(payload);
  in.decorate(e, in.call_site);
  return e;
}

void register_condition_builtins(Interp& in) {
  TL_BUILTIN(in, "%signal", 1, 1, "(%signal CONDITION)",
             "Offers CONDITION to the active handlers; returns nil when all decline.",
             [](Interp& in, Args a, N) -> Value {
               arg_condition(in, "signal", a, 0);
               std::int64_t target = in.run_handlers(a[0], in.handler_top);
               if (target == 0) return nil();
               tl::Error e = condition_error(in, a[0]);
               e.payload()->signaled = true;
               e.payload()->target = target;
               throw e;
             });
  TL_BUILTIN(in, "%handler-bind", 2, 2, "(%handler-bind CLUSTER THUNK)",
             "Calls THUNK with the handlers of CLUSTER, a list of (TYPE . FUNCTION), active.",
             [](Interp& in, Args a, N) -> Value {
               std::size_t saved_frames = in.frames.size();
               try {
                 Interp::HandlerScope scope(in, 0, a[0]);
                 return in.apply_values(a[1], nullptr, 0);
               } catch (tl::Error& e) {
                 // An error not yet offered to the handlers (see is_deferred_signal) is
                 // offered here, after the body unwound, starting with this cluster.
                 if (!is_untakeable(e) && !(e.payload() && e.payload()->signaled)) {
                   in.frames.resize(saved_frames);
                   Interp::StackMark mark(in);
                   Value cond = in.condition_of(e);
                   in.push(cond);
                   e.payload()->signaled = true;
                   Interp::HandlerScope scope(in, 0, a[0]);
                   e.payload()->target = in.run_handlers(cond, in.handler_top);
                 }
                 throw;
               }
             });
  TL_BUILTIN(in, "%make-condition", 4, 4, "(%make-condition TYPE MESSAGE DATA SLOTS)",
             "A condition of TYPE with the report MESSAGE (a string), DATA and the slot plist SLOTS.",
             [](Interp& in, Args a, N) -> Value {
               arg_symbol(in, "make-condition", a, 0);
               Value message = is_string(a[1]) ? a[1] : in.make_string(as_symbol(a[0])->name);
               Interp::StackMark mark(in);
               in.push(message);
               auto* c = in.heap.make<Condition>(ObjKind::Condition);
               c->type = a[0];
               c->message = message;
               c->data = a[2];
               c->slots = a[3];
               return Value::object(c);
             });
  TL_BUILTIN(in, "%condition-slots", 1, 1, "(%condition-slots CONDITION)", "The slot plist of CONDITION.",
             [](Interp& in, Args a, N) { return arg_condition(in, "%condition-slots", a, 0)->slots; });
  TL_BUILTIN(in, "%set-condition-slots", 2, 2, "(%set-condition-slots CONDITION PLIST)", "Replaces the slot plist of CONDITION.",
             [](Interp& in, Args a, N) {
               arg_condition(in, "%set-condition-slots", a, 0)->slots = a[1];
               return a[1];
             });
  TL_BUILTIN(in, "%set-condition-message", 2, 2, "(%set-condition-message CONDITION STRING)", "Replaces the report of CONDITION.",
             [](Interp& in, Args a, N) {
               arg_condition(in, "%set-condition-message", a, 0)->message = a[1];
               return a[1];
             });
  TL_BUILTIN(in, "%condition-parents", 1, 1, "(%condition-parents TYPE)", "The parent types of the condition type TYPE.",
             [](Interp& in, Args a, N) -> Value {
               Symbol* type = arg_symbol(in, "%condition-parents", a, 0);
               auto it = in.condition_parents.find(type);
               if (it == in.condition_parents.end()) return nil();
               std::vector<Value> parents;
               for (Symbol* p : it->second) parents.push_back(Value::object(p));
               return in.list_from(parents.data(), parents.size());
             });
  TL_BUILTIN(in, "%condition-type-known-p", 1, 1, "(%condition-type-known-p TYPE)", "True when TYPE names a condition type.",
             [](Interp& in, Args a, N) -> Value {
               if (!is_symbol(a[0])) return nil();
               return in.boolean(as_symbol(a[0]) == in.S.condition || in.condition_parents.count(as_symbol(a[0])));
             });
  TL_BUILTIN(in, "%print-warning", 1, 1, "(%print-warning STRING)", "Hands \"WARNING: STRING\" to the log (standard error).",
             [](Interp& in, Args a, N) -> Value {
               std::string text = is_string(a[0]) ? as_string(a[0])->text : in.repr(a[0], false);
               tl::log("WARNING: %s\n", text.c_str());
               return nil();
             });
}

}  // namespace tl::eval
