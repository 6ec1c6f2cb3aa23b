// SPDX-License-Identifier: Apache-2.0
// The embedding API: tl::Interpreter and tl::Value over the internal interpreter.
#include <cstdlib>
#include <fstream>

#include "api/devices.h"
#include "bindings/files.h"
#include "bindings/tensor_value.h"
#include "eval/builtins.h"
#include "eval/interp.h"
#include "reader/reader.h"
#include "rewrite/rewrite.h"
#include "runtime/reference.h"
#include "tensorlisp/tensorlisp.hpp"
#include "text/json.h"
#include "text/tokenizer.h"

namespace tl::eval {
struct PreludeFile {
  const char* name;
  const char* text;
};
extern const PreludeFile kPreludeFiles[];
extern const std::size_t kPreludeFileCount;
extern const PreludeFile kStdlibFiles[];
extern const std::size_t kStdlibFileCount;
extern const PreludeFile kOptimizersFiles[];
extern const std::size_t kOptimizersFileCount;
extern const PreludeFile kBackendsFiles[];
extern const std::size_t kBackendsFileCount;
}  // namespace tl::eval

namespace tl {

using eval::Interp;

struct Value::Detached {
  enum class Kind { Int, Float, Bool, String, Symbol, Keyword, List } kind;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Value> items;
};

namespace {

[[noreturn]] void api_type_error(const char* what, const std::string& got) {
  throw Error(ErrorKind::User, "eval", "type-error", std::string("expected ") + what + ", got " + got);
}

}  // namespace

// --- Value -------------------------------------------------------------------------------

Value::Value() = default;
Value::Value(std::int64_t i) : detached_(std::make_shared<Detached>()) {
  detached_->kind = Detached::Kind::Int;
  detached_->i = i;
}
Value::Value(int i) : Value(static_cast<std::int64_t>(i)) {}
Value::Value(double d) : detached_(std::make_shared<Detached>()) {
  detached_->kind = Detached::Kind::Float;
  detached_->f = d;
}
Value::Value(bool b) {
  if (b) {
    detached_ = std::make_shared<Detached>();
    detached_->kind = Detached::Kind::Bool;
  }
}
Value::Value(std::string s) : detached_(std::make_shared<Detached>()) {
  detached_->kind = Detached::Kind::String;
  detached_->s = std::move(s);
}
Value::Value(const char* s) : Value(std::string(s)) {}
Value Value::list(std::vector<Value> items) {
  if (items.empty()) return Value();
  Value v;
  v.detached_ = std::make_shared<Detached>();
  v.detached_->kind = Detached::Kind::List;
  v.detached_->items = std::move(items);
  return v;
}
Value Value::symbol(std::string name) {
  if (name == "nil") return Value();
  Value v;
  v.detached_ = std::make_shared<Detached>();
  v.detached_->kind = Detached::Kind::Symbol;
  v.detached_->s = std::move(name);
  return v;
}
Value Value::keyword(std::string name) {
  Value v = symbol(std::move(name));
  v.detached_->kind = Detached::Kind::Keyword;
  return v;
}
Value::~Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;

namespace {
const eval::Value* internal(const std::shared_ptr<detail::RootCell>& cell) {
  return cell && cell->interp != nullptr ? &cell->value : nullptr;
}
}  // namespace

bool Value::is_nil() const {
  if (detached_) return false;
  const eval::Value* v = internal(cell_);
  return v == nullptr || v->is_nil();
}
bool Value::is_int() const {
  if (detached_) return detached_->kind == Detached::Kind::Int;
  const eval::Value* v = internal(cell_);
  return v != nullptr && v->is_int();
}
bool Value::is_float() const {
  if (detached_) return detached_->kind == Detached::Kind::Float;
  const eval::Value* v = internal(cell_);
  return v != nullptr && v->is_float();
}
bool Value::is_number() const { return is_int() || is_float(); }
bool Value::is_string() const {
  if (detached_) return detached_->kind == Detached::Kind::String;
  const eval::Value* v = internal(cell_);
  return v != nullptr && eval::is_string(*v);
}
bool Value::is_symbol() const {
  if (detached_) return detached_->kind == Detached::Kind::Symbol || detached_->kind == Detached::Kind::Keyword;
  const eval::Value* v = internal(cell_);
  return v != nullptr && eval::is_symbol(*v);
}
bool Value::is_list() const {
  if (detached_) return detached_->kind == Detached::Kind::List;
  const eval::Value* v = internal(cell_);
  return v == nullptr || eval::is_list(*v);
}
bool Value::is_function() const {
  const eval::Value* v = internal(cell_);
  return v != nullptr && eval::is_function(*v);
}

std::int64_t Value::as_int() const {
  if (detached_ && detached_->kind == Detached::Kind::Int) return detached_->i;
  const eval::Value* v = internal(cell_);
  if (v != nullptr && v->is_int()) return v->i;
  api_type_error("an integer", repr());
}
double Value::as_double() const {
  if (detached_ && detached_->kind == Detached::Kind::Float) return detached_->f;
  if (detached_ && detached_->kind == Detached::Kind::Int) return static_cast<double>(detached_->i);
  const eval::Value* v = internal(cell_);
  if (v != nullptr && v->is_float()) return v->f;
  if (v != nullptr && v->is_int()) return static_cast<double>(v->i);
  api_type_error("a number", repr());
}
std::string Value::as_string() const {
  if (detached_ && detached_->kind != Detached::Kind::List && detached_->kind != Detached::Kind::Int &&
      detached_->kind != Detached::Kind::Float && detached_->kind != Detached::Kind::Bool) {
    return detached_->s;
  }
  const eval::Value* v = internal(cell_);
  if (v != nullptr && eval::is_string(*v)) return eval::as_string(*v)->text;
  if (v != nullptr && eval::is_symbol(*v)) return eval::as_symbol(*v)->name;
  api_type_error("a string", repr());
}
std::vector<Value> Value::as_list() const {
  if (detached_ && detached_->kind == Detached::Kind::List) return detached_->items;
  if (is_nil()) return {};
  const eval::Value* v = internal(cell_);
  if (v == nullptr || !eval::is_cons(*v)) api_type_error("a list", repr());
  std::vector<Value> out;
  Interp* in = cell_->interp;
  eval::Value cur = *v;
  for (; eval::is_cons(cur); cur = eval::cdr(cur)) out.push_back(in->export_host(eval::car(cur)));
  if (!cur.is_nil()) api_type_error("a proper list", repr());
  return out;
}

std::string Value::repr() const {
  if (detached_) {
    switch (detached_->kind) {
      case Detached::Kind::Int: return std::to_string(detached_->i);
      case Detached::Kind::Float: {
        std::string out;
        eval::print_float(out, detached_->f);
        return out;
      }
      case Detached::Kind::Bool: return "t";
      case Detached::Kind::String: {
        std::string out;
        eval::print_string(out, detached_->s, true);
        return out;
      }
      case Detached::Kind::Symbol: return detached_->s;
      case Detached::Kind::Keyword: return ":" + detached_->s;
      case Detached::Kind::List: {
        std::string out = "(";
        for (std::size_t i = 0; i < detached_->items.size(); ++i) {
          if (i) out += ' ';
          out += detached_->items[i].repr();
        }
        return out + ")";
      }
    }
  }
  const eval::Value* v = internal(cell_);
  if (v == nullptr) return "nil";
  return cell_->interp->repr(*v);
}

std::string Value::type_name() const {
  if (detached_) {
    switch (detached_->kind) {
      case Detached::Kind::Int: return "integer";
      case Detached::Kind::Float: return "float";
      case Detached::Kind::Bool: return "symbol";
      case Detached::Kind::String: return "string";
      case Detached::Kind::Symbol: return "symbol";
      case Detached::Kind::Keyword: return "keyword";
      case Detached::Kind::List: return "cons";
    }
  }
  const eval::Value* v = internal(cell_);
  if (v == nullptr) return "null";
  return cell_->interp->type_name(*v);
}

// --- Interpreter ----------------------------------------------------------------------------

namespace {

void boot(Interp& in, const Interpreter::Options& options) {
  eval::register_core_builtins(in);
  eval::register_number_builtins(in);
  eval::register_list_builtins(in);
  eval::register_sequence_builtins(in);
  eval::register_string_builtins(in);
  eval::register_hash_builtins(in);
  eval::register_struct_builtins(in);
  eval::register_char_builtins(in);
  eval::register_system_builtins(in);
  tensor::install_tensor_runtime(in, [](const tensor::Node* n, const tensor::Bindings& extra) {
    return runtime::realize_reference(n, extra);
  });
  tensor::register_prim_builtins(in);
  tensor::register_tensor_builtins(in);
  tensor::register_grad_builtins(in);
  tensor::register_model_builtins(in);
  tensor::register_file_builtins(in);
  text::register_json_builtins(in);
  text::register_tokenizer_builtins(in);
  api::register_device_builtins(in);
  api::register_capture_builtins(in);
  api::register_aot_builtins(in);
  rewrite::register_rewrite_builtins(in);
  in.search_path = options.search_path;
  std::vector<eval::Value> args;
  eval::Interp::StackMark mark(in);
  eval::Value* base = in.sp;
  for (const auto& a : options.argv) in.push(in.make_string(a));
  in.set_global(in.S.argv, in.list_from(base, options.argv.size()));
  in.S.argv->sym_flags |= eval::kSymSpecial;
  if (options.load_prelude) {
    in.loading_library = true;
    for (std::size_t i = 0; i < eval::kPreludeFileCount; ++i) {
      in.eval_string(eval::kPreludeFiles[i].text, eval::kPreludeFiles[i].name);
    }
    for (std::size_t i = 0; i < eval::kStdlibFileCount; ++i) {
      in.eval_string(eval::kStdlibFiles[i].text, eval::kStdlibFiles[i].name);
    }
    for (std::size_t i = 0; i < eval::kOptimizersFileCount; ++i) {
      in.eval_string(eval::kOptimizersFiles[i].text, eval::kOptimizersFiles[i].name);
    }
    for (std::size_t i = 0; i < eval::kBackendsFileCount; ++i) {
      in.eval_string(eval::kBackendsFiles[i].text, eval::kBackendsFiles[i].name);
    }
    in.loading_library = false;
    // The default device: TENSORLISP_DEVICE, else the CPU JIT.
    const char* dev = std::getenv("TENSORLISP_DEVICE");
    eval::Interp::StackMark dev_mark(in);
    eval::Value* args = in.sp;
    in.push(in.make_string(dev != nullptr && *dev != 0 ? dev : "cpu"));
    in.apply(in.intern("use-backend")->value, args, 1);
  }
}

eval::Value to_internal(Interp& in, const Value& v) { return in.import_host(v); }
Value wrap(Interp& in, eval::Value v) { return in.export_host(v); }

}  // namespace

Interpreter::Interpreter() : Interpreter(Options{}) {}

Interpreter::Interpreter(Options options) : impl_(std::make_unique<Interp>(this)) {
  boot(*impl_, options);
}

Interpreter::~Interpreter() = default;

const char* Interpreter::version() { return TL_VERSION; }

namespace {

// Marks the interpreter as entered from this thread (for the C stack limit) for a call.
struct Entry {
  explicit Entry(Interp& in) : in(in) {
    if (in.toplevel_depth++ == 0) {
      in.enter_thread();
      in.interrupt_requested.store(false);  // an interrupt asked for while idle is stale
    }
    in.call_site = Span{};
  }
  ~Entry() { --in.toplevel_depth; }
  Interp& in;
};

// Runs `body` so that a host allocation failure no handler-case took reaches the host as a
// storage-error, never as std::bad_alloc (issue 19: the REPL aborted on one).
template <class F>
auto guard_memory(Interp& in, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    throw in.out_of_memory_error(nullptr);
  } catch (const std::length_error& e) {
    throw in.out_of_memory_error(e.what());
  }
}

}  // namespace

