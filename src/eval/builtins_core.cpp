// SPDX-License-Identifier: Apache-2.0
// Core builtins: equality, type predicates, function calling, evaluation and macros,
// definitions, conditions, symbols and documentation.
#include <algorithm>
#include <cctype>

#include "eval/builtins.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

template <bool (*Pred)(Value)>
Value predicate(Interp& in, Args a, N) {
  return in.boolean(Pred(a[0]));
}

bool is_integer_v(Value v) { return v.is_int(); }
bool is_float_v(Value v) { return v.is_float(); }
bool is_number_v(Value v) { return v.is_number(); }
bool is_null_v(Value v) { return v.is_nil(); }
bool is_cons_v(Value v) { return is_cons(v); }
bool is_list_v(Value v) { return is_list(v); }
bool is_atom_v(Value v) { return !is_cons(v); }
bool is_symbol_v(Value v) { return v.is_nil() || is_symbol(v); }
bool is_keyword_v(Value v) { return is_symbol(v) && as_symbol(v)->is_keyword(); }
bool is_string_v(Value v) { return is_string(v); }
bool is_vector_v(Value v) { return is_kind(v, ObjKind::Vector); }
bool is_hash_v(Value v) { return is_kind(v, ObjKind::HashTable); }
bool is_function_v(Value v) { return is_function(v); }
bool is_macro_v(Value v) { return is_kind(v, ObjKind::Macro); }
bool is_condition_v(Value v) { return is_kind(v, ObjKind::Condition); }

Condition* arg_condition(Interp& in, const char* fn, Args a, int i) {
  if (!is_kind(a[i], ObjKind::Condition)) in.type_error(fn, i + 1, "a condition", a[i]);
  return as_condition(a[i]);
}

// Raises a condition object as a tl::Error carrying it.
[[noreturn]] void raise_condition(Interp& in, Value cond) { throw condition_error(in, cond); }

Value make_condition(Interp& in, Value type, std::string message, Value data) {
  auto* c = in.heap.make<Condition>(ObjKind::Condition);
  c->type = type;
  c->data = data;
  Value v = Value::object(c);
  Interp::StackMark mark(in);
  in.push(v);
  c->message = in.make_string(std::move(message));
  return v;
}

Value describe_text(Interp& in, Value v, Symbol* name) {
  std::string out;
  if (name != nullptr) out += name->name + " ";
  if (is_kind(v, ObjKind::Native)) {
    Native* n = as_native(v);
    std::string usage = n->usage[0] != '\0' ? n->usage : "(" + n->name + " ARG...)";
    out += "is a builtin function.\n  usage: " + usage;
    if (n->doc[0] != '\0') out += "\n  " + std::string(n->doc);
    if (n->file[0] != '\0') {
      out += "\n  defined at " + Interp::display_path(n->file) + ":" + std::to_string(n->line);
    } else {
      out += "\n  defined by the host program";
    }
  } else if (is_kind(v, ObjKind::Closure)) {
    const LambdaNode* lam = as_closure(v)->lambda;
    out += "is a function.\n  usage: (" + (name ? name->name : std::string("lambda"));
    std::string args = in.repr(lam->arglist);
    if (args != "nil") out += " " + args.substr(1, args.size() - 2);
    out += ")\n";
    out += is_string(lam->doc) ? "  " + as_string(lam->doc)->text : std::string("  (no documentation)");
    if (lam->span.valid()) {
      SourceLocation loc = in.sources.location(lam->span);
      out += "\n  defined at " + Interp::display_path(loc.file) + ":" + std::to_string(loc.line);
    }
  } else if (is_kind(v, ObjKind::Macro)) {
    Value fn = as_macro(v)->fn;
    out += "is a macro.\n";
    if (is_kind(fn, ObjKind::Closure)) {
      const LambdaNode* lam = as_closure(fn)->lambda;
      std::string args = in.repr(lam->arglist);
      out += "  usage: (" + (name ? name->name : std::string("macro"));
      if (args != "nil") out += " " + args.substr(1, args.size() - 2);
      out += ")\n";
      out += is_string(lam->doc) ? "  " + as_string(lam->doc)->text : std::string("  (no documentation)");
    }
  } else {
    std::string type = in.type_name(v);
    const char* article = std::string("aeiou").find(type[0]) != std::string::npos ? "an " : "a ";
    if (name != nullptr) {
      out += "is a variable whose value is " + in.repr(v) + ", " + article + type + ".";
      if (is_string(name->doc)) out += "\n  " + as_string(name->doc)->text;
    } else {
      out = in.repr(v) + " is " + article + type + ".";
    }
  }
  return in.make_string(out);
}

}  // namespace

