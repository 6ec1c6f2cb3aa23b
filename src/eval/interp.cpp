// SPDX-License-Identifier: Apache-2.0
// The interpreter runtime object: symbols, roots and collection, errors and conditions,
// evaluating texts and files.
#include "eval/interp.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/builtins.h"
#include "reader/reader.h"
#include "support/search_path.h"

namespace tl::detail {
RootCell::~RootCell() {
  if (prev != nullptr) {
    prev->next = next;
    next->prev = prev;
  }
}
}  // namespace tl::detail

namespace tl::eval {

namespace {
constexpr std::size_t kValueStackSize = 4u << 20;  // values (64 MiB of address space)
constexpr std::size_t kFrameStackBytes = 256u << 20;  // address space for stack frames
constexpr std::size_t kStackMargin = 256u << 10;   // bytes of C stack kept in reserve
}  // namespace

Interp::Interp(tl::Interpreter* host) : owner(host) {
  std::size_t bytes = kValueStackSize * sizeof(Value);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  stack_base = static_cast<Value*>(mem);
  sp = stack_base;
  stack_end = stack_base + kValueStackSize;
  void* frames_mem = mmap(nullptr, kFrameStackBytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (frames_mem == MAP_FAILED) {
    munmap(stack_base, bytes);
    throw std::bad_alloc();
  }
  fstack_base = static_cast<char*>(frames_mem);
  fsp = fstack_base;
  fstack_end = fstack_base + kFrameStackBytes;
  root_list.prev = &root_list;
  root_list.next = &root_list;
  output = [](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  enter_thread();
  if (const char* stress = std::getenv("TENSORLISP_GC_STRESS"); stress != nullptr) {
    heap.set_stress(static_cast<std::size_t>(std::strtoull(stress, nullptr, 10)));
  }
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  set_memory_limit(pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size)
                                              : std::size_t{1} << 40);
  init_symbols();
}

void Interp::set_memory_limit(std::size_t bytes) {
  memory_limit_ = bytes;
  heap.set_limit(bytes);
}

namespace {
std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return buf;
}
}  // namespace

std::string Interp::out_of_memory_text() const {
  return "out of memory (the heap holds " + format_bytes(static_cast<double>(heap.stats().bytes)) +
         "; the memory limit is " + format_bytes(static_cast<double>(memory_limit_)) + ")";
}

namespace {
// Memory the system could give us now (MemAvailable), or 0 when unknown.
std::size_t available_memory() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[128];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return static_cast<std::size_t>(kib) * 1024;
}
}  // namespace

void Interp::check_allocation(std::string_view fn, std::uint64_t count, std::size_t item_bytes) {
  double bytes = static_cast<double>(count) * static_cast<double>(item_bytes);
  double in_use = static_cast<double>(heap.stats().bytes);
  std::string need = std::string(fn) + ": " + std::to_string(count) + " elements need " + format_bytes(bytes);
  if (in_use + bytes > static_cast<double>(memory_limit_)) {
    heap.lend_reserve();  // the heap is (nearly) full: the error's handler needs room
    error("storage-error", need + ", more than the memory limit allows (" +
                               format_bytes(static_cast<double>(memory_limit_)) + ", of which the heap holds " +
                               format_bytes(in_use) + ")");
  }
  // The system overcommits: a request it cannot back is granted, then the process is killed
  // while filling it. Large requests are checked against what is free now.
  constexpr double kLarge = 256.0 * (1 << 20);
  if (bytes > kLarge) {
    std::size_t available = available_memory();
    if (available != 0 && bytes > static_cast<double>(available)) {
      error("storage-error", need + ", more than the memory available now (" +
                                 format_bytes(static_cast<double>(available)) + ")");
    }
  }
}

Interp::~Interp() {
  // Detach host handles that outlive us: they read as nil from now on.
  for (tl::detail::RootCell* c = root_list.next; c != &root_list;) {
    tl::detail::RootCell* next = c->next;
    c->interp = nullptr;
    c->value = nil();
    c->prev = c->next = nullptr;
    c = next;
  }
  root_list.prev = root_list.next = nullptr;
  munmap(stack_base, kValueStackSize * sizeof(Value));
  munmap(fstack_base, kFrameStackBytes);
}

