// SPDX-License-Identifier: Apache-2.0
// The interpreter's runtime object: heap, symbols, value stack, call frames, settings and
// modules. Everything that would otherwise be global state hangs off one Interp.
#pragma once

#include <atomic>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "eval/heap.h"
#include "eval/node.h"
#include "support/span.h"
#include "tensorlisp/error.hpp"

namespace tl {
class Interpreter;
class Value;
namespace detail {
// A GC root owned by a host handle (tl::Value) or an error payload.
struct RootCell {
  eval::Interp* interp = nullptr;  // null once the interpreter is gone
  eval::Value value;
  RootCell* prev = nullptr;
  RootCell* next = nullptr;
  ~RootCell();
};
struct Payload {
  std::shared_ptr<RootCell> condition;
  // The handlers were offered the condition (Interp::signal_error): the error unwinds now, and
  // only the handler-case activation numbered `target` (0: none) takes it.
  bool signaled = false;
  std::int64_t target = 0;
};
}  // namespace detail
}  // namespace tl

namespace tl::eval {

// Symbols the analyzer and evaluator compare against, interned once per interpreter.
struct WellKnown {
  Symbol *t, *quote, *quasiquote, *unquote, *unquote_splicing, *function, *lambda, *named_lambda, *if_, *progn, *let,
      *let_star, *setq, *and_, *or_, *while_, *block, *return_from, *unwind_protect, *handler_case, *macrolet,
      *optional, *rest, *body, *key, *allow_other_keys, *aux, *error, *condition, *declare, *argv, *load_file,
      *print_circle, *print_length, *print_level, *multiple_value_call, *interrupt, *throw_condition, *symbol_macrolet,
      *setf, *standard_output;
};

// One active function call, for backtraces.
struct CallFrame {
  Value function;  // the closure or native being run
  Span call_site;
};

class Interp {
 public:
  explicit Interp(tl::Interpreter* owner);
  ~Interp();
  Interp(const Interp&) = delete;
  Interp& operator=(const Interp&) = delete;

  tl::Interpreter* owner;
  Heap heap;
  SourceMap sources;
  WellKnown S{};

  // --- symbols and constructors ---------------------------------------------------------
  Symbol* intern(std::string_view name);
  Symbol* keyword(std::string_view name);  // name without the colon
  Symbol* gensym(std::string_view prefix);
  // A new symbol named NAME that no package holds (#:NAME, make-symbol).
  Symbol* make_uninterned(std::string_view name);
  Value sym(std::string_view name) { return Value::object(intern(name)); }
  // Whether S names a special form (quote, if, let, block, ...), one analyze.cpp compiles.
  bool is_special_form(const Symbol* s) const;
  // PATH as describe and the manual show it: relative to the source tree (or the installed
  // data folder) when it is in one, "src/..." for a builtin's C++ file; otherwise as it is.
  static std::string display_path(std::string_view path);
  // The interned symbols for which KEEP is true, in no particular order.
  template <class F>
  std::vector<Symbol*> all_symbols(F&& keep) const {
    std::vector<Symbol*> out;
    for (const auto& [name, s] : symbols_) {
      if (keep(s)) out.push_back(s);
    }
    return out;
  }
  Value t() const { return Value::object(S.t); }
  Value boolean(bool b) const { return b ? t() : nil(); }
  Value cons(Value a, Value b) { return Value::object(heap.make_cons(a, b)); }
  Value make_string(std::string text);
  Value make_vector(std::vector<Value> items);
  Value make_hash(HashTest test);
  Value list(std::initializer_list<Value> items);
  Value list_from(const Value* items, std::size_t n, Value tail = nil());
  // Registers a builtin. Used through the TL_BUILTIN tables in builtins_*.cpp.
  Value define_native(std::string_view name, int min_args, int max_args, NativeFn fn,
                      const char* usage, const char* doc, const char* file, int line);
  void set_global(Symbol* sym, Value v) {
    sym->value = v;
    sym->bound = true;
  }
  // Binds a special variable for the lifetime of this object (the outer value is rooted on
  // the value stack meanwhile, and restored on any exit).
  class DynamicBinding {
   public:
    DynamicBinding(Interp& in, Symbol* sym, Value v)
        : in_(in), sym_(sym), old_(sym->value), was_bound_(sym->bound), saved_sp_(in.sp) {
      in.push(old_);
      in.set_global(sym, v);
    }
    ~DynamicBinding() {
      sym_->value = old_;
      sym_->bound = was_bound_;
      in_.sp = saved_sp_;
    }
    DynamicBinding(const DynamicBinding&) = delete;
    DynamicBinding& operator=(const DynamicBinding&) = delete;

