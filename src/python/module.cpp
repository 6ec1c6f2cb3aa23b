// SPDX-License-Identifier: Apache-2.0
// The Python extension `tensorlisp._tensorlisp`, over the C API (include/tensorlisp/tensorlisp.h).
// Python values become Lisp values and back: numbers, strings, symbols, lists; arrays (NumPy, or
// anything with __dlpack__ or the buffer protocol: PyTorch tensors) become tensors without a copy,
// and tensors come back as NumPy arrays and DLPack capsules without one. Lisp errors are raised as
// tensorlisp.LispError; Ctrl-C stops a running evaluation with KeyboardInterrupt.
//
// Threads: an interpreter has one lock. A call takes it with the GIL released (so a thread
// running Lisp never waits for the GIL while another waits for the lock), runs Lisp without the
// GIL, and takes the GIL back only to call Python (host functions defined from Python, output).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pythread.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorlisp/tensorlisp.h"

namespace py = pybind11;

namespace {

// ---- DLPack (the ABI of dlpack.h, version 0.8) ----
struct DLDevice {
  std::int32_t device_type;  // 1: the CPU
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // NULL: row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// ---- The interpreter and handles ----

struct PyFunction;

// One interpreter, shared by the Python objects holding its values: it lives while any does.
struct Lisp {
  tl_interp_t* interp = nullptr;
  std::recursive_mutex mutex;
  std::vector<std::unique_ptr<PyFunction>> functions;  // host functions defined from Python
  py::object output;                                   // where program output goes (None: stdout)
  // The Python exception a host function raised, and the message Lisp got for it: when the
  // call fails with that message, the original exception is raised again.
  py::object pending;
  std::string pending_message;
  ~Lisp();
};

struct PyFunction {
  py::object fn;
  std::string name;
  std::weak_ptr<Lisp> lisp;
};

Lisp::~Lisp() {
  // Freeing the interpreter runs the release of arrays it borrowed, which take the GIL; Python
  // objects are dropped with it held.
  py::gil_scoped_acquire gil;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::recursive_mutex> lock(mutex);
    tl_interp_free(interp);
  }
  functions.clear();
  output = py::object();
  pending = py::object();
}

// Holds the interpreter's lock; taken with the GIL released.
struct Session {
  explicit Session(Lisp& lisp) : lisp(lisp) {
    py::gil_scoped_release nogil;
    lisp.mutex.lock();
  }
  ~Session() { lisp.mutex.unlock(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Lisp& lisp;
};

// A Lisp value Python holds.
struct Handle {
  Handle(std::shared_ptr<Lisp> lisp, tl_value_t* value) : lisp(std::move(lisp)), value(value) {}
  ~Handle() {
    if (value == nullptr) return;
    if (PyGILState_Check() != 0) {
      py::gil_scoped_release nogil;
      std::lock_guard<std::recursive_mutex> lock(lisp->mutex);
      tl_value_free(value);
    } else {
      std::lock_guard<std::recursive_mutex> lock(lisp->mutex);
      tl_value_free(value);
    }
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  std::shared_ptr<Lisp> lisp;
  tl_value_t* value;
};

// A new handle, freed when `owned` goes out of scope unless released.
struct Owned {
  explicit Owned(tl_value_t* v = nullptr) : v(v) {}
  ~Owned() { tl_value_free(v); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  tl_value_t* release() {
    tl_value_t* out = v;
    v = nullptr;
    return out;
  }
  tl_value_t* v;
};

// ---- Python classes ----

struct Symbol {
  std::string name;
};
struct Keyword {
  std::string name;
};

struct LispObject {
  std::shared_ptr<Handle> handle;
};
struct Function : LispObject {};
struct Tensor : LispObject {
  const void* data = nullptr;  // pinned by the handle once asked for
  std::size_t bytes = 0;
};

py::object lisp_error_class;    // tensorlisp.LispError
std::uint64_t main_thread = 0;  // the thread that imported the module

// ---- Errors ----

[[noreturn]] void raise_status(Lisp* lisp, tl_status_t status) {
  const std::string message = tl_error_message();
  if (lisp != nullptr && lisp->pending && message == lisp->pending_message) {
    // A Python host function raised this: raise it again, as it was.
    py::object e = lisp->pending;
    lisp->pending = py::object();
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e.ptr())), e.ptr());
    throw py::error_already_set();
  }
  switch (status) {
    case TL_ERROR_INTERRUPTED:
      PyErr_SetString(PyExc_KeyboardInterrupt, tl_error_report());
      throw py::error_already_set();
    case TL_ERROR_ARGUMENT: throw py::value_error(message);
    case TL_ERROR_TYPE: throw py::type_error(message);
    default: break;
  }
  const char* file = nullptr;
  int line = 0;
  int column = 0;
  tl_error_location(&file, &line, &column);
  py::object e = lisp_error_class(py::str(tl_error_report()));
  e.attr("type") = py::str(tl_error_type());
  e.attr("message") = py::str(message);
  e.attr("file") = file != nullptr && *file != 0 ? py::object(py::str(file)) : py::object(py::none());
  e.attr("line") = line;
  e.attr("column") = column;
  e.attr("internal") = status == TL_ERROR_INTERNAL;
  PyErr_SetObject(lisp_error_class.ptr(), e.ptr());
  throw py::error_already_set();
}

void check(Lisp* lisp, tl_status_t status) {
  if (status != TL_OK) raise_status(lisp, status);
}

tl_value_t* check_made(tl_value_t* v) {
  if (v == nullptr) raise_status(nullptr, TL_ERROR_MEMORY);
  return v;
}

// ---- Ctrl-C ----

std::atomic<tl_interp_t*> sigint_target{nullptr};

extern "C" void on_sigint(int) {
  tl_interp_t* interp = sigint_target.load();
  if (interp != nullptr) tl_interp_interrupt(interp);
}

// While Lisp runs on the main thread with Python's own SIGINT handler in place, Ctrl-C
// interrupts the evaluation (Python's handler would only run once the call returned).
struct SigintScope {
  explicit SigintScope(tl_interp_t* interp) {
    if (PyThread_get_thread_ident() != main_thread || sigint_target.load() != nullptr) return;
    py::module_ signal = py::module_::import("signal");
    if (!signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler"))) return;
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    sigint_target.store(interp);
    active = sigaction(SIGINT, &action, &saved) == 0;
    if (!active) {
      sigint_target.store(nullptr);
      return;
    }
    // A Ctrl-C that came just before went to Python's handler: it stops this call now.
    if (PyErr_CheckSignals() != 0) {
      restore();
      throw py::error_already_set();
    }
  }
  ~SigintScope() { restore(); }
  void restore() {
    if (!active) return;
    active = false;
    sigaction(SIGINT, &saved, nullptr);
    sigint_target.store(nullptr);
  }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;
  bool active = false;
  struct sigaction saved {};
};

// Runs `body` (C API calls only, no Python) with the lock held and the GIL released.
template <class F>
tl_status_t run(Lisp& lisp, F&& body) {
  SigintScope sigint(lisp.interp);
  py::gil_scoped_release nogil;
  std::lock_guard<std::recursive_mutex> lock(lisp.mutex);
  return body();
}

// ---- Conversions ----

tl_value_t* to_lisp(const std::shared_ptr<Lisp>& lisp, py::handle o);
py::object from_lisp(const std::shared_ptr<Lisp>& lisp, tl_value_t* owned);

std::string lisp_name(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

const std::shared_ptr<Handle>& same_interpreter(const std::shared_ptr<Lisp>& lisp, const LispObject& obj) {
  if (!obj.handle || obj.handle->lisp != lisp) {
    throw py::value_error("tensorlisp: a value of another interpreter (values cannot move between interpreters)");
  }
  return obj.handle;
}

struct DTypeInfo {
  tl_dtype_t dtype;
  const char* numpy;   // NumPy's name
  const char* format;  // the buffer protocol's format
};
constexpr DTypeInfo kDTypes[] = {
    {TL_DTYPE_F32, "float32", "f"}, {TL_DTYPE_F64, "float64", "d"}, {TL_DTYPE_F16, "float16", "e"},
    {TL_DTYPE_I8, "int8", "b"},     {TL_DTYPE_I16, "int16", "h"},   {TL_DTYPE_I32, "int32", "i"},
    {TL_DTYPE_I64, "int64", "q"},   {TL_DTYPE_U8, "uint8", "B"},    {TL_DTYPE_U32, "uint32", "I"},
    {TL_DTYPE_BOOL, "bool", "?"},
};

const DTypeInfo* info_of(tl_dtype_t t) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.dtype == t) return &d;
  }
  return nullptr;  // bf16: NumPy has none
}

// An array-like as a C-contiguous, aligned, native-order NumPy array.
py::array as_array(py::handle o) {
  py::module_ np = py::module_::import("numpy");
  py::object arr;
  if (!py::isinstance<py::array>(o) && py::hasattr(o, "__dlpack__")) {
    try {
      arr = np.attr("from_dlpack")(o);
    } catch (py::error_already_set&) {
      arr = np.attr("asarray")(o);
    }
  } else {
    arr = np.attr("asarray")(o);
  }
  py::object dt = arr.attr("dtype");
  py::int_ flags = arr.attr("flags").attr("num");
  const int f = flags.cast<int>();
  const bool contiguous = (f & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) != 0;
  const bool aligned = (f & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  if (!contiguous || !aligned || !dt.attr("isnative").cast<bool>()) {
    arr = np.attr("ascontiguousarray")(arr, py::arg("dtype") = dt.attr("newbyteorder")("="));
  }
  return arr.cast<py::array>();
}

tl_dtype_t dtype_of(const py::array& arr) {
  const std::string name = py::str(arr.dtype().attr("name"));
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.numpy) return d.dtype;
  }
  std::string known;
  for (const DTypeInfo& d : kDTypes) known += std::string(known.empty() ? "" : ", ") + d.numpy;
  throw py::type_error("tensorlisp: NumPy dtype " + name + " has no TensorLisp dtype (" + known + ")");
}

