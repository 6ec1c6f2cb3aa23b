// SPDX-License-Identifier: Apache-2.0
// The evaluator: runs node trees. Calls in tail position loop instead of recursing, so tail
// recursion runs in constant stack. Safe points (closure entry, loop iterations) may collect.
#include <cstring>
#include <functional>
#include <stdexcept>

#include "eval/interp.h"

namespace tl::eval {

// The evaluator's small helpers are forced inline for speed, except under the sanitizers,
// where every inlined copy of their locals would enlarge run's frame (and so limit recursion).
#ifdef TL_SANITIZE
#define TL_HOT_INLINE inline
#else
#define TL_HOT_INLINE [[gnu::always_inline]] inline
#endif

namespace {

// Restores the value stack and call frames of one run() invocation when it ends.
struct RunGuard {
  Interp& in;
  Value* sp;
  char* fsp;
  std::size_t frames;
  ~RunGuard() {
    in.sp = sp;
    in.fsp = fsp;
    if (in.frames.size() != frames) in.frames.resize(frames);
  }
};

std::string function_name(const Interp& in, Value fn) {
  if (is_kind(fn, ObjKind::Native)) return as_native(fn)->name;
  if (is_kind(fn, ObjKind::Closure)) {
    Closure* c = as_closure(fn);
    if (is_symbol(c->name)) return as_symbol(c->name)->name;
    if (is_symbol(c->lambda->name)) return as_symbol(c->lambda->name)->name;
  }
  (void)in;
  return "lambda";
}

[[noreturn]] void arity_error(Interp& in, Value fn, std::uint32_t nargs, std::int64_t min, std::int64_t max) {
  std::string expected;
  if (max == min) {
    expected = std::to_string(min);
  } else if (max < 0) {
    expected = "at least " + std::to_string(min);
  } else {
    expected = std::to_string(min) + " to " + std::to_string(max);
  }
  bool one = min == 1 && (max == 1 || max < 0);
  in.throw_signaled(in.make_error("arity-error", function_name(in, fn) + ": expected " + expected + " argument" +
                                                     (one ? "" : "s") + ", got " + std::to_string(nargs), Span{}));
}

// Binds arguments to a new frame for a closure. `args` must be rooted.
Env* bind_arguments(Interp& in, Closure* fn, Value* args, std::uint32_t nargs) {
  const LambdaNode* lam = fn->lambda;
  if (lam->simple()) {
    if (nargs != lam->required) arity_error(in, Value::object(fn), nargs, lam->required, lam->required);
    Env* env = in.new_env(fn->env, lam->frame_size, lam->stack_frame);
    if (nargs > 0) std::memcpy(static_cast<void*>(env->slots), args, nargs * sizeof(Value));  // args may be null
    return env;
  }
  std::int64_t max_pos = lam->rest_slot >= 0 || lam->has_keys ? -1
                                                                : static_cast<std::int64_t>(lam->required + lam->optional.size());
  if (nargs < lam->required || (max_pos >= 0 && nargs > max_pos)) {
    arity_error(in, Value::object(fn), nargs, lam->required,
                lam->rest_slot >= 0 || lam->has_keys ? -1 : max_pos);
  }
  Env* env = in.new_env(fn->env, lam->frame_size, lam->stack_frame);
  Span site = in.call_site;  // default forms may run other calls; our errors belong here
  Value* saved_sp = in.sp;
  in.push(Value::object(env));  // root the frame while default forms run
  struct PopRoot {
    Interp& in;
    Value* sp;
    ~PopRoot() { in.sp = sp; }
  } pop_root{in, saved_sp};
  std::uint32_t slot = 0;
  std::uint32_t i = 0;
  for (; i < lam->required; ++i) env->slots[slot++] = args[i];
  for (const OptionalParam& opt : lam->optional) {
    std::uint32_t my_slot = slot++;
    if (i < nargs) {
      env->slots[my_slot] = args[i++];
      if (opt.supplied_slot >= 0) env->slots[opt.supplied_slot] = in.t();
    } else if (opt.init != nullptr) {
      env->slots[my_slot] = in.run(opt.init, env);
    }
    if (opt.supplied_slot >= 0) ++slot;
  }
  if (lam->rest_slot >= 0) {
    env->slots[lam->rest_slot] = i < nargs ? in.list_from(args + i, nargs - i) : nil();
  }
  if (lam->has_keys) {
    in.call_site = site;
    std::uint32_t rest_start = i;
    if ((nargs - rest_start) % 2 != 0) {
      in.error("program-error", function_name(in, Value::object(fn)) +
                                    ": keyword arguments must come in pairs, got an odd number");
    }
    std::vector<bool> seen(lam->keys.size(), false);
    bool allow_other = lam->allow_other_keys;
    for (std::uint32_t k = rest_start; k + 1 < nargs; k += 2) {
      if (is_symbol(args[k]) && as_symbol(args[k])->name == "allow-other-keys" &&
          as_symbol(args[k])->is_keyword() && args[k + 1].truthy()) {
        allow_other = true;
      }
    }
    for (std::uint32_t k = rest_start; k + 1 < nargs; k += 2) {
      Value key = args[k];
      bool matched = false;
      for (std::size_t j = 0; j < lam->keys.size(); ++j) {
        if (key.same(Value::object(lam->keys[j].keyword))) {
          matched = true;
          if (!seen[j]) {
            seen[j] = true;
            env->slots[lam->keys[j].slot] = args[k + 1];
            if (lam->keys[j].supplied_slot >= 0) env->slots[lam->keys[j].supplied_slot] = in.t();
          }
          break;
        }
      }
      if (!matched && !allow_other && !(is_symbol(key) && as_symbol(key)->name == "allow-other-keys")) {
        std::string expected;
        for (const KeyParam& kp : lam->keys) expected += " :" + kp.keyword->name;
        in.error("program-error", function_name(in, Value::object(fn)) + ": unknown keyword argument " +
                                      in.repr(key) + "; expected one of" +
                                      (expected.empty() ? std::string(" (none)") : expected));
      }
    }
    for (std::size_t j = 0; j < lam->keys.size(); ++j) {
      if (!seen[j] && lam->keys[j].init != nullptr) {
        env->slots[lam->keys[j].slot] = in.run(lam->keys[j].init, env);
      }
    }
  }
  in.mv_count = 1;  // default forms' other values are dropped
  return env;
}

// Evaluates a node that needs no bookkeeping (a constant or a variable); false otherwise.
TL_HOT_INLINE bool leaf_value(const Node* node, Env* env, Value& out) {
  switch (node->kind) {
    case NodeKind::Const:
      out = static_cast<const ConstNode*>(node)->value;
      return true;
    case NodeKind::Local: {
      auto* n = static_cast<const LocalNode*>(node);
      Env* e = env;
      for (std::uint32_t d = n->depth; d > 0; --d) e = e->parent;
      out = e->slots[n->index];
      return true;
    }
    case NodeKind::Global: {
      Symbol* s = static_cast<const GlobalNode*>(node)->symbol;
      out = s->value;
      return s->bound;
    }
    default: return false;
  }
}

// Computes a two-argument arithmetic builtin on two numbers inline. False when the result needs
// the general path (not numbers, or an overflow, which the builtin reports as an error).
TL_HOT_INLINE bool prim2(Prim prim, Value a, Value b, Value t, Value& out) {
  switch (prim) {
    case Prim::Not: out = a.is_nil() ? t : nil(); return true;
    case Prim::Eq: out = a.same(b) ? t : nil(); return true;
    case Prim::Aref: {
      if (!is_kind(a, ObjKind::Vector) || !b.is_int()) return false;
      const auto& items = as_vector(a)->items;
      if (static_cast<std::uint64_t>(b.i) >= items.size()) return false;  // the builtin's index error
      out = items[static_cast<std::size_t>(b.i)];
      return true;
    }
    case Prim::Car:
    case Prim::Cdr:
    case Prim::Cadr:
    case Prim::Cddr: {
      // cadr and cddr take the cdr first; then car or cdr of a list, nil of nil.
      Value list = a;
      if (prim == Prim::Cadr || prim == Prim::Cddr) {
        if (is_cons(list)) list = cdr(list);
        else if (!list.is_nil()) return false;  // the builtin's type error
      }
      if (list.is_nil()) {
        out = nil();
        return true;
      }
      if (!is_cons(list)) return false;
      out = prim == Prim::Car || prim == Prim::Cadr ? car(list) : cdr(list);
      return true;
    }
    default: break;
  }
  if (a.is_int() && b.is_int()) {
    std::int64_t r;
    switch (prim) {
      case Prim::Add: if (__builtin_add_overflow(a.i, b.i, &r)) return false; out = Value::integer(r); return true;
      case Prim::Sub: if (__builtin_sub_overflow(a.i, b.i, &r)) return false; out = Value::integer(r); return true;
      case Prim::Mul: if (__builtin_mul_overflow(a.i, b.i, &r)) return false; out = Value::integer(r); return true;
      case Prim::Lt: out = a.i < b.i ? t : nil(); return true;
      case Prim::Gt: out = a.i > b.i ? t : nil(); return true;
      case Prim::Le: out = a.i <= b.i ? t : nil(); return true;
      case Prim::Ge: out = a.i >= b.i ? t : nil(); return true;
      case Prim::NumEq: out = a.i == b.i ? t : nil(); return true;
      case Prim::Not:
      case Prim::Car:
      case Prim::Cdr:
      case Prim::Cadr:
      case Prim::Cddr:
      case Prim::Eq:
      case Prim::Aref:
      case Prim::None: return false;
    }
  }
  if (!a.is_number() || !b.is_number()) return false;
  double x = a.is_int() ? static_cast<double>(a.i) : a.f;
  double y = b.is_int() ? static_cast<double>(b.i) : b.f;
  switch (prim) {
    case Prim::Add: out = Value::real(x + y); return true;
    case Prim::Sub: out = Value::real(x - y); return true;
    case Prim::Mul: out = Value::real(x * y); return true;
    case Prim::Lt: out = x < y ? t : nil(); return true;
    case Prim::Gt: out = x > y ? t : nil(); return true;
    case Prim::Le: out = x <= y ? t : nil(); return true;
    case Prim::Ge: out = x >= y ? t : nil(); return true;
    case Prim::NumEq: out = x == y ? t : nil(); return true;
    case Prim::Not:
    case Prim::Car:
    case Prim::Cdr:
    case Prim::Cadr:
    case Prim::Cddr:
    case Prim::Eq:
    case Prim::Aref:
    case Prim::None: return false;
  }
  return false;
}

// Whether the symbol a PrimCall named no longer holds the builtin it was compiled for.
TL_HOT_INLINE bool prim_redefined(const PrimCallNode* n) {
  return n->symbol != nullptr && (n->symbol->value.tag != Tag::Obj || n->symbol->value.o != n->builtin);
}

bool pure_prim(const PrimCallNode* n, Env* env, Value t, Value& out);

// An argument of a pure PrimCall: a leaf, or a pure PrimCall itself.
TL_HOT_INLINE bool pure_value(const Node* node, Env* env, Value t, Value& out) {
  if (leaf_value(node, env, out)) return true;
  return node->kind == NodeKind::PrimCall && pure_prim(static_cast<const PrimCallNode*>(node), env, t, out);
}

// A PrimCall whose arguments are leaves or such calls ((aref board (aref a i)), (not (> k n))),
// computed with no call at all. None of it has effects or allocates, so when some value is not
// what prim2 takes (a type or index error, an overflow) the general path may run it again.
bool pure_prim(const PrimCallNode* n, Env* env, Value t, Value& out) {
  if (prim_redefined(n)) return false;
  Value a, b;
  if (!pure_value(n->a, env, t, a) || !pure_value(n->b, env, t, b)) return false;
  return prim2(n->op, a, b, t, out);
}

TL_HOT_INLINE bool fast_prim(const Node* node, Env* env, Value t, Value& out) {
  if (node->kind != NodeKind::PrimCall) return false;
  auto* n = static_cast<const PrimCallNode*>(node);
  if (!n->leaves) return false;
  if (n->depth == 1) {  // both arguments leaves: the common case, inline
    if (prim_redefined(n)) return false;
    Value a, b;
    if (!leaf_value(n->a, env, a) || !leaf_value(n->b, env, b)) return false;
    return prim2(n->op, a, b, t, out);
  }
  return pure_prim(n, env, t, out);
}

// A form run for its effect that is an assignment of a leaf or a pure PrimCall to a local
// variable ((setq k (1+ k)) stepping a loop), done with no invocation of Interp::run.
TL_HOT_INLINE bool quick_local_set(const Node* form, Env* env, Value t) {
  if (form->kind != NodeKind::LocalSet) return false;
  auto* n = static_cast<const LocalNode*>(form);
  Value v;
  if (!leaf_value(n->value, env, v) && !fast_prim(n->value, env, t, v)) return false;
  Env* e = env;
  for (std::uint32_t d = n->depth; d > 0; --d) e = e->parent;
  e->slots[n->index] = v;
  return true;
}

Value call_native(Interp& in, Native* fn, Value* args, std::uint32_t nargs) {
  if (static_cast<std::int64_t>(nargs) < fn->min_args ||
      (fn->max_args >= 0 && static_cast<std::int64_t>(nargs) > fn->max_args)) {
    arity_error(in, Value::object(fn), nargs, fn->min_args, fn->max_args);
  }
  // Builtins raise tl::Error themselves; a standard exception (allocation failure, a container
  // limit) becomes an error at the call. An error is offered to the handlers here, where the
  // builtin's own C++ frames are gone but no Lisp frame has unwound yet (Interp::signal_error;
  // it does nothing for an error already offered, one raised by a builtin further in).
  std::size_t frames = in.frames.size();
  try {
    if (fn->fn != nullptr) return fn->fn(in, args, nargs);
    return fn->host_fn(in, args, nargs);
  } catch (tl::Error& e) {
    if (!(e.payload() && e.payload()->signaled)) {
      if (in.frames.size() > frames) in.frames.resize(frames);
      in.signal_error(e);
    }
    throw;
  } catch (const tl::ConditionError& e) {
    in.throw_signaled(in.make_error(e.type, e.what(), Span{}));
  } catch (const std::bad_alloc&) {
    in.error("storage-error", fn->name + ": " + in.out_of_memory_text());
  } catch (const std::length_error& e) {
    in.error("storage-error", fn->name + ": too large (" + e.what() + ")");
  } catch (const std::logic_error& e) {
    in.throw_signaled(in.make_error("error", fn->name + ": " + e.what(), Span{}));
  } catch (const std::runtime_error& e) {
    in.throw_signaled(in.make_error("error", fn->name + ": " + e.what(), Span{}));
  } catch (const std::bad_function_call&) {
    in.throw_signaled(in.make_error("error", fn->name + ": called an empty host function", Span{}));
  }
}

}  // namespace

Value Interp::run(Node* node, Env* env) {
  // Leaves and inline arithmetic need no bookkeeping.
  {
    Value v;
    if (leaf_value(node, env, v) || fast_prim(node, env, t(), v)) return v;
  }
  if (stack_low()) stack_overflow_at(node->span);
  RunGuard guard{*this, sp, fsp, frames.size()};
  Value* slots = nullptr;  // roots for the env and closure this invocation switches to
  auto switch_env = [&](Env* e, Value fn) {
    if (slots == nullptr) {
      if (sp + 2 > stack_end) stack_overflow();
      slots = sp;
      sp += 2;
      slots[1] = nil();
    }
    slots[0] = Value::object(e);
    if (!fn.is_nil()) slots[1] = fn;
  };
  for (;;) {
    switch (node->kind) {
      case NodeKind::Const:
      case NodeKind::Local: {
        Value v;
        leaf_value(node, env, v);
        return v;
      }
      case NodeKind::LocalSet: {
        auto* n = static_cast<LocalNode*>(node);
        Value v;
        if (!fast_prim(n->value, env, t(), v)) v = run(n->value, env);
        mv_count = 1;
        Env* e = env;
        for (std::uint32_t d = n->depth; d > 0; --d) e = e->parent;
        e->slots[n->index] = v;
        return v;
      }
      case NodeKind::Global: {
        Symbol* s = static_cast<GlobalNode*>(node)->symbol;
        if (!s->bound) unbound_variable(node->span, s);
        return s->value;
      }
      case NodeKind::GlobalSet: {
        auto* n = static_cast<GlobalNode*>(node);
        Value v = run(n->value, env);
        mv_count = 1;
        set_global(n->symbol, v);
        return v;
      }
      case NodeKind::If: {
        auto* n = static_cast<IfNode*>(node);
        Value test;
        if (!fast_prim(n->test, env, t(), test)) {
          test = run(n->test, env);
          mv_count = 1;
        }
        node = test.truthy() ? n->then : n->otherwise;
        continue;
      }
      case NodeKind::Progn: {
        auto* n = static_cast<SeqNode*>(node);
        std::size_t last = n->body.size() - 1;
        for (std::size_t i = 0; i < last; ++i) {
          if (quick_local_set(n->body[i], env, t())) continue;
          run(n->body[i], env);
          if (pending_block != nullptr) return nil();  // a local return passing through
        }
        mv_count = 1;
        node = n->body[last];
        continue;
      }
      case NodeKind::And: {
        auto* n = static_cast<SeqNode*>(node);
        std::size_t last = n->body.size() - 1;
        std::size_t i = 0;
        for (; i < last; ++i) {
          if (!run(n->body[i], env).truthy()) {
            mv_count = 1;
            return nil();
          }
        }
        mv_count = 1;
        node = n->body[last];
        continue;
      }
      case NodeKind::Or: {
        auto* n = static_cast<SeqNode*>(node);
        std::size_t last = n->body.size() - 1;
        for (std::size_t i = 0; i < last; ++i) {
          Value v = run(n->body[i], env);
          mv_count = 1;
          if (v.truthy()) return v;
        }
        node = n->body[last];
        continue;
      }
      case NodeKind::While: {
        auto* n = static_cast<WhileNode*>(node);
        // The body's forms run directly (no invocation for the progn around them).
        Node* const* forms = &n->body;
        std::size_t count = 1;
        if (n->body->kind == NodeKind::Progn) {
          forms = static_cast<SeqNode*>(n->body)->body.data();
          count = static_cast<SeqNode*>(n->body)->body.size();
        }
        for (;;) {
          Value test;
          if (!fast_prim(n->test, env, t(), test)) test = run(n->test, env);
          if (!test.truthy()) break;
          for (std::size_t i = 0; i < count; ++i) {
            if (quick_local_set(forms[i], env, t())) continue;
            run(forms[i], env);
            if (pending_block != nullptr) return nil();  // a local return leaving the loop
          }
          check_interrupt();
          maybe_collect();
        }
        mv_count = 1;
        return nil();
      }
      case NodeKind::Lambda: {
        auto* n = static_cast<LambdaNode*>(node);
        return make_closure(n, env);
      }
      case NodeKind::Let: {
        auto* n = static_cast<LetNode*>(node);
        auto size = static_cast<std::uint32_t>(n->inits.size());
        if (n->sequential) {
          Env* e = new_env(env, n->frame_size, n->stack_frame);
          switch_env(e, nil());
          for (std::uint32_t i = 0; i < size; ++i) e->slots[i] = run(n->inits[i], e);
          mv_count = 1;
          env = e;
        } else {
          Value* base = sp;
          for (Node* init : n->inits) {
            Value v = run(init, env);
            push(v);
          }
          mv_count = 1;
          Env* e = new_env(env, n->frame_size, n->stack_frame);
          std::memcpy(static_cast<void*>(e->slots), base, size * sizeof(Value));
          sp = base;
          switch_env(e, nil());
          env = e;
        }
        node = n->body;
        continue;
      }
      // The rarer forms live in control.cpp, keeping this loop's stack frame small.
      case NodeKind::DynBind: return run_dynamic_binding(static_cast<DynBindNode*>(node), env);
      case NodeKind::Block: return run_block(static_cast<BlockNode*>(node), env);
      case NodeKind::ReturnFrom: return run_return_from(static_cast<ReturnFromNode*>(node), env);
      case NodeKind::UnwindProtect: return run_unwind_protect(static_cast<UnwindProtectNode*>(node), env);
      case NodeKind::MultipleValueCall:
        return run_multiple_value_call(static_cast<MultipleValueCallNode*>(node), env);
      case NodeKind::HandlerCase: {
        auto* n = static_cast<HandlerCaseNode*>(node);
        HandlerOutcome outcome = run_handler_case(n, env);
        if (outcome.clause == nullptr) return outcome.value;
        mv_count = 1;  // the clause's values are its body's
        if (outcome.clause->has_var) {
          Value* base = sp;
          push(outcome.value);  // the condition, rooted while its frame is made
          Env* e = new_env(env, outcome.clause->frame_size, outcome.clause->stack_frame);
          e->slots[0] = outcome.value;
          sp = base;
          switch_env(e, nil());
          env = e;
        }
        node = outcome.clause->body;
        continue;
      }
      case NodeKind::PrimCall: {
        auto* n = static_cast<PrimCallNode*>(node);
        if (prim_redefined(n)) {
          node = n->call;  // redefined: the general call
          continue;
        }
        Value a, b, r;
        if (!leaf_value(n->a, env, a)) {
          if (!fast_prim(n->a, env, t(), a)) a = run(n->a, env);
        }
        StackMark mark(*this);
        push(a);
        if (!leaf_value(n->b, env, b)) {
          if (!fast_prim(n->b, env, t(), b)) b = run(n->b, env);
        }
        push(b);
        mv_count = 1;
        if (prim2(n->op, a, b, t(), r)) return r;
        call_site = n->span;
        return call_native(*this, static_cast<Native*>(n->builtin), sp - 2, n->unary ? 1 : 2);
      }
      case NodeKind::Call: {
        auto* n = static_cast<CallNode*>(node);
        Value* base = sp;
        if (n->fn->kind == NodeKind::Global) {
          Symbol* s = static_cast<GlobalNode*>(n->fn)->symbol;
          if (!s->bound) undefined_function(n->fn->span, s);
          push(s->value);
        } else {
          push(run(n->fn, env));
        }
        for (Node* arg : n->args) {
          Value v;
          switch (arg->kind) {
            case NodeKind::Const: v = static_cast<ConstNode*>(arg)->value; break;
            case NodeKind::Local: {
              auto* l = static_cast<LocalNode*>(arg);
              Env* e = env;
              for (std::uint32_t d = l->depth; d > 0; --d) e = e->parent;
              v = e->slots[l->index];
              break;
            }
            case NodeKind::Global:
              if (static_cast<GlobalNode*>(arg)->symbol->bound) {
                v = static_cast<GlobalNode*>(arg)->symbol->value;
                break;
              }
              v = run(arg, env);
              break;
            default:
              if (!fast_prim(arg, env, t(), v)) v = run(arg, env);
              break;
          }
          push(v);
        }
        mv_count = 1;  // the arguments' other values are dropped
        Value fn = base[0];
        Value* args = base + 1;
        auto nargs = static_cast<std::uint32_t>(n->args.size());
        // funcall and apply in tail position call their function directly.
        while (fn.tag == Tag::Obj && fn.o->kind == ObjKind::Native &&
               (fn.o == funcall_native || fn.o == apply_native) && nargs >= 1) {
          if (fn.o == apply_native) {
            if (nargs < 2) break;
            Value spread = args[nargs - 1];
            --sp;
            call_site = n->span;
            push_spread_arguments(args + 1, spread, static_cast<int>(nargs));
            nargs = static_cast<std::uint32_t>(sp - args);
          }
          fn = args[0];
          ++args;
          --nargs;
        }
        if (fn.tag == Tag::Obj && fn.o->kind == ObjKind::Foreign) {
          // A funcallable object runs its function.
          Value f = static_cast<Foreign*>(fn.o)->function();
          if (!f.is_nil()) fn = f;
        }
      dispatch:
        if (fn.tag == Tag::Obj && fn.o->kind == ObjKind::Closure) {
          Closure* c = as_closure(fn);
          check_interrupt();
          maybe_collect();
          // A tail call: frames this invocation made are dead (the callee's environment
          // cannot be one of them: closures never capture stack frames).
          fsp = guard.fsp;
          Env* e;
          const LambdaNode* lam = c->lambda;
          if (lam->simple() && nargs == lam->required) {
            e = new_env(c->env, lam->frame_size, lam->stack_frame);
            for (std::uint32_t i = 0; i < nargs; ++i) e->slots[i] = args[i];
          } else {
            call_site = n->span;
            e = bind_arguments(*this, c, args, nargs);
          }
          sp = base;
          switch_env(e, fn);
          if (frames.size() > guard.frames) {
            frames.back() = CallFrame{fn, n->span};
          } else {
            frames.push_back(CallFrame{fn, n->span});
          }
          env = e;
          node = c->lambda->body;
          continue;
        }
        if (fn.tag == Tag::Obj && fn.o->kind == ObjKind::Native) {
          Value r;
          const Native* native = as_native(fn);
          if (native->prim != Prim::None && nargs == (native->prim_unary ? 1u : 2u) &&
              prim2(native->prim, args[0], native->prim_unary ? Value::integer(1) : args[1], t(), r)) {
            sp = base;
            return r;
          }
          // Errors the builtin raises are located here (see Interp::call_site); no catch is
          // needed, so raising and handling errors stays cheap.
          call_site = n->span;
          r = call_native(*this, as_native(fn), args, nargs);
          sp = base;
          return r;
        }
        // Not a function: only this error path pays for the fallbacks (or raises the error).
        fn = call_head_fallback(n, fn, args == base + 1);
        goto dispatch;
      }
    }
  }
}

Value Interp::apply(Value fn, Value* args, std::uint32_t nargs) {
  // A builtin calling a function uses one value of it.
  Value r = apply_values(fn, args, nargs);
  mv_count = 1;
  return r;
}

Value Interp::apply_values(Value fn, Value* args, std::uint32_t nargs) {
  // A builtin calling back into Lisp may raise its own errors afterwards: they belong to its
  // call site, not to the last call made inside the callback.
  struct KeepSite {
    Interp& in;
    Span site;
    ~KeepSite() { in.call_site = site; }
  } keep_site{*this, call_site};
  if (is_kind(fn, ObjKind::Foreign)) {
    Value f = static_cast<Foreign*>(fn.o)->function();
    if (!f.is_nil()) fn = f;
  }
  // A symbol names its global function: (funcall 'car l), (apply 'f args).
  if (is_symbol(fn) && !fn.is_nil() && as_symbol(fn)->bound && is_function(as_symbol(fn)->value)) {
    fn = as_symbol(fn)->value;
  }
  if (is_kind(fn, ObjKind::Native)) {
    return call_native(*this, as_native(fn), args, nargs);
  }
  if (!is_kind(fn, ObjKind::Closure)) {
    error("type-error", "cannot call " + repr(fn) + ": it is not a function");
  }
  StackMark mark(*this);
  push(fn);
  check_interrupt();
  maybe_collect();
  Closure* c = as_closure(fn);
  Env* e = bind_arguments(*this, c, args, nargs);
  push(Value::object(e));
  std::size_t saved = frames.size();
  frames.push_back(CallFrame{fn, Span{}});
  Value r = run(c->lambda->body, e);
  frames.resize(saved);
  return r;
}

Value Interp::call(Value fn, std::initializer_list<Value> args) {
  StackMark mark(*this);
  Value* base = sp;
  push(fn);
  for (Value v : args) push(v);
  return apply(base[0], base + 1, static_cast<std::uint32_t>(args.size()));
}

Value Interp::macroexpand_1(Value form, bool* expanded) {
  if (expanded != nullptr) *expanded = false;
  if (!is_cons(form) || !is_symbol(car(form))) return form;
  Symbol* s = as_symbol(car(form));
  if (!s->bound || !is_kind(s->value, ObjKind::Macro)) return form;
  StackMark mark(*this);
  Value* base = sp;
  push(form);
  push(as_macro(s->value)->fn);
  for (Value v = cdr(form); is_cons(v); v = cdr(v)) push(car(v));
  auto nargs = static_cast<std::uint32_t>(sp - base - 2);
  Value r = apply(base[1], base + 2, nargs);
  if (expanded != nullptr) *expanded = true;
  return r;
}

Value Interp::macroexpand(Value form) {
  StackMark mark(*this);
  bool expanded = true;
  while (expanded) {
    push(form);
    form = macroexpand_1(form, &expanded);
  }
  return form;
}

Value Interp::eval_toplevel(Value form) {
  call_site = current_form_span;
  StackMark mark(*this);
  push(form);
  // Top-level progns are processed form by form, so a macro defined in one form can be used
  // in the next (as in Common Lisp).
  Value expanded = form;
  if (is_cons(form) && is_symbol(car(form)) && as_symbol(car(form))->bound &&
      is_kind(as_symbol(car(form))->value, ObjKind::Macro)) {
    try {
      expanded = macroexpand(form);
    } catch (tl::Error& e) {
      relocate_to_macro_call(e, current_form_span, as_symbol(car(form))->name);
      throw;
    }
    push(expanded);
  }
  if (is_cons(expanded) && car(expanded).same(Value::object(S.progn)) && !is_circular(expanded)) {
    Value result;
    Span outer = current_form_span;
    for (Value v = cdr(expanded); is_cons(v); v = cdr(v)) {
      Span s = heap.span_of(v);
      current_form_span = s.valid() ? s : outer;
      result = eval_toplevel(car(v));
    }
    current_form_span = outer;
    return result;
  }
  CodeUnit* unit = compile(*this, expanded);
  push(Value::object(unit));
  try {
    return run(unit->entry, nullptr);
  } catch (ReturnFromSignal&) {
    error_at(current_form_span, "control-error", "return-from: the block has already been exited");
  }
}

}  // namespace tl::eval
