// SPDX-License-Identifier: Apache-2.0
// A loaded backend: its C function table (include/tensorlisp/backend.h) and one device
// context, with C++ error handling around the calls.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "tensorlisp/backend.h"

namespace tl::runtime {

class Backend {
 public:
  // Loads backend `name` from `library`: "builtin" for a backend linked into TensorLisp (the
  // CPU), else a library name ("tensorlisp-cuda" is found as libtensorlisp-cuda.so next to
  // the executable, in TENSORLISP_PATH directories, or by the system loader) or a path.
  // Throws ConditionError (device-error) naming what is missing.
  static std::shared_ptr<Backend> load(const std::string& name, const std::string& library,
                                       const std::string& options);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& name() const { return name_; }
  const tl_device_info& info() const { return info_; }
  bool host_memory() const { return info_.host_memory != 0; }

  // Device memory: alloc returns null when the device has no room (error() says why).
  void* alloc(std::size_t bytes);
  void free(void* ptr);
  void copy_in(void* dst, const void* host_src, std::size_t bytes);
  void copy_out(void* host_dst, const void* src, std::size_t bytes);
  const char* error() const { return err_; }

  void* compile(const std::string& code, const std::string& entry);
  // The backend's external kernel `name` (released with release_kernel); a device-error
  // saying why when it has none.
  void* find_extern(const std::string& name);
  void release_kernel(void* kernel);
  // Throws a device-error when the launch fails, and calls the cancel's `stop` (below) when
  // the backend stopped it early.
  void launch(void* kernel, const std::vector<void*>& buffers, const std::vector<std::int64_t>& vars,
              const tl_launch& launch);
  void synchronize();

  // Ctrl-C inside a kernel. While a launch runs, a backend that can (the table's set_cancel)
  // asks `requested`, from its own threads too, and stops handing out work once it says
  // yes; launch then calls `stop`, which must throw (the host's interrupt). The kernel's
  // output is then partly written: the caller drops it. A backend that cannot runs each
  // launch to its end. Call it when no launch runs.
  void set_cancel(std::function<bool()> requested, std::function<void()> stop);
  // While set, launches run to their end whatever `requested` says: a kernel that writes a
  // live buffer in place (an assign through a view) must not stop half way.
  std::atomic<bool> hold_cancel{false};

  // Device time between points of the device's queue of work (events on a GPU), when the
  // backend can tell it: an Event marks the point after everything launched so far.
  class Event {
   public:
    Event() = default;
    Event(Event&& o) noexcept : backend_(o.backend_), handle_(o.handle_) { o.handle_ = nullptr; }
    Event& operator=(Event&& o) noexcept {
      std::swap(backend_, o.backend_);
      std::swap(handle_, o.handle_);
      return *this;
    }
    ~Event();
    explicit operator bool() const { return handle_ != nullptr; }

   private:
    friend class Backend;
    Event(Backend* b, void* h) : backend_(b), handle_(h) {}
    Backend* backend_ = nullptr;
    void* handle_ = nullptr;
  };
  bool has_events() const { return has_events_; }
  Event record_event();
  // Waits for the work before `end`; the device's seconds from `start` to `end`.
  double seconds_between(const Event& start, const Event& end);

 private:
  Backend() = default;
  [[noreturn]] void fail(const std::string& what) const;
  static int cancel_requested(void* self);
  std::string name_;
  const tl_backend_api* api_ = nullptr;
  void* ctx_ = nullptr;
  void* library_ = nullptr;  // dlopen handle, null for builtin
  tl_device_info info_{};
  bool has_events_ = false;
  std::function<bool()> cancel_requested_;  // asked from the backend's threads: thread-safe
  std::function<void()> cancel_stop_;
  char err_[1024] = {};
};

}  // namespace tl::runtime
