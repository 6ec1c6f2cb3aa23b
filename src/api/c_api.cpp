// SPDX-License-Identifier: Apache-2.0
// The C API (include/tensorlisp/tensorlisp.h) over the C++ embedding API: handles own tl::Value
// roots, every entry point catches what the C++ side throws and records it per thread.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "tensorlisp/tensorlisp.h"
#include "tensorlisp/tensorlisp.hpp"

struct tl_interp {
  explicit tl_interp(tl::Interpreter::Options options) : lisp(std::move(options)) {}
  tl::Interpreter lisp;
};

struct tl_value {
  tl::Value value;
  std::shared_ptr<const void> data;  // what tl_tensor_data pointed to, pinned
};

namespace {

// The last failure on this thread.
struct LastError {
  std::string message;
  std::string type;
  std::string report;
  std::string file;
  int line = 0;
  int column = 0;
};
thread_local LastError last_error;

tl_status_t record(tl_status_t status, std::string type, std::string message, std::string report = "") {
  LastError& e = last_error;
  e.type = std::move(type);
  e.message = std::move(message);
  e.report = report.empty() ? e.type + ": " + e.message : std::move(report);
  e.file.clear();
  e.line = 0;
  e.column = 0;
  return status;
}

tl_status_t status_of(const tl::Error& e, tl_status_t otherwise) {
  if (e.kind() == tl::ErrorKind::Internal) return TL_ERROR_INTERNAL;
  if (e.type() == "interrupt") return TL_ERROR_INTERRUPTED;
  if (e.type() == "storage-error") return TL_ERROR_MEMORY;
  return otherwise;
}

tl_status_t record(const tl::Error& e, tl_status_t otherwise) {
  tl_status_t status = record(status_of(e, otherwise), e.type(), e.message(), e.what());
  last_error.file = e.location().file;
  last_error.line = e.location().line;
  last_error.column = e.location().column;
  return status;
}

// Runs `body`, turning what it throws into a status. `failure` is the status of a tl::Error
// that is no interrupt, memory or internal error.
template <class F>
tl_status_t guard(tl_status_t failure, F&& body) {
  try {
    body();
    return TL_OK;
  } catch (const tl::Error& e) {
    return record(e, failure);
  } catch (const std::bad_alloc&) {
    return record(TL_ERROR_MEMORY, "storage-error", "out of memory");
  } catch (const std::exception& e) {
    return record(TL_ERROR_INTERNAL, "internal-error", e.what());
  } catch (...) {
    return record(TL_ERROR_INTERNAL, "internal-error", "an unknown C++ exception");
  }
}

tl_status_t null_argument(const char* function, const char* argument) {
  return record(TL_ERROR_ARGUMENT, "value-error", std::string(function) + ": " + argument + " is NULL");
}

// A type error unless `value` is a tensor.
tl_status_t check_tensor(const char* function, const tl_value_t* value) {
  if (value == nullptr) return null_argument(function, "tensor");
  const std::string type = value->value.type_name();
  if (type == "tensor") return TL_OK;
  return record(TL_ERROR_TYPE, "type-error",
                std::string(function) + ": expected a tensor, got " + type + " " + value->value.repr());
}

tl_value_t* new_handle(tl::Value v) { return new (std::nothrow) tl_value{std::move(v), nullptr}; }

// Stores a new handle for `v` in *out when out is not NULL.
void put(tl_value_t** out, tl::Value v) {
  if (out == nullptr) return;
  *out = new tl_value{std::move(v), nullptr};
}

std::vector<tl::Value> values_of(tl_value_t* const* args, std::size_t n) {
  std::vector<tl::Value> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (args[i] == nullptr)
      throw tl::Error(tl::ErrorKind::User, "eval", "value-error", "argument " + std::to_string(i) + " is NULL");
    out.push_back(args[i]->value);
  }
  return out;
}

char* copy_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