extern "C" void release_array(void* context) {
  py::gil_scoped_acquire gil;
  delete static_cast<py::object*>(context);
}

// A tensor over the array's memory (copy=false) or a copy of it.
tl_value_t* tensor_from(Lisp& lisp, py::handle o, bool copy) {
  py::array arr = as_array(o);
  const tl_dtype_t dtype = dtype_of(arr);
  std::vector<std::int64_t> shape(static_cast<std::size_t>(arr.ndim()));
  for (std::size_t i = 0; i < shape.size(); ++i) shape[i] = arr.shape(static_cast<py::ssize_t>(i));
  tl_value_t* out = nullptr;
  const int ndim = static_cast<int>(shape.size());
  if (copy) {
    check(&lisp, tl_tensor_new(lisp.interp, dtype, shape.data(), ndim, arr.data(),
                               static_cast<std::size_t>(arr.nbytes()), &out));
  } else {
    auto* keep = new py::object(arr);
    // The release runs on failure too, and takes the GIL: call it without.
    check(&lisp, tl_tensor_wrap(lisp.interp, dtype, shape.data(), ndim, const_cast<void*>(arr.data()), release_array,
                                keep, &out));
  }
  return out;
}

bool array_like(py::handle o) {
  return py::isinstance<py::array>(o) || py::hasattr(o, "__dlpack__") || py::hasattr(o, "__array_interface__") ||
         py::hasattr(o, "__array__") || (PyObject_CheckBuffer(o.ptr()) != 0 && !py::isinstance<py::bytes>(o));
}