void Interp::enter_thread() {
  // A thread's stack stays where it is: asked once per thread (for the main thread glibc reads
  // /proc/self/maps, about 100 us, which every call from a host paid before).
  struct Stack {
    void* addr = nullptr;
    std::size_t size = 0;
    bool known = false;
  };
  thread_local Stack stack;
  if (!stack.known) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &stack.addr, &stack.size);
      pthread_attr_destroy(&attr);
    }
    stack.known = true;
  }
  void* addr = stack.addr;
  const std::size_t size = stack.size;
  if (addr != nullptr && size > 2 * kStackMargin) {
    c_stack_limit = static_cast<char*>(addr) + kStackMargin;
  } else {
    // Unknown stack bounds: assume 1 MiB below the current frame.
    auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    c_stack_limit = reinterpret_cast<char*>(here - (1u << 20));
  }
}

void Interp::init_symbols() {
  S.t = intern("t");
  S.t->value = Value::object(S.t);
  S.t->bound = true;
  S.t->sym_flags |= kSymConstant;
  Symbol* nil_sym = intern("nil");
  nil_sym->bound = true;
  nil_sym->sym_flags |= kSymConstant;
  S.quote = intern("quote");
  S.quasiquote = intern("quasiquote");
  S.unquote = intern("unquote");
  S.unquote_splicing = intern("unquote-splicing");
  S.function = intern("function");
  S.lambda = intern("lambda");
  S.named_lambda = intern("named-lambda");
  S.if_ = intern("if");
  S.progn = intern("progn");
  S.let = intern("let");
  S.let_star = intern("let*");
  S.setq = intern("setq");
  S.and_ = intern("and");
  S.or_ = intern("or");
  S.while_ = intern("while");
  S.block = intern("block");
  S.return_from = intern("return-from");
  S.unwind_protect = intern("unwind-protect");
  S.handler_case = intern("handler-case");
  S.multiple_value_call = intern("multiple-value-call");
  S.interrupt = intern("interrupt");
  S.throw_condition = intern("%throw");
  S.macrolet = intern("macrolet");
  S.symbol_macrolet = intern("symbol-macrolet");
  S.setf = intern("setf");
  S.optional = intern("&optional");
  S.rest = intern("&rest");
  S.body = intern("&body");
  S.key = intern("&key");
  S.allow_other_keys = intern("&allow-other-keys");
  S.aux = intern("&aux");
  S.error = intern("error");
  S.condition = intern("condition");
  S.declare = intern("declare");
  S.argv = intern("*argv*");
  S.load_file = intern("*load-file*");
  S.standard_output = intern("*standard-output*");
  // The printer's settings: special variables, nil (off) to start with.
  auto printer_setting = [&](const char* name, const char* doc) {
    Symbol* sym = intern(name);
    sym->bound = true;
    sym->sym_flags |= kSymSpecial;
    sym->doc = make_string(doc);
    return sym;
  };
  S.print_circle =
      printer_setting("*print-circle*",
                      "When true, the printer labels every object it reaches more than once: (let ((x (list 1))) (list "
                      "x x)) "
                      "prints as (#1=(1) #1#). When false (the default) only the objects a cycle comes back to are "
                      "labelled, "
                      "so circular structure still prints, as #1=(1 2 . #1#), and printing never loops forever.\n"
                      "  (let ((*print-circle* t) (x (list 1))) (prin1-to-string (list x x)))  ; => \"(#1=(1) #1#)\"");
  S.print_length = printer_setting("*print-length*",
                                   "How many elements of a list or vector the printer shows before \"...\", or nil "
                                   "(the default) for all "
                                   "of them.\n"
                                   "  (let ((*print-length* 3)) (prin1-to-string '(1 2 3 4 5)))  ; => \"(1 2 3 ...)\"");
  S.print_level = printer_setting("*print-level*",
                                  "How deeply nested lists and vectors the printer shows: one nested deeper prints as "
                                  "#; nil (the default) "
                                  "for any depth.\n"
                                  "  (let ((*print-level* 2)) (prin1-to-string '(1 (2 (3 (4))))))  ; => \"(1 (2 #))\"");
  // The built-in condition types: (type parent); a type with several parents has a row each.
  static const char* const kConditions[][2] = {
      {"serious-condition", "condition"},
      {"error", "serious-condition"},
      {"warning", "condition"},
      {"style-warning", "warning"},
      {"interrupt", "condition"},
      {"simple-condition", "condition"},
      {"simple-error", "simple-condition"},
      {"simple-error", "error"},
      {"simple-warning", "simple-condition"},
      {"simple-warning", "warning"},
      {"type-error", "error"},
      {"simple-type-error", "simple-condition"},
      {"simple-type-error", "type-error"},
      {"program-error", "error"},
      {"arity-error", "program-error"},
      {"cell-error", "error"},
      {"unbound-variable", "cell-error"},
      {"undefined-function", "cell-error"},
      {"arithmetic-error", "error"},
      {"division-by-zero", "arithmetic-error"},
      {"integer-overflow", "arithmetic-error"},
      {"read-error", "error"},
      {"parse-error", "error"},
      {"file-error", "error"},
      {"stream-error", "error"},
      {"end-of-file", "stream-error"},
      {"control-error", "error"},
      {"index-error", "error"},
      {"shape-error", "error"},
      {"dtype-error", "error"},
      {"value-error", "error"},
      {"device-error", "error"},
      {"optimizer-error", "error"},
      {"assertion-error", "error"},
      {"stack-overflow", "error"},
      {"storage-error", "error"},
  };
  for (const auto& c : kConditions) {
    condition_parents[intern(c[0])].push_back(intern(c[1]));
    builtin_conditions.insert(intern(c[0]));
  }
  builtin_conditions.insert(S.condition);
}

