// SPDX-License-Identifier: Apache-2.0
// The analyzer's state, shared by analyze.cpp (variables, calls, let, lambda) and
// analyze_forms.cpp (the control forms, local macros and quasiquote). Internal to src/eval.
#pragma once

#include <unordered_map>
#include <vector>

#include "eval/interp.h"

namespace tl::eval {

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
  // A progn of a list of forms. STATEMENTS: the forms are in statement position, where a
  // return-from may leave without unwinding (see clean_floor_).
  Node* analyze_body(Value forms, Span span, bool statements = false);
  Node* analyze_if(Value form, Span span);
  Node* analyze_setq(Value form, Span span);
  Node* analyze_let(Value form, Span span, bool sequential);
  Node* analyze_lambda(Value params, Value body, Span span, Value name);
  Node* analyze_seq(NodeKind kind, Value forms, Span span, bool statements = false);
  // FORM analyzed in the position of the form it replaces (a macro's expansion): a statement
  // position stays one.
  Node* analyze_in_place(Value form, Span span) {
    statement_next_ = true;
    return analyze(form, span);
  }
  Node* analyze_while(Value form, Span span);
  // A form whose value is its only effect (a constant, a local variable): dropped where the
  // value is not used.
  static bool idle(const Node* n) { return n->kind == NodeKind::Const || n->kind == NodeKind::Local; }
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
  // Local returns (ReturnFromNode::local): the blocks at index clean_floor_ and above are
  // reached from the form being analyzed through statement positions only (the forms of a
  // progn or of a block, let, let*, while or function body; the branches of an if) in the same
  // function. A return-from to one of them sets the interpreter's pending return and comes
  // back through those nodes, which stop at once, instead of throwing. Any other position (an
  // argument, a test, a binding's value, unwind-protect, handler-case) raises the floor.
  std::size_t clean_floor_ = 0;
  bool statement_next_ = false;  // the next analyze call is for a statement position
  // Closures created so far. A scope whose analysis creates none has a frame that nothing can
  // capture, so the evaluator keeps it on the frame stack instead of the heap.
  std::size_t lambdas_ = 0;
  std::size_t lambda_depth_ = 0;  // closures around the form being analyzed
};

}  // namespace tl::eval