   private:
    Interp& in_;
    Symbol* sym_;
    Value old_;
    bool was_bound_;
    Value* saved_sp_;
  };

  // --- the value stack: a GC root for arguments and temporaries --------------------------
  Value* sp;
  Value* stack_base;
  Value* stack_end;
  void push(Value v) {
    if (sp == stack_end) stack_overflow();
    *sp++ = v;
  }
  // Restores the value stack and the frame stack when it goes out of scope (also on
  // exceptions).
  struct StackMark {
    explicit StackMark(Interp& in) : interp(in), saved(in.sp), saved_frames(in.fsp) {}
    ~StackMark() {
      interp.sp = saved;
      interp.fsp = saved_frames;
    }
    Interp& interp;
    Value* saved;
    char* saved_frames;
  };

  // --- the frame stack: environments no closure can capture -----------------------------
  char* fsp;
  char* fstack_base;
  char* fstack_end;
  Env* new_env(Env* parent, std::uint32_t size, bool on_stack) {
    if (!on_stack) return heap.make_env(parent, size);
    std::size_t bytes = (Heap::env_bytes(size) + 15) & ~std::size_t{15};
    if (fsp + bytes > fstack_end) stack_overflow();
    Env* env = reinterpret_cast<Env*>(fsp);
    fsp += bytes;
    env->kind = ObjKind::Env;
    env->marked = 0;
    env->flags = 0;
    env->alloc_size = static_cast<std::uint32_t>(bytes);
    env->next = nullptr;
    env->parent = parent;
    env->size = size;
    for (std::uint32_t i = 0; i < size; ++i) env->slots[i] = Value();
    return env;
  }
  bool is_stack_env(const Env* env) const {
    auto* p = reinterpret_cast<const char*>(env);
    return p >= fstack_base && p < fstack_end;
  }

  // --- evaluation -----------------------------------------------------------------------
  // Analyzes and runs one top-level form (top-level progns are processed form by form).
  Value eval_toplevel(Value form);
  // Reads and evaluates all forms of `text`, registered as source `name`.
  // EACH (when given) is called with every form's value, in order (a REPL prints them all).
  Value eval_string(std::string_view text, const std::string& name, std::uint32_t first_line = 1,
                    const std::function<void(Value)>* each = nullptr);
  bool loading_library = false;  // texts evaluated now are library code (SourceMap::set_library)
  Value load_file(const std::string& path);
  // Calls any function value with arguments that are already rooted (e.g. on the stack).
  Value apply(Value fn, Value* args, std::uint32_t nargs);
  Value call(Value fn, std::initializer_list<Value> args);
  // The most arguments one call can take (call-arguments-limit): apply checks it before
  // spreading a list on the value stack.
  static constexpr std::size_t kCallArgumentsLimit = std::size_t{1} << 20;
  // Pushes the elements of `list`, the last argument (number `arg`) of apply, after `base`;
  // a type error for a dotted or circular list, a program error past kCallArgumentsLimit.
  void push_spread_arguments(Value* base, Value list, int arg);
  // Runs compiled code. `env` must be reachable from the roots.
  Value run(Node* node, Env* env);