tl_value_t* to_lisp(const std::shared_ptr<Lisp>& lisp, py::handle o) {
  tl_interp_t* in = lisp->interp;
  if (o.is_none()) return check_made(tl_value_nil(in));
  if (py::isinstance<py::bool_>(o)) return check_made(tl_value_bool(in, o.cast<bool>() ? 1 : 0));
  if (py::isinstance<py::int_>(o)) {
    long long overflow_check = 0;
    int overflow = 0;
    overflow_check = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow != 0) {
      throw py::value_error("tensorlisp: the integer " + std::string(py::str(o)) +
                            " does not fit in 64 bits (TensorLisp integers are 64-bit)");
    }
    return check_made(tl_value_int(in, overflow_check));
  }
  if (py::isinstance<py::float_>(o)) return check_made(tl_value_float(in, o.cast<double>()));
  if (py::isinstance<py::str>(o)) {
    const std::string s = o.cast<std::string>();
    return check_made(tl_value_string(in, s.data(), s.size()));
  }
  if (py::isinstance<Symbol>(o)) return check_made(tl_value_symbol(in, o.cast<const Symbol&>().name.c_str()));
  if (py::isinstance<Keyword>(o)) return check_made(tl_value_keyword(in, o.cast<const Keyword&>().name.c_str()));
  if (py::isinstance<LispObject>(o)) {
    return check_made(tl_value_copy(same_interpreter(lisp, o.cast<const LispObject&>())->value));
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    std::vector<std::unique_ptr<Owned>> items;
    std::vector<tl_value_t*> raw;
    for (py::handle item : o) {
      items.push_back(std::make_unique<Owned>(to_lisp(lisp, item)));
      raw.push_back(items.back()->v);
    }
    return check_made(tl_value_list(in, raw.data(), raw.size()));
  }
  // NumPy scalars (numpy.float32(1.5)) are numbers.
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(o, np.attr("generic"))) return to_lisp(lisp, o.attr("item")());
  if (array_like(o)) return tensor_from(*lisp, o, false);
  throw py::type_error("tensorlisp: cannot pass a " + std::string(py::str(py::type::of(o).attr("__name__"))) +
                       " to Lisp (numbers, strings, None, bools, Symbol, Keyword, lists, tuples, arrays and "
                       "tensorlisp values can)");
}