// The special forms' syntax and documentation (they have no definition to carry a docstring).
struct SpecialForm {
  const char* name;
  const char* usage;
  const char* doc;
};
constexpr SpecialForm kSpecialForms[] = {
    {"quote", "(quote DATUM)", "DATUM itself, not evaluated; 'DATUM is the same.\n  (quote (a b))  ; => (a b)"},
    {"quasiquote", "(quasiquote TEMPLATE)",
     "TEMPLATE with each ,X replaced by X's value and each ,@X spliced in; `TEMPLATE is the same.\n"
     "  (let ((x 2)) `(1 ,x ,@(list 3 4)))  ; => (1 2 3 4)"},
    {"unquote", "(unquote X)",
     "Inside a backquote, ,X: X's value. An error anywhere else.\n"
     "  (let ((x 2)) `(x is ,x and ,(* x 10)))  ; => (x is 2 and 20)"},
    {"unquote-splicing", "(unquote-splicing X)",
     "Inside a backquote, ,@X: the elements of the list X evaluates to, spliced in. An error anywhere else.\n"
     "  (let ((xs '(2 3))) `(1 ,@xs 4))  ; => (1 2 3 4)\n"
     "  (let ((xs nil)) `(1 ,@xs 4))  ; => (1 4)"},
    {"function", "(function NAME)",
     "#'NAME: the function NAME names, a local one (flet, labels) or the global one; or a lambda's closure.\n"
     "  (funcall #'car '(1 2))  ; => 1"},
    {"lambda", "(lambda LAMBDA-LIST [DOC] BODY...)",
     "An anonymous function (a closure over the variables it uses). LAMBDA-LIST takes required "
     "parameters, &optional, &rest (or &body), &key (with &allow-other-keys) and &aux, with defaults.\n"
     "  (funcall (lambda (x &optional (y 10)) (+ x y)) 1)  ; => 11"},
    {"named-lambda", "(named-lambda NAME LAMBDA-LIST BODY...)",
     "A lambda that backtraces and describe call NAME (it does not bind NAME for recursion: use labels).\n"
     "  (funcall (named-lambda add1 (x) (+ x 1)) 1)  ; => 2"},
    {"if", "(if TEST THEN [ELSE])",
     "THEN's value when TEST is true (anything but nil), else ELSE's (nil without ELSE).\n"
     "  (if (> 2 1) 'yes 'no)  ; => yes"},
    {"progn", "(progn FORM...)",
     "Evaluates the FORMs in order and returns the last one's value.\n  (progn 1 2 3)  ; => 3"},
    {"let", "(let ((VAR VALUE)...) BODY...)",
     "Binds each VAR to its VALUE, all evaluated first, then runs BODY. A VAR alone is bound to nil; "
     "a special variable (defvar) is bound dynamically.\n  (let ((a 1) (b 2)) (+ a b))  ; => 3"},
    {"let*", "(let* ((VAR VALUE)...) BODY...)",
     "Like let, but each VALUE sees the variables bound before it.\n  (let* ((a 1) (b (+ a 1))) b)  ; => 2"},
    {"setq", "(setq VAR VALUE...)",
     "Assigns each VALUE to its VAR in turn (a local variable, else the global one) and returns the "
     "last value; setf does the same for places.\n  (let (x) (setq x 5) x)  ; => 5"},
    {"and", "(and FORM...)",
     "The FORMs' values in order until one is nil (then nil); the last value when none is; t with none.\n"
     "  (and 1 2 3)  ; => 3"},
    {"or", "(or FORM...)", "The first FORM value that is not nil, or nil.\n  (or nil 2)  ; => 2"},
    {"while", "(while TEST BODY...)",
     "Runs BODY as long as TEST is true; returns nil. (loop, do and dotimes are macros over it.)\n"
     "  (let ((i 0)) (while (< i 3) (setq i (+ i 1))) i)  ; => 3"},
    {"block", "(block NAME BODY...)",
     "Runs BODY; a (return-from NAME VALUE) inside it returns VALUE from the block at once. defun's "
     "body is a block named after the function, and loops are blocks named nil (return).\n"
     "  (block b (return-from b 7) 8)  ; => 7"},
    {"return-from", "(return-from NAME [VALUE])",
     "Leaves the innermost lexically enclosing block NAME with VALUE (nil by default).\n"
     "  (block search (dolist (x '(1 2 3)) (when (= x 2) (return-from search (* x 10)))))  ; => 20\n"
     "  (block b (return-from b) 1)  ; => nil"},
    {"unwind-protect", "(unwind-protect FORM CLEANUP...)",
     "FORM's value, with the CLEANUP forms run however FORM is left: normally, by an error, a throw, "
     "a return-from or Ctrl-C.\n  (let ((log nil)) (unwind-protect (push 1 log) (push 2 log)) log)  ; => (2 1)"},
    {"handler-case", "(handler-case FORM (TYPE ([VAR]) BODY...)...)",
     "FORM's value; when FORM signals a condition of one of the TYPEs (error, type-error, shape-error, "
     "...), the first matching clause runs with VAR bound to the condition instead. (:no-error "
     "(VALUES...) BODY...) runs on success.\n"
     "  (handler-case (error \"boom\") (error (e) (condition-message e)))  ; => \"boom\""},
    {"declare", "(declare SPEC...)",
     "At the start of a body: declarations (special, ignore, ignorable, type, optimize, ...). Special "
     "is honoured; the others are accepted and ignored.\n"
     "  (let ((x 1)) (declare (ignorable x)) x)  ; => 1"},
    {"multiple-value-call", "(multiple-value-call FUNCTION FORM...)",
     "Calls FUNCTION with all the values of every FORM as its arguments.\n"
     "  (multiple-value-call #'list (floor 7 2) 9)  ; => (3 1 9)"},
    {"macrolet", "(macrolet ((NAME LAMBDA-LIST BODY...)...) BODY...)",
     "BODY with local macros.\n"
     "  (macrolet ((twice (x) (list 'progn x x))) (let ((n 0)) (twice (setq n (+ n 1))) n))  ; => 2"},
    {"symbol-macrolet", "(symbol-macrolet ((SYMBOL EXPANSION)...) BODY...)",
     "BODY with each SYMBOL standing for its EXPANSION (setq of it sets the expansion's place).\n"
     "  (symbol-macrolet ((x 42)) (+ x 1))  ; => 43"},
};

const SpecialForm* special_form_doc(const Symbol* s) {
  for (const SpecialForm& f : kSpecialForms) {
    if (s->name == f.name) return &f;
  }
  return nullptr;
}