Value Interpreter::eval(std::string_view source, std::string_view file_name, int first_line) {
  Entry entry(*impl_);
  return guard_memory(*impl_, [&] {
    return wrap(*impl_, impl_->eval_string(source, std::string(file_name),
                                           static_cast<std::uint32_t>(first_line < 1 ? 1 : first_line)));
  });
}

Value Interpreter::eval_each(std::string_view source, std::string_view file_name, int first_line,
                             const std::function<void(const Value&)>& each) {
  Entry entry(*impl_);
  const std::function<void(eval::Value)> hand_over = [&](eval::Value v) { each(wrap(*impl_, v)); };
  return guard_memory(*impl_, [&] {
    return wrap(*impl_, impl_->eval_string(source, std::string(file_name),
                                           static_cast<std::uint32_t>(first_line < 1 ? 1 : first_line), &hand_over));
  });
}

Value Interpreter::load(const std::string& path) {
  Entry entry(*impl_);
  return guard_memory(*impl_, [&] { return wrap(*impl_, impl_->load_file(path)); });
}

Value Interpreter::call(std::string_view name, std::vector<Value> args) {
  Entry entry(*impl_);
  eval::Symbol* s = impl_->intern(name);
  if (!s->bound) {
    throw Error(ErrorKind::User, "eval", "undefined-function", "undefined function " + std::string(name));
  }
  Value fn = wrap(*impl_, s->value);
  return apply(fn, std::move(args));
}