std::string string_of(tl_value_t* v) {
  char* s = nullptr;
  std::size_t n = 0;
  if (tl_value_to_string(v, &s, &n) != TL_OK) return "";
  std::string out(s, n);
  tl_free(s);
  return out;
}

py::str decode(const std::string& s) {
  PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "surrogateescape");
  if (u == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(u);
}

py::object from_lisp(const std::shared_ptr<Lisp>& lisp, tl_value_t* owned) {
  Owned value(owned);
  switch (tl_value_kind(owned)) {
    case TL_KIND_NIL: return py::none();
    case TL_KIND_T: return py::bool_(true);
    case TL_KIND_INT: {
      std::int64_t i = 0;
      tl_value_to_int(owned, &i);
      return py::int_(i);
    }
    case TL_KIND_FLOAT: {
      double d = 0;
      tl_value_to_float(owned, &d);
      return py::float_(d);
    }
    case TL_KIND_STRING: return decode(string_of(owned));
    case TL_KIND_SYMBOL: return py::cast(Symbol{string_of(owned)});
    case TL_KIND_KEYWORD: {
      std::string name = string_of(owned);
      if (!name.empty() && name[0] == ':') name.erase(0, 1);
      return py::cast(Keyword{name});
    }
    case TL_KIND_CONS: {
      std::size_t n = 0;
      if (tl_value_to_list(owned, nullptr, 0, &n) == TL_OK) {
        std::vector<tl_value_t*> items(n, nullptr);
        tl_value_to_list(owned, items.data(), n, &n);
        py::list out;
        std::size_t i = 0;
        try {
          for (; i < items.size(); ++i) out.append(from_lisp(lisp, items[i]));
        } catch (...) {
          for (++i; i < items.size(); ++i) tl_value_free(items[i]);
          throw;
        }
        return out;
      }
      break;  // a dotted list: an opaque value
    }
    case TL_KIND_TENSOR: {
      Tensor t;
      t.handle = std::make_shared<Handle>(lisp, value.release());
      return py::cast(std::move(t));
    }
    case TL_KIND_FUNCTION: {
      Function f;
      f.handle = std::make_shared<Handle>(lisp, value.release());
      return py::cast(std::move(f));
    }
    default: break;
  }
  LispObject obj;
  obj.handle = std::make_shared<Handle>(lisp, value.release());
  return py::cast(std::move(obj));
}

// Lisp arguments from Python's: positional ones, then each keyword argument as :name value.
struct Arguments {
  Arguments(const std::shared_ptr<Lisp>& lisp, const py::args& args, const py::kwargs& kwargs) {
    for (py::handle a : args) add(to_lisp(lisp, a));
    for (auto item : kwargs) {
      add(check_made(tl_value_keyword(lisp->interp, lisp_name(py::str(item.first)).c_str())));
      add(to_lisp(lisp, item.second));
    }
  }
  void add(tl_value_t* v) {
    owned.push_back(std::make_unique<Owned>(v));
    raw.push_back(v);
  }
  std::vector<std::unique_ptr<Owned>> owned;
  std::vector<tl_value_t*> raw;
};

// ---- Host functions defined from Python ----

extern "C" tl_status_t call_python(tl_interp_t*, tl_value_t* const* args, std::size_t nargs, tl_value_t** result,
                                   void* user_data) {
  auto* f = static_cast<PyFunction*>(user_data);
  py::gil_scoped_acquire gil;
  std::shared_ptr<Lisp> lisp = f->lisp.lock();
  if (!lisp) return tl_error_raise(nullptr, (f->name + ": the Python interpreter object is gone").c_str());
  try {
    py::tuple pyargs(nargs);
    for (std::size_t i = 0; i < nargs; ++i) pyargs[i] = from_lisp(lisp, tl_value_copy(args[i]));
    py::object r = f->fn(*pyargs);
    *result = to_lisp(lisp, r);
    return TL_OK;
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt)) return tl_error_raise("interrupt", "interrupted in Python");
    py::object value = e.value();
    std::string message;
    std::string type = "error";
    if (e.matches(lisp_error_class)) {
      // A Lisp error that went through Python: the same condition goes on.
      type = py::str(value.attr("type"));
      message = py::str(value.attr("message"));
    } else {
      message = f->name + ": Python raised " + std::string(py::str(e.type().attr("__name__"))) + ": " +
                std::string(py::str(value));
    }
    lisp->pending = value;
    lisp->pending_message = message;
    return tl_error_raise(type.c_str(), message.c_str());
  } catch (const std::exception& e) {
    return tl_error_raise(nullptr, (f->name + ": " + e.what()).c_str());
  }
}

