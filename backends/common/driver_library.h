// SPDX-License-Identifier: Apache-2.0
// A GPU driver library opened with dlopen at run time, and its entry points looked up by name:
// the CUDA and HIP backends build and load where no driver is installed.
#pragma once

#include <string>

namespace tl::gpu {

// Owns a dlopen handle (closed when it goes) and collects the symbols it lacks. Hidden: the
// only symbol a backend library exports is tl_backend_entry.
class __attribute__((visibility("hidden"))) DriverLibrary {
 public:
  DriverLibrary() = default;
  DriverLibrary(const DriverLibrary&) = delete;
  DriverLibrary& operator=(const DriverLibrary&) = delete;
  ~DriverLibrary() { close(); }

  // Opens `name`, or `fallback` (when not null) if that fails; "" or why `name` would not open.
  std::string open(const char* name, const char* fallback);
  void close();

  // Whether the library has `symbol`.
  bool has(const char* symbol) const;

  // Points `fn` at `symbol`, or sets it to null and adds the name to missing().
  template <class Fn>
  void resolve(Fn*& fn, const char* symbol) {
    fn = reinterpret_cast<Fn*>(lookup(symbol));
  }

  // The symbols resolve did not find, separated by ", "; empty when it found them all.
  const std::string& missing() const { return missing_; }

 private:
  void* lookup(const char* symbol);

  void* handle_ = nullptr;
  std::string missing_;
};

}  // namespace tl::gpu
