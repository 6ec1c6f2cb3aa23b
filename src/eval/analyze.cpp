// SPDX-License-Identifier: Apache-2.0
// The analyzer: expands macros and turns a form into a node tree with every variable resolved
// to a lexical address (frame depth, slot) or a global symbol. Special forms live here.
#include <algorithm>
#include <unordered_map>

#include "eval/interp.h"

namespace tl::eval {

namespace {

// How many scopes now being analyzed bind each symbol. Most symbols looked up are globals and
// special forms, which no scope binds: the count answers for them without a walk over every
// enclosing scope, which made deeply nested code quadratic to compile (issue 19: 100,000
// nested lets took half a minute).
using BindingCounts = std::unordered_map<Symbol*, std::uint32_t>;

struct Scope {
  Scope(Scope* parent_scope, BindingCounts& counts) : parent(parent_scope), counts_(counts) {}
  ~Scope() {
    for (Symbol* s : names) {
      if (s == nullptr) continue;
      auto it = counts_.find(s);
      if (--it->second == 0) counts_.erase(it);
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  // Adds a slot named `sym` (null for a slot no name refers to). HOLDS_FUNCTION: the binding
  // is a local function (flet, labels, or a let of a lambda expression), so in operator
  // position it hides a global macro of the same name; any other variable does not.
  void add(Symbol* sym, bool holds_function = false) {
    names.push_back(sym);
    function_slots.push_back(holds_function);
    if (sym != nullptr) ++counts_[sym];
  }

  Scope* parent;
  std::vector<Symbol*> names;  // slot i holds names[i]; later names shadow earlier ones
  std::vector<bool> function_slots;  // slot i was bound to a function (see add)

 private:
  BindingCounts& counts_;
};

struct BlockRef {
  Symbol* name;
  BlockNode* node;
  bool used;
  Scope* scope;               // the frame the block runs in (its tag slot goes there)
  std::size_t lambda_depth;   // closures around the block
};

class Analyzer {
 public:
  Analyzer(Interp& interp, CodeUnit* unit) : in_(interp), unit_(unit) {}
  Node* analyze(Value form, Span span);

 private:
  template <class T, class... A>
  T* make(A&&... args) {
    T* n = new T(std::forward<A>(args)...);
    unit_->nodes.push_back(n);
    return n;
  }
  Node* constant(Value v, Span span) {
    if (v.is_obj()) unit_->constants.push_back(v);
    return make<ConstNode>(span, v);
  }
  [[noreturn]] void fail(Span span, std::string message) {
    in_.error_at(span, "program-error", std::move(message));
  }
  Span span_of_cell(Value cell, Span fallback) const {
    Span s = in_.heap.span_of(cell);
    return s.valid() ? s : fallback;
  }
  // Roots a form created during analysis (a macro expansion) until compilation ends.
  Value keep_alive(Value v) {
    in_.push(v);
    return v;
  }
  std::size_t list_length(Value list, Span span, const char* what);
  Value nth(Value list, std::size_t n) {
    for (; n > 0; --n) list = cdr(list);
    return car(list);
  }
  Value nth_cell(Value list, std::size_t n) {
    for (; n > 0; --n) list = cdr(list);
    return list;
  }

  Node* analyze_symbol(Symbol* sym, Span span);
  Node* analyze_list(Value form, Span span);
  Node* analyze_call(Value form, Span span);
  Node* analyze_body(Value forms, Span span);  // progn of a list of forms
  Node* analyze_if(Value form, Span span);
  Node* analyze_setq(Value form, Span span);
  Node* analyze_let(Value form, Span span, bool sequential);
  Node* analyze_lambda(Value params, Value body, Span span, Value name);
  Node* analyze_seq(NodeKind kind, Value forms, Span span);
  Node* analyze_while(Value form, Span span);
  Node* analyze_block(Value form, Span span);
  Node* analyze_return_from(Value form, Span span);
  Node* analyze_unwind_protect(Value form, Span span);
  Node* analyze_handler_case(Value form, Span span);
  Node* analyze_macrolet(Value form, Span span, bool symbol_macros);
  // A definition of macrolet or symbol-macrolet in force while its body is analyzed.
  struct LocalMacro {
    Symbol* name;
    Value value;          // macrolet: the expander, a function of the whole form; else the expansion
    bool symbol_macro;
    std::uint32_t bound;  // lexical bindings of `name` when it was defined: more later shadow it
  };
  std::vector<LocalMacro> local_macros_;
  std::uint32_t binding_count(Symbol* sym) const {
    auto it = bound_.find(sym);
    return it == bound_.end() ? 0 : it->second;
  }
  // The innermost local macro (or symbol macro) named SYM that no inner binding shadows. A
  // symbol macro is shadowed by any variable of its name; a macro only by a local function.
  const LocalMacro* find_local_macro(Symbol* sym, bool symbol_macro, bool local_function) const {
    for (auto it = local_macros_.rbegin(); it != local_macros_.rend(); ++it) {
      if (it->name != sym || it->symbol_macro != symbol_macro) continue;
      bool shadowed = binding_count(sym) > it->bound && (symbol_macro || local_function);
      return shadowed ? nullptr : &*it;
    }
    return nullptr;
  }
  Node* analyze_multiple_value_call(Value form, Span span);
  Value quasi(Value form, int depth, Span span);
  bool lookup(Symbol* sym, std::uint32_t& depth, std::uint32_t& index,
              bool* holds_function = nullptr) const;

  Interp& in_;
  CodeUnit* unit_;
  BindingCounts bound_;  // declared before any Scope that refers to it
  Scope* scope_ = nullptr;
  std::vector<BlockRef> blocks_;
  // Closures created so far. A scope whose analysis creates none has a frame that nothing can
  // capture, so the evaluator keeps it on the frame stack instead of the heap.
  std::size_t lambdas_ = 0;
  std::size_t lambda_depth_ = 0;  // closures around the form being analyzed
};

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
    if (const LocalMacro* m = find_local_macro(sym, true, false)) return analyze(m->value, span);
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

Node* Analyzer::analyze_body(Value forms, Span span) {
  if (is_cons(forms) && cdr(forms).is_nil()) {
    return analyze(car(forms), span_of_cell(forms, span));
  }
  return analyze_seq(NodeKind::Progn, forms, span);
}

Node* Analyzer::analyze_seq(NodeKind kind, Value forms, Span span) {
  auto* n = make<SeqNode>(kind, span);
  for (Value v = forms; is_cons(v); v = cdr(v)) {
    n->body.push_back(analyze(car(v), span_of_cell(v, span)));
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
      if (s == S.progn) return analyze_body(cdr(form), span);
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
        return analyze(expansion, span);
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
        return analyze(expansion, span);
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
  if (call->args.size() == 2 && is_kind(fn_value, ObjKind::Native) && as_native(fn_value)->prim != Prim::None) {
    {
      auto* prim = make<PrimCallNode>(span);
      prim->symbol = fn_symbol;
      prim->builtin = fn_value.o;
      prim->op = as_native(fn_value)->prim;
      prim->a = call->args[0];
      prim->b = call->args[1];
      auto is_leaf = [](const Node* n) {
        return n->kind == NodeKind::Const || n->kind == NodeKind::Local || n->kind == NodeKind::Global;
      };
      prim->leaves = is_leaf(prim->a) && is_leaf(prim->b);
      prim->call = call;
      unit_->constants.push_back(fn_value);
      return prim;
    }
  }
  return call;
}

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

Node* Analyzer::analyze_if(Value form, Span span) {
  std::size_t n = list_length(form, span, "if");
  if (n < 3 || n > 4) {
    fail(span, "if: expected (if TEST THEN [ELSE]), got " + std::to_string(n - 1) + " forms");
  }
  Node* test = analyze(nth(form, 1), span_of_cell(nth_cell(form, 1), span));
  Node* then = analyze(nth(form, 2), span_of_cell(nth_cell(form, 2), span));
  Node* otherwise = n == 4 ? analyze(nth(form, 3), span_of_cell(nth_cell(form, 3), span))
                           : constant(nil(), span);
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
  if (!is_list(bindings)) fail(bindings_span, std::string(what) + ": bindings must be a list, got " + in_.repr(bindings));
  if (bindings.is_nil()) return analyze_body(nth_cell(form, 2), span);  // no frame at all
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
  Node* body = analyze_body(nth_cell(form, 2), span);
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
    body_node = analyze_body(body, span);
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

Node* Analyzer::analyze_while(Value form, Span span) {
  if (list_length(form, span, "while") < 2) fail(span, "while: expected (while TEST BODY...)");
  Node* test = analyze(nth(form, 1), span_of_cell(cdr(form), span));
  Node* body = analyze_body(nth_cell(form, 2), span);
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
  Node* body = analyze_body(nth_cell(form, 2), span);
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
  return analyze_body(nth_cell(form, 2), span);
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

}  // namespace

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