Value Interpreter::apply(const Value& function, std::vector<Value> args) {
  Entry entry(*impl_);
  Interp& in = *impl_;
  Interp::StackMark mark(in);
  eval::Value* base = in.sp;
  in.push(to_internal(in, function));
  for (const Value& a : args) in.push(to_internal(in, a));
  return guard_memory(in, [&] {
    return wrap(in, in.apply(base[0], base + 1, static_cast<std::uint32_t>(args.size())));
  });
}

Value Interpreter::global(std::string_view name) {
  eval::Symbol* s = impl_->intern(name);
  if (!s->bound) throw Error(ErrorKind::User, "eval", "unbound-variable", "unbound variable " + std::string(name));
  return wrap(*impl_, s->value);
}

void Interpreter::set_global(std::string_view name, const Value& value) {
  eval::Symbol* s = impl_->intern(name);
  if (s->sym_flags & eval::kSymConstant) {
    throw Error(ErrorKind::User, "eval", "program-error", "cannot assign to the constant " + std::string(name));
  }
  impl_->set_global(s, to_internal(*impl_, value));
}

void Interpreter::define(std::string_view name, NativeFunction fn, std::string_view doc) {
  Interp& in = *impl_;
  if (in.intern(name)->sym_flags & eval::kSymConstant) {
    throw Error(ErrorKind::User, "eval", "program-error", "define: cannot redefine the constant " + std::string(name));
  }
  auto* n = in.heap.make<eval::Native>(eval::ObjKind::Native);
  n->name = std::string(name);
  n->min_args = 0;
  n->max_args = -1;
  auto owned_doc = std::make_shared<std::string>(doc);
  n->doc = owned_doc->c_str();
  n->usage = "";
  n->file = "";
  Interpreter* self = this;
  n->host_fn = [self, fn = std::move(fn), owned_doc, name = std::string(name)](
                   Interp& in, eval::Value* args, std::uint32_t nargs) -> eval::Value {
    std::vector<Value> host_args;
    host_args.reserve(nargs);
    for (std::uint32_t i = 0; i < nargs; ++i) host_args.push_back(wrap(in, args[i]));
    Span site = in.call_site;
    try {
      Value result = fn(*self, host_args);
      return to_internal(in, result);
    } catch (Error& e) {
      in.decorate(e, site);
      throw;
    } catch (const std::bad_alloc&) {
      in.error_at(site, "storage-error", name + ": out of memory");
    } catch (const std::exception& ex) {
      in.error_at(site, "error", name + ": " + ex.what());
    }
  };
  in.set_global(in.intern(name), eval::Value::object(n));
}