// What (%definition NAME) says of symbol S: a plist (:kind :usage :doc :file :line), or nil
// when S has no global definition.
Value definition_of(Interp& in, Symbol* s) {
  if (in.is_special_form(s)) {
    const SpecialForm* f = special_form_doc(s);
    Interp::StackMark mark(in);
    Value* base = in.sp;
    in.push(Value::object(in.keyword("kind")));
    in.push(Value::object(in.intern("special-form")));
    in.push(Value::object(in.keyword("usage")));
    in.push(f ? in.make_string(f->usage) : nil());
    in.push(Value::object(in.keyword("doc")));
    in.push(f ? in.make_string(f->doc) : nil());
    in.push(Value::object(in.keyword("file")));
    in.push(nil());
    in.push(Value::object(in.keyword("line")));
    in.push(Value::integer(0));
    return in.list_from(base, 10);
  }
  if (!s->bound) return nil();
  Value v = s->value;
  std::string kind;
  std::string usage;
  Value doc = nil();
  std::string file;
  int line = 0;
  const LambdaNode* lam = nullptr;
  if (is_kind(v, ObjKind::Native)) {
    const Native* n = as_native(v);
    kind = "builtin";
    usage = n->usage[0] != '\0' ? n->usage : "(" + s->name + " ARG...)";
    if (n->doc[0] != '\0') doc = in.make_string(n->doc);
    if (n->file[0] != '\0') file = Interp::display_path(n->file);
    line = n->line;
  } else if (is_kind(v, ObjKind::Closure)) {
    kind = "function";
    lam = as_closure(v)->lambda;
  } else if (is_kind(v, ObjKind::Macro)) {
    kind = "macro";
    if (is_kind(as_macro(v)->fn, ObjKind::Closure)) lam = as_closure(as_macro(v)->fn)->lambda;
  } else {
    kind = "variable";
    doc = s->doc;
  }
  if (lam != nullptr) {
    std::string args = in.repr(lam->arglist);
    usage = "(" + s->name;
    if (args != "nil") {
      usage += ' ';
      usage.append(args, 1, args.size() - 2);
    }
    usage += ')';
    doc = lam->doc;
    if (lam->span.valid()) {
      SourceLocation loc = in.sources.location(lam->span);
      file = Interp::display_path(loc.file);
      line = loc.line;
    }
  }
  Interp::StackMark mark(in);
  Value* base = in.sp;
  in.push(Value::object(in.keyword("kind")));
  in.push(Value::object(in.intern(kind)));
  in.push(Value::object(in.keyword("usage")));
  in.push(usage.empty() ? nil() : in.make_string(usage));
  in.push(Value::object(in.keyword("doc")));
  in.push(doc);
  in.push(Value::object(in.keyword("file")));
  in.push(file.empty() ? nil() : in.make_string(file));
  in.push(Value::object(in.keyword("line")));
  in.push(Value::integer(line));
  return in.list_from(base, 10);
}