Symbol* Interp::intern(std::string_view name) {
  auto it = symbols_.find(name);
  if (it != symbols_.end()) return it->second;
  Symbol* s = heap.make<Symbol>(ObjKind::Symbol);
  s->name = std::string(name);
  symbols_.emplace(s->name, s);
  interned_.push_back(s);
  return s;
}

Symbol* Interp::keyword(std::string_view name) {
  auto it = keywords_.find(name);
  if (it != keywords_.end()) return it->second;
  Symbol* s = heap.make<Symbol>(ObjKind::Symbol);
  s->name = std::string(name);
  s->sym_flags = kSymKeyword | kSymConstant;
  s->value = Value::object(s);
  s->bound = true;
  keywords_.emplace(s->name, s);
  interned_.push_back(s);
  return s;
}

Symbol* Interp::make_uninterned(std::string_view name) {
  Symbol* s = heap.make<Symbol>(ObjKind::Symbol);
  s->name = std::string(name);
  s->interned = false;
  return s;
}

Symbol* Interp::gensym(std::string_view prefix) {
  return make_uninterned(std::string(prefix) + std::to_string(++gensym_counter));
}

Value Interp::make_string(std::string text) {
  heap.account_payload(text.capacity());
  auto* s = heap.make<String>(ObjKind::String);
  s->text = std::move(text);
  return Value::object(s);
}

Value Interp::make_vector(std::vector<Value> items) {
  heap.account_payload(items.capacity() * sizeof(Value));
  auto* v = heap.make<Vector>(ObjKind::Vector);
  v->items = std::move(items);
  return Value::object(v);
}

Value Interp::make_hash(HashTest test) {
  auto* h = heap.make<HashTable>(ObjKind::HashTable);
  h->test = test;
  return Value::object(h);
}

Value Interp::list(std::initializer_list<Value> items) {
  return list_from(items.begin(), items.size());
}

Value Interp::list_from(const Value* items, std::size_t n, Value tail) {
  Value result = tail;
  for (std::size_t i = n; i-- > 0;) result = cons(items[i], result);
  return result;
}

Value Interp::define_native(std::string_view name, int min_args, int max_args, NativeFn fn,
                            const char* usage, const char* doc, const char* file, int line) {
  auto* n = heap.make<Native>(ObjKind::Native);
  n->name = std::string(name);
  n->min_args = min_args;
  n->max_args = max_args;
  n->fn = fn;
  n->usage = usage;
  n->doc = doc;
  n->file = file;
  n->line = line;
  Value v = Value::object(n);
  set_global(intern(name), v);
  return v;
}

std::shared_ptr<tl::detail::RootCell> Interp::make_root(Value v) {
  auto cell = std::make_shared<tl::detail::RootCell>();
  cell->interp = this;
  cell->value = v;
  cell->next = root_list.next;
  cell->prev = &root_list;
  root_list.next->prev = cell.get();
  root_list.next = cell.get();
  return cell;
}

