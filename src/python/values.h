// SPDX-License-Identifier: Apache-2.0
// The Python module's values: the interpreter Python objects share, handles to Lisp values, the
// Python classes' data, errors, Ctrl-C, and conversions both ways (values.cpp). module.cpp
// defines the classes Python sees.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorlisp/tensorlisp.h"

namespace tl::python {

namespace py = pybind11;

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

extern py::object lisp_error_class;  // tensorlisp.LispError
extern std::uint64_t main_thread;    // the thread that imported the module

// Raises the Python exception for a failed C API call: the original one when a Python host
// function raised it, KeyboardInterrupt for an interrupt, ValueError or TypeError for the
// host's own mistakes, tensorlisp.LispError for the rest.
[[noreturn]] void raise_status(Lisp* lisp, tl_status_t status);
void check(Lisp* lisp, tl_status_t status);
tl_value_t* check_made(tl_value_t* v);

// While Lisp runs on the main thread with Python's own SIGINT handler in place, Ctrl-C
// interrupts the evaluation (Python's handler would only run once the call returned).
class SigintScope {
 public:
  explicit SigintScope(tl_interp_t* interp);
  ~SigintScope() { restore(); }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  void restore();
  bool active_ = false;
  struct sigaction saved_ {};
};

// Runs `body` (C API calls only, no Python) with the lock held and the GIL released.
template <class F>
tl_status_t run(Lisp& lisp, F&& body) {
  SigintScope sigint(lisp.interp);
  py::gil_scoped_release nogil;
  std::lock_guard<std::recursive_mutex> lock(lisp.mutex);
  return body();
}

// Python value -> a new Lisp handle (arrays become tensors without a copy), and back (taking
// ownership of OWNED).
tl_value_t* to_lisp(const std::shared_ptr<Lisp>& lisp, py::handle o);
py::object from_lisp(const std::shared_ptr<Lisp>& lisp, tl_value_t* owned);
// A tensor over the array-like O's memory (copy false) or a copy of it.
tl_value_t* tensor_from(Lisp& lisp, py::handle o, bool copy);
// NAME with underscores read as hyphens (keyword arguments).
std::string lisp_name(std::string name);

struct DTypeInfo {
  tl_dtype_t dtype;
  const char* numpy;   // NumPy's name
  const char* format;  // the buffer protocol's format
};
// The NumPy name and buffer format of dtype T; null for bf16, which NumPy lacks.
const DTypeInfo* info_of(tl_dtype_t t);

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

// The C API callbacks: a host function defined from Python, and program output.
tl_status_t call_python(tl_interp_t*, tl_value_t* const* args, std::size_t nargs, tl_value_t** result, void* user_data);
void write_output(const char* text, std::size_t length, void* user_data);

}  // namespace tl::python