  // --- multiple values ------------------------------------------------------------------
  // A form's primary value is what run returns. When the last form evaluated produced other
  // than one value ((values), floor, gethash), mv_count says how many and mv_rest holds the
  // values after the first. Every evaluation that uses a value singly (an argument, a test, a
  // progn's inner form, a callback from a builtin) sets mv_count back to 1 once done, so the
  // one-value path costs one store; multiple-value-call sets it to 1 before its forms and
  // reads it after each.
  std::uint32_t mv_count = 1;
  std::vector<Value> mv_rest;  // traced by the collector while mv_count > 1
  // Returns VALUES[0] (nil when N is 0) and records all N values.
  Value set_values(const Value* values, std::uint32_t n) {
    mv_count = n;
    if (n > 1) mv_rest.assign(values + 1, values + n);
    return n > 0 ? values[0] : Value();
  }
  Value two_values(Value primary, Value second) {
    mv_count = 2;
    mv_rest.assign(1, second);
    return primary;
  }
  // Like apply, but FN's values stay in mv_count/mv_rest for the caller to read.
  Value apply_values(Value fn, Value* args, std::uint32_t nargs);
  Value run_multiple_value_call(MultipleValueCallNode* n, Env* env);
  // The less frequent forms, out of run's way (control.cpp).
  Value run_dynamic_binding(DynBindNode* n, Env* env);
  Value run_block(BlockNode* n, Env* env);
  // Throws ReturnFromSignal, or for a local return sets the pending return and returns.
  Value run_return_from(ReturnFromNode* n, Env* env);
  // A local return on its way to its block (ReturnFromNode::local): the nodes it passes
  // through (progn, while, if, let) return at once while pending_block is set, and the block
  // takes pending_value. No evaluation happens in between; the value is traced anyway.
  const BlockNode* pending_block = nullptr;
  Value pending_value;
  Value run_unwind_protect(UnwindProtectNode* n, Env* env);
  struct HandlerOutcome {
    Value value;                   // the body's value, or the condition for `clause`
    const HandlerClause* clause;   // the clause to run next, or null when the body finished
  };
  HandlerOutcome run_handler_case(HandlerCaseNode* n, Env* env);
  std::int64_t handler_case_ids = 0;  // last number given to a handler-case activation
  Value make_closure(const LambdaNode* n, Env* env);
  [[noreturn, gnu::cold]] void unbound_variable(Span span, Symbol* s);
  [[noreturn, gnu::cold]] void undefined_function(Span span, Symbol* s);
  [[noreturn, gnu::cold]] void not_a_function(Span span, Value v);
  // The function to call when call N's head evaluated to FN, not a function (DIRECT: FN is the
  // head's own value, not one funcall or apply passed on): the global function a symbol names,
  // or the global function of a local variable's name; otherwise a type error.
  [[gnu::cold]] Value call_head_fallback(const CallNode* n, Value fn, bool direct);
  [[noreturn, gnu::cold]] void stack_overflow_at(Span span);
  Value macroexpand_1(Value form, bool* expanded);
  Value macroexpand(Value form);

  // --- memory ---------------------------------------------------------------------------
  // The most bytes the program may ask for at once (default: the machine's physical memory).
  // Requests known in advance (make-list, make-string, make-vector, range) are checked against
  // it before anything is allocated, and the heap refuses to grow past it.
  std::size_t memory_limit() const { return memory_limit_; }
  void set_memory_limit(std::size_t bytes);
  // A storage-error naming `fn` when `count` items of `item_bytes` each exceed the limit.
  void check_allocation(std::string_view fn, std::uint64_t count, std::size_t item_bytes);

  // --- GC -------------------------------------------------------------------------------
  void maybe_collect() {
    if (heap.wants_collection()) collect();
  }
  void collect();
  tl::detail::RootCell root_list;  // sentinel of the host-root ring
  std::shared_ptr<tl::detail::RootCell> make_root(Value v);
  // Conversions between host handles (tl::Value) and values of this interpreter.
  Value import_host(const tl::Value& v);
  tl::Value export_host(Value v);

  // --- errors ---------------------------------------------------------------------------
  // Throws a user error of condition `type` ("type-error", ...). The innermost evaluating
  // node adds the location and backtrace as the error travels out.
  [[noreturn]] void error(std::string_view type, std::string message);
  [[noreturn]] void error_at(Span span, std::string_view type, std::string message);
  // "car: argument 1 must be a list, got 5 (an integer)"
  [[noreturn]] void type_error(std::string_view fn, int arg, std::string_view expected, Value got);
  // "length: argument 1 is a circular list: #1=(1 2 . #1#)"
  [[noreturn]] void circular_list_error(std::string_view fn, int arg, Value list);
  [[noreturn]] void stack_overflow();
  // Adds location (if missing) and the current backtrace to an error passing through `span`.
  void decorate(tl::Error& e, Span span);
  // An error raised while expanding macro `name` at `span` is reported at that call, in the
  // user's code; where inside the macro it happened goes first in the backtrace.
  void relocate_to_macro_call(tl::Error& e, Span span, const std::string& name);
  std::vector<std::string> backtrace(std::size_t max_frames = 12) const;
  tl::Error make_error(std::string_view type, std::string message, Span span);
  // The storage-error for a host allocation that failed (std::bad_alloc, or std::length_error
  // with its text as `detail`), located at the current call.
  tl::Error out_of_memory_error(const char* detail);
  // "out of memory (the heap holds 63.9 MiB; the memory limit is 64.0 MiB)"
  std::string out_of_memory_text() const;
  // The condition object for an error (created on first use, kept with its payload).
  Value condition_of(tl::Error& e);
  bool condition_is_a(Value type_sym, Symbol* wanted);
  // Whether a handler for SPEC (a type symbol, or (or TYPE...)) takes a condition of TYPE_SYM.
  // An interrupt (Ctrl-C) and a throw (%throw) are taken only by a handler that names their
  // type itself: handlers for condition or t do not see them.
  bool handler_matches(Value type_sym, Value spec);
  std::unordered_map<Symbol*, std::vector<Symbol*>> condition_parents;  // type -> parent types