tl::DType public_dtype(tl_dtype_t t) {
  switch (t) {
    case TL_DTYPE_BOOL: return tl::DType::Bool;
    case TL_DTYPE_U8: return tl::DType::U8;
    case TL_DTYPE_I8: return tl::DType::I8;
    case TL_DTYPE_I16: return tl::DType::I16;
    case TL_DTYPE_U32: return tl::DType::U32;
    case TL_DTYPE_I32: return tl::DType::I32;
    case TL_DTYPE_I64: return tl::DType::I64;
    case TL_DTYPE_F16: return tl::DType::F16;
    case TL_DTYPE_BF16: return tl::DType::BF16;
    case TL_DTYPE_F32: return tl::DType::F32;
    case TL_DTYPE_F64: return tl::DType::F64;
    case TL_DTYPE_INVALID_:
    case TL_DTYPE_MAX_ENUM_: break;
  }
  throw tl::Error(tl::ErrorKind::User, "eval", "value-error",
                  "no dtype numbered " + std::to_string(static_cast<int>(t)));
}

tl_dtype_t c_dtype(tl::DType t) {
  for (int i = TL_DTYPE_BOOL; i <= TL_DTYPE_F64; ++i) {
    if (public_dtype(static_cast<tl_dtype_t>(i)) == t) return static_cast<tl_dtype_t>(i);
  }
  return TL_DTYPE_F32;  // unreachable: every public dtype has a number
}

bool valid_dtype(tl_dtype_t t) { return static_cast<int>(t) >= TL_DTYPE_BOOL && static_cast<int>(t) <= TL_DTYPE_F64; }

std::vector<std::int64_t> shape_of(const int64_t* shape, int ndim) {
  if (ndim < 0) throw tl::Error(tl::ErrorKind::User, "eval", "value-error", "a negative rank " + std::to_string(ndim));
  if (ndim > 0 && shape == nullptr) throw tl::Error(tl::ErrorKind::User, "eval", "value-error", "the shape is NULL");
  return std::vector<std::int64_t>(shape, shape + ndim);
}

// A new handle for what `make` returns, interned in `interp`; NULL on failure.
template <class F>
tl_value_t* make_value(tl_interp_t* interp, const char* function, F&& make) {
  if (interp == nullptr) {
    null_argument(function, "interp");
    return nullptr;
  }
  tl_value_t* out = nullptr;
  guard(TL_ERROR_LISP, [&] { out = new tl_value{interp->lisp.intern(make()), nullptr}; });
  return out;
}

// A host function's data, freed with the function object.
struct Native {
  tl_native_fn fn = nullptr;
  void* user_data = nullptr;
  void (*free_user_data)(void*) = nullptr;
  ~Native() {
    if (free_user_data != nullptr) free_user_data(user_data);
  }
};

}  // namespace

