// SPDX-License-Identifier: Apache-2.0
// Loading backends and calling through their tables.
#include "runtime/backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>

#include "support/condition_error.h"
#include "support/search_path.h"

extern "C" const tl_backend_api* tl_cpu_backend_entry(uint32_t abi_version);

namespace tl::runtime {

namespace {

// Whether `api` has table entry `field` (the table grows at its end within ABI 1).
template <class T>
bool has_entry(const tl_backend_api* api, T tl_backend_api::*field, std::size_t offset) {
  return api->struct_size >= offset + sizeof(void*) && api->*field != nullptr;
}

[[noreturn]] void device_error(const std::string& msg) { throw ConditionError("device-error", msg); }

std::string executable_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

// Candidate paths for a library name, most specific first.
std::vector<std::string> library_candidates(const std::string& library) {
  if (library.find('/') != std::string::npos) return {library};
  std::string file = library.rfind("lib", 0) == 0 ? library : "lib" + library;
  if (file.find(".so") == std::string::npos) file += ".so";
  std::vector<std::string> out;
  for (const auto& dir : tensorlisp_path()) out.push_back(dir + "/" + file);
  std::string exe = executable_dir();
  if (!exe.empty()) {
    out.push_back(exe + "/" + file);
    out.push_back(exe + "/../lib/" + file);
  }
  out.push_back(file);  // the system loader's search path
  return out;
}

}  // namespace

std::shared_ptr<Backend> Backend::load(const std::string& name, const std::string& library,
                                       const std::string& options) {
  std::shared_ptr<Backend> b(new Backend);
  b->name_ = name;
  if (library == "builtin") {
    // The CPU's library, linked in; a runtime file may describe it under another name (with
    // other options, such as a simulated GPU).
    b->api_ = tl_cpu_backend_entry(TL_BACKEND_ABI_VERSION);
  } else {
    std::string tried;
    for (const auto& path : library_candidates(library)) {
      b->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (b->library_ != nullptr) break;
      tried += std::string("\n  ") + dlerror();
    }
    if (b->library_ == nullptr) device_error("backend " + name + ": cannot load library " + library + tried);
    auto entry = reinterpret_cast<tl_backend_entry_fn>(dlsym(b->library_, "tl_backend_entry"));
    if (entry == nullptr) device_error("backend " + name + ": " + library + " does not export tl_backend_entry");
    b->api_ = entry(TL_BACKEND_ABI_VERSION);
  }
  if (b->api_ == nullptr || b->api_->abi_version != TL_BACKEND_ABI_VERSION) {
    device_error("backend " + name + ": the library does not support backend ABI version " +
                 std::to_string(TL_BACKEND_ABI_VERSION));
  }
  b->ctx_ = b->api_->create(options.c_str(), b->err_, sizeof b->err_);
  if (b->ctx_ == nullptr) b->fail("cannot start");
  if (b->api_->device_info(b->ctx_, &b->info_, b->err_, sizeof b->err_) != 0) b->fail("device query failed");
  const tl_backend_api* api = b->api_;
  b->has_events_ = has_entry(api, &tl_backend_api::record_event, offsetof(tl_backend_api, record_event)) &&
                   has_entry(api, &tl_backend_api::event_seconds, offsetof(tl_backend_api, event_seconds)) &&
                   has_entry(api, &tl_backend_api::release_event, offsetof(tl_backend_api, release_event));
  return b;
}

Backend::~Backend() {
  if (ctx_ != nullptr) api_->destroy(ctx_);
  if (library_ != nullptr) dlclose(library_);
}

void Backend::fail(const std::string& what) const {
  // The library's message, without its own name in front (it says "cuda: ..." for use alone).
  std::string detail = err_;
  const std::string own = std::string(api_ != nullptr && api_->name != nullptr ? api_->name : "") + ": ";
  if (detail.rfind(own, 0) == 0) detail.erase(0, own.size());
  device_error("backend " + name_ + ": " + what + (detail.empty() ? std::string() : ": " + detail));
}

void* Backend::alloc(std::size_t bytes) {
  err_[0] = 0;
  return api_->alloc(ctx_, bytes, err_, sizeof err_);
}

void Backend::free(void* ptr) { api_->free(ctx_, ptr); }

void Backend::copy_in(void* dst, const void* host_src, std::size_t bytes) {
  err_[0] = 0;
  if (api_->copy_in(ctx_, dst, host_src, bytes, err_, sizeof err_) != 0) fail("copying " + std::to_string(bytes) + " bytes to the device");
}

void Backend::copy_out(void* host_dst, const void* src, std::size_t bytes) {
  err_[0] = 0;
  if (api_->copy_out(ctx_, host_dst, src, bytes, err_, sizeof err_) != 0) fail("copying " + std::to_string(bytes) + " bytes from the device");
}

void* Backend::compile(const std::string& code, const std::string& entry) {
  err_[0] = 0;
  void* k = api_->compile(ctx_, code.data(), code.size(), entry.c_str(), err_, sizeof err_);
  if (k == nullptr) fail("compiling " + entry);
  return k;
}

void* Backend::find_extern(const std::string& name) {
  err_[0] = 0;
  if (!has_entry(api_, &tl_backend_api::find_extern, offsetof(tl_backend_api, find_extern))) {
    device_error("extern: the " + name_ + " backend has no external kernels (no kernel named \"" + name + "\")");
  }
  void* k = api_->find_extern(ctx_, name.c_str(), err_, sizeof err_);
  if (k == nullptr) fail("extern " + name);
  return k;
}

void Backend::release_kernel(void* kernel) { api_->release_kernel(ctx_, kernel); }

void Backend::launch(void* kernel, const std::vector<void*>& buffers, const std::vector<std::int64_t>& vars,
                     const tl_launch& launch) {
  err_[0] = 0;
  const int status = api_->launch(ctx_, kernel, buffers.data(), buffers.size(), vars.data(), vars.size(), &launch,
                                  err_, sizeof err_);
  if (status == TL_STATUS_CANCELLED && cancel_stop_) cancel_stop_();
  if (status == TL_STATUS_VALUE_ERROR) throw ConditionError("value-error", err_);
  if (status != 0) fail(status == TL_STATUS_CANCELLED ? "launch cancelled" : "launch failed");
}

void Backend::set_cancel(std::function<bool()> requested, std::function<void()> stop) {
  if (!has_entry(api_, &tl_backend_api::set_cancel, offsetof(tl_backend_api, set_cancel))) return;
  cancel_requested_ = std::move(requested);
  cancel_stop_ = std::move(stop);
  api_->set_cancel(ctx_, cancel_requested_ ? &Backend::cancel_requested : nullptr, this);
}

int Backend::cancel_requested(void* self) {
  auto* b = static_cast<Backend*>(self);
  if (b->hold_cancel.load(std::memory_order_relaxed)) return 0;
  return b->cancel_requested_ && b->cancel_requested_() ? 1 : 0;
}

Backend::Event Backend::record_event() {
  err_[0] = 0;
  void* h = api_->record_event(ctx_, err_, sizeof err_);
  if (h == nullptr) fail("recording an event");
  return Event(this, h);
}

double Backend::seconds_between(const Event& start, const Event& end) {
  err_[0] = 0;
  double s = 0;
  if (api_->event_seconds(ctx_, start.handle_, end.handle_, &s, err_, sizeof err_) != 0) fail("timing kernels");
  return s;
}

Backend::Event::~Event() {
  if (handle_ != nullptr) backend_->api_->release_event(backend_->ctx_, handle_);
}

void Backend::synchronize() {
  err_[0] = 0;
  if (api_->synchronize(ctx_, err_, sizeof err_) != 0) fail("synchronize failed");
}

}  // namespace tl::runtime