  // --- the condition system (conditions.cpp) ---------------------------------------------
  // The active handlers: one frame per running handler-bind or handler-case, each linked to
  // the frame outside it. While a handler-bind function runs, only the frames outside its
  // own are active (handler_top points past the inner ones, which stay in the vector until
  // their forms unwind).
  struct HandlerFrame {
    std::int64_t id;     // a handler-case activation's number; 0 for a handler-bind cluster
    Value handlers;      // handler-case: its types; handler-bind: a list of (TYPE . FUNCTION)
    std::int32_t outer;  // the frame outside this one, or -1
  };
  std::vector<HandlerFrame> handler_frames;  // traced by the collector
  std::int32_t handler_top = -1;             // the innermost active frame, or -1
  // Makes a frame active for the lifetime of this object.
  class HandlerScope {
   public:
    HandlerScope(Interp& in, std::int64_t id, Value handlers)
        : in_(in), size_(in.handler_frames.size()), top_(in.handler_top) {
      in.handler_frames.push_back(HandlerFrame{id, handlers, in.handler_top});
      in.handler_top = static_cast<std::int32_t>(size_);
    }
    ~HandlerScope() {
      in_.handler_frames.resize(size_);
      in_.handler_top = top_;
    }
    HandlerScope(const HandlerScope&) = delete;
    HandlerScope& operator=(const HandlerScope&) = delete;

   private:
    Interp& in_;
    std::size_t size_;
    std::int32_t top_;
  };
  // Offers the condition COND to the active handlers, innermost first, starting with frame
  // FROM: each handler-bind function that matches is called with only the frames outside its
  // own active; when a handler-case matches, its number is returned (the caller unwinds to
  // it) and the walk stops. 0 when every handler declined.
  std::int64_t run_handlers(Value cond, std::int32_t from);
  // Signals the error E where it is caught first (a builtin's call, an evaluator error):
  // runs the handlers once and records which handler-case, if any, takes it. Errors that are
  // not safe to handle before unwinding (stack-overflow, storage-error) and those no handler
  // may take (internal errors, exit, step-limit) are left unsignaled or marked untakeable.
  void signal_error(tl::Error& e);
  // Whether signal_error leaves E for the first handler frame to signal after unwinding.
  bool is_deferred_signal(const tl::Error& e) const;
  // signal_error, then throws E.
  [[noreturn]] void throw_signaled(tl::Error e);
  std::unordered_set<Symbol*> builtin_conditions;

  // State owned by later stages (the tensor runtime): kept alive as long as the interpreter,
  // and by any heap object that holds a reference to it.
  struct Extension {
    virtual ~Extension() = default;
  };
  std::vector<std::shared_ptr<Extension>> extensions;

  std::vector<CallFrame> frames;
  // The call the evaluator is making into a builtin (or binding arguments for): errors raised
  // without a location of their own are located here.
  Span call_site;
  std::int64_t block_tags = 0;                    // last tag given to a block activation
  std::vector<std::int64_t> active_block_tags;    // tags of the running tagged blocks
  char* c_stack_limit = nullptr;   // below this address the C stack is nearly exhausted
  std::atomic<bool> interrupt_requested{false};
  // Work left before evaluation stops with a step-limit error, which handler-case does not
  // catch. A closure call or loop iteration is one step; builtins that walk long lists count
  // the elements they walked. Unlimited unless a host (the evaluator's fuzz target) sets it.
  std::int64_t steps_left = INT64_MAX;
  // Polled wherever evaluation could run long: raises the interrupt (Ctrl-C) or the step limit.
  void check_interrupt(std::int64_t work = 1) {
    if (interrupt_requested.load(std::memory_order_relaxed)) raise_interrupt();
    steps_left -= work;
    if (steps_left < 0) raise_step_limit();
  }
  [[noreturn]] void raise_interrupt();
  [[noreturn, gnu::cold]] void raise_step_limit();