extern "C" {

const char* tl_version(void) { return tl::Interpreter::version(); }

const char* tl_error_message(void) { return last_error.message.c_str(); }
const char* tl_error_type(void) { return last_error.type.c_str(); }
const char* tl_error_report(void) { return last_error.report.c_str(); }

void tl_error_location(const char** file, int* line, int* column) {
  if (file != nullptr) *file = last_error.file.c_str();
  if (line != nullptr) *line = last_error.line;
  if (column != nullptr) *column = last_error.column;
}

tl_status_t tl_error_raise(const char* type, const char* message) {
  return record(TL_ERROR_LISP, type != nullptr && *type != 0 ? type : "simple-error",
                message != nullptr ? message : "");
}

void tl_options_init(tl_options_t* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->size = sizeof *options;
  options->load_prelude = 1;
}

tl_interp_t* tl_interp_init(const tl_options_t* options) {
  tl_options_t defaults;
  tl_options_init(&defaults);
  if (options == nullptr) options = &defaults;
  if (options->size < offsetof(tl_options_t, device) + sizeof(const char*)) {
    record(TL_ERROR_ARGUMENT, "value-error",
           "tl_interp_init: options->size is " + std::to_string(options->size) + "; set it with tl_options_init");
    return nullptr;
  }
  tl_interp_t* interp = nullptr;
  guard(TL_ERROR_LISP, [&] {
    tl::Interpreter::Options o;
    o.load_prelude = options->load_prelude != 0;
    for (std::size_t i = 0; i < options->search_path_count; ++i) o.search_path.emplace_back(options->search_path[i]);
    for (std::size_t i = 0; i < options->argc; ++i) o.argv.emplace_back(options->argv[i]);
    auto made = std::make_unique<tl_interp>(std::move(o));
    if (options->device != nullptr && *options->device != 0) {
      made->lisp.call("use-backend", {tl::Value(options->device)});
    }
    interp = made.release();
  });
  return interp;
}

void tl_interp_free(tl_interp_t* interp) { delete interp; }

tl_status_t tl_interp_eval(tl_interp_t* interp, const char* source, const char* file_name, tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_interp_eval", "interp");
  if (source == nullptr) return null_argument("tl_interp_eval", "source");
  return guard(TL_ERROR_LISP,
               [&] { put(result, interp->lisp.eval(source, file_name != nullptr ? file_name : "<c>")); });
}

tl_status_t tl_interp_load(tl_interp_t* interp, const char* path, tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_interp_load", "interp");
  if (path == nullptr) return null_argument("tl_interp_load", "path");
  return guard(TL_ERROR_LISP, [&] { put(result, interp->lisp.load(path)); });
}

tl_status_t tl_interp_call(tl_interp_t* interp, const char* name, tl_value_t* const* args, size_t nargs,
                           tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_interp_call", "interp");
  if (name == nullptr) return null_argument("tl_interp_call", "name");
  if (nargs > 0 && args == nullptr) return null_argument("tl_interp_call", "args");
  return guard(TL_ERROR_LISP, [&] { put(result, interp->lisp.call(name, values_of(args, nargs))); });
}

tl_status_t tl_interp_apply(tl_interp_t* interp, const tl_value_t* function, tl_value_t* const* args, size_t nargs,
                            tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_interp_apply", "interp");
  if (function == nullptr) return null_argument("tl_interp_apply", "function");
  if (nargs > 0 && args == nullptr) return null_argument("tl_interp_apply", "args");
  return guard(TL_ERROR_LISP, [&] { put(result, interp->lisp.apply(function->value, values_of(args, nargs))); });
}

tl_status_t tl_interp_global(tl_interp_t* interp, const char* name, tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_interp_global", "interp");
  if (name == nullptr) return null_argument("tl_interp_global", "name");
  return guard(TL_ERROR_LISP, [&] { put(result, interp->lisp.global(name)); });
}

tl_status_t tl_interp_set_global(tl_interp_t* interp, const char* name, const tl_value_t* value) {
  if (interp == nullptr) return null_argument("tl_interp_set_global", "interp");
  if (name == nullptr) return null_argument("tl_interp_set_global", "name");
  if (value == nullptr) return null_argument("tl_interp_set_global", "value");
  return guard(TL_ERROR_LISP, [&] { interp->lisp.set_global(name, value->value); });
}

tl_status_t tl_interp_define(tl_interp_t* interp, const char* name, tl_native_fn fn, void* user_data,
                             void (*free_user_data)(void*), const char* doc) {
  if (interp == nullptr) return null_argument("tl_interp_define", "interp");
  if (name == nullptr) return null_argument("tl_interp_define", "name");
  if (fn == nullptr) return null_argument("tl_interp_define", "fn");
  auto native = std::make_shared<Native>();
  native->fn = fn;
  native->user_data = user_data;
  native->free_user_data = free_user_data;
  tl_status_t status = guard(TL_ERROR_LISP, [&] {
    std::string fname = name;
    interp->lisp.define(
        name,
        [interp, native, fname](tl::Interpreter&, std::span<const tl::Value> args) -> tl::Value {
          std::vector<tl_value_t> handles;
          handles.reserve(args.size());
          for (const tl::Value& a : args) handles.push_back(tl_value{a, nullptr});
          std::vector<tl_value_t*> pointers;
          pointers.reserve(handles.size());
          for (tl_value_t& h : handles) pointers.push_back(&h);
          tl_value_t* out = nullptr;
          last_error = LastError{};
          tl_status_t st = native->fn(interp, pointers.data(), pointers.size(), &out, native->user_data);
          std::unique_ptr<tl_value_t> owned(out);
          if (st != TL_OK) {
            LastError e = last_error;
            if (e.type.empty()) {
              e.type = "simple-error";
              e.message = fname + ": the host function failed (status " + std::to_string(static_cast<int>(st)) + ")";
            }
            throw tl::Error(st == TL_ERROR_INTERNAL ? tl::ErrorKind::Internal : tl::ErrorKind::User, "eval", e.type,
                            e.message);
          }
          return owned ? owned->value : tl::Value();
        },
        doc != nullptr ? doc : "");
  });
  if (status != TL_OK) native->free_user_data = nullptr;  // the caller keeps its data on failure
  return status;
}

void tl_interp_interrupt(tl_interp_t* interp) {
  if (interp != nullptr) interp->lisp.interrupt();
}

void tl_interp_set_output(tl_interp_t* interp, tl_output_fn fn, void* user_data) {
  if (interp == nullptr) return;
  if (fn == nullptr) {
    interp->lisp.set_output([](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); });
  } else {
    interp->lisp.set_output([fn, user_data](std::string_view text) { fn(text.data(), text.size(), user_data); });
  }
}

