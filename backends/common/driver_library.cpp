// SPDX-License-Identifier: Apache-2.0
// Opening a GPU driver library and looking up its entry points (driver_library.h).
#include "driver_library.h"

#include <dlfcn.h>

namespace tl::gpu {

std::string DriverLibrary::open(const char* name, const char* fallback) {
  close();
  handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) return {};
  const char* error = dlerror();
  const std::string why = error != nullptr ? error : name;
  // A vendor's usual place, when it is not on the loader's path.
  if (fallback != nullptr) handle_ = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
  return handle_ != nullptr ? std::string() : why;
}

void DriverLibrary::close() {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

bool DriverLibrary::has(const char* symbol) const { return dlsym(handle_, symbol) != nullptr; }

void* DriverLibrary::lookup(const char* symbol) {
  void* address = dlsym(handle_, symbol);
  if (address == nullptr) missing_ += std::string(missing_.empty() ? "" : ", ") + symbol;
  return address;
}

}  // namespace tl::gpu