Value Interpreter::intern(const Value& v) { return wrap(*impl_, to_internal(*impl_, v)); }

void Interpreter::set_output(OutputSink sink) {
  if (!sink) sink = [](std::string_view) {};  // no sink: output is discarded
  impl_->output = std::move(sink);
}

void Interpreter::interrupt() { impl_->interrupt_requested.store(true); }

Interpreter::ReadStatus Interpreter::check_complete(std::string_view text, int first_line) {
  Interp& in = *impl_;
  std::uint32_t file =
      in.sources.add("<repl>", std::string(text), static_cast<std::uint32_t>(first_line < 1 ? 1 : first_line));
  in.maybe_collect();  // a safe point: the last form's garbage goes before the reader allocates
  reader::Reader r(in, file, text);
  Interp::StackMark mark(in);
  for (;;) {
    eval::Value form;
    Span span;
    reader::ReadStatus st = r.next(form, span);
    if (st == reader::ReadStatus::NeedsMore) {
      in.sources.forget_text(file);
      return ReadStatus::NeedsMore;
    }
    if (st == reader::ReadStatus::End) break;
  }
  in.sources.forget_text(file);
  return ReadStatus::Complete;
}

eval::Value eval::Interp::import_host(const tl::Value& v) {
  if (v.cell_) {
    if (v.cell_->interp == nullptr) return eval::nil();
    if (v.cell_->interp != this) {
      throw Error(ErrorKind::User, "eval", "type-error", "a value from another interpreter cannot be used here");
    }
    return v.cell_->value;
  }
  if (!v.detached_) return eval::nil();
  const auto& d = *v.detached_;
  switch (d.kind) {
    case tl::Value::Detached::Kind::Int: return eval::Value::integer(d.i);
    case tl::Value::Detached::Kind::Float: return eval::Value::real(d.f);
    case tl::Value::Detached::Kind::Bool: return t();
    case tl::Value::Detached::Kind::String: return make_string(d.s);
    case tl::Value::Detached::Kind::Symbol: return sym(d.s);
    case tl::Value::Detached::Kind::Keyword: return eval::Value::object(keyword(d.s));
    case tl::Value::Detached::Kind::List: {
      StackMark mark(*this);
      eval::Value* base = sp;
      for (const tl::Value& item : d.items) push(import_host(item));
      return list_from(base, d.items.size());
    }
  }
  return eval::nil();
}

tl::Value eval::Interp::export_host(eval::Value v) {
  tl::Value out;
  if (v.is_nil()) return out;
  out.cell_ = make_root(v);
  return out;
}

}  // namespace tl