void register_core_builtins(Interp& in) {
  TL_BUILTIN(in, "values", 0, -1, "(values X...)",
             "Returns each X as one of several values; (values) returns none. Where one value is used, it is the "
             "first (or nil).\n"
             "  (values 1 2)  ; => 1\n"
             "  (multiple-value-list (values 1 2 3))  ; => (1 2 3)",
             [](Interp& in, Args a, N n) { return in.set_values(a, n); });
  TL_BUILTIN(in, "values-list", 1, 1, "(values-list LIST)",
             "Returns the elements of LIST as multiple values.\n"
             "  (multiple-value-list (values-list '(a b)))  ; => (a b)",
             [](Interp& in, Args a, N) -> Value {
               std::vector<Value> items = list_items(in, "values-list", a[0], 1);
               return in.set_values(items.data(), static_cast<std::uint32_t>(items.size()));
             });
  TL_BUILTIN(in, "eq", 2, 2, "(eq A B)",
             "True when A and B are the same object (or the same number of the same type).\n"
             "  (eq 'a 'a)  ; => t\n"
             "  (eq (list 1) (list 1))  ; => nil",
             [](Interp& in, Args a, N) { return in.boolean(a[0].same(a[1])); });
  TL_BUILTIN(in, "eql", 2, 2, "(eql A B)",
             "Like eq; numbers compare by type and value.\n"
             "  (eql 2.0 2.0)  ; => t\n"
             "  (eql 1 1.0)  ; => nil",
             [](Interp& in, Args a, N) { return in.boolean(eql(a[0], a[1])); });
  TL_BUILTIN(in, "equal", 2, 2, "(equal A B)",
             "Structural equality: lists, vectors and strings compare by contents.\n"
             "  (equal '(1 (2 3)) (list 1 (list 2 3)))  ; => t\n"
             "  (equal \"ab\" \"ab\")  ; => t\n"
             "  (equal 1 1.0)  ; => nil",
             [](Interp& in, Args a, N) { return in.boolean(equal(a[0], a[1], &in)); });
  TL_BUILTIN(in, "not", 1, 1, "(not X)",
             "t when X is nil, else nil.\n"
             "  (not nil)  ; => t\n"
             "  (not 0)  ; => nil",
             predicate<is_null_v>);
  TL_BUILTIN(in, "null", 1, 1, "(null X)",
             "t when X is nil, else nil.\n"
             "  (null '())  ; => t\n"
             "  (null '(1))  ; => nil",
             predicate<is_null_v>);
  TL_BUILTIN(in, "integerp", 1, 1, "(integerp X)",
             "True for integers.\n"
             "  (integerp 3)  ; => t\n"
             "  (integerp 3.0)  ; => nil",
             predicate<is_integer_v>);
  TL_BUILTIN(in, "floatp", 1, 1, "(floatp X)",
             "True for floats.\n"
             "  (floatp 1.5)  ; => t\n"
             "  (floatp 1)  ; => nil",
             predicate<is_float_v>);
  TL_BUILTIN(in, "numberp", 1, 1, "(numberp X)",
             "True for numbers.\n"
             "  (numberp 2.5)  ; => t\n"
             "  (numberp \"2\")  ; => nil",
             predicate<is_number_v>);
  TL_BUILTIN(in, "consp", 1, 1, "(consp X)",
             "True for conses (non-empty lists).\n"
             "  (consp '(1))  ; => t\n"
             "  (consp nil)  ; => nil",
             predicate<is_cons_v>);
  TL_BUILTIN(in, "listp", 1, 1, "(listp X)",
             "True for conses and nil.\n"
             "  (listp nil)  ; => t\n"
             "  (listp \"ab\")  ; => nil",
             predicate<is_list_v>);
  TL_BUILTIN(in, "atom", 1, 1, "(atom X)",
             "True for everything but conses.\n"
             "  (atom 'a)  ; => t\n"
             "  (atom '(1))  ; => nil",
             predicate<is_atom_v>);
  TL_BUILTIN(in, "symbolp", 1, 1, "(symbolp X)",
             "True for symbols (nil included).\n"
             "  (symbolp 'a)  ; => t\n"
             "  (symbolp nil)  ; => t\n"
             "  (symbolp \"a\")  ; => nil",
             predicate<is_symbol_v>);
  TL_BUILTIN(in, "keywordp", 1, 1, "(keywordp X)",
             "True for keywords such as :lr.\n"
             "  (keywordp :lr)  ; => t\n"
             "  (keywordp 'lr)  ; => nil",
             predicate<is_keyword_v>);
  TL_BUILTIN(in, "stringp", 1, 1, "(stringp X)",
             "True for strings.\n"
             "  (stringp \"hi\")  ; => t\n"
             "  (stringp #\\h)  ; => nil",
             predicate<is_string_v>);
  TL_BUILTIN(in, "vectorp", 1, 1, "(vectorp X)",
             "True for vectors.\n"
             "  (vectorp #(1 2))  ; => t\n"
             "  (vectorp '(1 2))  ; => nil",
             predicate<is_vector_v>);
  TL_BUILTIN(in, "hash-table-p", 1, 1, "(hash-table-p X)",
             "True for hash tables.\n"
             "  (hash-table-p (make-hash-table))  ; => t\n"
             "  (hash-table-p '((a . 1)))  ; => nil",
             predicate<is_hash_v>);
  TL_BUILTIN(in, "functionp", 1, 1, "(functionp X)",
             "True for functions (closures and builtins).\n"
             "  (functionp #'car)  ; => t\n"
             "  (functionp 'car)  ; => nil",
             predicate<is_function_v>);
  TL_BUILTIN(in, "macrop", 1, 1, "(macrop X)",
             "True for macro objects.\n"
             "  (macrop (symbol-value 'when))  ; => t\n"
             "  (macrop #'car)  ; => nil",
             predicate<is_macro_v>);
  TL_BUILTIN(in, "conditionp", 1, 1, "(conditionp X)",
             "True for condition objects.\n"
             "  (conditionp (make-condition 'error))  ; => t\n"
             "  (conditionp \"error\")  ; => nil",
             predicate<is_condition_v>);
  TL_BUILTIN(in, "type-of", 1, 1, "(type-of X)",
             "The type of X as a symbol: integer, float, string, cons, null, ...\n"
             "  (type-of 1.5)  ; => float\n"
             "  (type-of '(1))  ; => cons\n"
             "  (type-of nil)  ; => null",
             [](Interp& in, Args a, N) -> Value {
               // A condition's type is its condition type, as in Common Lisp.
               if (is_kind(a[0], ObjKind::Condition) && is_symbol(as_condition(a[0])->type)) {
                 return as_condition(a[0])->type;
               }
               return in.sym(in.type_name(a[0]));
             });
  TL_BUILTIN(in, "identity", 1, 1, "(identity X)",
             "Returns X.\n"
             "  (identity 5)  ; => 5\n"
             "  (remove-if-not #'identity '(1 nil 2))  ; => (1 2)",
             [](Interp&, Args a, N) { return a[0]; });

  Value funcall = TL_BUILTIN(in, "funcall", 1, -1, "(funcall FUNCTION ARG...)",
                             "Calls FUNCTION with the arguments.\n"
                             "  (funcall #'+ 1 2 3)  ; => 6\n"
                             "  (funcall (lambda (x) (* x x)) 5)  ; => 25",
                             [](Interp& in, Args a, N n) { return in.apply(a[0], a + 1, n - 1); });
  in.funcall_native = funcall.o;
  Value apply = TL_BUILTIN(in, "apply", 2, -1, "(apply FUNCTION ARG... LIST)",
                           "Calls FUNCTION with the arguments followed by the elements of LIST.\n"
                           "  (apply #'+ 1 2 '(3 4))  ; => 10\n"
                           "  (apply #'max '(3 9 4))  ; => 9",
                           [](Interp& in, Args a, N n) -> Value {
                             Interp::StackMark mark(in);
                             Value* base = in.sp;
                             for (N i = 1; i + 1 < n; ++i) in.push(a[i]);
                             in.push_spread_arguments(base, a[n - 1], static_cast<int>(n));
                             return in.apply(a[0], base, static_cast<N>(in.sp - base));
                           });
  in.apply_native = apply.o;
  Symbol* limit = in.intern("call-arguments-limit");
  in.set_global(limit, Value::integer(static_cast<std::int64_t>(Interp::kCallArgumentsLimit)));
  limit->sym_flags |= kSymConstant;
  limit->doc = in.make_string(
      "The most arguments one function call can take (apply checks it).\n"
      "  (let ((xs '(3 9 4)))\n"
      "    (if (< (length xs) call-arguments-limit) (apply #'max xs) (reduce #'max xs)))  ; => 9");
  in.permanent.push_back(funcall);
  in.permanent.push_back(apply);
  TL_BUILTIN(in, "eval", 1, 1, "(eval FORM)",
             "Evaluates FORM in the global environment.\n"
             "  (eval '(+ 1 2))  ; => 3\n"
             "  (eval (list '* 6 7))  ; => 42",
             [](Interp& in, Args a, N) { return in.eval_toplevel(a[0]); });
  TL_BUILTIN(in, "macroexpand-1", 1, 1, "(macroexpand-1 FORM)",
             "FORM with its outermost macro call expanded once.\n"
             "  (macroexpand-1 '(return 1))  ; => (return-from nil 1)\n"
             "  (macroexpand-1 '(+ 1 2))  ; => (+ 1 2)",
             [](Interp& in, Args a, N) { return in.macroexpand_1(a[0], nullptr); });
  TL_BUILTIN(in, "macroexpand", 1, 1, "(macroexpand FORM)",
             "FORM with its outermost macro calls expanded until none is left.\n"
             "  (macroexpand '(unless ok (print 1)))  ; => (if ok nil (progn (print 1)))\n"
             "  (progn (defmacro doc-ex-ret (x) `(return ,x)) (macroexpand '(doc-ex-ret 5)))  ; => (return-from nil 5)",
             [](Interp& in, Args a, N) { return in.macroexpand(a[0]); });
  TL_BUILTIN(in, "gensym", 0, 1, "(gensym [PREFIX])",
             "A fresh uninterned symbol, for macros.\n"
             "  (symbolp (gensym))  ; => t\n"
             "  (eq (gensym) (gensym))  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               std::string prefix = n == 1 && is_string(a[0]) ? as_string(a[0])->text : "g";
               return Value::object(in.gensym(prefix));
             });
  TL_BUILTIN(in, "make-symbol", 1, 1, "(make-symbol NAME)",
             "A new uninterned symbol named NAME (a string), as gensym makes but with no counter.\n"
             "  (symbol-name (make-symbol \"tmp\"))  ; => \"tmp\"\n"
             "  (eq (make-symbol \"tmp\") (make-symbol \"tmp\"))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               if (!is_string(a[0])) in.type_error("make-symbol", 1, "a string", a[0]);
               return Value::object(in.make_uninterned(as_string(a[0])->text));
             });
  TL_BUILTIN(in, "%define-macro", 2, 2, "(%define-macro NAME FUNCTION)", "Makes NAME a macro expanded by FUNCTION; what defmacro expands to.",
             [](Interp& in, Args a, N) -> Value {
               Symbol* name = arg_symbol(in, "defmacro", a, 0);
               arg_function(in, "defmacro", a, 1);
               if (name->sym_flags & kSymConstant) in.error("program-error", "defmacro: cannot redefine the constant " + name->name);
               if (in.is_special_form(name)) {
                 in.error("program-error", "defmacro: " + name->name + " is a special form; it cannot be redefined");
               }
               auto* m = in.heap.make<Macro>(ObjKind::Macro);
               m->fn = a[1];
               m->name = a[0];
               if (is_kind(a[1], ObjKind::Closure)) as_closure(a[1])->name = a[0];
               in.set_global(name, Value::object(m));
               return a[0];
             });
  TL_BUILTIN(in, "%define-function", 2, 2, "(%define-function NAME FUNCTION)", "Binds NAME to FUNCTION globally; what defun expands to.",
             [](Interp& in, Args a, N) -> Value {
               Symbol* name = arg_symbol(in, "defun", a, 0);
               if (name->sym_flags & kSymConstant) in.error("program-error", "defun: cannot redefine the constant " + name->name);
               // Calls would still parse as the special form (issue 25: (defun block ...) was accepted).
               if (in.is_special_form(name)) {
                 in.error("program-error", "defun: " + name->name + " is a special form; it cannot be redefined");
               }
               if (is_kind(a[1], ObjKind::Closure)) as_closure(a[1])->name = a[0];
               in.set_global(name, a[1]);
               return a[0];
             });
  TL_BUILTIN(in, "%define-variable", 3, 4, "(%define-variable NAME VALUE OVERWRITE [DOC])",
             "Declares NAME special (dynamically bound by let) and sets it: always when OVERWRITE is t, only if unbound when it is nil, never when it is :declare-only.",
             [](Interp& in, Args a, N n) -> Value {
               Symbol* name = arg_symbol(in, "defvar", a, 0);
               if (name->sym_flags & kSymConstant) in.error("program-error", "defvar: cannot redefine the constant " + name->name);
               name->sym_flags |= kSymSpecial;
               bool declare_only = is_symbol(a[2]) && as_symbol(a[2])->is_keyword();
               if (!declare_only && (a[2].truthy() || !name->bound)) in.set_global(name, a[1]);
               if (n == 4 && is_string(a[3])) name->doc = a[3];
               return a[0];
             });
  TL_BUILTIN(in, "%define-constant", 2, 3, "(%define-constant NAME VALUE [DOC])", "Makes NAME a global constant.",
             [](Interp& in, Args a, N n) -> Value {
               Symbol* name = arg_symbol(in, "defconstant", a, 0);
               if ((name->sym_flags & kSymConstant) && !equal(name->value, a[1])) {
                 in.error("program-error", "defconstant: " + name->name + " is already a constant with another value");
               }
               in.set_global(name, a[1]);
               name->sym_flags |= kSymConstant;
               if (n == 3 && is_string(a[2])) name->doc = a[2];
               return a[0];
             });
  TL_BUILTIN(in, "%define-condition", 2, 2, "(%define-condition NAME PARENTS)",
             "Declares a condition type NAME under PARENTS (a type or a list of types).",
             [](Interp& in, Args a, N) -> Value {
               Symbol* name = arg_symbol(in, "define-condition", a, 0);
               std::vector<Symbol*> parents;
               Value list = is_cons(a[1]) ? a[1] : in.list({a[1]});
               for (Value v = list; is_cons(v); v = cdr(v)) {
                 if (!is_symbol(car(v)) || car(v).is_nil()) in.type_error("define-condition", 2, "condition type names", a[1]);
                 Symbol* parent = as_symbol(car(v));
                 if (parent != in.S.condition && !in.condition_parents.count(parent)) {
                   in.error("program-error", "define-condition: unknown parent condition type " + parent->name);
                 }
                 if (parent == name || in.condition_is_a(car(v), name)) {
                   in.error("program-error", "define-condition: " + name->name + " cannot inherit from itself");
                 }
                 parents.push_back(parent);
               }
               if (in.builtin_conditions.count(name)) {
                 in.error("program-error", "define-condition: " + name->name + " is a built-in condition type");
               }
               in.condition_parents[name] = std::move(parents);
               return a[0];
             });
  TL_BUILTIN(in, "error", 1, -1,
             "(error MESSAGE-FORMAT ARG...) or (error TYPE [MESSAGE-FORMAT ARG...]) or (error CONDITION)",
             "Signals an error. With a string, a simple-error whose message is formatted like `format`. "
             "With a condition type symbol, a condition of that type.\n"
             "  (handler-case (error \"too big: ~a\" 5) (error (e) (condition-message e)))  ; => \"too big: 5\"\n"
             "  (handler-case (error 'type-error \"bad arg\") (type-error (e) (condition-type e)))  ; => type-error",
             [](Interp& in, Args a, N n) -> Value {
               if (is_kind(a[0], ObjKind::Condition)) raise_condition(in, a[0]);
               if (is_string(a[0])) {
                 std::string msg = format_string(in, as_string(a[0])->text, a + 1, n - 1);
                 Value cond = make_condition(in, in.sym("simple-error"), msg, nil());
                 Interp::StackMark mark(in);
                 in.push(cond);
                 Value arguments = in.list_from(a + 1, n - 1);
                 in.push(arguments);
                 as_condition(cond)->slots = in.list({in.sym("format-control"), a[0], in.sym("format-arguments"), arguments});
                 raise_condition(in, cond);
               }
               if (is_symbol(a[0]) && !a[0].is_nil()) {
                 Symbol* type = as_symbol(a[0]);
                 if (type != in.S.condition && !in.condition_parents.count(type)) {
                   in.error("program-error", "error: unknown condition type " + type->name + " (define it with define-condition)");
                 }
                 // CL's (error 'TYPE :INITARG VALUE ...) makes the condition with make-condition.
                 bool initargs = (n - 1) % 2 == 0;
                 for (N i = 1; initargs && i < n; i += 2) {
                   initargs = is_symbol(a[i]) && as_symbol(a[i])->is_keyword();
                 }
                 if (initargs) {
                   Symbol* maker = in.intern("make-condition");
                   raise_condition(in, in.apply(maker->value, a, n));
                 }
                 std::string msg = type->name;
                 Value data = nil();
                 if (n >= 2 && is_string(a[1])) {
                   msg = format_string(in, as_string(a[1])->text, a + 2, n - 2);
                 } else if (n >= 2) {
                   data = in.list_from(a + 1, n - 1);
                 }
                 raise_condition(in, make_condition(in, a[0], msg, data));
               }
               in.type_error("error", 1, "a string, a condition type or a condition", a[0]);
             });
  TL_BUILTIN(in, "make-condition", 1, -1, "(make-condition TYPE &key :message :data)", "A condition object of TYPE, to pass to `error`.",
             [](Interp& in, Args a, N n) -> Value {
               Symbol* type = arg_symbol(in, "make-condition", a, 0);
               if (type != in.S.condition && !in.condition_parents.count(type)) {
                 in.error("program-error", "make-condition: unknown condition type " + type->name);
               }
               Value msg = keyword_arg(a, 1, n, "message");
               std::string text = is_string(msg) ? as_string(msg)->text : type->name;
               return make_condition(in, a[0], text, keyword_arg(a, 1, n, "data"));
             });
  TL_BUILTIN(in, "condition-type", 1, 1, "(condition-type CONDITION)",
             "The type symbol of CONDITION.\n"
             "  (handler-case (car 1) (error (e) (condition-type e)))  ; => type-error",
             [](Interp& in, Args a, N) { return arg_condition(in, "condition-type", a, 0)->type; });
  TL_BUILTIN(in, "condition-message", 1, 1, "(condition-message CONDITION)",
             "The message of CONDITION, a string.\n"
             "  (handler-case (error \"bad ~a\" 42) (error (e) (condition-message e)))  ; => \"bad 42\"",
             [](Interp& in, Args a, N) { return arg_condition(in, "condition-message", a, 0)->message; });
  TL_BUILTIN(in, "condition-data", 1, 1, "(condition-data CONDITION)",
             "The data attached to CONDITION (make-condition :data).\n"
             "  (condition-data (make-condition 'error :data '(x 1)))  ; => (x 1)",
             [](Interp& in, Args a, N) { return arg_condition(in, "condition-data", a, 0)->data; });
  TL_BUILTIN(in, "condition-location", 1, 1, "(condition-location CONDITION)",
             "\"file:line:col\" where CONDITION was raised, or nil.\n"
             "  (condition-location (make-condition 'error))  ; => nil\n"
             "  (stringp (handler-case (eval '(car 1)) (error (e) (condition-location e))))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               Condition* c = arg_condition(in, "condition-location", a, 0);
               if (!c->error || !c->error->location().valid()) return nil();
               const auto& loc = c->error->location();
               return in.make_string(loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column));
             });
  TL_BUILTIN(in, "condition-report", 1, 1, "(condition-report CONDITION)",
             "The full error report: location, message, source line and backtrace.\n"
             "  (condition-report (make-condition 'error :message \"oops\"))  ; => \"oops\"\n"
             "  (stringp (handler-case (car 1) (error (e) (condition-report e))))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               Condition* c = arg_condition(in, "condition-report", a, 0);
               if (c->error) return in.make_string(c->error->what());
               return c->message;
             });
  TL_BUILTIN(in, "condition-type-p", 2, 2, "(condition-type-p CONDITION TYPE)",
             "True when CONDITION is of TYPE or a subtype.\n"
             "  (condition-type-p (make-condition 'division-by-zero) 'arithmetic-error)  ; => t\n"
             "  (condition-type-p (make-condition 'warning) 'error)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               Condition* c = arg_condition(in, "condition-type-p", a, 0);
               return in.boolean(in.condition_is_a(c->type, arg_symbol(in, "condition-type-p", a, 1)));
             });
  register_condition_builtins(in);
  TL_BUILTIN(in, "symbol-name", 1, 1, "(symbol-name SYMBOL)",
             "The name of SYMBOL as a string.\n"
             "  (symbol-name 'car)  ; => \"car\"\n"
             "  (symbol-name :lr)  ; => \"lr\"",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_nil()) return in.make_string("nil");
               return in.make_string(arg_symbol(in, "symbol-name", a, 0)->name);
             });
  TL_BUILTIN(in, "intern", 1, 1, "(intern NAME)",
             "The symbol named by the string NAME.\n"
             "  (eq (intern \"car\") 'car)  ; => t\n"
             "  (intern \":lr\")  ; => :lr",
             [](Interp& in, Args a, N) -> Value {
               const std::string& name = arg_string(in, "intern", a, 0)->text;
               if (name == "nil") return nil();
               if (!name.empty() && name[0] == ':') return Value::object(in.keyword(name.substr(1)));
               return in.sym(name);
             });
  TL_BUILTIN(in, "make-keyword", 1, 1, "(make-keyword NAME)",
             "The keyword named by the string or symbol NAME.\n"
             "  (make-keyword \"lr\")  ; => :lr\n"
             "  (make-keyword 'test)  ; => :test",
             [](Interp& in, Args a, N) -> Value {
               if (is_symbol(a[0])) return Value::object(in.keyword(as_symbol(a[0])->name));
               if (a[0].is_nil()) return Value::object(in.keyword("nil"));
               return Value::object(in.keyword(arg_string(in, "make-keyword", a, 0)->text));
             });
  TL_BUILTIN(in, "symbol-value", 1, 1, "(symbol-value SYMBOL)",
             "The global value of SYMBOL.\n"
             "  (symbol-value 'pi)  ; => 3.141592653589793",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_nil()) return nil();
               Symbol* s = arg_symbol(in, "symbol-value", a, 0);
               if (!s->bound) in.error("unbound-variable", "unbound variable " + s->name);
               return s->value;
             });
  TL_BUILTIN(in, "boundp", 1, 1, "(boundp SYMBOL)",
             "True when SYMBOL has a global value.\n"
             "  (boundp 'pi)  ; => t\n"
             "  (boundp (gensym))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_nil()) return in.t();
               return in.boolean(arg_symbol(in, "boundp", a, 0)->bound);
             });
  TL_BUILTIN(in, "fboundp", 1, 1, "(fboundp SYMBOL)",
             "True when SYMBOL names a function or macro.\n"
             "  (fboundp 'car)  ; => t\n"
             "  (fboundp 'when)  ; => t\n"
             "  (fboundp 'pi)  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_nil()) return nil();
               Symbol* s = arg_symbol(in, "fboundp", a, 0);
               return in.boolean(s->bound && (is_function(s->value) || is_kind(s->value, ObjKind::Macro)));
             });
  TL_BUILTIN(in, "set", 2, 2, "(set SYMBOL VALUE)",
             "Sets the global value of SYMBOL.\n"
             "  (progn (set 'doc-ex-set 5) (symbol-value 'doc-ex-set))  ; => 5",
             [](Interp& in, Args a, N) -> Value {
               Symbol* s = arg_symbol(in, "set", a, 0);
               if (s->sym_flags & kSymConstant)
                 in.error("program-error", "set: cannot assign to the constant " + s->name);
               in.set_global(s, a[1]);
               return a[1];
             });
  TL_BUILTIN(in, "makunbound", 1, 1, "(makunbound SYMBOL)",
             "Removes the global value of SYMBOL.\n"
             "  (progn (set 'doc-ex-makunbound 1) (makunbound 'doc-ex-makunbound)\n"
             "    (boundp 'doc-ex-makunbound))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               Symbol* s = arg_symbol(in, "makunbound", a, 0);
               if (s->sym_flags & kSymConstant)
                 in.error("program-error", "makunbound: cannot unbind the constant " + s->name);
               s->bound = false;
               s->value = nil();
               return a[0];
             });
  TL_BUILTIN(in, "%set-documentation", 2, 2, "(%set-documentation SYMBOL DOC)", "Attaches a docstring to a variable.",
             [](Interp& in, Args a, N) -> Value {
               arg_symbol(in, "documentation", a, 0)->doc = a[1];
               return a[1];
             });
  TL_BUILTIN(in, "describe-string", 1, 1, "(describe-string X)",
             "The text `describe` prints for X.\n"
             "  (describe-string 42)  ; => \"42 is an integer.\"\n"
             "  (describe-string '(1 2))  ; => \"(1 2) is a cons.\"",
             [](Interp& in, Args a, N) -> Value {
               if (is_symbol(a[0]) && as_symbol(a[0])->bound && !as_symbol(a[0])->is_keyword()) {
                 return describe_text(in, as_symbol(a[0])->value, as_symbol(a[0]));
               }
               if (is_symbol(a[0]) && in.is_special_form(as_symbol(a[0]))) {
                 const SpecialForm* f = special_form_doc(as_symbol(a[0]));
                 std::string text = as_symbol(a[0])->name + " is a special form.";
                 if (f != nullptr) text += std::string("\n  usage: ") + f->usage + "\n  " + f->doc;
                 return in.make_string(text);
               }
               if (is_symbol(a[0]) && !as_symbol(a[0])->is_keyword()) {
                 return in.make_string(as_symbol(a[0])->name + " is a symbol with no global value.");
               }
               return describe_text(in, a[0], nullptr);
             });
  TL_BUILTIN(in, "apropos-list", 1, 1, "(apropos-list TEXT)",
             "The symbols whose names contain TEXT (a string or symbol, case-insensitive) and that have a "
             "global definition (a function, macro, variable or special form), sorted by name.\n"
             "  (apropos-list \"cumsum\")  ; => (cumsum)",
             [](Interp& in, Args a, N) -> Value {
               std::string text = is_symbol(a[0]) ? as_symbol(a[0])->name : arg_string(in, "apropos-list", a, 0)->text;
               for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
               std::vector<Symbol*> found = in.all_symbols([&](Symbol* s) {
                 if (!(s->bound || in.is_special_form(s)) || s->is_keyword()) return false;
                 std::string name = s->name;
                 for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                 return name.find(text) != std::string::npos;
               });
               std::sort(found.begin(), found.end(), [](Symbol* x, Symbol* y) { return x->name < y->name; });
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (Symbol* s : found) in.push(Value::object(s));
               return in.list_from(base, found.size());
             });
  TL_BUILTIN(in, "%definition", 1, 1, "(%definition NAME)",
             "What the manual and describe know of symbol NAME's global definition: a plist (:kind builtin, "
             "function, macro or variable; :usage; :doc; :file, relative to the source tree; :line), or nil.",
             [](Interp& in, Args a, N) -> Value { return definition_of(in, arg_symbol(in, "%definition", a, 0)); });
  TL_BUILTIN(in, "special-operator-p", 1, 1, "(special-operator-p SYMBOL)",
             "True when SYMBOL names a special form (if, let, block, ...), which no definition may replace.\n"
             "  (special-operator-p 'if)  ; => t\n"
             "  (special-operator-p 'when)  ; => nil",
             [](Interp& in, Args a, N) {
               return in.boolean(in.is_special_form(arg_symbol(in, "special-operator-p", a, 0)));
             });
  TL_BUILTIN(in, "documentation", 1, 2, "(documentation NAME [DOC-TYPE])",
             "The docstring of a function, macro or variable, or nil. As in Common Lisp, DOC-TYPE may be "
             "'function (a function or macro) or 'variable; without it, whichever NAME has.\n"
             "  (progn (defun doc-ex-documentation () \"Says hi.\" 'hi)\n"
             "    (documentation 'doc-ex-documentation))  ; => \"Says hi.\"\n"
             "  (documentation 'car 'variable)  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               Value v = a[0];
               std::string type = n == 2 ? arg_symbol(in, "documentation", a, 1)->name : "";
               if (n == 2 && type != "function" && type != "variable" && type != "t") {
                 in.error("type-error", "documentation: DOC-TYPE must be function or variable, got " + type);
               }
               if (is_symbol(v) && in.is_special_form(as_symbol(v))) {
                 const SpecialForm* f = special_form_doc(as_symbol(v));
                 return type == "variable" || f == nullptr ? nil() : in.make_string(f->doc);
               }
               if (is_symbol(v)) {
                 Symbol* s = as_symbol(v);
                 bool is_fn = s->bound && (is_function(s->value) || is_kind(s->value, ObjKind::Macro));
                 if (type == "variable") return is_fn ? nil() : s->doc;
                 if (type == "function" && !is_fn) return nil();
                 if (!s->bound) return s->doc;
                 v = s->value;
                 if (!is_function(v) && !is_kind(v, ObjKind::Macro)) return s->doc;
               }
               if (is_kind(v, ObjKind::Macro)) v = as_macro(v)->fn;
               if (is_kind(v, ObjKind::Native)) return in.make_string(as_native(v)->doc);
               if (is_kind(v, ObjKind::Closure)) return as_closure(v)->lambda->doc;
               return nil();
             });
}

}  // namespace tl::eval