extern "C" void write_output(const char* text, std::size_t length, void* user_data) {
  auto* lisp = static_cast<Lisp*>(user_data);
  py::gil_scoped_acquire gil;
  try {
    py::object out = lisp->output.is_none() ? py::module_::import("sys").attr("stdout") : lisp->output;
    out.attr("write")(decode(std::string(text, length)));
  } catch (py::error_already_set&) {
    // Output that cannot be written is dropped, as a closed stdout drops it.
  }
}

// ---- The Interpreter class ----

class Interpreter {
 public:
  Interpreter(const py::object& device, bool prelude, const std::vector<std::string>& path,
              const std::vector<std::string>& argv, const py::object& output) {
    lisp_ = std::make_shared<Lisp>();
    tl_options_t options;
    tl_options_init(&options);
    options.load_prelude = prelude ? 1 : 0;
    std::vector<const char*> path_c;
    std::vector<const char*> argv_c;
    for (const auto& p : path) path_c.push_back(p.c_str());
    for (const auto& a : argv) argv_c.push_back(a.c_str());
    options.search_path = path_c.data();
    options.search_path_count = path_c.size();
    options.argv = argv_c.data();
    options.argc = argv_c.size();
    std::string dev = device.is_none() ? "" : py::str(device).cast<std::string>();
    options.device = dev.empty() ? nullptr : dev.c_str();
    {
      py::gil_scoped_release nogil;
      lisp_->interp = tl_interp_init(&options);
    }
    if (lisp_->interp == nullptr) raise_status(nullptr, TL_ERROR_LISP);
    lisp_->output = output;
    tl_interp_set_output(lisp_->interp, write_output, lisp_.get());
  }

  py::object eval(const std::string& source, const std::string& file) {
    Lisp& l = live();
    Session session(l);
    tl_value_t* out = nullptr;
    begin(l);
    check(&l, run(l, [&] { return tl_interp_eval(l.interp, source.c_str(), file.c_str(), &out); }));
    return from_lisp(lisp_, out);
  }

  py::object load(const std::string& path) {
    Lisp& l = live();
    Session session(l);
    tl_value_t* out = nullptr;
    begin(l);
    check(&l, run(l, [&] { return tl_interp_load(l.interp, path.c_str(), &out); }));
    return from_lisp(lisp_, out);
  }

  py::object call(const std::string& name, const py::args& args, const py::kwargs& kwargs) {
    Lisp& l = live();
    Session session(l);
    Arguments a(lisp_, args, kwargs);
    tl_value_t* out = nullptr;
    begin(l);
    check(&l, run(l, [&] { return tl_interp_call(l.interp, name.c_str(), a.raw.data(), a.raw.size(), &out); }));
    return from_lisp(lisp_, out);
  }

  py::object function(const std::string& name) {
    py::object f = global(name);
    if (!py::isinstance<Function>(f)) {
      throw py::type_error("tensorlisp: the global " + name + " is no function: " + std::string(py::repr(f)));
    }
    return f;
  }

  py::object global(const std::string& name) {
    Lisp& l = live();
    Session session(l);
    tl_value_t* out = nullptr;
    check(&l, tl_interp_global(l.interp, name.c_str(), &out));
    return from_lisp(lisp_, out);
  }

  void set_global(const std::string& name, const py::handle& value) {
    Lisp& l = live();
    Session session(l);
    Owned v(to_lisp(lisp_, value));
    check(&l, tl_interp_set_global(l.interp, name.c_str(), v.v));
  }

  void define(const std::string& name, const py::object& fn, const py::object& doc) {
    Lisp& l = live();
    if (!PyCallable_Check(fn.ptr())) throw py::type_error("tensorlisp: define " + name + ": not callable");
    Session session(l);
    auto f = std::make_unique<PyFunction>();
    f->fn = fn;
    f->name = name;
    f->lisp = lisp_;
    std::string d;
    if (!doc.is_none()) {
      d = py::str(doc);
    } else if (py::hasattr(fn, "__doc__") && !fn.attr("__doc__").is_none()) {
      d = py::str(fn.attr("__doc__"));
    }
    check(&l, tl_interp_define(l.interp, name.c_str(), call_python, f.get(), nullptr, d.c_str()));
    l.functions.push_back(std::move(f));
  }