// ---- values ----

tl_value_t* tl_value_nil(tl_interp_t* interp) {
  return make_value(interp, "tl_value_nil", [] { return tl::Value(); });
}
tl_value_t* tl_value_bool(tl_interp_t* interp, int truth) {
  return make_value(interp, "tl_value_bool", [&] { return tl::Value(truth != 0); });
}
tl_value_t* tl_value_int(tl_interp_t* interp, int64_t i) {
  return make_value(interp, "tl_value_int", [&] { return tl::Value(static_cast<std::int64_t>(i)); });
}
tl_value_t* tl_value_float(tl_interp_t* interp, double d) {
  return make_value(interp, "tl_value_float", [&] { return tl::Value(d); });
}
tl_value_t* tl_value_string(tl_interp_t* interp, const char* utf8, size_t length) {
  if (utf8 == nullptr && length > 0) {
    null_argument("tl_value_string", "utf8");
    return nullptr;
  }
  return make_value(interp, "tl_value_string",
                    [&] { return tl::Value(std::string(utf8 != nullptr ? utf8 : "", length)); });
}
tl_value_t* tl_value_symbol(tl_interp_t* interp, const char* name) {
  if (name == nullptr) {
    null_argument("tl_value_symbol", "name");
    return nullptr;
  }
  return make_value(interp, "tl_value_symbol", [&] { return tl::Value::symbol(name); });
}
tl_value_t* tl_value_keyword(tl_interp_t* interp, const char* name) {
  if (name == nullptr) {
    null_argument("tl_value_keyword", "name");
    return nullptr;
  }
  return make_value(interp, "tl_value_keyword", [&] { return tl::Value::keyword(name); });
}
tl_value_t* tl_value_list(tl_interp_t* interp, tl_value_t* const* items, size_t count) {
  if (items == nullptr && count > 0) {
    null_argument("tl_value_list", "items");
    return nullptr;
  }
  return make_value(interp, "tl_value_list", [&] { return tl::Value::list(values_of(items, count)); });
}

tl_value_t* tl_value_copy(const tl_value_t* value) { return value == nullptr ? nullptr : new_handle(value->value); }

void tl_value_free(tl_value_t* value) { delete value; }