  // --- printing and output --------------------------------------------------------------
  // Printing polls for Ctrl-C and labels cyclic structure (see *print-circle*).
  std::string repr(Value v, bool readably = true);
  void print_to(std::string& out, Value v, bool readably);
  bool print_circle() const;  // the value of *print-circle*
  std::string type_name(Value v) const;
  std::function<void(std::string_view)> output;
  void write(std::string_view text) {
    if (text.empty()) return;
    if (output_text != nullptr) output_text->append(text);
    else output(text);
    at_line_start = text.back() == '\n';
  }
  // When set, the text of the string output stream the output goes to, which write() appends
  // to instead of calling `output` (a princ into a stream swaps no functions).
  std::string* output_text = nullptr;
  bool at_line_start = true;  // the program's output ends with a newline (for ~& and fresh-line)

  // --- modules --------------------------------------------------------------------------
  std::vector<std::string> search_path;       // from the host, then TENSORLISP_PATH
  std::unordered_set<std::string> loaded_modules;
  std::vector<std::string> load_stack;        // files being loaded, innermost last
  std::string find_module(const std::string& name) const;
  std::size_t gensym_counter = 0;
  std::mt19937_64 rng{42};
  std::uint32_t toplevel_depth = 0;
  Span current_form_span;  // span of the top-level form being compiled
  // Objects the core refers to directly (quasiquote's helpers): always roots.
  std::vector<Value> permanent;
  Value qq_list, qq_append, qq_cons, qq_vector;
  Obj* funcall_native = nullptr;  // recognized by the evaluator for tail calls
  Obj* apply_native = nullptr;
  // Calls `visit` on every interned symbol and keyword.
  void for_each_symbol(const std::function<void(Symbol*)>& visit) const;
  bool stack_low() const {
    char probe;
    return &probe < c_stack_limit;
  }
  // Computes c_stack_limit for the calling thread.
  void enter_thread();

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Symbol*, NameHash, std::equal_to<>> symbols_;
  std::unordered_map<std::string, Symbol*, NameHash, std::equal_to<>> keywords_;
  // Both tables' symbols in one array, which a collection marks: walking the hash tables'
  // nodes took a sixth of a collection's time.
  std::vector<Symbol*> interned_;
  std::size_t memory_limit_ = 0;
  void init_symbols();
};

// Printing of floats (shortest form that reads back, always with a '.' or exponent) and of
// strings (with quotes and escapes when `readably`), shared with the embedding API.
void print_float(std::string& out, double d);
void print_string(std::string& out, const std::string& s, bool readably);
// A character: #\a, #\Space, #\Newline when READABLY, else the character itself (UTF-8).
void print_char(std::string& out, std::uint32_t code, bool readably);
// The name of a character that has one (Space, Newline, Tab, ...), or null.
const char* char_name(std::uint32_t code);
// The code of the character named NAME (any case), or -1.
std::int64_t name_char(std::string_view name);

// The phase an error of condition `type` is reported in: read, shape, device or eval.
const char* error_phase(std::string_view type);

// True when following cdrs from `list` comes back to a cell already passed (Brent's method:
// linear time, no memory).
bool is_circular(Value list);

// Equality predicates.
bool eql(Value a, Value b);
bool equal(Value a, Value b);
std::size_t hash_value(Value v, HashTest test);

// Compiles one form into a CodeUnit whose first node is the entry point.
CodeUnit* compile(Interp& interp, Value form);

// Builtin registration, one function per builtins_*.cpp file.
void register_core_builtins(Interp& interp);
void register_number_builtins(Interp& interp);
void register_list_builtins(Interp& interp);
void register_sequence_builtins(Interp& interp);
void register_string_builtins(Interp& interp);
void register_hash_builtins(Interp& interp);
void register_struct_builtins(Interp& interp);
void register_char_builtins(Interp& interp);
void register_system_builtins(Interp& interp);

}  // namespace tl::eval

// Defines a builtin: TL_BUILTIN(interp, "name", min, max, "usage", "doc", FUNCTION); max -1 means
// any number. The C++ file and line are recorded for (describe 'name).
#define TL_BUILTIN(interp, lname, min, max, usage, doc, ...) \
  (interp).define_native(lname, min, max, __VA_ARGS__, usage, doc, __FILE__, __LINE__)
