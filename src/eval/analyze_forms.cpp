// SPDX-License-Identifier: Apache-2.0
// The analyzer's control forms (block, return-from, unwind-protect, handler-case, while,
// multiple-value-call), local macros (macrolet, symbol-macrolet) and quasiquote.
#include "eval/analyzer.h"

namespace tl::eval {

Node* Analyzer::analyze_multiple_value_call(Value form, Span span) {
  if (list_length(form, span, "multiple-value-call") < 2) {
    fail(span, "multiple-value-call: expected (multiple-value-call FUNCTION FORM...)");
  }
  auto* n = make<MultipleValueCallNode>(span);
  n->fn = analyze(nth(form, 1), span_of_cell(cdr(form), span));
  for (Value v = cdr(cdr(form)); is_cons(v); v = cdr(v)) {
    n->forms.push_back(analyze(car(v), span_of_cell(v, span)));
  }
  return n;
}

Node* Analyzer::analyze_while(Value form, Span span) {
  if (list_length(form, span, "while") < 2) fail(span, "while: expected (while TEST BODY...)");
  Node* test = analyze(nth(form, 1), span_of_cell(cdr(form), span));
  Node* body = analyze_body(nth_cell(form, 2), span, true);
  // The loop drops its body's values: a constant or variable there (the nil ending a do's
  // step) does nothing.
  if (body->kind == NodeKind::Progn) {
    auto& forms = static_cast<SeqNode*>(body)->body;
    std::erase_if(forms, idle);
    if (forms.empty()) body = constant(nil(), span);
    else if (forms.size() == 1) body = forms[0];
  }
  return make<WhileNode>(span, test, body);
}

Node* Analyzer::analyze_block(Value form, Span span) {
  if (list_length(form, span, "block") < 2) fail(span, "block: expected (block NAME BODY...)");
  Value name = nth(form, 1);
  if (!name.is_nil() && !is_symbol(name)) fail(span, "block: the name must be a symbol, got " + in_.repr(name));
  Symbol* sym = name.is_nil() ? nullptr : as_symbol(name);
  auto* block = make<BlockNode>(span, sym);
  // A block outside any frame gets one of its own, for a tag that a closure may need.
  Scope own(scope_, bound_);
  bool top = scope_ == nullptr;
  if (top) scope_ = &own;
  blocks_.push_back(BlockRef{sym, block, false, scope_, lambda_depth_});
  Node* body = analyze_body(nth_cell(form, 2), span, true);
  bool used = blocks_.back().used;
  blocks_.pop_back();
  if (top) {
    // The frame holds the tag a closure reads, and the variables of forms in the body that
    // bind in the enclosing frame.
    scope_ = nullptr;
    block->own_frame = static_cast<std::uint32_t>(own.names.size());
  }
  if (!used && block->own_frame == 0) return body;
  block->body = body;
  return block;
}

Node* Analyzer::analyze_return_from(Value form, Span span) {
  std::size_t n = list_length(form, span, "return-from");
  if (n < 2 || n > 3) fail(span, "return-from: expected (return-from NAME [VALUE])");
  Value name = nth(form, 1);
  Symbol* sym = name.is_nil() ? nullptr : (is_symbol(name) ? as_symbol(name) : nullptr);
  if (!name.is_nil() && sym == nullptr) fail(span, "return-from: the block name must be a symbol");
  for (std::size_t index = blocks_.size(); index-- > 0;) {
    if (blocks_[index].name == sym) {
      blocks_[index].used = true;
      // The value form may hold blocks of its own, which grow blocks_: look the entry up after.
      Node* value = n == 3 ? analyze(nth(form, 2), span_of_cell(nth_cell(form, 2), span)) : constant(nil(), span);
      auto it = blocks_.begin() + static_cast<std::ptrdiff_t>(index);
      auto* ret = make<ReturnFromNode>(span, it->node, value);
      // Statement positions all the way from the block, in the same function: no unwinding.
      ret->local = index >= clean_floor_ && lambda_depth_ == it->lambda_depth;
      if (lambda_depth_ > it->lambda_depth) {
        // Inside a closure: the block needs a tag slot in its frame, read from here.
        BlockNode* block = it->node;
        if (block->tag_slot < 0) {
          block->tag_slot = static_cast<std::int32_t>(it->scope->names.size());
          it->scope->add(nullptr);
        }
        std::uint32_t depth = 0;
        for (Scope* s = scope_; s != nullptr && s != it->scope; s = s->parent) ++depth;
        ret->tag = make<LocalNode>(NodeKind::Local, span, depth, static_cast<std::uint32_t>(block->tag_slot));
      }
      return ret;
    }
  }
  fail(span, "return-from: no enclosing block named " + (sym ? sym->name : std::string("nil")));
}

Node* Analyzer::analyze_macrolet(Value form, Span span, bool symbol_macros) {
  const char* what = symbol_macros ? "symbol-macrolet" : "macrolet";
  std::string usage = symbol_macros ? "(symbol-macrolet ((SYMBOL EXPANSION)...) BODY...)"
                                    : "(macrolet ((NAME LAMBDA-LIST BODY...)...) BODY...)";
  if (list_length(form, span, what) < 2) fail(span, std::string(what) + ": expected " + usage);
  Value definitions = nth(form, 1);
  Span defs_span = span_of_cell(cdr(form), span);
  if (!is_list(definitions)) fail(defs_span, std::string(what) + ": expected " + usage);
  list_length(definitions, defs_span, what);
  struct Restore {
    std::vector<LocalMacro>& macros;
    std::size_t size;
    ~Restore() { macros.resize(size); }
  } restore{local_macros_, local_macros_.size()};
  // The definitions see the macros around the form, not each other (as in Common Lisp).
  std::vector<LocalMacro> added;
  for (Value d = definitions; is_cons(d); d = cdr(d)) {
    Value def = car(d);
    Span dspan = span_of_cell(d, defs_span);
    if (!is_cons(def) || !is_symbol(car(def)) || car(def).is_nil() || !is_cons(cdr(def))) {
      fail(dspan, std::string(what) + ": a definition is " +
                      (symbol_macros ? "(SYMBOL EXPANSION)" : "(NAME LAMBDA-LIST BODY...)") + ", got " + in_.repr(def));
    }
    Symbol* name = as_symbol(car(def));
    if (symbol_macros) {
      if (list_length(def, dspan, what) != 2) fail(dspan, "symbol-macrolet: a definition is (SYMBOL EXPANSION), got " + in_.repr(def));
      if (name->is_keyword() || (name->sym_flags & (kSymConstant | kSymSpecial))) {
        fail(dspan, "symbol-macrolet: cannot define " + name->name + ", a constant or special variable");
      }
      added.push_back(LocalMacro{name, keep_alive(nth(def, 1)), true, binding_count(name)});
    } else {
      Symbol* maker = in_.intern("%macrolet-expander");
      if (!maker->bound) fail(dspan, "macrolet: not available before the prelude is loaded");
      Value expander = keep_alive(in_.call(maker->value, {car(def), nth(def, 1), cdr(cdr(def))}));
      added.push_back(LocalMacro{name, expander, false, binding_count(name)});
    }
  }
  local_macros_.insert(local_macros_.end(), added.begin(), added.end());
  return analyze_body(nth_cell(form, 2), span, true);
}

Node* Analyzer::analyze_unwind_protect(Value form, Span span) {
  if (list_length(form, span, "unwind-protect") < 2) fail(span, "unwind-protect: expected (unwind-protect FORM CLEANUP...)");
  Node* body = analyze(nth(form, 1), span_of_cell(cdr(form), span));
  Node* cleanup = analyze_body(nth_cell(form, 2), span);
  return make<UnwindProtectNode>(span, body, cleanup);
}

Node* Analyzer::analyze_handler_case(Value form, Span span) {
  if (list_length(form, span, "handler-case") < 2) fail(span, "handler-case: expected (handler-case FORM (TYPE (VAR) BODY...)...)");
  // (handler-case FORM CLAUSE... (:no-error LAMBDA-LIST BODY...)) calls the :no-error clause
  // with FORM's values when FORM returns:
  // (block B (multiple-value-call (lambda LAMBDA-LIST BODY...)
  //            (handler-case FORM (TYPE VARS (return-from B (progn CLAUSE-BODY...)))...)))
  Value last = nil();
  for (Value c = nth_cell(form, 2); is_cons(c); c = cdr(c)) last = car(c);
  if (is_cons(last) && is_symbol(car(last)) && as_symbol(car(last))->is_keyword() &&
      as_symbol(car(last))->name == "no-error") {
    const WellKnown& S = in_.S;
    Value block = keep_alive(Value::object(in_.gensym("no-error")));
    std::vector<Value> clauses{Value::object(S.handler_case), nth(form, 1)};
    for (Value c = nth_cell(form, 2); is_cons(c) && !car(c).same(last); c = cdr(c)) {
      Value clause = car(c);
      if (!is_cons(clause) || !is_cons(cdr(clause))) {
        fail(span_of_cell(c, span), "handler-case: a clause is (TYPE (VAR) BODY...), got " + in_.repr(clause));
      }
      Value body = in_.cons(Value::object(S.progn), cdr(cdr(clause)));
      Value exit = in_.list({Value::object(S.return_from), block, body});
      clauses.push_back(keep_alive(in_.list({car(clause), nth(clause, 1), exit})));
    }
    if (!is_cons(cdr(last))) fail(span, "handler-case: expected (:no-error LAMBDA-LIST BODY...)");
    Value inner = keep_alive(in_.list_from(clauses.data(), clauses.size()));
    Value fn = keep_alive(in_.cons(Value::object(S.lambda), cdr(last)));
    Value call = keep_alive(in_.list({Value::object(S.multiple_value_call), fn, inner}));
    return analyze(keep_alive(in_.list({Value::object(S.block), block, call})), span);
  }
  auto* hc = make<HandlerCaseNode>(span);
  hc->body = analyze(nth(form, 1), span_of_cell(cdr(form), span));
  for (Value c = nth_cell(form, 2); is_cons(c); c = cdr(c)) {
    Value clause = car(c);
    Span cspan = span_of_cell(c, span);
    if (!is_cons(clause) || !is_cons(cdr(clause))) {
      fail(cspan, "handler-case: a clause is (TYPE (VAR) BODY...), got " + in_.repr(clause));
    }
    HandlerClause hcl;
    Value type = car(clause);
    if (is_cons(type) && car(type).same(Value::object(in_.S.or_))) {
      for (Value t = cdr(type); is_cons(t); t = cdr(t)) {
        if (!is_symbol(car(t))) fail(cspan, "handler-case: condition types must be symbols");
        hcl.types.push_back(as_symbol(car(t)));
      }
    } else if (is_symbol(type)) {
      hcl.types.push_back(as_symbol(type));
    } else {
      fail(cspan, "handler-case: condition type must be a symbol, got " + in_.repr(type));
    }
    Value vars = nth(clause, 1);
    if (!is_list(vars) || list_length(vars, cspan, "handler-case") > 1) {
      fail(cspan, "handler-case: expected () or (VAR) after the condition type");
    }
    Scope inner(scope_, bound_);
    if (is_cons(vars)) {
      if (!is_symbol(car(vars))) fail(cspan, "handler-case: the variable must be a symbol");
      inner.add(as_symbol(car(vars)));
      hcl.has_var = true;
      scope_ = &inner;
    }
    std::size_t lambdas_before = lambdas_;
    hcl.body = analyze_body(nth_cell(clause, 2), cspan);
    hcl.stack_frame = lambdas_ == lambdas_before;
    hcl.frame_size = static_cast<std::uint32_t>(inner.names.size());
    scope_ = inner.parent;
    hc->clauses.push_back(hcl);
  }
  std::vector<Value> types;
  for (const HandlerClause& clause : hc->clauses) {
    for (Symbol* type : clause.types) types.push_back(Value::object(type));
  }
  hc->types = in_.list_from(types.data(), types.size());
  if (hc->types.is_obj()) unit_->constants.push_back(hc->types);
  return hc;
}

// Quasiquote expansion into calls of list/append/cons (the core's own copies, so that user
// redefinitions cannot change what a backquote means).
Value Analyzer::quasi(Value form, int depth, Span span) {
  const WellKnown& S = in_.S;
  if (is_kind(form, ObjKind::Vector)) {
    Vector* vec = as_vector(form);
    bool has_unquote = false;
    for (Value item : vec->items) has_unquote = has_unquote || is_cons(item);
    if (!has_unquote) return in_.list({Value::object(S.quote), form});
    // The temporaries are rooted in a scope of their own: a caller expanding a list collects
    // its segments on the same stack, and must not find them among its segments (a vector
    // inside a backquoted list had its elements evaluated).
    Value result;
    {
      Interp::StackMark mark(in_);
      Value lst = keep_alive(in_.list_from(vec->items.data(), vec->items.size()));
      Value expanded = keep_alive(quasi(lst, depth, span));
      result = in_.list({in_.qq_vector, expanded});  // qq_vector turns the list into a vector
    }
    return result;  // unrooted until the caller pushes it: nothing allocates in between
  }
  if (!is_cons(form)) {
    if (is_symbol(form)) return in_.list({Value::object(S.quote), form});
    return form;
  }
  Value head = car(form);
  if (head.same(Value::object(S.unquote)) || head.same(Value::object(S.unquote_splicing))) {
    if (depth == 1) {
      if (head.same(Value::object(S.unquote_splicing))) fail(span, ",@ must be inside a list: `(... ,@x ...)");
      return nth(form, 1);
    }
    // Inside a nested backquote: keep the comma, and process what it contains one level out.
    // ,,@x splices x's elements into the inner comma form: (unquote a b ...).
    Value inner = nth(form, 1);
    if (depth == 2 && is_cons(inner) && car(inner).same(Value::object(S.unquote_splicing))) {
      return in_.list({in_.qq_cons, in_.list({Value::object(S.quote), head}), nth(inner, 1)});
    }
    return in_.list({in_.qq_list, in_.list({Value::object(S.quote), head}), quasi(inner, depth - 1, span)});
  }
  if (head.same(Value::object(S.quasiquote))) {
    return in_.list({in_.qq_list, in_.list({Value::object(S.quote), head}), quasi(nth(form, 1), depth + 1, span)});
  }
  // A list: (append seg1 seg2 ... tail), each segment a (list x) or a spliced form.
  Interp::StackMark mark(in_);
  Value* segs = in_.sp;
  Value v = form;
  for (; is_cons(v); v = cdr(v)) {
    Value item = car(v);
    if (is_cons(item) && car(item).same(Value::object(S.unquote_splicing)) && depth == 1) {
      in_.push(nth(item, 1));
    } else if (is_cons(item) && car(item).same(Value::object(S.unquote)) && depth == 1) {
      in_.push(in_.list({in_.qq_list, nth(item, 1)}));
    } else {
      Value inner = quasi(item, depth, span);
      in_.push(inner);
      in_.sp[-1] = in_.list({in_.qq_list, inner});
    }
    // `(a . ,b) reads as (a unquote b): the tail is an unquoted form.
    if (is_cons(cdr(v)) && car(cdr(v)).same(Value::object(S.unquote)) && depth == 1) {
      in_.push(nth(cdr(v), 1));
      v = nil();
      break;
    }
  }
  if (!v.is_nil()) in_.push(quasi(v, depth, span));
  auto count = static_cast<std::size_t>(in_.sp - segs);
  Value args = in_.list_from(segs, count);
  return in_.cons(in_.qq_append, args);
}

}  // namespace tl::eval
