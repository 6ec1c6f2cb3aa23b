// SPDX-License-Identifier: Apache-2.0
// The Python module's values (values.h): handles, errors, Ctrl-C, conversions, callbacks.
#include "python/values.h"

#include <pythread.h>

#include <atomic>
#include <cstring>

namespace tl::python {

py::object lisp_error_class;
std::uint64_t main_thread = 0;

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

namespace {

std::atomic<tl_interp_t*> sigint_target{nullptr};

extern "C" void on_sigint(int) {
  tl_interp_t* interp = sigint_target.load();
  if (interp != nullptr) tl_interp_interrupt(interp);
}

}  // namespace

SigintScope::SigintScope(tl_interp_t* interp) {
  if (PyThread_get_thread_ident() != main_thread || sigint_target.load() != nullptr) return;
  py::module_ signal = py::module_::import("signal");
  if (!signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler"))) return;
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigint_target.store(interp);
  active_ = sigaction(SIGINT, &action, &saved_) == 0;
  if (!active_) {
    sigint_target.store(nullptr);
    return;
  }
  // A Ctrl-C that came just before went to Python's handler: it stops this call now.
  if (PyErr_CheckSignals() != 0) {
    restore();
    throw py::error_already_set();
  }
}

void SigintScope::restore() {
  if (!active_) return;
  active_ = false;
  sigaction(SIGINT, &saved_, nullptr);
  sigint_target.store(nullptr);
}

// ---- Conversions ----

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

namespace {

extern "C" void release_array(void* context) {
  py::gil_scoped_acquire gil;
  delete static_cast<py::object*>(context);
}

}  // namespace

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

// ---- Host functions defined from Python ----

tl_status_t call_python(tl_interp_t*, tl_value_t* const* args, std::size_t nargs, tl_value_t** result,
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

void write_output(const char* text, std::size_t length, void* user_data) {
  auto* lisp = static_cast<Lisp*>(user_data);
  py::gil_scoped_acquire gil;
  try {
    py::object out = lisp->output.is_none() ? py::module_::import("sys").attr("stdout") : lisp->output;
    out.attr("write")(decode(std::string(text, length)));
  } catch (py::error_already_set&) {
    // Output that cannot be written is dropped, as a closed stdout drops it.
  }
}

}  // namespace tl::python