void Interp::collect() {
  heap.collect([this](Marker& m) {
    for (Value* v = stack_base; v < sp; ++v) m.mark(*v);
    for (Symbol* s : interned_) m.mark(s);
    for (const Value& v : permanent) m.mark(v);
    m.mark(pending_value);
    for (const CallFrame& f : frames) m.mark(f.function);
    if (mv_count > 1) {
      for (const Value& v : mv_rest) m.mark(v);
    }
    for (tl::detail::RootCell* c = root_list.next; c != &root_list; c = c->next) m.mark(c->value);
    for (const HandlerFrame& f : handler_frames) m.mark(f.handlers);
    for (const auto& [type, parents] : condition_parents) {
      m.mark(type);
      for (Symbol* parent : parents) m.mark(parent);
    }
    // Frames on the frame stack are roots; their parents may be heap frames.
    for (char* p = fstack_base; p < fsp;) {
      Env* env = reinterpret_cast<Env*>(p);
      m.mark(env->parent);
      for (std::uint32_t i = 0; i < env->size; ++i) m.mark(env->slots[i]);
      p += env->alloc_size;
    }
  }, fstack_base, fstack_end);
}

void Interp::push_spread_arguments(Value* base, Value list, int arg) {
  ListWalk walk(*this, "apply", arg, list);
  for (; !walk.done(); walk.next()) {
    if (static_cast<std::size_t>(sp - base) == kCallArgumentsLimit) {
      std::size_t total = static_cast<std::size_t>(sp - base) + proper_length(*this, "apply", walk.cell(), arg);
      error("program-error", "apply: " + std::to_string(total) + " arguments are more than one call can take (" +
                                 "call-arguments-limit is " + std::to_string(kCallArgumentsLimit) +
                                 "); use reduce to combine a long list");
    }
    push(walk.item());
  }
  walk.require_proper();
}

// --- errors --------------------------------------------------------------------------------

const char* error_phase(std::string_view type) {
  if (type == "read-error") return "read";
  if (type == "shape-error") return "shape";
  if (type == "dtype-error") return "dtype";
  if (type == "device-error") return "device";
  if (type == "optimizer-error") return "optimizer";
  return "eval";
}

tl::Error Interp::make_error(std::string_view type, std::string message, Span span) {
  tl::Error e(ErrorKind::User, error_phase(type), std::string(type), std::move(message));
  if (!span.valid()) span = call_site;
  if (span.valid()) decorate(e, span);
  return e;
}

void Interp::error(std::string_view type, std::string message) {
  throw make_error(type, std::move(message), Span{});
}

void Interp::error_at(Span span, std::string_view type, std::string message) {
  throw make_error(type, std::move(message), span);
}

void Interp::type_error(std::string_view fn, int arg, std::string_view expected, Value got) {
  std::string shown = repr(got);
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  std::string message = std::string(fn) + ": argument " + std::to_string(arg) + " must be " + std::string(expected) +
                        ", got " + shown + " (" + type_name(got) + ")";
  // A condition with the slots type-error-datum and type-error-expected-type read: the value
  // and what was expected, as the builtin describes it ("a list").
  StackMark mark(*this);
  push(got);
  auto* cond = heap.make<Condition>(ObjKind::Condition);
  Value c = Value::object(cond);
  push(c);
  cond->type = sym("type-error");
  cond->message = make_string(std::move(message));
  Value expected_text = make_string(std::string(expected));
  push(expected_text);
  as_condition(c)->slots = list({sym("datum"), got, sym("expected-type"), expected_text});
  throw condition_error(*this, c);
}

void Interp::circular_list_error(std::string_view fn, int arg, Value list) {
  std::string shown = repr(list);
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  error("type-error", std::string(fn) + ": argument " + std::to_string(arg) +
                          " is a circular list: " + shown);
}

void Interp::stack_overflow() {
  error("stack-overflow", "stack overflow (recursion too deep; " + std::to_string(frames.size()) +
                              " active calls)");
}

void Interp::raise_interrupt() {
  interrupt_requested.store(false);
  error("interrupt", "interrupted");
}

void Interp::raise_step_limit() {
  steps_left = 0;  // unwind-protect cleanups get no more room than the body had
  error("step-limit", "evaluation stopped: it ran out of steps");
}

void Interp::for_each_symbol(const std::function<void(Symbol*)>& visit) const {
  for (const auto& [name, s] : symbols_) visit(s);
  for (const auto& [name, s] : keywords_) visit(s);
}

void Interp::decorate(tl::Error& e, Span span) {
  if (e.has_location() || !span.valid()) return;
  if (sources.is_library(span.file)) {
    // Library code is reported at the innermost call from the user's code into it.
    Span user;
    for (std::size_t i = frames.size(); i-- > 0;) {
      const Span& s = frames[i].call_site;
      if (s.valid() && !sources.is_library(s.file)) {
        user = s;
        break;
      }
    }
    // Tail calls replace frames, so the top-level form may be the only user span left.
    if (!user.valid() && current_form_span.valid() && !sources.is_library(current_form_span.file)) {
      user = current_form_span;
    }
    if (!user.valid()) {
      if (e.backtrace().empty()) e.set_backtrace(backtrace());
      return;
    }
    span = user;
  }
  e.set_location(sources.location(span), sources.line_text(span.file, span.line));
  if (e.backtrace().empty()) e.set_backtrace(backtrace());
}

