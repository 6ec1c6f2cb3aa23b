// SPDX-License-Identifier: Apache-2.0
// The analyzer: expands macros and turns a form into a node tree with every variable resolved
// to a lexical address (frame depth, slot) or a global symbol. The control forms, local macros
// and quasiquote are in analyze_forms.cpp.
#include <algorithm>

#include "eval/analyzer.h"

namespace tl::eval {

std::size_t Analyzer::list_length(Value list, Span span, const char* what) {
  std::size_t n = 0;
  Value v = list;
  if (is_circular(list)) fail(span, std::string(what) + ": malformed form (a circular list)");
  for (; is_cons(v); v = cdr(v)) ++n;
  if (!v.is_nil()) fail(span, std::string(what) + ": malformed form (a dotted list)");
  return n;
}

bool Analyzer::lookup(Symbol* sym, std::uint32_t& depth, std::uint32_t& index,
                      bool* holds_function) const {
  depth = 0;
  if (!bound_.contains(sym)) return false;
  for (const Scope* s = scope_; s != nullptr; s = s->parent, ++depth) {
    for (std::size_t i = s->names.size(); i-- > 0;) {
      if (s->names[i] == sym) {
        index = static_cast<std::uint32_t>(i);
        if (holds_function != nullptr) *holds_function = s->function_slots[i];
        return true;
      }
    }
  }
  return false;
}

Node* Analyzer::analyze(Value form, Span span) {
  if (in_.stack_low()) fail(span, "form nested too deeply to compile");
  // Outside a statement position no block around is left by a local return (clean_floor_).
  const std::size_t saved_floor = clean_floor_;
  if (!statement_next_) clean_floor_ = blocks_.size();
  statement_next_ = false;
  struct RestoreFloor {
    std::size_t& floor;
    std::size_t saved;
    ~RestoreFloor() { floor = saved; }
  } restore_floor{clean_floor_, saved_floor};
  switch (form.tag) {
    case Tag::Nil:
    case Tag::Int:
    case Tag::Float:
    case Tag::Char:
      return constant(form, span);
    case Tag::Obj:
      break;
  }
  switch (form.o->kind) {
    case ObjKind::Symbol:
      return analyze_symbol(as_symbol(form), span);
    case ObjKind::Cons: {
      Span own = in_.heap.form_span_of(form);
      return analyze_list(form, own.valid() ? own : span);
    }
    default:
      return constant(form, span);  // strings, vectors, functions, ... evaluate to themselves
  }
}

Node* Analyzer::analyze_symbol(Symbol* sym, Span span) {
  if (sym->is_keyword() || sym == in_.S.t) return constant(Value::object(sym), span);
  if (!local_macros_.empty()) {
    if (const LocalMacro* m = find_local_macro(sym, true, false)) return analyze_in_place(m->value, span);
  }
  std::uint32_t depth, index;
  if (!(sym->sym_flags & kSymSpecial) && lookup(sym, depth, index)) {
    auto* n = make<LocalNode>(NodeKind::Local, span, depth, index);
    n->name = sym;
    return n;
  }
  unit_->constants.push_back(Value::object(sym));
  return make<GlobalNode>(NodeKind::Global, span, sym);
}

Node* Analyzer::analyze_body(Value forms, Span span, bool statements) {
  if (is_cons(forms) && cdr(forms).is_nil()) {
    statement_next_ = statements;
    return analyze(car(forms), span_of_cell(forms, span));
  }
  return analyze_seq(NodeKind::Progn, forms, span, statements);
}

Node* Analyzer::analyze_seq(NodeKind kind, Value forms, Span span, bool statements) {
  auto* n = make<SeqNode>(kind, span);
  for (Value v = forms; is_cons(v); v = cdr(v)) {
    statement_next_ = statements;
    Node* form = analyze(car(v), span_of_cell(v, span));
    // A progn inside a progn runs its forms in line ((do ...) steps its variables in one).
    if (kind == NodeKind::Progn && form->kind == NodeKind::Progn) {
      const auto& inner = static_cast<SeqNode*>(form)->body;
      n->body.insert(n->body.end(), inner.begin(), inner.end());
    } else {
      n->body.push_back(form);
    }
  }
  if (kind == NodeKind::Progn && n->body.size() > 1) {  // idle forms before the last do nothing
    Node* last = n->body.back();
    n->body.pop_back();
    std::erase_if(n->body, idle);
    n->body.push_back(last);
  }
  if (n->body.empty() && kind == NodeKind::Progn) return constant(nil(), span);
  if (n->body.empty() && kind == NodeKind::And) return constant(in_.t(), span);
  if (n->body.empty() && kind == NodeKind::Or) return constant(nil(), span);
  if (n->body.size() == 1) return n->body[0];
  return n;
}

Node* Analyzer::analyze_list(Value form, Span span) {
  // Code that eval or a macro built may be circular; walking it would never end (issue 19).
  if (is_circular(form)) fail(span, "cannot compile a circular form");
  Value head = car(form);
  const char* name = nullptr;
  if (is_symbol(head)) {
    Symbol* s = as_symbol(head);
    name = s->name.c_str();
    std::uint32_t depth, index;
    bool local_function = false;
    bool lexical = lookup(s, depth, index, &local_function) && local_function;
    const WellKnown& S = in_.S;
    // Special forms win over local variables of the same name, as in Clojure: macros expand
    // into them (loop into block), and a local named block must not capture the expansion.
    // A global macro is hidden only by a local function (flet, labels, a let of a lambda):
    // as in Common Lisp, (let ((when 1)) (when t 2)) still expands the macro `when`.
    const bool special = in_.is_special_form(s);
    if (!lexical || special) {
      if (s == S.quote) {
        if (list_length(form, span, "quote") != 2) fail(span, "quote: expected exactly one form");
        return constant(nth(form, 1), span);
      }
      if (s == S.quasiquote) {
        if (list_length(form, span, "quasiquote") != 2) fail(span, "quasiquote: expected exactly one form");
        Value expansion = keep_alive(quasi(nth(form, 1), 1, span));
        return analyze(expansion, span);
      }
      if (s == S.unquote || s == S.unquote_splicing) {
        fail(span, std::string(name) + ": comma outside a backquote");
      }
      if (s == S.function) {
        if (list_length(form, span, "function") != 2) fail(span, "function: expected exactly one form");
        return analyze(nth(form, 1), span_of_cell(cdr(form), span));
      }
      if (s == S.lambda) {
        if (!is_cons(cdr(form))) fail(span, "lambda: expected a parameter list");
        return analyze_lambda(nth(form, 1), cdr(cdr(form)), span, nil());
      }
      if (s == S.named_lambda) {
        if (list_length(form, span, "named-lambda") < 3) fail(span, "named-lambda: expected a name and a parameter list");
        return analyze_lambda(nth(form, 2), nth_cell(form, 3), span, nth(form, 1));
      }
      if (s == S.if_) return analyze_if(form, span);
      if (s == S.progn) return analyze_body(cdr(form), span, true);
      if (s == S.let) return analyze_let(form, span, false);
      if (s == S.let_star) return analyze_let(form, span, true);
      if (s == S.setq) return analyze_setq(form, span);
      if (s == S.and_) return analyze_seq(NodeKind::And, cdr(form), span);
      if (s == S.or_) return analyze_seq(NodeKind::Or, cdr(form), span);
      if (s == S.while_) return analyze_while(form, span);
      if (s == S.block) return analyze_block(form, span);
      if (s == S.return_from) return analyze_return_from(form, span);
      if (s == S.unwind_protect) return analyze_unwind_protect(form, span);
      if (s == S.handler_case) return analyze_handler_case(form, span);
      if (s == S.declare) return constant(nil(), span);
      if (s == S.multiple_value_call) return analyze_multiple_value_call(form, span);
      if (s == S.macrolet) return analyze_macrolet(form, span, false);
      if (s == S.symbol_macrolet) return analyze_macrolet(form, span, true);
    }
    if (!special && !local_macros_.empty()) {
      if (const LocalMacro* m = find_local_macro(s, false, lexical)) {
        Value expansion;
        try {
          expansion = keep_alive(in_.call(m->value, {form}));
        } catch (tl::Error& e) {
          in_.relocate_to_macro_call(e, span, s->name);
          throw;
        }
        return analyze_in_place(expansion, span);
      }
    }
    if (!lexical || special) {
      if (!lexical && s->bound && is_kind(s->value, ObjKind::Macro)) {
        Value expansion;
        try {
          expansion = keep_alive(in_.macroexpand_1(form, nullptr));
        } catch (tl::Error& e) {
          in_.relocate_to_macro_call(e, span, s->name);
          throw;
        }
        return analyze_in_place(expansion, span);
      }
    }
  } else if (!is_cons(head)) {
    if (head.is_number() || is_string(head) || head.is_nil()) {
      fail(span, "cannot call " + in_.repr(head) + ": it is not a function");
    }
  }
  return analyze_call(form, span);
}

Node* Analyzer::analyze_call(Value form, Span span) {
  auto* call = make<CallNode>(span);
  list_length(form, span, "call");
  Span head_span = span_of_cell(form, span);
  call->fn = analyze(car(form), head_span);
  for (Value v = cdr(form); is_cons(v); v = cdr(v)) {
    call->args.push_back(analyze(car(v), span_of_cell(v, span)));
  }
  // (+ a b) naming the builtin through a global, or with the builtin itself in the head (as
  // the prelude's macros write it, so local variables cannot shadow it).
  Value fn_value;
  Symbol* fn_symbol = nullptr;
  if (call->fn->kind == NodeKind::Global && static_cast<GlobalNode*>(call->fn)->symbol->bound) {
    fn_symbol = static_cast<GlobalNode*>(call->fn)->symbol;
    fn_value = fn_symbol->value;
  } else if (call->fn->kind == NodeKind::Const) {
    fn_value = static_cast<ConstNode*>(call->fn)->value;
  }
  const Native* native = is_kind(fn_value, ObjKind::Native) ? as_native(fn_value) : nullptr;
  if (native != nullptr && native->prim != Prim::None && call->args.size() == (native->prim_unary ? 1u : 2u)) {
    {
      auto* prim = make<PrimCallNode>(span);
      prim->symbol = fn_symbol;
      prim->builtin = fn_value.o;
      prim->op = native->prim;
      prim->unary = native->prim_unary;
      prim->a = call->args[0];
      prim->b = native->prim_unary ? constant(Value::integer(1), span) : call->args[1];
      // How deep a pure argument nests (0: a leaf), or -1 when it is not pure.
      auto pure_depth = [](const Node* n) -> int {
        if (n->kind == NodeKind::Const || n->kind == NodeKind::Local || n->kind == NodeKind::Global) return 0;
        if (n->kind != NodeKind::PrimCall || !static_cast<const PrimCallNode*>(n)->leaves) return -1;
        return static_cast<const PrimCallNode*>(n)->depth;
      };
      const int da = pure_depth(prim->a), db = pure_depth(prim->b);
      prim->depth = static_cast<std::uint8_t>(1 + std::max(std::max(da, db), 0));
      prim->leaves = da >= 0 && db >= 0 && prim->depth <= PrimCallNode::kMaxPureDepth;
      prim->call = call;
      unit_->constants.push_back(fn_value);
      return prim;
    }
  }
  return call;
}

Node* Analyzer::analyze_if(Value form, Span span) {
  std::size_t n = list_length(form, span, "if");
  if (n < 3 || n > 4) {
    fail(span, "if: expected (if TEST THEN [ELSE]), got " + std::to_string(n - 1) + " forms");
  }
  Node* test = analyze(nth(form, 1), span_of_cell(nth_cell(form, 1), span));
  statement_next_ = true;
  Node* then = analyze(nth(form, 2), span_of_cell(nth_cell(form, 2), span));
  statement_next_ = true;
  Node* otherwise = n == 4 ? analyze(nth(form, 3), span_of_cell(nth_cell(form, 3), span))
                           : constant(nil(), span);
  statement_next_ = false;
  return make<IfNode>(span, test, then, otherwise);
}

Node* Analyzer::analyze_setq(Value form, Span span) {
  std::size_t n = list_length(form, span, "setq");
  if ((n - 1) % 2 != 0) fail(span, "setq: expected pairs of VARIABLE VALUE, got an odd number of forms");
  auto* seq = make<SeqNode>(NodeKind::Progn, span);
  for (Value v = cdr(form); is_cons(v); v = cdr(cdr(v))) {
    Value target = car(v);
    Span target_span = span_of_cell(v, span);
    if (target.is_nil()) fail(target_span, "setq: cannot assign to the constant nil");
    if (!is_symbol(target)) fail(target_span, "setq: cannot assign to " + in_.repr(target) + ", not a symbol");
    Symbol* sym = as_symbol(target);
    if (sym->sym_flags & (kSymKeyword | kSymConstant)) fail(target_span, "setq: cannot assign to the constant " + in_.repr(target));
    if (!local_macros_.empty()) {
      // (setq X V) of a symbol macro X is (setf EXPANSION V).
      if (const LocalMacro* m = find_local_macro(sym, true, false)) {
        Value set = keep_alive(in_.list({Value::object(in_.S.setf), m->value, car(cdr(v))}));
        seq->body.push_back(analyze(set, target_span));
        continue;
      }
    }
    Node* value = analyze(car(cdr(v)), span_of_cell(cdr(v), span));
    std::uint32_t depth, index;
    if (!(sym->sym_flags & kSymSpecial) && lookup(sym, depth, index)) {
      auto* set = make<LocalNode>(NodeKind::LocalSet, target_span, depth, index, value);
      set->name = sym;
      seq->body.push_back(set);
    } else {
      unit_->constants.push_back(target);
      seq->body.push_back(make<GlobalNode>(NodeKind::GlobalSet, target_span, sym, value));
    }
  }
  if (seq->body.empty()) return constant(nil(), span);
  if (seq->body.size() == 1) return seq->body[0];
  return seq;
}

Node* Analyzer::analyze_let(Value form, Span span, bool sequential) {
  const char* what = sequential ? "let*" : "let";
  if (!is_cons(cdr(form))) fail(span, std::string(what) + ": expected a list of bindings");
  Value bindings = nth(form, 1);
  Span bindings_span = span_of_cell(cdr(form), span);
  if (!sequential && is_symbol(bindings) && !as_symbol(bindings)->is_keyword()) {
    // Scheme's named let, (let NAME ((VAR INIT)...) BODY...): a local function NAME of the
    // VARs, called with the INITs (evaluated outside it), as
    // (funcall (labels ((NAME (VAR...) BODY...)) NAME) INIT...). Loops through NAME in tail
    // position run in constant stack.
    Value named = nth(form, 2);
    if (!is_list(named) || is_circular(named)) {
      fail(span_of_cell(nth_cell(form, 2), span),
           "let: a named let is (let NAME ((VAR INIT)...) BODY...), got bindings " + in_.repr(named));
    }
    std::vector<Value> vars, inits;
    for (Value b = named; is_cons(b); b = cdr(b)) {
      Value binding = car(b);
      if (is_symbol(binding)) {
        vars.push_back(binding);
        inits.push_back(nil());
      } else if (is_cons(binding) && is_symbol(car(binding)) &&
                 (cdr(binding).is_nil() || (is_cons(cdr(binding)) && cdr(cdr(binding)).is_nil()))) {
        vars.push_back(car(binding));
        inits.push_back(nth(binding, 1));
      } else {
        fail(span_of_cell(b, span), "let: a named let binding is VAR or (VAR INIT), got " + in_.repr(binding));
      }
    }
    Value params = in_.list_from(vars.data(), vars.size());
    Value definition = in_.cons(bindings, in_.cons(params, nth_cell(form, 3)));
    Value labels = in_.list({in_.sym("labels"), in_.list({definition}), bindings});
    Value call = in_.cons(in_.sym("funcall"), in_.cons(labels, in_.list_from(inits.data(), inits.size())));
    return analyze_in_place(keep_alive(call), span);  // macros in it may collect
  }
  if (!is_list(bindings)) fail(bindings_span, std::string(what) + ": bindings must be a list, got " + in_.repr(bindings));
  if (bindings.is_nil()) return analyze_body(nth_cell(form, 2), span, true);  // no frame at all
  if (is_circular(bindings)) fail(bindings_span, std::string(what) + ": the bindings are a circular list");
  if (sequential) {
    // (let* (a... *special* b...) body) is (let* (a... *special*) (let* (b...) body)), so the
    // inits after a special binding see its new value.
    std::size_t index = 0;
    for (Value b = bindings; is_cons(b); b = cdr(b), ++index) {
      Value var = is_cons(car(b)) ? car(car(b)) : car(b);
      if (is_symbol(var) && (as_symbol(var)->sym_flags & kSymSpecial) && is_cons(cdr(b))) {
        std::vector<Value> first;
        Value v = bindings;
        for (std::size_t i = 0; i <= index; ++i, v = cdr(v)) first.push_back(car(v));
        Value first_list = keep_alive(in_.list_from(first.data(), first.size()));
        Value inner = keep_alive(in_.cons(Value::object(in_.S.let_star), in_.cons(v, nth_cell(form, 2))));
        Value outer = keep_alive(in_.list({Value::object(in_.S.let_star), first_list, inner}));
        return analyze_let(outer, span, true);
      }
    }
  }
  auto* let = make<LetNode>(span);
  let->sequential = sequential;
  std::size_t lambdas_before = lambdas_;
  Scope inner(scope_, bound_);
  std::vector<std::pair<Symbol*, std::uint32_t>> specials;
  if (sequential) scope_ = &inner;  // let*: each init sees the bindings before it
  for (Value b = bindings; is_cons(b); b = cdr(b)) {
    Value binding = car(b);
    Span bspan = span_of_cell(b, bindings_span);
    Value var = binding;
    Node* init = nullptr;
    if (is_cons(binding)) {
      std::size_t len = list_length(binding, bspan, what);
      if (len > 2) fail(bspan, std::string(what) + ": a binding is (VARIABLE VALUE), got " + in_.repr(binding));
      var = car(binding);
      if (len == 2) init = analyze(nth(binding, 1), span_of_cell(cdr(binding), bspan));
    }
    if (!is_symbol(var) || as_symbol(var)->is_keyword() || as_symbol(var) == in_.S.t) {
      fail(bspan, std::string(what) + ": cannot bind " + in_.repr(var) + ", not a variable name");
    }
    Symbol* sym = as_symbol(var);
    if (sym->sym_flags & kSymConstant) fail(bspan, std::string(what) + ": cannot bind the constant " + sym->name);
    let->inits.push_back(init != nullptr ? init : constant(nil(), bspan));
    auto slot = static_cast<std::uint32_t>(inner.names.size());
    if (sym->sym_flags & kSymSpecial) {
      specials.emplace_back(sym, slot);
      inner.add(nullptr);  // the slot holds the value; the name stays global
    } else {
      bool holds_function = init != nullptr &&
          (init->kind == NodeKind::Lambda ||
           (init->kind == NodeKind::Const && is_function(static_cast<ConstNode*>(init)->value)));
      inner.add(sym, holds_function);
    }
  }
  scope_ = &inner;
  Node* body = analyze_body(nth_cell(form, 2), span, true);
  // Special variables are bound dynamically around the body, from their slots.
  for (auto it = specials.rbegin(); it != specials.rend(); ++it) {
    auto* ref = make<LocalNode>(NodeKind::Local, span, 0, it->second);
    body = make<DynBindNode>(span, it->first, ref, body);
  }
  scope_ = inner.parent;
  let->body = body;
  let->stack_frame = lambdas_ == lambdas_before;
  let->frame_size = static_cast<std::uint32_t>(inner.names.size());

  return let;
}

Node* Analyzer::analyze_lambda(Value params, Value body, Span span, Value name) {
  auto* lam = make<LambdaNode>(span);
  ++lambdas_;
  ++lambda_depth_;
  struct DepthGuard {
    std::size_t& depth;
    ~DepthGuard() { --depth; }
  } depth_guard{lambda_depth_};
  std::size_t lambdas_before = lambdas_;
  lam->unit = unit_;
  lam->name = name;
  lam->arglist = params;
  if (name.is_obj()) unit_->constants.push_back(name);
  if (params.is_obj()) unit_->constants.push_back(params);
  std::string who = is_symbol(name) ? as_symbol(name)->name : std::string("lambda");
  if (!is_list(params)) fail(span, who + ": the parameter list must be a list, got " + in_.repr(params));
  if (is_circular(params)) fail(span, who + ": the parameter list is circular");
  Scope frame(scope_, bound_);
  scope_ = &frame;
  std::vector<std::pair<Symbol*, std::uint32_t>> specials;
  auto add_var = [&](Value v, Span vspan) -> std::uint32_t {
    if (!is_symbol(v) || as_symbol(v)->is_keyword() || as_symbol(v) == in_.S.t ||
        (as_symbol(v)->sym_flags & kSymConstant)) {
      fail(vspan, who + ": bad parameter " + in_.repr(v) + ", expected a variable name");
    }
    auto slot = static_cast<std::uint32_t>(frame.names.size());
    if (as_symbol(v)->sym_flags & kSymSpecial) {
      // A special variable as a parameter is bound dynamically around the body.
      frame.add(nullptr);
      specials.emplace_back(as_symbol(v), slot);
    } else {
      frame.add(as_symbol(v));
    }
    return slot;
  };
  enum { Required, Optional, Rest, Key, Aux, AfterRest } mode = Required;
  Value aux_bindings = nil();
  Value aux_tail = nil();
  const WellKnown& S = in_.S;
  Value p = params;
  for (; is_cons(p); p = cdr(p)) {
    Value item = car(p);
    Span ispan = span_of_cell(p, span);
    if (is_symbol(item)) {
      Symbol* s = as_symbol(item);
      if (s == S.optional) { mode = Optional; continue; }
      if (s == S.rest || s == S.body) { mode = Rest; continue; }
      if (s == S.key) { mode = Key; lam->has_keys = true; continue; }
      if (s == S.allow_other_keys) { lam->allow_other_keys = true; continue; }
      if (s == S.aux) { mode = Aux; continue; }
    }
    switch (mode) {
      case Required:
        if (!lam->optional.empty()) fail(ispan, who + ": required parameter after &optional");
        add_var(item, ispan);
        ++lam->required;
        break;
      case Optional: {
        OptionalParam opt;
        Value var = item;
        if (is_cons(item)) {
          var = car(item);
          if (is_cons(cdr(item))) opt.init = analyze(nth(item, 1), ispan);
          Value sp_var = nth(item, 2);
          add_var(var, ispan);
          if (!sp_var.is_nil()) opt.supplied_slot = static_cast<std::int32_t>(add_var(sp_var, ispan));
        } else {
          add_var(var, ispan);
        }
        lam->optional.push_back(opt);
        break;
      }
      case Rest:
        lam->rest_slot = static_cast<std::int32_t>(add_var(item, ispan));
        mode = AfterRest;
        break;
      case AfterRest:
        fail(ispan, who + ": only one parameter may follow &rest");
      case Key: {
        KeyParam kp;
        Value var = item;
        Value key_name;
        Value init_form;
        bool has_init = false;
        Value sp_var;
        if (is_cons(item)) {
          var = car(item);
          if (is_cons(var)) {  // ((:keyword var) init supplied-p)
            key_name = car(var);
            var = nth(var, 1);
          }
          if (is_cons(cdr(item))) {
            init_form = nth(item, 1);
            has_init = true;
          }
          sp_var = nth(item, 2);
        }
        if (!is_symbol(var)) fail(ispan, who + ": bad &key parameter " + in_.repr(item));
        kp.keyword = is_symbol(key_name) ? as_symbol(key_name) : in_.keyword(as_symbol(var)->name);
        if (is_symbol(key_name) && !kp.keyword->is_keyword()) kp.keyword = in_.keyword(kp.keyword->name);
        if (has_init) kp.init = analyze(init_form, ispan);
        kp.slot = add_var(var, ispan);
        if (!sp_var.is_nil()) kp.supplied_slot = static_cast<std::int32_t>(add_var(sp_var, ispan));
        lam->keys.push_back(kp);
        break;
      }
      case Aux: {
        Value cell = in_.cons(item, nil());
        if (aux_bindings.is_nil()) {
          aux_bindings = keep_alive(cell);
        } else {
          as_cons(aux_tail)->cdr = cell;
        }
        aux_tail = cell;
        break;
      }
    }
  }
  if (mode == Rest) fail(span, who + ": &rest (or &body) must be followed by a variable");
  if (!p.is_nil()) {
    // (a b . rest) is the same as (a b &rest rest).
    if (mode == Rest || mode == AfterRest) fail(span, who + ": malformed parameter list");
    lam->rest_slot = static_cast<std::int32_t>(add_var(p, span));
  }
  // Docstring (a string followed by more forms) and declarations, in either order.
  for (;;) {
    if (is_cons(body) && is_string(car(body)) && is_cons(cdr(body)) && lam->doc.is_nil()) {
      lam->doc = car(body);
      unit_->constants.push_back(lam->doc);
      body = cdr(body);
    } else if (is_cons(body) && is_cons(car(body)) && car(car(body)).same(Value::object(S.declare))) {
      body = cdr(body);
    } else {
      break;
    }
  }
  // A named function has an implicit block of its name, kept only if something returns from it.
  BlockNode* block = nullptr;
  if (is_symbol(name)) {
    block = make<BlockNode>(span, as_symbol(name));
    blocks_.push_back(BlockRef{as_symbol(name), block, false, scope_, lambda_depth_});
  }
  Node* body_node;
  if (!aux_bindings.is_nil()) {
    Value let_form = keep_alive(in_.cons(Value::object(S.let_star), in_.cons(aux_bindings, body)));
    body_node = analyze_let(let_form, span, true);
  } else {
    body_node = analyze_body(body, span, true);
  }
  if (block != nullptr) {
    bool used = blocks_.back().used;
    blocks_.pop_back();
    if (used) {
      block->body = body_node;
      body_node = block;
    }
  }
  for (auto it = specials.rbegin(); it != specials.rend(); ++it) {
    auto* ref = make<LocalNode>(NodeKind::Local, span, 0, it->second);
    body_node = make<DynBindNode>(span, it->first, ref, body_node);
  }
  lam->body = body_node;
  lam->frame_size = static_cast<std::uint32_t>(frame.names.size());
  lam->stack_frame = lambdas_ == lambdas_before;
  scope_ = frame.parent;
  return lam;
}

CodeUnit* compile(Interp& interp, Value form) {
  Interp::StackMark mark(interp);
  interp.push(form);
  auto* unit = interp.heap.make<CodeUnit>(ObjKind::Code);
  interp.push(Value::object(unit));
  Analyzer analyzer(interp, unit);
  unit->entry = analyzer.analyze(form, interp.current_form_span);
  return unit;
}

}  // namespace tl::eval
