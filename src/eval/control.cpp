// SPDX-License-Identifier: Apache-2.0
// The control forms the evaluator meets less often than calls and variables: dynamic binding,
// block/return-from, unwind-protect, handler-case, closure creation and the evaluator's
// errors. They live apart from Interp::run so that its stack frame, paid once per Lisp call,
// stays small.
#include "eval/interp.h"

namespace tl::eval {

Value Interp::run_dynamic_binding(DynBindNode* n, Env* env) {
  DynamicBinding binding(*this, n->symbol, run(n->value, env));
  mv_count = 1;
  return run(n->body, env);
}

Value Interp::run_block(BlockNode* n, Env* env) {
  StackMark mark(*this);
  std::int64_t tag = 0;
  if (n->own_frame > 0) {
    env = new_env(env, n->own_frame, false);
    push(Value::object(env));
  }
  if (n->tag_slot >= 0) {
    tag = ++block_tags;
    env->slots[n->tag_slot] = Value::integer(tag);
    active_block_tags.push_back(tag);
  }
  struct PopTag {
    std::vector<std::int64_t>& tags;
    std::size_t size;
    ~PopTag() { tags.resize(size); }
  } pop_tag{active_block_tags, active_block_tags.size() - (tag != 0 ? 1 : 0)};
  Value* saved_sp = sp;
  char* saved_fsp = fsp;
  std::size_t saved_frames = frames.size();
  try {
    Value v = run(n->body, env);
    if (pending_block == n) {  // a local return to this block
      pending_block = nullptr;
      v = pending_value;
      pending_value = nil();
    }
    return v;
  } catch (ReturnFromSignal& r) {
    if (r.block != n || (r.tag != 0 && r.tag != tag)) throw;
    sp = saved_sp;
    fsp = saved_fsp;
    frames.resize(saved_frames);
    return r.value;
  }
}

Value Interp::run_return_from(ReturnFromNode* n, Env* env) {
  std::int64_t tag = 0;
  if (n->tag != nullptr) {
    tag = run(n->tag, env).i;
    bool active = false;
    for (auto it = active_block_tags.rbegin(); it != active_block_tags.rend(); ++it) {
      if (*it == tag) {
        active = true;
        break;
      }
    }
    if (!active) {
      std::string name = n->block->name ? n->block->name->name : "nil";
      error_at(n->span, "control-error", "return-from " + name + ": the block has already been exited");
    }
  }
  mv_count = 1;  // the values are the value form's (an argument evaluated before left none)
  Value v = run(n->value, env);
  if (n->local) {
    pending_value = v;
    pending_block = n->block;
    return v;
  }
  throw ReturnFromSignal{n->block, tag, v};
}

namespace {

// Runs an unwind-protect's cleanup forms, keeping the protected form's values (rooted on the
// value stack meanwhile): unwind-protect returns every value of its protected form.
void run_cleanup(Interp& in, Node* cleanup, Env* env) {
  Interp::StackMark mark(in);
  std::uint32_t count = in.mv_count;
  Value* saved = in.sp;
  if (count > 1) {
    for (const Value& v : in.mv_rest) in.push(v);
  }
  in.run(cleanup, env);
  in.mv_count = count;
  if (count > 1) in.mv_rest.assign(saved, saved + (count - 1));
}

}  // namespace

Value Interp::run_unwind_protect(UnwindProtectNode* n, Env* env) {
  Value result;
  try {
    result = run(n->body, env);
  } catch (ReturnFromSignal& r) {
    StackMark mark(*this);
    push(r.value);  // rooted while the cleanup runs
    run_cleanup(*this, n->cleanup, env);
    r.value = sp[-1];
    throw;
  } catch (...) {
    run(n->cleanup, env);
    throw;
  }
  StackMark mark(*this);
  push(result);
  run_cleanup(*this, n->cleanup, env);
  return result;
}

Value Interp::run_multiple_value_call(MultipleValueCallNode* n, Env* env) {
  StackMark mark(*this);
  Value* base = sp;
  push(run(n->fn, env));
  for (Node* form : n->forms) {
    mv_count = 1;
    Value v = run(form, env);
    if (mv_count == 1) {
      push(v);
      continue;
    }
    if (mv_count == 0) continue;
    // The values after the first are copied out before anything can overwrite mv_rest.
    std::uint32_t count = mv_count;
    if (sp + count > stack_end) stack_overflow();
    push(v);
    for (std::uint32_t i = 1; i < count; ++i) push(mv_rest[i - 1]);
  }
  mv_count = 1;
  return apply_values(base[0], base + 1, static_cast<std::uint32_t>(sp - base - 1));
}

Interp::HandlerOutcome Interp::run_handler_case(HandlerCaseNode* n, Env* env) {
  Value* saved_sp = sp;
  char* saved_fsp = fsp;
  std::size_t saved_frames = frames.size();
  std::int64_t id = ++handler_case_ids;
  // The clause for E, or null when this activation does not take it. An error the handlers
  // were offered where it was raised goes to the activation they chose; one that was not
  // (stack-overflow, storage-error, an error of the evaluator's own) is signaled here, now
  // that the body has unwound: to this form's clauses first, then to the handlers outside.
  auto handle = [&](tl::Error& e) -> const HandlerClause* {
    sp = saved_sp;
    fsp = saved_fsp;
    frames.resize(saved_frames);
    Value cond = condition_of(e);
    tl::detail::Payload& payload = *e.payload();
    if (payload.signaled && payload.target != id) return nullptr;
    for (const HandlerClause& clause : n->clauses) {
      for (Symbol* wanted : clause.types) {
        if (handler_matches(as_condition(cond)->type, Value::object(wanted))) return &clause;
      }
    }
    if (!payload.signaled) {
      payload.signaled = true;
      StackMark mark(*this);
      push(cond);
      payload.target = run_handlers(cond, handler_top);
    }
    return nullptr;
  };
  try {
    HandlerScope scope(*this, id, n->types);
    return HandlerOutcome{run(n->body, env), nullptr};
  } catch (tl::Error& e) {
    // Internal errors are bugs, exit ends the program and the step limit ends evaluation: no
    // handler takes them.
    if (e.kind() == ErrorKind::Internal || e.type() == "exit" || e.type() == "step-limit") throw;
    if (const HandlerClause* clause = handle(e)) return HandlerOutcome{condition_of(e), clause};
    throw;
  } catch (const std::bad_alloc&) {
    // The host ran out of memory somewhere in the body, outside any builtin (which reports it
    // itself): a storage-error like any other (issue 19).
    tl::Error e = out_of_memory_error(nullptr);
    if (const HandlerClause* clause = handle(e)) return HandlerOutcome{condition_of(e), clause};
    throw e;
  } catch (const std::length_error& e) {
    tl::Error error = out_of_memory_error(e.what());
    if (const HandlerClause* clause = handle(error)) return HandlerOutcome{condition_of(error), clause};
    throw error;
  }
}

tl::Error Interp::out_of_memory_error(const char* detail) {
  std::string message = out_of_memory_text();
  if (detail != nullptr) message += std::string(": ") + detail;
  return make_error("storage-error", std::move(message), Span{});
}

Value Interp::make_closure(const LambdaNode* n, Env* env) {
  if (env != nullptr && is_stack_env(env)) {
    throw tl::Error(ErrorKind::Internal, "eval", "internal-error",
                    "a closure would capture a frame on the frame stack (src/eval/control.cpp)");
  }
  auto* c = heap.make<Closure>(ObjKind::Closure);
  c->lambda = n;
  c->env = env;
  c->name = n->name;
  c->code = n->unit;
  return Value::object(c);
}

void Interp::unbound_variable(Span span, Symbol* s) {
  throw_signaled(make_error("unbound-variable", "unbound variable " + s->name, span));
}

void Interp::undefined_function(Span span, Symbol* s) {
  throw_signaled(make_error("undefined-function", "undefined function " + s->name, span));
}

void Interp::not_a_function(Span span, Value v) {
  std::string shown = repr(v);
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  throw_signaled(make_error("type-error", "cannot call " + shown + ": it is not a function", span));
}

// The forms analyze.cpp compiles itself; macros may not replace them.
bool Interp::is_special_form(const Symbol* s) const {
  return s == S.quote || s == S.quasiquote || s == S.unquote || s == S.unquote_splicing || s == S.function ||
         s == S.lambda || s == S.named_lambda || s == S.if_ || s == S.progn || s == S.let || s == S.let_star ||
         s == S.setq || s == S.and_ || s == S.or_ || s == S.while_ || s == S.block || s == S.return_from ||
         s == S.unwind_protect || s == S.handler_case || s == S.declare || s == S.multiple_value_call ||
         s == S.macrolet || s == S.symbol_macrolet;
}

Value Interp::call_head_fallback(const CallNode* n, Value fn, bool direct) {
  // (funcall 'car l) in tail position reaches here with the symbol.
  if (is_symbol(fn) && !fn.is_nil() && as_symbol(fn)->bound && is_function(as_symbol(fn)->value)) {
    return as_symbol(fn)->value;
  }
  // In this Lisp-1 a local variable named like a global function hides it; when the local holds
  // no function, a call through its name means the global function (issue 25):
  // (let ((list '(1 2))) (list list)) is ((1 2)).
  if (direct && n->fn->kind == NodeKind::Local) {
    Symbol* name = static_cast<const LocalNode*>(n->fn)->name;
    if (name != nullptr && name->bound && is_function(name->value)) return name->value;
    if (name != nullptr) {
      std::string shown = repr(fn);
      if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
      throw_signaled(make_error("type-error", "cannot call " + shown + ": it is the value of the local variable " +
                                                  name->name + ", not a function", n->span));
    }
  }
  not_a_function(n->span, fn);
}

void Interp::stack_overflow_at(Span span) {
  error_at(span, "stack-overflow",
           "stack overflow (recursion too deep; " + std::to_string(frames.size()) + " active calls)");
}

}  // namespace tl::eval