void Interp::relocate_to_macro_call(tl::Error& e, Span span, const std::string& name) {
  if (!span.valid()) return;
  std::string marker = " (while expanding macro ";
  if (e.message().find(marker) != std::string::npos) return;  // an inner expansion did it
  std::vector<std::string> trace = e.backtrace();
  if (e.has_location()) {
    const SourceLocation& loc = e.location();
    trace.insert(trace.begin(), "raised at " + loc.file + ":" + std::to_string(loc.line) + ":" +
                                    std::to_string(loc.column) + " inside the expansion");
  }
  e.set_message(e.message() + marker + name + ")");
  e.set_location(sources.location(span), sources.line_text(span.file, span.line));
  e.set_backtrace(std::move(trace));
}

std::vector<std::string> Interp::backtrace(std::size_t max_frames) const {
  std::vector<std::string> out;
  std::size_t n = frames.size();
  for (std::size_t i = n; i-- > 0;) {
    if (out.size() == max_frames) {
      out.push_back("... " + std::to_string(i + 1) + " more");
      break;
    }
    const CallFrame& f = frames[i];
    // A run of the same call (deep recursion) is shown once, with its count.
    std::size_t same = 1;
    while (same <= i && frames[i - same].function.same(f.function) &&
           frames[i - same].call_site.line == f.call_site.line &&
           frames[i - same].call_site.col == f.call_site.col &&
           frames[i - same].call_site.file == f.call_site.file) {
      ++same;
    }
    std::string name = "lambda";
    if (is_kind(f.function, ObjKind::Closure)) {
      Closure* c = as_closure(f.function);
      if (is_symbol(c->name)) name = as_symbol(c->name)->name;
    } else if (is_kind(f.function, ObjKind::Native)) {
      name = as_native(f.function)->name;
    }
    std::string line = "in " + name;
    if (f.call_site.valid()) {
      SourceLocation loc = sources.location(f.call_site);
      line += " called at " + loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
    }
    if (same > 1) {
      line += " (" + std::to_string(same) + " times)";
      i -= same - 1;
    }
    out.push_back(std::move(line));
  }
  return out;
}

namespace {
// The copy of E a condition keeps for its location and report. It must not keep E's payload:
// that roots the condition, and the condition would keep itself alive.
std::shared_ptr<tl::Error> detached_copy(const tl::Error& e) {
  auto copy = std::make_shared<tl::Error>(e);
  copy->set_payload(nullptr);
  return copy;
}
}  // namespace

Value Interp::condition_of(tl::Error& e) {
  if (e.payload() && e.payload()->condition && e.payload()->condition->interp == this) {
    Value v = e.payload()->condition->value;
    // A condition made by `error` learns where it was raised once the error has travelled.
    if (is_kind(v, ObjKind::Condition) && !as_condition(v)->error) {
      as_condition(v)->error = detached_copy(e);
    }
    return v;
  }
  auto* c = heap.make<Condition>(ObjKind::Condition);
  Value v = Value::object(c);
  StackMark mark(*this);
  push(v);
  c->type = sym(e.type());
  c->message = make_string(e.message());
  c->error = detached_copy(e);
  // A payload that already says how the handlers dealt with the error keeps saying it.
  if (!e.payload()) e.set_payload(std::make_shared<tl::detail::Payload>());
  e.payload()->condition = make_root(v);
  return v;
}