tl_kind_t tl_value_kind(const tl_value_t* value) {
  if (value == nullptr) return TL_KIND_OTHER;
  const tl::Value& v = value->value;
  if (v.is_nil()) return TL_KIND_NIL;
  if (v.is_int()) return TL_KIND_INT;
  if (v.is_float()) return TL_KIND_FLOAT;
  if (v.is_string()) return TL_KIND_STRING;
  if (v.is_function()) return TL_KIND_FUNCTION;
  if (v.is_list()) return TL_KIND_CONS;
  const std::string type = v.type_name();
  if (type == "tensor") return TL_KIND_TENSOR;
  if (type == "keyword") return TL_KIND_KEYWORD;
  if (v.is_symbol()) return v.as_string() == "t" ? TL_KIND_T : TL_KIND_SYMBOL;
  return TL_KIND_OTHER;
}

tl_status_t tl_value_to_int(const tl_value_t* value, int64_t* out) {
  if (value == nullptr) return null_argument("tl_value_to_int", "value");
  if (out == nullptr) return null_argument("tl_value_to_int", "out");
  return guard(TL_ERROR_TYPE, [&] { *out = value->value.as_int(); });
}

tl_status_t tl_value_to_float(const tl_value_t* value, double* out) {
  if (value == nullptr) return null_argument("tl_value_to_float", "value");
  if (out == nullptr) return null_argument("tl_value_to_float", "out");
  return guard(TL_ERROR_TYPE, [&] { *out = value->value.as_double(); });
}

tl_status_t tl_value_to_string(const tl_value_t* value, char** out, size_t* length) {
  if (value == nullptr) return null_argument("tl_value_to_string", "value");
  if (out == nullptr) return null_argument("tl_value_to_string", "out");
  return guard(TL_ERROR_TYPE, [&] {
    std::string s = value->value.as_string();
    *out = copy_string(s);
    if (*out == nullptr) throw std::bad_alloc();
    if (length != nullptr) *length = s.size();
  });
}

tl_status_t tl_value_to_list(const tl_value_t* value, tl_value_t** items, size_t capacity, size_t* length) {
  if (value == nullptr) return null_argument("tl_value_to_list", "value");
  if (items == nullptr && capacity > 0) return null_argument("tl_value_to_list", "items");
  return guard(TL_ERROR_TYPE, [&] {
    std::vector<tl::Value> all = value->value.as_list();
    if (length != nullptr) *length = all.size();
    for (std::size_t i = 0; i < all.size() && i < capacity; ++i) items[i] = new tl_value{std::move(all[i]), nullptr};
  });
}

char* tl_value_repr(const tl_value_t* value) {
  if (value == nullptr) return nullptr;
  char* out = nullptr;
  guard(TL_ERROR_LISP, [&] { out = copy_string(value->value.repr()); });
  return out;
}

char* tl_value_type_name(const tl_value_t* value) {
  if (value == nullptr) return nullptr;
  char* out = nullptr;
  guard(TL_ERROR_LISP, [&] { out = copy_string(value->value.type_name()); });
  return out;
}

void tl_free(void* p) { std::free(p); }

// ---- tensors ----

tl_status_t tl_tensor_new(tl_interp_t* interp, tl_dtype_t dtype, const int64_t* shape, int ndim, const void* data,
                          size_t bytes, tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_tensor_new", "interp");
  if (data == nullptr && bytes > 0) return null_argument("tl_tensor_new", "data");
  if (result == nullptr) return null_argument("tl_tensor_new", "result");
  return guard(TL_ERROR_ARGUMENT, [&] {
    tl::Tensor t(interp->lisp, data, bytes, shape_of(shape, ndim), public_dtype(dtype));
    put(result, t.value());
  });
}