  py::object tensor(const py::handle& data, const py::object& dtype, bool copy) {
    Lisp& l = live();
    Session session(l);
    if (py::isinstance<Tensor>(data) && dtype.is_none()) {
      return py::cast(data.cast<const Tensor&>());
    }
    tl_value_t* t = py::isinstance<LispObject>(data) ? to_lisp(lisp_, data) : tensor_from(l, data, copy);
    if (!dtype.is_none()) {
      Owned source(t);
      Owned type(check_made(tl_value_symbol(l.interp, std::string(py::str(dtype)).c_str())));
      tl_value_t* args[2] = {source.v, type.v};
      tl_value_t* out = nullptr;
      begin(l);
      check(&l, run(l, [&] { return tl_interp_call(l.interp, "cast", args, 2, &out); }));
      t = out;
    }
    return from_lisp(lisp_, t);
  }

  void interrupt() {
    if (lisp_) tl_interp_interrupt(lisp_->interp);
  }

  // Lets go of the interpreter: it is freed once no value of it is held in Python either.
  void close() {
    if (!lisp_) return;
    std::shared_ptr<Lisp> l = std::move(lisp_);
    {
      Session session(*l);
      l->output = py::none();
    }
  }

  bool closed() const { return !lisp_; }

  Lisp& live() {
    if (!lisp_) throw py::value_error("tensorlisp: the interpreter is closed");
    return *lisp_;
  }

  const std::shared_ptr<Lisp>& lisp() const { return lisp_; }

 private:
  static void begin(Lisp& l) {
    l.pending = py::object();
    l.pending_message.clear();
  }
  std::shared_ptr<Lisp> lisp_;
};

// Calls a function value.
py::object call_function(const Function& f, const py::args& args, const py::kwargs& kwargs) {
  const std::shared_ptr<Lisp>& lisp = f.handle->lisp;
  Session session(*lisp);
  Arguments a(lisp, args, kwargs);
  tl_value_t* out = nullptr;
  lisp->pending = py::object();
  check(lisp.get(),
        run(*lisp, [&] { return tl_interp_apply(lisp->interp, f.handle->value, a.raw.data(), a.raw.size(), &out); }));
  return from_lisp(lisp, out);
}

std::string repr_of(const LispObject& o) {
  Session session(*o.handle->lisp);
  char* s = tl_value_repr(o.handle->value);
  std::string out = s != nullptr ? s : "?";
  tl_free(s);
  return out;
}

std::string type_of(const LispObject& o) {
  Session session(*o.handle->lisp);
  char* s = tl_value_type_name(o.handle->value);
  std::string out = s != nullptr ? s : "?";
  tl_free(s);
  return out;
}

// ---- Tensors ----

tl_dtype_t dtype_code(const Tensor& t) {
  Session session(*t.handle->lisp);
  tl_dtype_t d = TL_DTYPE_F32;
  check(t.handle->lisp.get(), tl_tensor_dtype(t.handle->value, &d));
  return d;
}

std::vector<std::int64_t> shape_of(const Tensor& t) {
  Session session(*t.handle->lisp);
  int ndim = 0;
  check(t.handle->lisp.get(), tl_tensor_shape(t.handle->value, nullptr, 0, &ndim));
  std::vector<std::int64_t> shape(static_cast<std::size_t>(ndim));
  check(t.handle->lisp.get(), tl_tensor_shape(t.handle->value, shape.data(), ndim, &ndim));
  return shape;
}

// Realizes the tensor and pins its data for as long as the Tensor object lives.
void pin(Tensor& t) {
  if (t.data != nullptr || t.bytes != 0) return;
  Lisp& l = *t.handle->lisp;
  Session session(l);
  const void* data = nullptr;
  std::size_t bytes = 0;
  check(&l, run(l, [&] { return tl_tensor_data(t.handle->value, &data, &bytes); }));
  t.data = data;
  t.bytes = bytes;
}

py::array numpy_view(Tensor& t) {
  const tl_dtype_t dtype = dtype_code(t);
  const DTypeInfo* info = info_of(dtype);
  if (info == nullptr) {
    throw py::type_error(std::string("tensorlisp: NumPy has no ") + tl_dtype_name(dtype) +
                         " dtype: cast the tensor first, e.g. tensor.astype('f32')");
  }
  std::vector<std::int64_t> shape = shape_of(t);
  pin(t);
  std::vector<py::ssize_t> extents(shape.begin(), shape.end());
  std::vector<py::ssize_t> strides(extents.size());
  py::ssize_t step = static_cast<py::ssize_t>(tl_dtype_size(dtype));
  for (std::size_t i = extents.size(); i-- > 0;) {
    strides[i] = step;
    step *= extents[i];
  }
  static const std::uint8_t empty[8] = {};
  const void* data = t.data != nullptr ? t.data : empty;
  py::array arr(py::dtype(info->numpy), extents, strides, data, py::cast(t));
  arr.attr("setflags")(py::arg("write") = false);
  return arr;
}