bool Interp::condition_is_a(Value type_sym, Symbol* wanted) {
  if (wanted == S.t || wanted == S.condition) return true;
  if (!is_symbol(type_sym)) return false;
  // Depth-first over the parents; the guard stops a cycle made by redefinitions.
  std::vector<Symbol*> todo{as_symbol(type_sym)};
  for (int guard = 0; !todo.empty() && guard < 256; ++guard) {
    Symbol* s = todo.back();
    todo.pop_back();
    if (s == wanted) return true;
    auto it = condition_parents.find(s);
    if (it != condition_parents.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
  }
  return false;
}

bool Interp::handler_matches(Value type_sym, Value spec) {
  if (is_cons(spec)) {
    if (car(spec).same(Value::object(S.or_))) {
      for (Value v = cdr(spec); is_cons(v); v = cdr(v)) {
        if (handler_matches(type_sym, car(v))) return true;
      }
    }
    return false;
  }
  if (!is_symbol(spec)) return false;
  Symbol* wanted = as_symbol(spec);
  // Ctrl-C must reach the prompt: only a handler naming interrupt itself may stop it. A throw
  // is no condition in Common Lisp: only its catch sees it.
  if (type_sym.same(Value::object(S.interrupt))) return wanted == S.interrupt;
  if (type_sym.same(Value::object(S.throw_condition))) return wanted == S.throw_condition;
  return condition_is_a(type_sym, wanted);
}

// --- evaluating texts and files ------------------------------------------------------------

Value Interp::eval_string(std::string_view text, const std::string& name, std::uint32_t first_line,
                          const std::function<void(Value)>* each) {
  std::uint32_t file = sources.add(name, std::string(text), first_line);
  if (loading_library) sources.set_library(file);
  reader::Reader reader(*this, file, text);
  StackMark mark(*this);
  Value result;
  push(result);
  Value* result_slot = sp - 1;
  Span saved_span = current_form_span;
  struct RestoreSpan {
    Interp& in;
    Span saved;
    ~RestoreSpan() { in.current_form_span = saved; }
  } restore{*this, saved_span};
  for (;;) {
    Value form;
    Span span;
    // Between two forms is a safe point: after a form that ran out of memory (and was caught),
    // the garbage it left goes before the reader allocates the next one.
    maybe_collect();
    reader::ReadStatus status = reader.next(form, span);
    if (status == reader::ReadStatus::End) break;
    if (status == reader::ReadStatus::NeedsMore) {
      Span open = reader.incomplete_span();
      tl::Error e(ErrorKind::User, "read", "read-error", reader.incomplete_message());
      e.set_location(sources.location(open), sources.line_text(open.file, open.line));
      throw e;
    }
    push(form);
    current_form_span = span;
    *result_slot = eval_toplevel(form);
    --sp;
    if (each != nullptr) (*each)(*result_slot);
  }
  return *result_slot;
}

Value Interp::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) error("file-error", "load: cannot open file \"" + path + "\"");
  std::stringstream buffer;
  buffer << in.rdbuf();
  load_stack.push_back(std::filesystem::absolute(path).lexically_normal().string());
  struct Pop {
    Interp& in;
    ~Pop() { in.load_stack.pop_back(); }
  } pop{*this};
  DynamicBinding binding(*this, S.load_file, make_string(path));
  return eval_string(buffer.str(), path);
}

std::string Interp::display_path(std::string_view path) {
  // A file of the source tree (or of an installation) by its path in the tree: the same on
  // every machine. Builtins are named by __FILE__, an absolute path ending in src/...
  const std::string root = std::filesystem::path(TL_SOURCE_LISP_DIR).parent_path().string() + "/";
  const std::string installed = std::string(TL_INSTALL_DATA_DIR) + "/";
  if (path.substr(0, root.size()) == root) return std::string(path.substr(root.size()));
  if (path.substr(0, installed.size()) == installed) return std::string(path.substr(installed.size()));
  if (!path.empty() && path[0] == '/') {
    const std::size_t src = path.rfind("/src/");
    if (src != std::string_view::npos) return std::string(path.substr(src + 1));
  }
  return std::string(path);
}

std::string Interp::find_module(const std::string& name) const {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (!load_stack.empty()) dirs.push_back(fs::path(load_stack.back()).parent_path().string());
  for (const auto& d : search_path) dirs.push_back(d);
  for (const auto& d : tensorlisp_path()) dirs.push_back(d);
  dirs.push_back(TL_SOURCE_LISP_DIR);
  dirs.push_back(TL_SOURCE_STDLIB_DIR);
  dirs.push_back(std::string(TL_INSTALL_DATA_DIR) + "/lisp");
  dirs.push_back(std::string(TL_INSTALL_DATA_DIR) + "/stdlib");
  for (const auto& d : dirs) {
    fs::path p = fs::path(d) / (name + ".lisp");
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) continue;
    // A file being loaded is not the module it asks for: a script named linalg.lisp that
    // says (require 'linalg) means the library's, not itself.
    bool loading = false;
    for (const auto& f : load_stack) loading = loading || fs::equivalent(p, f, ec);
    if (!loading) return p.string();
  }
  return "";
}

}  // namespace tl::eval