tl_status_t tl_tensor_wrap(tl_interp_t* interp, tl_dtype_t dtype, const int64_t* shape, int ndim, void* data,
                           void (*release)(void* context), void* context, tl_value_t** result) {
  if (interp == nullptr) return null_argument("tl_tensor_wrap", "interp");
  if (result == nullptr) return null_argument("tl_tensor_wrap", "result");
  // The release runs once, whether the tensor is made or not (then at once, on failure).
  std::shared_ptr<const void> keep(data, [release, context](const void*) {
    if (release != nullptr) release(context);
  });
  return guard(TL_ERROR_ARGUMENT, [&] {
    std::vector<std::int64_t> extents = shape_of(shape, ndim);
    std::size_t count = 1;
    for (std::int64_t d : extents) count *= d > 0 ? static_cast<std::size_t>(d) : 0;
    const tl::DType t = public_dtype(dtype);
    tl::Tensor tensor(interp->lisp, data, count * tl::dtype_size(t), extents, t, keep);
    put(result, tensor.value());
  });
}

tl_status_t tl_tensor_dtype(const tl_value_t* tensor, tl_dtype_t* dtype) {
  if (tl_status_t st = check_tensor("tl_tensor_dtype", tensor); st != TL_OK) return st;
  if (dtype == nullptr) return null_argument("tl_tensor_dtype", "dtype");
  return guard(TL_ERROR_TYPE, [&] { *dtype = c_dtype(tl::Tensor(tensor->value).dtype()); });
}

tl_status_t tl_tensor_shape(const tl_value_t* tensor, int64_t* shape, int capacity, int* ndim) {
  if (tl_status_t st = check_tensor("tl_tensor_shape", tensor); st != TL_OK) return st;
  if (shape == nullptr && capacity > 0) return null_argument("tl_tensor_shape", "shape");
  return guard(TL_ERROR_TYPE, [&] {
    tl::Tensor t(tensor->value);
    std::vector<std::int64_t> extents = t.shape();
    if (ndim != nullptr) *ndim = static_cast<int>(extents.size());
    for (std::size_t i = 0; i < extents.size() && static_cast<int>(i) < capacity; ++i) shape[i] = extents[i];
  });
}

tl_status_t tl_tensor_realize(tl_value_t* tensor, const char* const* names, const int64_t* values, size_t count) {
  if (tl_status_t st = check_tensor("tl_tensor_realize", tensor); st != TL_OK) return st;
  if (count > 0 && (names == nullptr || values == nullptr))
    return null_argument("tl_tensor_realize", "names or values");
  return guard(TL_ERROR_LISP, [&] {
    std::map<std::string, std::int64_t> bindings;
    for (std::size_t i = 0; i < count; ++i) bindings[names[i]] = values[i];
    tl::Tensor(tensor->value).realize(bindings);
  });
}

tl_status_t tl_tensor_data(tl_value_t* tensor, const void** data, size_t* bytes) {
  if (tl_status_t st = check_tensor("tl_tensor_data", tensor); st != TL_OK) return st;
  if (data == nullptr) return null_argument("tl_tensor_data", "data");
  return guard(TL_ERROR_LISP, [&] {
    tl::Tensor t(tensor->value);
    tensor->data = t.pinned_data();
    *data = tensor->data.get();
    if (bytes != nullptr) *bytes = static_cast<std::size_t>(t.numel()) * tl::dtype_size(t.dtype());
  });
}

tl_status_t tl_tensor_copy_to(tl_value_t* tensor, void* dst, size_t bytes) {
  if (tl_status_t st = check_tensor("tl_tensor_copy_to", tensor); st != TL_OK) return st;
  if (dst == nullptr && bytes > 0) return null_argument("tl_tensor_copy_to", "dst");
  return guard(TL_ERROR_LISP, [&] { tl::Tensor(tensor->value).copy_to(dst, bytes); });
}

size_t tl_dtype_size(tl_dtype_t dtype) { return valid_dtype(dtype) ? tl::dtype_size(public_dtype(dtype)) : 0; }

const char* tl_dtype_name(tl_dtype_t dtype) {
  return valid_dtype(dtype) ? tl::dtype_name(public_dtype(dtype)) : nullptr;
}

}  // extern "C"