struct Export {
  std::shared_ptr<Handle> handle;
  std::vector<std::int64_t> shape;
  DLManagedTensor managed{};
};

extern "C" void delete_export(DLManagedTensor* m) {
  auto* e = static_cast<Export*>(m->manager_ctx);
  if (PyGILState_Check() != 0) {
    delete e;
  } else {
    py::gil_scoped_acquire gil;  // the interpreter may go with it, dropping Python objects
    delete e;
  }
}

extern "C" void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor") != 0) {  // never consumed
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    m->deleter(m);
  }
}

py::capsule to_dlpack(Tensor& t, const py::object& stream) {
  if (!stream.is_none()) throw py::value_error("tensorlisp: tensors live in host memory; stream must be None");
  const tl_dtype_t dtype = dtype_code(t);
  std::vector<std::int64_t> shape = shape_of(t);
  pin(t);
  auto e = std::make_unique<Export>();
  e->handle = t.handle;
  e->shape = shape;
  DLTensor& d = e->managed.dl_tensor;
  static std::uint8_t empty[8] = {};
  d.data = t.data != nullptr ? const_cast<void*>(t.data) : empty;
  d.device = DLDevice{1, 0};
  d.ndim = static_cast<std::int32_t>(shape.size());
  const auto bits = static_cast<std::uint8_t>(8 * tl_dtype_size(dtype));
  switch (dtype) {
    case TL_DTYPE_BOOL: d.dtype = DLDataType{6, 8, 1}; break;
    case TL_DTYPE_U8:
    case TL_DTYPE_U32: d.dtype = DLDataType{1, bits, 1}; break;
    case TL_DTYPE_I8:
    case TL_DTYPE_I16:
    case TL_DTYPE_I32:
    case TL_DTYPE_I64: d.dtype = DLDataType{0, bits, 1}; break;
    case TL_DTYPE_BF16: d.dtype = DLDataType{4, 16, 1}; break;
    case TL_DTYPE_F16:
    case TL_DTYPE_F32:
    case TL_DTYPE_F64: d.dtype = DLDataType{2, bits, 1}; break;
    case TL_DTYPE_INVALID_:
    case TL_DTYPE_MAX_ENUM_: throw py::type_error("tensorlisp: a tensor with no dtype");
  }
  d.shape = e->shape.data();
  d.strides = nullptr;
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = delete_export;
  DLManagedTensor* m = &e.release()->managed;
  return py::capsule(m, "dltensor", capsule_destructor);
}

}  // namespace

