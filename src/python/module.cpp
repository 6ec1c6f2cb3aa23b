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
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "python/values.h"

using namespace tl::python;

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

// A realized tensor's data as NumPy, the buffer protocol and DLPack describe it: row-major.
struct Layout {
  tl_dtype_t dtype;
  const DTypeInfo* info;  // null for bf16
  std::vector<std::int64_t> shape;
  std::vector<py::ssize_t> extents;
  std::vector<py::ssize_t> strides;  // in bytes
};

// Realizes and pins the tensor, and describes its data.
Layout layout_of(Tensor& t) {
  Layout l;
  l.dtype = dtype_code(t);
  l.info = info_of(l.dtype);
  l.shape = shape_of(t);
  pin(t);
  l.extents.assign(l.shape.begin(), l.shape.end());
  l.strides.resize(l.extents.size());
  py::ssize_t step = static_cast<py::ssize_t>(tl_dtype_size(l.dtype));
  for (std::size_t i = l.extents.size(); i-- > 0;) {
    l.strides[i] = step;
    step *= l.extents[i];
  }
  return l;
}

py::array numpy_view(Tensor& t) {
  const Layout l = layout_of(t);
  if (l.info == nullptr) {
    throw py::type_error(std::string("tensorlisp: NumPy has no ") + tl_dtype_name(l.dtype) +
                         " dtype: cast the tensor first, e.g. tensor.astype('f32')");
  }
  static const std::uint8_t empty[8] = {};
  const void* data = t.data != nullptr ? t.data : empty;
  py::array arr(py::dtype(l.info->numpy), l.extents, l.strides, data, py::cast(t));
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
  Layout l = layout_of(t);
  const tl_dtype_t dtype = l.dtype;
  auto e = std::make_unique<Export>();
  e->handle = t.handle;
  e->shape = std::move(l.shape);
  DLTensor& d = e->managed.dl_tensor;
  static std::uint8_t empty[8] = {};
  d.data = t.data != nullptr ? const_cast<void*>(t.data) : empty;
  d.device = DLDevice{1, 0};
  d.ndim = static_cast<std::int32_t>(e->shape.size());
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
        const Layout l = layout_of(t);
        if (l.info == nullptr) {
          throw py::buffer_error(std::string("tensorlisp: no buffer format for ") + tl_dtype_name(l.dtype));
        }
        return py::buffer_info(const_cast<void*>(t.data), static_cast<py::ssize_t>(tl_dtype_size(l.dtype)),
                               l.info->format, static_cast<py::ssize_t>(l.extents.size()), l.extents, l.strides, true);
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