PYBIND11_MODULE(_tensorlisp, m) {
  m.doc() = "TensorLisp from Python: the extension module under the tensorlisp package.";
  main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<std::uint64_t>();
  lisp_error_class = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("tensorlisp.LispError",
                                "An error signalled by Lisp code. Attributes: type (the Lisp condition type, "
                                "e.g. 'type-error'), message, file, line, column, internal; str() is the whole "
                                "report with the source line and the Lisp backtrace.",
                                PyExc_Exception, nullptr));
  m.attr("LispError") = lisp_error_class;
  m.attr("__version__") = tl_version();

  py::class_<Symbol>(m, "Symbol", "A Lisp symbol: Symbol('relu') is 'relu in Lisp.")
      .def(py::init([](std::string name) { return Symbol{std::move(name)}; }), py::arg("name"))
      .def_readonly("name", &Symbol::name)
      .def("__repr__", [](const Symbol& s) { return "Symbol(" + std::string(py::repr(py::str(s.name))) + ")"; })
      .def("__str__", [](const Symbol& s) { return s.name; })
      .def("__eq__",
           [](const Symbol& a, const py::object& b) {
             return py::isinstance<Symbol>(b) && a.name == b.cast<const Symbol&>().name;
           })
      .def("__hash__", [](const Symbol& s) { return py::hash(py::make_tuple("symbol", s.name)); });
  py::class_<Keyword>(m, "Keyword", "A Lisp keyword: Keyword('axis') is :axis in Lisp.")
      .def(py::init([](std::string name) {
             if (!name.empty() && name[0] == ':') name.erase(0, 1);
             return Keyword{std::move(name)};
           }),
           py::arg("name"))
      .def_readonly("name", &Keyword::name)
      .def("__repr__", [](const Keyword& k) { return "Keyword(" + std::string(py::repr(py::str(k.name))) + ")"; })
      .def("__str__", [](const Keyword& k) { return ":" + k.name; })
      .def("__eq__",
           [](const Keyword& a, const py::object& b) {
             return py::isinstance<Keyword>(b) && a.name == b.cast<const Keyword&>().name;
           })
      .def("__hash__", [](const Keyword& k) { return py::hash(py::make_tuple("keyword", k.name)); });

  py::class_<LispObject>(m, "LispObject",
                         "A Lisp value with no Python counterpart (a structure, a hash table, a "
                         "model...): pass it back to Lisp as it is.")
      .def("__repr__", [](const LispObject& o) { return "<lisp " + repr_of(o) + ">"; })
      .def("__str__", &repr_of)
      .def_property_readonly("lisp_type", &type_of, "The Lisp type, as type-of gives it.");
  py::class_<Function, LispObject>(m, "Function",
                                   "A Lisp function: call it with Python values; keyword "
                                   "arguments become Lisp keywords (axis=1 is :axis 1).")
      .def("__call__", &call_function);
  py::class_<Tensor, LispObject>(m, "Tensor", py::buffer_protocol(),
                                 "A Lisp tensor. np.asarray(t) and t.numpy() view its data without a copy "
                                 "(read-only); torch.from_dlpack(t) too.")
      .def_buffer([](Tensor& t) -> py::buffer_info {
        const tl_dtype_t dtype = dtype_code(t);
        const DTypeInfo* info = info_of(dtype);
        if (info == nullptr)
          throw py::buffer_error(std::string("tensorlisp: no buffer format for ") + tl_dtype_name(dtype));
        std::vector<std::int64_t> shape = shape_of(t);
        pin(t);
        std::vector<py::ssize_t> extents(shape.begin(), shape.end());
        std::vector<py::ssize_t> strides(extents.size());
        py::ssize_t step = static_cast<py::ssize_t>(tl_dtype_size(dtype));
        for (std::size_t i = extents.size(); i-- > 0;) {
          strides[i] = step;
          step *= extents[i];
        }
        return py::buffer_info(const_cast<void*>(t.data), static_cast<py::ssize_t>(tl_dtype_size(dtype)), info->format,
                               static_cast<py::ssize_t>(extents.size()), extents, strides, true);
      })
      .def_property_readonly(
          "shape", [](const Tensor& t) { return py::tuple(py::cast(shape_of(t))); }, "The extents, as a tuple.")
      .def_property_readonly(
          "dtype", [](const Tensor& t) { return std::string(tl_dtype_name(dtype_code(t))); },
          "The element type's Lisp name: 'f32', 'i64', 'bool', ...")
      .def_property_readonly("ndim", [](const Tensor& t) { return shape_of(t).size(); })
      .def("__len__",
           [](const Tensor& t) {
             std::vector<std::int64_t> s = shape_of(t);
             if (s.empty()) throw py::type_error("tensorlisp: len() of a 0-d tensor");
             return s[0];
           })
      .def("numpy", &numpy_view, "The data as a read-only NumPy array, without a copy (bf16: cast first).")
      .def(
          "__array__",
          [](Tensor& t, const py::object& dtype) -> py::object {
            py::array a = numpy_view(t);
            if (dtype.is_none()) return a;
            return a.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none())
      .def("__dlpack__", &to_dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(1, 0); })
      .def(
          "realize",
          [](const py::object& self) {
            pin(self.cast<Tensor&>());
            return self;
          },
          "Computes the tensor now; returns it.");

  py::class_<Interpreter>(m, "Interpreter")
      .def(py::init<const py::object&, bool, const std::vector<std::string>&, const std::vector<std::string>&,
                    const py::object&>(),
           py::arg("device") = py::none(), py::arg("prelude") = true, py::arg("path") = std::vector<std::string>{},
           py::arg("argv") = std::vector<std::string>{}, py::arg("output") = py::none())
      .def("eval", &Interpreter::eval, py::arg("source"), py::arg("file") = "<python>")
      .def("load", &Interpreter::load, py::arg("path"))
      .def("call", &Interpreter::call, py::arg("name"))
      .def("function", &Interpreter::function, py::arg("name"))
      .def("global_value", &Interpreter::global, py::arg("name"))
      .def("set_global", &Interpreter::set_global, py::arg("name"), py::arg("value"))
      .def("define", &Interpreter::define, py::arg("name"), py::arg("fn"), py::arg("doc") = py::none())
      .def("tensor", &Interpreter::tensor, py::arg("data"), py::arg("dtype") = py::none(), py::arg("copy") = false)
      .def("interrupt", &Interpreter::interrupt)
      .def("close", &Interpreter::close)
      .def_property_readonly("closed", &Interpreter::closed);
}
